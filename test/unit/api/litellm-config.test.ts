// An inline LiteLLM config: refused before it is parsed when longer than the schema allows, and
// parsed once per distinct config — not twice per ModelAPI review, not once per Agent that reads
// it at admission or in its reconcile. The parser's diagnostics channel counts the parses.
import t from 'tap';
import { subscribe } from 'node:diagnostics_channel';
import type { KubeObject } from '../../../src/api/meta.ts';
import type { ReconcileReads } from '../../../src/controller/reconcile/context.ts';
import { MAX_LITELLM_CONFIG_LENGTH } from '../../../src/api/schema/limits.ts';
import { YAML_PARSE_CHANNEL } from '../../../src/api/untrusted-yaml.ts';
import { validateObject } from '../../../src/api/validation/validate-object.ts';
import { modelServedError } from '../../../src/api/validation/new-shapes.ts';
import { resolveAgentDeps } from '../../../src/controller/reconcile/agent.ts';
import { liteLLMConfigProblems } from '../../../src/api/validation/litellm-config.ts';

// Every parse, as the parser announces it: the webhooks and the controller share one memory of
// configs, as here (one module graph), so each test below uses configs no other test parses.
let parses = 0;
subscribe(YAML_PARSE_CHANNEL, () => {
  parses++;
});

const config = (names: string[]): string => `model_list:\n${names.map((n) => `  - model_name: ${n}\n    litellm_params: {model: ${n}}\n`).join('')}`;
const modelAPI = (fromString: string, resourceVersion: string, models?: string[]): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'ModelAPI',
  metadata: { name: 'm', namespace: 'ns', uid: 'u-m', resourceVersion },
  spec: { mode: 'Proxy', proxyConfig: { ...(models === undefined ? {} : { models }), configYaml: { fromString } } },
  status: { ready: true, phase: 'Ready' },
});

t.test('longer than the schema allows: refused before it is parsed', async (t) => {
  const before = parses;
  t.same(liteLLMConfigProblems(`${config(['a'])}#${'x'.repeat(MAX_LITELLM_CONFIG_LENGTH)}`), [
    `may not be more than ${MAX_LITELLM_CONFIG_LENGTH} characters: put a larger config in a Secret and use fromSecretKeyRef`,
  ]);
  t.equal(parses, before, 'nothing parsed');
});

t.test('a ModelAPI review parses its config once, though three rules read it', async (t) => {
  const before = parses;
  // The newer shape: the config's problems, and its names against `models`.
  const review = validateObject('ModelAPI', modelAPI(config(['gpt-4o', 'gpt-4o-mini', 'x']), '1', ['gpt-4o', 'gpt-4o-mini']), { referencePolicy: 'Enforce' });
  t.match(review.errors, [{ field: 'spec.proxyConfig.configYaml.fromString', detail: /model_name "x" in configYaml not found in models list/ }]);
  t.equal(parses - before, 1, 'parsed once');
});

t.test('each distinct config is parsed once: a ModelAPI update, then every Agent that reads it', async (t) => {
  const before = parses;
  const old = modelAPI(config(['gpt-4o', 'gpt-4o-mini']), '1');
  const now = modelAPI(config(['gpt-4o']), '2');
  // The original shape: the new config's problems, and the stranding warning, which reads both configs.
  const review = validateObject('ModelAPI', now, {
    oldObject: old,
    referencePolicy: 'Enforce',
    modelAPIDependents: [{ kind: 'Agent', name: 'a1', model: 'gpt-4o-mini' }],
  });
  t.same(review.errors, []);
  t.match(review.warnings, [/no longer serves the model of Agents: a1/]);
  t.equal(parses - before, 2, 'the review parsed the old and the new config once each');

  // Agents read a config no review has parsed yet: the first reader parses it, the rest remember.
  const served = modelAPI(config(['gpt-4o', 'o1']), '3');
  const reads = { kaos: (kind: string) => (kind === 'ModelAPI' ? served : undefined) } as unknown as ReconcileReads;
  const afterReview = parses;
  for (let i = 0; i < 50; i++) t.equal(modelServedError({ modelAPI: 'm', model: 'gpt-4o' }, { name: 'm', spec: served.spec }), undefined);
  t.match(modelServedError({ modelAPI: 'm', model: 'gpt-4o-mini' }, { name: 'm', spec: served.spec }), { field: 'spec.model' }, 'judged by the config');
  t.equal(parses - afterReview, 1, '51 Agent reviews: one parse');
  const afterAdmission = parses;
  for (let i = 0; i < 50; i++) t.match(resolveAgentDeps(reads, 'ns', { modelAPI: 'm', model: 'gpt-4o' }), { deps: {} });
  t.equal(parses - afterAdmission, 0, '50 Agent reconciles: none, the reviews parsed it');
});

t.test('entries without a model_name: one problem each for as many as a denial shows, then one for the rest', async (t) => {
  const problems = liteLLMConfigProblems(`model_list: [${'1, '.repeat(250)}{model_name: ok}]`);
  t.equal(problems.length, 101);
  t.equal(problems[0], 'model_list[0] must have a model_name');
  t.equal(problems[99], 'model_list[99] must have a model_name');
  t.equal(problems[100], 'model_list: 150 more entries have no model_name');
});
