// The validating webhook's rules for AccessGrants (docs/api.md, "AccessGrant"), each in the words
// the user sees: KAOS's CEL text for a resource of neither or both forms, Kubernetes' own
// messages for names and label selectors, and the warnings.
import t from 'tap';
import { failingGate } from '../../../src/api/access-grants.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { resourceKey } from '../../../src/api/validation/validate-accessgrant.ts';
import { validateObject, type ValidationContext } from '../../../src/api/validation/validate-object.ts';

const grant = (spec: unknown, namespace = 'team-a'): KubeObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'AccessGrant', metadata: { name: 'g', namespace }, spec });
const alice = [{ kind: 'User', name: 'alice@example.com' }];
const ALL_PASS = { securityEnabled: true, userPlaneEnabled: true, projectionActive: true };

function check(object: KubeObject, accessGrant: ValidationContext['accessGrant'] = { gates: ALL_PASS }) {
  const result = validateObject('AccessGrant', object, { referencePolicy: 'Enforce', ...(accessGrant === undefined ? {} : { accessGrant }) });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings };
}

const EXACTLY_ONE = 'Invalid value: "object": exactly one of kind and name, or selector, must be set';

t.test('a grant by name and a grant by selector are valid, with nothing to warn about', async (t) => {
  t.same(check(grant({ subjects: alice, resources: [{ kind: 'Agent', name: 'helper' }] })), { errors: [], warnings: [] });
  t.same(check(grant({ subjects: [{ kind: 'Group', name: 'ops' }], resources: [{ selector: { matchLabels: { team: 'a' } } }] })), { errors: [], warnings: [] });
  t.same(check(grant({ subjects: alice, resources: [{ selector: {} }] })).errors, [], 'an empty selector matches everything, as in Kubernetes');
});

t.test('each resource is exactly one of kind and name together, or selector: KAOS\'s CEL rule in its words', async (t) => {
  const spec = {
    subjects: alice,
    resources: [
      { kind: 'Agent', name: 'ok' },
      { kind: 'Agent' },
      { name: 'lonely' },
      {},
      { kind: 'MCPServer', name: 'x', selector: { matchLabels: { a: 'b' } } },
      { kind: 'ModelAPI', selector: { matchLabels: { a: 'b' } } },
    ],
  };
  t.same(check(grant(spec)).errors, [
    `spec.resources[1]: ${EXACTLY_ONE}`,
    `spec.resources[2]: ${EXACTLY_ONE}`,
    `spec.resources[3]: ${EXACTLY_ONE}`,
    `spec.resources[4]: ${EXACTLY_ONE}`,
    `spec.resources[5]: ${EXACTLY_ONE}`,
  ]);
});

t.test('a name must be one an object could have; the schema says the rest', async (t) => {
  t.same(check(grant({ subjects: alice, resources: [{ kind: 'Agent', name: 'Not_A_Name' }] })).errors, [
    "spec.resources[0].name: Invalid value: \"Not_A_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
  t.same(check(grant({ subjects: [], resources: [] })).errors, [
    'spec.subjects: Invalid value: []: spec.subjects in body should have at least 1 items',
    'spec.resources: Invalid value: []: spec.resources in body should have at least 1 items',
  ]);
  t.same(check(grant({ subjects: [{ kind: 'Robot', name: '' }], resources: [{ kind: 'Secret', name: 's' }] })).errors, [
    'spec.subjects[0].kind: Unsupported value: "Robot": supported values: "User", "Group", "Agent"',
    'spec.subjects[0].name: Invalid value: "": spec.subjects[0].name in body should be at least 1 chars long',
    'spec.resources[0].kind: Unsupported value: "Secret": supported values: "Agent", "MCPServer", "ModelAPI", "MemoryStore"',
  ]);
  t.same(check(grant({ resources: [{ kind: 'Agent', name: 'a' }] })).errors, ['spec.subjects: Required value']);
});

t.test('a selector Kubernetes cannot parse is an error, with ValidateLabelSelector\'s messages (KAOS skips it silently)', async (t) => {
  const spec = {
    subjects: alice,
    resources: [
      {
        selector: {
          matchLabels: { 'bad key!': 'v', ok: 'bad value!' },
          matchExpressions: [
            { key: 'tier', operator: 'Near', values: ['x'] },
            { key: 'tier', operator: 'In' },
            { key: 'tier', operator: 'Exists', values: ['x'] },
            { key: 'example.com/role', operator: 'NotIn', values: ['a', '-b'] },
          ],
        },
      },
    ],
  };
  const name = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  t.same(check(grant(spec)).errors, [
    `spec.resources[0].selector.matchLabels: Invalid value: "bad key!": ${name}`,
    `spec.resources[0].selector.matchLabels: Invalid value: "bad value!": ${value}`,
    'spec.resources[0].selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    "spec.resources[0].selector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    "spec.resources[0].selector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    `spec.resources[0].selector.matchExpressions[3].values[1]: Invalid value: "-b": ${value}`,
  ]);
});

t.test('warnings: an Agent subject, a named resource not there yet, an unprojected namespace, a failing gate', async (t) => {
  const spec = {
    subjects: [...alice, { kind: 'Agent', name: 'planner' }],
    resources: [{ kind: 'MCPServer', name: 'tools' }, { kind: 'Agent', name: 'here' }],
  };
  const existing = new Map([[resourceKey('MCPServer', 'tools'), false], [resourceKey('Agent', 'here'), true]]);
  t.same(check(grant(spec), { existing, gates: ALL_PASS, projectionNamespaces: ['team-b'] }).warnings, [
    'namespace "team-a" is not in AUTHZ_PROJECTION_NAMESPACES: this AccessGrant is not projected',
    "spec.subjects[1]: an Agent subject is not projected; an Agent's access follows its own spec",
    'spec.resources[0].name: MCPServer "tools" does not exist yet; the grant covers it once it does',
  ]);
  t.same(check(grant(spec, 'team-b'), { existing: new Map(), gates: ALL_PASS, projectionNamespaces: ['team-b'] }).warnings, [
    "spec.subjects[1]: an Agent subject is not projected; an Agent's access follows its own spec",
  ], 'a projected namespace; resources not looked up are not judged');
  for (const [gates, message] of [
    [{ ...ALL_PASS, securityEnabled: false }, 'Gateway authorization is not enabled; this AccessGrant is not enforced'],
    [{ ...ALL_PASS, userPlaneEnabled: false }, 'A user identity provider must be configured for this AccessGrant to be enforced'],
    [{ ...ALL_PASS, projectionActive: false }, 'Automated policy projection must be active for this AccessGrant to be enforced'],
  ] as const) {
    const warnings = check(grant({ subjects: alice, resources: [{ kind: 'Agent', name: 'a' }] }), { gates }).warnings;
    t.same(warnings, [`this AccessGrant will not be enforced: ${message}`]);
    t.ok([...(warnings[0] ?? '')].length <= 120, 'within the 120 characters the API server passes on');
  }
});

t.test('the gates in the Enforced condition\'s order: the first that fails names the reason', async (t) => {
  t.equal(failingGate({ securityEnabled: false, userPlaneEnabled: false, projectionActive: false })?.reason, 'AuthorizationDisabled');
  t.equal(failingGate({ securityEnabled: true, userPlaneEnabled: false, projectionActive: false })?.reason, 'NoUserIdentityProvider');
  t.equal(failingGate({ securityEnabled: true, userPlaneEnabled: true, projectionActive: false })?.reason, 'PolicyProjectionInactive');
  t.equal(failingGate(ALL_PASS), undefined);
});
