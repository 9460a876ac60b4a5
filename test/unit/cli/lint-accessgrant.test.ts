// `kaos-operator lint` judges AccessGrants as the webhook does (docs/api.md, "AccessGrant"): the
// same errors, the same warnings, a named resource found among the files it is given.
import t from 'tap';
import { stringify } from 'yaml';
import { lintInProcess } from './support.ts';

const yamlStream = (docs: readonly unknown[]): string => docs.map((d) => `---\n${stringify(d)}`).join('');
const grant = (name: string, spec: unknown) => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'AccessGrant', metadata: { name }, spec });
const agent = { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'helper' }, spec: { modelAPI: 'm1' } };
const modelAPI = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm1' }, spec: { mode: 'Hosted', hostedConfig: { model: 'llama3:8b' } } };

t.test('a grant of neither form, a bad name and a bad selector: every error, exit 1', async (t) => {
  const out = await lintInProcess(['lint', '-'], yamlStream([
    grant('bad', { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'Agent' }, { kind: 'Agent', name: 'Tools_1' }, { selector: { matchExpressions: [{ key: 'x', operator: 'In' }] } }] }),
  ]));
  t.equal(out.code, 1);
  t.match(out.stdout, 'AccessGrant/default/bad: error: spec.resources[0]: Invalid value: "object": exactly one of kind and name, or selector, must be set');
  t.match(out.stdout, 'AccessGrant/default/bad: error: spec.resources[1].name: Invalid value: "Tools_1": a lowercase RFC 1123 subdomain');
  t.match(out.stdout, "AccessGrant/default/bad: error: spec.resources[2].selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
});

t.test('a valid grant: the gates of the environment it runs in, a named resource looked up among the files', async (t) => {
  const out = await lintInProcess(['lint', '-'], yamlStream([
    modelAPI,
    agent,
    grant('ok', { subjects: [{ kind: 'Group', name: 'ops' }, { kind: 'Agent', name: 'helper' }], resources: [{ kind: 'Agent', name: 'helper' }, { kind: 'MCPServer', name: 'missing' }] }),
  ]));
  t.equal(out.code, 0, out.stdout);
  t.match(out.stdout, 'AccessGrant/default/ok: warning: this AccessGrant will not be enforced: Gateway authorization is not enabled; this AccessGrant is not enforced');
  t.match(out.stdout, "AccessGrant/default/ok: warning: spec.subjects[1]: an Agent subject is not projected; an Agent's access follows its own spec");
  t.match(out.stdout, 'AccessGrant/default/ok: warning: spec.resources[1].name: MCPServer "missing" does not exist yet; the grant covers it once it does');
  t.notMatch(out.stdout, 'Agent "helper" does not exist', 'the Agent of the same files is found');
});
