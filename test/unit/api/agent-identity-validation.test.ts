// Admission under ServiceAccount identity (docs/api.md, "Agent identity by ServiceAccount"): a
// serviceAccountName of the Agent's own in spec.podSpec is a warning, since the policy data maps
// only kaos-agent-<name> to the Agent; nothing is said without the provider.
import t from 'tap';
import { validateObject } from '../../../src/api/validation/validate-object.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { agent, hosted, referencesIn } from './objects.ts';

const identity = { serviceAccountIdentity: true, userIdentity: false };
const check = (object: KubeObject, posture = identity) => validateObject('Agent', object, { referencePolicy: 'Enforce', references: referencesIn([hosted('m')], object.spec), posture });
const withPod = (podSpec: Record<string, unknown>) => agent('helper', { modelAPI: 'm', podSpec });

t.test('spec.podSpec.serviceAccountName: a warning naming both, never a denial', async (t) => {
  const result = check(withPod({ serviceAccountName: 'builder' }));
  t.same(result.errors, []);
  t.same(result.warnings, ['spec.podSpec.serviceAccountName: "builder": agent identity maps only "kaos-agent-helper" to this Agent']);
  t.same(check(withPod({ serviceAccountName: 'kaos-agent-helper' })).warnings, [], 'its own: nothing to say');
  t.same(check(withPod({ nodeSelector: { pool: 'a' } })).warnings, [], 'no serviceAccountName');
  t.same(check(withPod({ serviceAccountName: 'builder' }), { serviceAccountIdentity: false, userIdentity: false }).warnings, [], 'without ServiceAccount identity: nothing');
});
