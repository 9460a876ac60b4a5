// The validating webhook on an Agent's replicas and autoscaling (docs/api.md, "Agent replicas,
// kubectl scale and autoscaling"): the refusals and the warning in the contract's words, on
// `kubectl apply` and on `kubectl scale` (agents/scale, which carries an autoscaling/v1 Scale).
import t from 'tap';
import { createValidatingHandler } from '../../../src/admission/validate.ts';
import { loadConfig } from '../../../src/config/config.ts';
import type { AdmissionRequest } from '../../../src/admission/types.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { agent, CONFIG, hosted, NS, store } from '../api/objects.ts';
import { admissionRequest } from '../../support/admission-request.ts';
import { LookupBudget, LookupNotMade } from '../../../src/api/lookup-budget.ts';

const world = () => new MemoryLookup().setNamespace(NS).add(hosted('m'), store('shared'));
const handler = (lookup = world(), config = CONFIG) => createValidatingHandler('Agent', { lookup, config });

const REMOTE = { memory: { memoryStore: 'shared' } };
const IN_PROCESS = 'an Agent with in-process memory must run one replica (each replica would keep its own sessions): bind a MemoryStore (config.memory.memoryStore) or disable memory';

/** The `field: message` lines kubectl prints for a denial. */
const causes = (decision: { status?: { details?: { causes?: { field?: string; message?: string }[] } } }) =>
  (decision.status?.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

t.test('replicas with in-process memory: more than one is refused in the contract\'s words', async (t) => {
  const denied = await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', replicas: 3 })));
  t.equal(denied.allowed, false, 'no memory block: in-process by default');
  t.same(causes(denied), [`spec.replicas: Invalid value: 3: ${IN_PROCESS}`]);
  const local = await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', replicas: 2, config: { memory: { enabled: true } } })));
  t.same(causes(local), [`spec.replicas: Invalid value: 2: ${IN_PROCESS}`], 'memory enabled without a store');
  t.same(await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', replicas: 1 }))), { allowed: true }, 'one replica: allowed');
  t.same(await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', replicas: 0 }))), { allowed: true }, 'zero: allowed');
  t.same(await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', replicas: 3, config: REMOTE }))), { allowed: true }, 'a MemoryStore: allowed');
  t.same(await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', replicas: 3, config: { memory: { enabled: false } } }))), { allowed: true }, 'memory disabled: allowed');
  const scaled = await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', autoscaling: { maxReplicas: 4 }, container: { resources: { requests: { cpu: '100m' } } } })));
  t.same(causes(scaled), [`spec.autoscaling.maxReplicas: Invalid value: 4: ${IN_PROCESS}`], 'the same for autoscaling.maxReplicas');
});

t.test('replicas with autoscaling: refused; maxReplicas below minReplicas: refused', async (t) => {
  const both = await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', config: REMOTE, replicas: 2, autoscaling: { maxReplicas: 4 } })));
  t.same(causes(both), ['spec.autoscaling: Forbidden: may not be set together with spec.replicas']);
  const inverted = await handler()(admissionRequest('Agent', agent('a1', { modelAPI: 'm', config: REMOTE, autoscaling: { minReplicas: 5, maxReplicas: 3 } })));
  t.same(causes(inverted), ['spec.autoscaling.maxReplicas: Invalid value: 3: must be greater than or equal to minReplicas (5)']);
});

t.test('an autoscaled resource without a request on the agent container: a warning, allowed', async (t) => {
  const spec = (extra: Record<string, unknown>) => ({ modelAPI: 'm', config: REMOTE, autoscaling: { maxReplicas: 4 }, ...extra });
  t.same(await handler()(admissionRequest('Agent', agent('a1', spec({})))), {
    allowed: true,
    warnings: ['spec.autoscaling: the HPA cannot compute cpu utilization without a cpu request on the agent container'],
  }, 'CPU by default, no request anywhere');
  t.same(await handler()(admissionRequest('Agent', agent('a1', spec({ container: { resources: { requests: { cpu: '250m' } } } })))), { allowed: true }, 'from spec.container.resources');
  t.same(
    await handler()(admissionRequest('Agent', agent('a1', spec({ podSpec: { containers: [{ name: 'agent', resources: { requests: { cpu: '250m' } } }] } })))),
    { allowed: true },
    'from spec.podSpec\'s agent container',
  );
  const withDefaults = loadConfig({ DEFAULT_AGENT_RESOURCES: '{"requests":{"cpu":"100m"}}' });
  t.same(await handler(world(), withDefaults)(admissionRequest('Agent', agent('a1', spec({})))), { allowed: true }, "from the operator's defaults");
  const memory = await handler()(admissionRequest('Agent', agent('a1', { ...spec({ container: { resources: { requests: { cpu: '1' } } } }), autoscaling: { maxReplicas: 4, targetCPUUtilizationPercentage: 50, targetMemoryUtilizationPercentage: 70 } })));
  t.same(memory.warnings, ['spec.autoscaling: the HPA cannot compute memory utilization without a memory request on the agent container'], 'each target judged');
});

/** An UPDATE of agents/scale as the API server sends it: an autoscaling/v1 Scale, no Agent. */
const scaleRequest = (name: string, replicas: number, from: number): AdmissionRequest => {
  const scale = (n: number) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace: NS }, spec: { replicas: n }, status: { replicas: from, selector: `agent=${name},app=agent` } });
  return {
    ...admissionRequest('Agent', undefined),
    kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
    subResource: 'scale',
    name,
    namespace: NS,
    operation: 'UPDATE',
    object: scale(replicas),
    oldObject: scale(from),
  };
};

t.test('kubectl scale: judged on the Agent as stored, with the contract\'s messages', async (t) => {
  const lookup = world().add(
    agent('autoscaled', { modelAPI: 'm', config: REMOTE, autoscaling: { maxReplicas: 4 } }),
    agent('in-process', { modelAPI: 'm', replicas: 1 }),
    agent('remote', { modelAPI: 'm', config: REMOTE, replicas: 1 }),
  );
  const autoscaled = await handler(lookup)(scaleRequest('autoscaled', 3, 1));
  t.same(causes(autoscaled), ['spec.autoscaling: Forbidden: may not be set together with spec.replicas'], 'an autoscaled Agent: refused');
  t.match(autoscaled.status?.message, /^Agent\.kaos\.tools "autoscaled" is invalid/);
  t.same(causes(await handler(lookup)(scaleRequest('in-process', 2, 1))), [`spec.replicas: Invalid value: 2: ${IN_PROCESS}`], 'in-process memory above one: refused');
  t.same(await handler(lookup)(scaleRequest('in-process', 0, 1)), { allowed: true }, 'in-process memory to zero: allowed');
  t.same(await handler(lookup)(scaleRequest('remote', 3, 1)), { allowed: true }, 'a MemoryStore: allowed');
  t.ok(lookup.calls.includes('current Agent ns/remote'), 'the Agent read as the API server holds it');
  t.same(await handler(lookup)(scaleRequest('gone', 3, 1)), { allowed: true }, 'an Agent gone meanwhile: the API server answers NotFound itself');
});

t.test('kubectl scale while the Agent cannot be read: refused (503), never let through unjudged', async (t) => {
  const lookup = Object.assign(world(), {
    current: async () => {
      throw new LookupNotMade('unavailable', new LookupBudget(), 'ECONNRESET');
    },
  });
  const decision = await handler(lookup)(scaleRequest('remote', 3, 1));
  t.equal(decision.allowed, false);
  t.match(decision.status, { code: 503, reason: 'ServiceUnavailable', message: /^Agent ns\/remote could not be read to judge its scale: / });
});
