// The policy data (docs/api.md, "Policy ConfigMap"), field by field, with the text written out as
// Go's json.MarshalIndent(doc, "", "  ") writes it: keys sorted, two spaces, no trailing newline.
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import { projectPolicyData, type ProjectionInputs, type ProjectionWorld } from '../../../src/render/authz-data.ts';

const obj = (kind: string, namespace: string, name: string, spec: unknown, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { namespace, name, ...(labels === undefined ? {} : { labels }) },
  spec,
});

const WORLD: ProjectionWorld = {
  agents: [
    obj('Agent', 'team-a', 'planner', {
      modelAPI: 'llm',
      mcpServers: ['tools', 'tools'],
      agentNetwork: { access: ['writer', 'planner'] },
      config: { memory: { memoryStore: 'notes' }, autonomous: { goal: 'watch the queue' } },
    }),
    obj('Agent', 'team-a', 'writer', { modelAPI: 'llm', config: { autonomous: { goal: '   ' } } }),
  ],
  mcpServers: [obj('MCPServer', 'team-a', 'tools', {}, { tier: 'tools' }), obj('MCPServer', 'team-b', 'tools-b', {}, { tier: 'tools' })],
  modelAPIs: [obj('ModelAPI', 'team-a', 'llm', {}, { tier: 'models' })],
  memoryStores: [obj('MemoryStore', 'team-a', 'notes', {})],
  accessGrants: [
    obj('AccessGrant', 'team-a', 'g1', {
      subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'ops' }, { kind: 'Agent', name: 'planner' }],
      resources: [{ kind: 'Agent', name: 'planner' }, { selector: { matchLabels: { tier: 'tools' } } }, { kind: 'MCPServer', name: 'missing-one' }],
    }),
    obj('AccessGrant', 'team-a', 'g2', {
      subjects: [{ kind: 'User', name: 'alice' }],
      resources: [{ selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['models'] }] } }],
    }),
    obj('AccessGrant', 'team-a', 'g3', { subjects: [{ kind: 'User', name: 'bob' }], resources: [{ selector: { matchExpressions: [{ key: 'tier', operator: 'Near' }] } }] }),
    obj('AccessGrant', 'team-b', 'g4', { subjects: [{ kind: 'Group', name: 'ops' }], resources: [{ selector: { matchLabels: { tier: 'tools' } } }] }),
  ],
};

const SA_KEYS = { issuer: 'https://kubernetes.default.svc', jwks: { keys: [{ kty: 'RSA', kid: 'sa-1', n: 'AQAB<n>', e: 'AQAB' }] } };
const USER_KEYS = { issuer: 'https://idp.example/realms/kaos', jwks: { keys: [{ kty: 'EC', kid: 'u-1', crv: 'P-256', x: 'x', y: 'y' }] } };
const FULL: ProjectionInputs = {
  serviceAccountIdentity: true,
  serviceAccountKeys: SA_KEYS,
  user: { issuer: ' https://idp.example/realms/kaos ', audience: 'kaos-web', keys: USER_KEYS },
  grantsEnforced: true,
};

t.test('the whole document: grants, agents, jwks, user and user_grants, exactly as MarshalIndent writes it', async (t) => {
  t.equal(
    projectPolicyData(WORLD, FULL).json,
    `{
  "kaos": {
    "agents": {
      "kaos://agent/team-a/planner": {
        "autonomous": true,
        "issuer_sub": "system:serviceaccount:team-a:kaos-agent-planner"
      },
      "kaos://agent/team-a/writer": {
        "autonomous": false,
        "issuer_sub": "system:serviceaccount:team-a:kaos-agent-writer"
      }
    },
    "grants": {
      "kaos://agent/team-a/planner": [
        "kaos://agent/team-a/writer",
        "kaos://mcpserver/team-a/tools",
        "kaos://memorystore/team-a/notes",
        "kaos://modelapi/team-a/llm"
      ],
      "kaos://agent/team-a/writer": [
        "kaos://modelapi/team-a/llm"
      ]
    },
    "jwks": {
      "https://idp.example/realms/kaos": {
        "keys": [
          {
            "crv": "P-256",
            "kid": "u-1",
            "kty": "EC",
            "x": "x",
            "y": "y"
          }
        ]
      },
      "https://kubernetes.default.svc": {
        "keys": [
          {
            "e": "AQAB",
            "kid": "sa-1",
            "kty": "RSA",
            "n": "AQAB\\u003cn\\u003e"
          }
        ]
      }
    },
    "user": {
      "audience": "kaos-web",
      "issuer": "https://idp.example/realms/kaos"
    },
    "user_grants": {
      "group:ops": [
        "kaos://agent/team-a/planner",
        "kaos://mcpserver/team-a/missing-one",
        "kaos://mcpserver/team-a/tools",
        "kaos://mcpserver/team-b/tools-b"
      ],
      "user:alice": [
        "kaos://agent/team-a/planner",
        "kaos://mcpserver/team-a/missing-one",
        "kaos://mcpserver/team-a/tools",
        "kaos://modelapi/team-a/llm"
      ]
    }
  }
}`,
  );
});

t.test('grants: every Agent with an edge, its edges sorted and de-duplicated, never itself; an Agent with none is in neither grants nor agents (as KAOS)', async (t) => {
  const world = { ...WORLD, agents: [...WORLD.agents, obj('Agent', 'team-a', 'loner', { modelAPI: '' }), obj('Agent', 'team-a', 'narcissus', { agentNetwork: { access: ['narcissus'] } })] };
  const { kaos } = projectPolicyData(world, FULL).document;
  const grants = kaos.grants as Record<string, string[]>;
  t.same(grants['kaos://agent/team-a/planner'], ['kaos://agent/team-a/writer', 'kaos://mcpserver/team-a/tools', 'kaos://memorystore/team-a/notes', 'kaos://modelapi/team-a/llm']);
  for (const name of ['loner', 'narcissus']) {
    t.notOk(Object.hasOwn(grants, `kaos://agent/team-a/${name}`), `${name}: no grants entry`);
    t.notOk(Object.hasOwn(kaos.agents as Record<string, unknown>, `kaos://agent/team-a/${name}`), `${name}: no agents entry`);
  }
});

t.test('agents only with ServiceAccount identity; user and user_grants only with the user plane; user_grants only past every gate', async (t) => {
  const noSa = projectPolicyData(WORLD, { ...FULL, serviceAccountIdentity: false }).document.kaos;
  t.notOk('agents' in noSa);
  const noUser = projectPolicyData(WORLD, { serviceAccountIdentity: true, serviceAccountKeys: SA_KEYS, grantsEnforced: true }).document.kaos;
  t.same(Object.keys(noUser).sort(), ['agents', 'grants', 'jwks']);
  t.same(Object.keys(noUser.jwks as object), ['https://kubernetes.default.svc']);
  const gated = projectPolicyData(WORLD, { ...FULL, grantsEnforced: false }).document.kaos;
  t.same(gated.user, { audience: 'kaos-web', issuer: 'https://idp.example/realms/kaos' });
  t.notOk('user_grants' in gated, 'grants that fail a gate reach no user');
});

t.test('empty maps other than grants are left out', async (t) => {
  t.equal(projectPolicyData({ agents: [], mcpServers: [], modelAPIs: [], memoryStores: [], accessGrants: [] }, { serviceAccountIdentity: true, grantsEnforced: false }).json, '{\n  "kaos": {\n    "grants": {}\n  }\n}');
});

t.test("jwks: the ServiceAccount issuer's keys win when the user issuer is the same", async (t) => {
  const same = projectPolicyData(WORLD, { ...FULL, user: { issuer: SA_KEYS.issuer, audience: '', keys: { issuer: SA_KEYS.issuer, jwks: { keys: [] } } } }).document.kaos;
  t.same(same.jwks, { [SA_KEYS.issuer]: SA_KEYS.jwks });
  t.same(same.user, { audience: '', issuer: SA_KEYS.issuer });
});

t.test('a grant reaches only its own namespace, and a subject whose grants reach nothing has no entry', async (t) => {
  const users = projectPolicyData(WORLD, FULL).document.kaos.user_grants as Record<string, string[]>;
  t.notOk('user:bob' in users, 'an unparsable selector matches nothing');
  t.notOk((users['user:alice'] ?? []).some((id) => id.includes('/team-b/')));
});

t.test('the same world gives the same bytes', async (t) => {
  const reordered = { ...WORLD, agents: [...WORLD.agents].reverse(), accessGrants: [...WORLD.accessGrants].reverse() };
  t.equal(projectPolicyData(reordered, FULL).json, projectPolicyData(WORLD, FULL).json);
});
