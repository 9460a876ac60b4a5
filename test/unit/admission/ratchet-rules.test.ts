// Every admission rule ratchets (docs/api.md, "How updates are judged"): for each place in the
// rules' code that makes a field error, an object that breaks it, stored as a restore or an earlier
// version would have stored it (no webhook in the way), stays editable — an edit of another field
// is allowed — while an edit of the field it breaks is judged in full and refused.
//
// The list of rules is the code's own: every call of a field-error constructor in the rule modules
// below is a rule, and each must be named by a case here (RULE_FILES). A new rule without a case
// fails "every rule has a case"; a case whose rule is gone fails too.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { createValidatingHandler, type PodSpecCheck } from '../../../src/admission/validate.ts';
import type { AdmissionDecision } from '../../../src/admission/types.ts';
import { invalid } from '../../../src/api/field-error.ts';
import { BUILTIN_HARNESS_RUNTIMES } from '../../../src/api/harness-runtime-defaults.ts';
import { parseHarnessRuntimes, type HarnessRegistryState } from '../../../src/api/harness-runtimes.ts';
import { REFERENCE_POLICY_KEY, type KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { LookupBudget, LookupNotMade } from '../../../src/api/lookup-budget.ts';
import { runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { parseRuntimes, type RegistryState } from '../../../src/api/mcp-runtimes.ts';
import { UNSUPPORTED_FIELDS } from '../../../src/api/unsupported-features.ts';
import { admissionRequest } from '../../support/admission-request.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { chatAPI, CONFIG, echoMCP, hosted, NS, object, store } from '../api/objects.ts';

type Json = Record<string, unknown>;

/**
 * The modules whose field errors are rules of their own: every module of src/api that builds a
 * field error, so that a new rule module is in this test without anyone adding it here — but
 * these, whose errors are classes with a case each below (the schema's) or no rule at all.
 */
const NOT_RULE_FILES = new Set([
  'src/api/field-error.ts', // the factories themselves
  'src/api/validation/ajv-field-errors.ts', // the schema's errors, in the API server's words
  'src/api/validation/schema-validation.ts', // the schema
  'src/api/validation/schema-limits.ts', // the schema's maxLength and maxItems
  'src/api/validation/list-maps.ts', // the schema's list-type maps
  'src/api/validation/answer-limits.ts', // how many errors an answer holds, not a rule
]);
const RULE_FILES = readdirSync(new URL('src/api/', new URL('../../../', import.meta.url)), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => `src/api/${file}`)
  .filter((file) => !NOT_RULE_FILES.has(file))
  .sort();
const FACTORY = /\b(required|invalid|invalidOmitValue|forbidden|notFound|notSupported|duplicate|tooLong|tooMany|typeInvalid)\(|new FieldError\(/;
const ROOT = new URL('../../../', import.meta.url);

/** Each rule: `<file name>: <its line, trimmed>`. */
function ruleSites(): string[] {
  return RULE_FILES.flatMap((file) =>
    readFileSync(new URL(file, ROOT), 'utf8')
      .split('\n')
      .filter((line) => FACTORY.test(line) && !/^\s*(import|\/\/|\*)/.test(line))
      .map((line) => `${file.split('/').at(-1)}: ${line.trim()}`),
  );
}

interface RuleCase {
  /** `<file name>: <text>`: the text is part of exactly one rule's line in that file. */
  rule: string;
  kind: KaosKind;
  /** The stored object's spec, which breaks the rule. */
  spec: Json;
  /** Where its error is. */
  field: string;
  /** The spec with the rule's field edited, still wrong. */
  edited: Json;
  /** Where the edit's error is, when not at `field` (a list item of its own). */
  editedField?: string;
  metadata?: Json;
  editedMetadata?: Json;
  /** The stored object breaks nothing: the rule judges a change (a volume that shrinks). */
  transition?: boolean;
  /** An edit of another field: by default a container argument (an AccessGrant: one more subject). */
  unrelated?: (o: KubeObject) => KubeObject;
}

const agent = (spec: Json): Json => ({ modelAPI: 'm', ...spec });
const memory = (block: Json): Json => agent({ config: { memory: block } });
const proxy = (config: Json, extra: Json = {}): Json => ({ mode: 'Proxy', proxyConfig: config, ...extra });
const withKey = (apiKey: Json): Json => proxy({ models: ['a'], apiKey });
const harness = (h: Json, extra: Json = {}): Json => agent({ harness: h, ...extra });
const python = (tools: Json, extra: Json = {}): Json => ({ type: 'python-runtime', config: { tools }, ...extra });
const localStore = (extra: Json): Json => ({
  storage: { type: 'local' },
  models: { summarization: { modelAPI: 'chat', model: 'openai/gpt-4o-mini' }, embedding: { modelAPI: 'chat', model: 'openai/text-embedding-3-small' } },
  ...extra,
});
const external = (ext: unknown): Json => localStore({ storage: { type: 'external', ...(ext === undefined ? {} : { external: ext }) } });
const storeModels = (summarization: Json): Json => localStore({ models: { summarization, embedding: { modelAPI: 'chat', model: 'openai/text-embedding-3-small' } } });
const selector = (s: Json): Json => ({ subjects: [{ kind: 'User', name: 'alice' }], resources: [{ selector: s }] });
const expression = (e: Json): Json => selector({ matchExpressions: [e] });
const litellm = (name: string): string => `model_list:\n  - model_name: ${name}\n    litellm_params: {model: ollama/${name}}\n`;
const POLICY = `metadata.annotations[${REFERENCE_POLICY_KEY}]`;

const CASES: RuleCase[] = [
  // The Agent's harness.
  { rule: 'agent-harness.ts: invalid(`${WORKSPACE}.repoURL`', kind: 'Agent', field: 'spec.harness.workspace.repoURL',
    spec: harness({ runtime: 'pi', workspace: { repoURL: 'git://example.com/r.git' } }), edited: harness({ runtime: 'pi', workspace: { repoURL: 'git://example.com/other.git' } }) },
  { rule: 'agent-harness.ts: invalid(`${WORKSPACE}.branch`', kind: 'Agent', field: 'spec.harness.workspace.branch',
    spec: harness({ runtime: 'pi', workspace: { repoURL: 'https://example.com/r.git', branch: '-x' } }), edited: harness({ runtime: 'pi', workspace: { repoURL: 'https://example.com/r.git', branch: '-y' } }) },
  { rule: "agent-harness.ts: notSupported('spec.harness.runtime'", kind: 'Agent', field: 'spec.harness.runtime',
    spec: harness({ runtime: 'gone' }), edited: harness({ runtime: 'gone-too' }) },
  { rule: "agent-harness.ts: required('spec.container.image'", kind: 'Agent', field: 'spec.container.image',
    spec: harness({ runtime: 'claude' }), edited: harness({ runtime: 'claude' }, { container: { image: '' } }) },
  // How many pods an Agent runs (docs/api.md, "Agent replicas and autoscaling").
  { rule: "agent-scaling.ts: forbidden(AUTOSCALING, 'may not be set together", kind: 'Agent', field: 'spec.autoscaling',
    spec: agent({ replicas: 1, autoscaling: { maxReplicas: 1 } }), edited: agent({ replicas: 1, autoscaling: { maxReplicas: 1, targetCPUUtilizationPercentage: 50 } }) },
  { rule: "agent-scaling.ts: invalid('spec.replicas', replicas, IN_PROCESS", kind: 'Agent', field: 'spec.replicas',
    spec: agent({ replicas: 3 }), edited: agent({ replicas: 2 }) },
  { rule: 'agent-scaling.ts: invalid(`${AUTOSCALING}.maxReplicas`, maxReplicas, IN_PROCESS', kind: 'Agent', field: 'spec.autoscaling.maxReplicas',
    spec: agent({ autoscaling: { maxReplicas: 3 } }), edited: agent({ autoscaling: { maxReplicas: 4 } }) },
  { rule: 'agent-scaling.ts: must be greater than or equal to minReplicas', kind: 'Agent', field: 'spec.autoscaling.maxReplicas',
    spec: agent({ config: { memory: { enabled: false } }, autoscaling: { minReplicas: 3, maxReplicas: 2 } }),
    edited: agent({ config: { memory: { enabled: false } }, autoscaling: { minReplicas: 3, maxReplicas: 1 } }) },
  // The Agent's memory.
  { rule: 'agent-memory.ts: an earlier KAOS form', kind: 'Agent', field: 'spec.config.memory.scope',
    spec: memory({ scope: 'agent' }), edited: memory({ scope: 'session' }) },
  { rule: "agent-memory.ts: type 'remote' requires", kind: 'Agent', field: 'spec.config.memory.memoryStore',
    spec: memory({ type: 'remote' }), edited: memory({ type: 'remote', memoryStore: '' }) },
  { rule: "agent-memory.ts: type 'local' must not", kind: 'Agent', field: 'spec.config.memory.memoryStore',
    spec: memory({ type: 'local', memoryStore: 'narrow' }), edited: memory({ type: 'local', memoryStore: 'wide' }) },
  { rule: 'agent-memory.ts: tools requires memoryStore', kind: 'Agent', field: 'spec.config.memory.memoryStore',
    spec: memory({ tools: 'read' }), edited: memory({ tools: 'read', memoryStore: '' }) },
  { rule: 'agent-memory.ts: forbidden(`${MEMORY}.maxReadScope`, refused)', kind: 'Agent', field: 'spec.config.memory.maxReadScope',
    spec: memory({ memoryStore: 'wide', maxReadScope: 'user' }), edited: memory({ memoryStore: 'narrow', maxReadScope: 'agent' }) },
  { rule: 'agent-memory.ts: notFound(field, store, why)', kind: 'Agent', field: 'spec.config.memory.memoryStore',
    spec: memory({ memoryStore: 'unchecked-1' }), edited: memory({ memoryStore: 'unchecked-2' }) },
  { rule: 'agent-memory.ts: notFound(field, store)', kind: 'Agent', field: 'spec.config.memory.memoryStore',
    spec: memory({ memoryStore: 'gone' }), edited: memory({ memoryStore: 'gone-too' }) },
  { rule: 'agent-memory.ts: invalidOmitValue(`${MEMORY}.maxReadScope`, exceeded)', kind: 'Agent', field: 'spec.config.memory.maxReadScope',
    spec: memory({ memoryStore: 'narrow', maxReadScope: 'agent' }), edited: memory({ memoryStore: 'narrow', maxReadScope: 'user' }) },
  // The newer KAOS shapes.
  { rule: "new-shapes.ts: required(API_KEY, 'must specify exactly one of value, valueFrom')", kind: 'ModelAPI', field: 'spec.proxyConfig.apiKey',
    spec: withKey({}), edited: withKey({ value: '' }) },
  { rule: "new-shapes.ts: forbidden(`${API_KEY}.valueFrom`", kind: 'ModelAPI', field: 'spec.proxyConfig.apiKey.valueFrom',
    spec: withKey({ value: 'k', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }), edited: withKey({ value: 'k', valueFrom: { secretKeyRef: { name: 't', key: 'k' } } }) },
  { rule: "new-shapes.ts: required(path, 'must specify exactly one of secretKeyRef, configMapKeyRef')", kind: 'ModelAPI', field: 'spec.proxyConfig.apiKey.valueFrom',
    spec: withKey({ valueFrom: {} }), edited: withKey({ valueFrom: { secretKeyRef: null } }) },
  { rule: 'new-shapes.ts: forbidden(`${path}.configMapKeyRef`', kind: 'ModelAPI', field: 'spec.proxyConfig.apiKey.valueFrom.configMapKeyRef',
    spec: withKey({ valueFrom: { secretKeyRef: { name: 's', key: 'k' }, configMapKeyRef: { name: 'c', key: 'k' } } }),
    edited: withKey({ valueFrom: { secretKeyRef: { name: 's', key: 'k' }, configMapKeyRef: { name: 'd', key: 'k' } } }) },
  { rule: 'new-shapes.ts: required(`${path}.${ref}.name`)', kind: 'ModelAPI', field: 'spec.proxyConfig.apiKey.valueFrom.secretKeyRef.name',
    spec: withKey({ valueFrom: { secretKeyRef: { key: 'k' } } }), edited: withKey({ valueFrom: { secretKeyRef: { key: 'k', name: '' } } }) },
  { rule: 'new-shapes.ts: invalidOmitValue(', kind: 'ModelAPI', field: 'spec.proxyConfig.configYaml.fromString',
    spec: proxy({ models: ['a'], configYaml: { fromString: litellm('b') } }), edited: proxy({ models: ['a'], configYaml: { fromString: litellm('c') } }) },
  { rule: "new-shapes.ts: notFound('spec.model'", kind: 'Agent', field: 'spec.model',
    spec: agent({ model: 'gpt-4o' }), edited: agent({ model: 'gpt-5' }) },
  // The reference policy: a rule on metadata.
  { rule: 'reference-policy.ts: notSupported(REFERENCE_POLICY_FIELD', kind: 'Agent', field: POLICY,
    spec: agent({}), edited: agent({}), metadata: { annotations: { [REFERENCE_POLICY_KEY]: 'Sometimes' } }, editedMetadata: { annotations: { [REFERENCE_POLICY_KEY]: 'Never' } } },
  // AccessGrants.
  { rule: 'validate-accessgrant.ts: EXACTLY_ONE_FORM', kind: 'AccessGrant', field: 'spec.resources[0]',
    spec: { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'Agent' }] }, edited: { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'MCPServer' }] } },
  // The Agent's references.
  { rule: 'validate-agent.ts: missing(notFound(field, name, why))', kind: 'Agent', field: 'spec.mcpServers[0]',
    spec: agent({ mcpServers: ['unchecked-1'] }), edited: agent({ mcpServers: ['unchecked-2'] }) },
  { rule: 'validate-agent.ts: missing(notFound(field, name))', kind: 'Agent', field: 'spec.modelAPI',
    spec: agent({ modelAPI: 'gone' }), edited: agent({ modelAPI: 'gone-too' }) },
  { rule: 'validate-agent.ts: [required(field)]', kind: 'Agent', field: 'spec.modelAPI',
    spec: agent({ modelAPI: '' }), edited: agent({ modelAPI: 'Not_A_Name' }) },
  { rule: 'validate-agent.ts: an agent cannot list itself', kind: 'Agent', field: 'spec.agentNetwork.access[0]',
    spec: agent({ agentNetwork: { access: ['subject'] } }), edited: agent({ agentNetwork: { access: ['echo', 'subject'] } }), editedField: 'spec.agentNetwork.access[1]' },
  { rule: "validate-agent.ts: invalidOmitValue('spec.config.autonomous.goal'", kind: 'Agent', field: 'spec.config.autonomous.goal',
    spec: agent({ config: { autonomous: { goal: ' ' } } }), edited: agent({ config: { autonomous: { goal: '  ' } } }) },
  { rule: 'validate-agent.ts: duplicate(field, name)', kind: 'Agent', field: 'spec.mcpServers[1]',
    spec: agent({ mcpServers: ['echo', 'echo'] }), edited: agent({ mcpServers: ['echo', 'echo', 'echo'] }), editedField: 'spec.mcpServers[2]' },
  // MCPServers.
  { rule: "validate-mcpserver.ts: 'may not be set together with spec.type'", kind: 'MCPServer', field: 'spec.serviceAccountName',
    spec: python({ fromPackage: 'a' }, { serviceAccountName: 'sa' }), edited: python({ fromPackage: 'a' }, { serviceAccountName: 'sb' }) },
  { rule: "validate-mcpserver.ts: 'may not be set together with spec.runtime'", kind: 'MCPServer', field: 'spec.config',
    spec: { runtime: 'python-string', params: 'x', config: { tools: { fromString: 'a' } } }, edited: { runtime: 'python-string', params: 'x', config: { tools: { fromString: 'b' } } } },
  { rule: "validate-mcpserver.ts: required('spec', ", kind: 'MCPServer', field: 'spec',
    // The error is the whole spec's: only an edit outside it (a label) leaves it alone.
    spec: { params: 'x' }, edited: { params: 'y' }, unrelated: (o) => ({ ...o, metadata: { ...o.metadata, labels: { team: 'a' } } }) },
  { rule: "validate-mcpserver.ts: required('spec.container.image'", kind: 'MCPServer', field: 'spec.container.image',
    spec: { runtime: 'custom' }, edited: { runtime: 'custom', container: { image: '' } } },
  { rule: "validate-mcpserver.ts: notSupported('spec.runtime'", kind: 'MCPServer', field: 'spec.runtime',
    spec: { runtime: 'gone' }, edited: { runtime: 'gone-too' } },
  { rule: "validate-mcpserver.ts: required('spec.container.env'", kind: 'MCPServer', field: 'spec.container.env',
    spec: { runtime: 'slack' }, edited: { runtime: 'slack', container: { env: [{ name: 'OTHER', value: '1' }] } } },
  { rule: 'validate-mcpserver.ts: required(TOOLS', kind: 'MCPServer', field: 'spec.config.tools',
    spec: python({}), edited: python({ fromPackage: '' }) },
  { rule: 'validate-mcpserver.ts: may not be set when ${first} is set', kind: 'MCPServer', field: 'spec.config.tools.fromString',
    spec: python({ fromPackage: 'a', fromString: 'b' }), edited: python({ fromPackage: 'a', fromString: 'c' }) },
  { rule: "validate-mcpserver.ts: 'only supported when type is python-runtime'", kind: 'MCPServer', field: 'spec.config.tools.fromString',
    spec: { type: 'node-runtime', config: { tools: { fromString: 'a' } } }, edited: { type: 'node-runtime', config: { tools: { fromString: 'b' } } } },
  { rule: 'validate-mcpserver.ts: PACKAGE_RULES[runtime]', kind: 'MCPServer', field: 'spec.config.tools.fromPackage',
    spec: python({ fromPackage: 'bad package!' }), edited: python({ fromPackage: 'bad package?' }) },
  // MemoryStores.
  { rule: 'validate-memorystore.ts: storage.external is required', kind: 'MemoryStore', field: 'spec.storage.external',
    spec: external(undefined), edited: external(null) },
  { rule: 'validate-memorystore.ts: connectionSecretRef.name', kind: 'MemoryStore', field: 'spec.storage.external.connectionSecretRef.name',
    spec: external({ provider: 'redis', connectionSecretRef: {} }), edited: external({ provider: 'redis', connectionSecretRef: { name: '' } }) },
  { rule: 'validate-memorystore.ts: replicas must be 1', kind: 'MemoryStore', field: 'spec.replicas',
    spec: localStore({ replicas: 2 }), edited: localStore({ replicas: 3 }) },
  { rule: 'validate-memorystore.ts: COMPACTION_MARKS_MESSAGE', kind: 'MemoryStore', field: 'spec.mediumTerm',
    spec: localStore({ mediumTerm: { compactionTrigger: 10, compactionTarget: 20 } }), edited: localStore({ mediumTerm: { compactionTrigger: 10, compactionTarget: 30 } }) },
  { rule: 'validate-memorystore.ts: must be greater than zero', kind: 'MemoryStore', field: 'spec.storage.local.persistentVolume.size',
    spec: localStore({ storage: { type: 'local', local: { persistentVolume: { size: '0' } } } }), edited: localStore({ storage: { type: 'local', local: { persistentVolume: { size: '0Gi' } } } }) },
  { rule: 'validate-memorystore.ts: cannot shrink', kind: 'MemoryStore', field: 'spec.storage.local.persistentVolume.size', transition: true,
    spec: localStore({ storage: { type: 'local', local: { persistentVolume: { size: '10Gi' } } } }), edited: localStore({ storage: { type: 'local', local: { persistentVolume: { size: '5Gi' } } } }) },
  { rule: 'validate-memorystore.ts: required(`${path}.modelAPI`)', kind: 'MemoryStore', field: 'spec.models.summarization.modelAPI',
    spec: storeModels({ modelAPI: '', model: 'x' }), edited: storeModels({ modelAPI: 'Not_A_Name', model: 'x' }) },
  { rule: 'validate-memorystore.ts: notFound(`${path}.modelAPI`, name, why)', kind: 'MemoryStore', field: 'spec.models.summarization.modelAPI',
    spec: storeModels({ modelAPI: 'unchecked-1', model: 'x' }), edited: storeModels({ modelAPI: 'unchecked-2', model: 'x' }) },
  { rule: 'validate-memorystore.ts: notFound(`${path}.modelAPI`, name)', kind: 'MemoryStore', field: 'spec.models.summarization.modelAPI',
    spec: storeModels({ modelAPI: 'gone', model: 'x' }), edited: storeModels({ modelAPI: 'gone-too', model: 'x' }) },
  { rule: 'validate-memorystore.ts: notFound(`${path}.model`', kind: 'MemoryStore', field: 'spec.models.summarization.model',
    spec: storeModels({ modelAPI: 'chat', model: 'llama' }), edited: storeModels({ modelAPI: 'chat', model: 'mistral' }) },
  // ModelAPIs.
  { rule: "validate-modelapi.ts: 'required when mode is Proxy'", kind: 'ModelAPI', field: 'spec.proxyConfig',
    spec: { mode: 'Proxy' }, edited: { mode: 'Proxy', proxyConfig: null } },
  { rule: 'validate-modelapi.ts: must specify at least one of', kind: 'ModelAPI', field: 'spec.proxyConfig',
    spec: proxy({}), edited: proxy({ apiBase: '' }) },
  { rule: "validate-modelapi.ts: 'may not be set when mode is Proxy'", kind: 'ModelAPI', field: 'spec.hostedConfig',
    spec: proxy({ model: 'p' }, { hostedConfig: { model: 'x' } }), edited: proxy({ model: 'p' }, { hostedConfig: { model: 'y' } }) },
  { rule: "validate-modelapi.ts: 'required when mode is Hosted'", kind: 'ModelAPI', field: 'spec.hostedConfig.model',
    spec: { mode: 'Hosted' }, edited: { mode: 'Hosted', hostedConfig: {} } },
  { rule: "validate-modelapi.ts: 'may not be set when mode is Hosted'", kind: 'ModelAPI', field: 'spec.proxyConfig',
    spec: { mode: 'Hosted', hostedConfig: { model: 'x' }, proxyConfig: { model: 'p' } }, edited: { mode: 'Hosted', hostedConfig: { model: 'x' }, proxyConfig: { model: 'q' } } },
  { rule: "validate-modelapi.ts: 'must be an http or https URL'", kind: 'ModelAPI', field: 'spec.proxyConfig.apiBase',
    spec: proxy({ apiBase: 'ftp://ollama:11434' }), edited: proxy({ apiBase: 'ftp://ollama:11435' }) },
  { rule: 'validate-modelapi.ts: must specify exactly one of fromString, fromSecretKeyRef', kind: 'ModelAPI', field: 'spec.proxyConfig.configYaml',
    spec: proxy({ configYaml: {} }), edited: proxy({ configYaml: { fromString: '' } }) },
  { rule: 'validate-modelapi.ts: forbidden(`${path}.fromSecretKeyRef`', kind: 'ModelAPI', field: 'spec.proxyConfig.configYaml.fromSecretKeyRef',
    spec: proxy({ configYaml: { fromString: litellm('a'), fromSecretKeyRef: { name: 's', key: 'k' } } }),
    edited: proxy({ configYaml: { fromString: litellm('a'), fromSecretKeyRef: { name: 't', key: 'k' } } }) },
  { rule: 'validate-modelapi.ts: liteLLMConfigProblems', kind: 'ModelAPI', field: 'spec.proxyConfig.configYaml.fromString',
    spec: proxy({ configYaml: { fromString: 'model_list: [' } }), edited: proxy({ configYaml: { fromString: 'model_list: {' } }) },
  // One shape per object part.
  { rule: 'shapes.ts: minority.map', kind: 'Agent', field: 'spec.model',
    spec: agent({ model: 'llama3:8b', config: { env: [{ name: 'MODEL_NAME', value: 'x' }] } }), edited: agent({ model: 'llama3:70b', config: { env: [{ name: 'MODEL_NAME', value: 'x' }] } }) },
  { rule: 'shapes.ts: forbidden(own.path', kind: 'ModelAPI', field: 'spec.proxyConfig.env',
    spec: proxy({ models: ['a'], env: [{ name: 'X', value: '1' }] }, { container: { env: [{ name: 'Y', value: '2' }] } }),
    edited: proxy({ models: ['a'], env: [{ name: 'X', value: '3' }] }, { container: { env: [{ name: 'Y', value: '2' }] } }) },
  // KAOS features this operator leaves out: one case per entry of the table (none today).
  ...Object.entries(UNSUPPORTED_FIELDS).flatMap(([kind, fields]) =>
    fields.map((f): RuleCase => {
      const at = (value: unknown): Json => f.keys.reduceRight<unknown>((inner, k) => ({ [k]: inner }), value) as Json;
      return { rule: 'unsupported-features.ts: NOT_SUPPORTED', kind: kind as KaosKind, field: `spec.${f.keys.join('.')}`, spec: at({ a: 1 }), edited: at({ a: 2 }) };
    }),
  ),
  // Label selectors (an AccessGrant's).
  { rule: 'label-selector.ts: invalid(labelsPath, key, p)', kind: 'AccessGrant', field: 'spec.resources[0].selector.matchLabels',
    spec: selector({ matchLabels: { 'bad key!': 'v' } }), edited: selector({ matchLabels: { 'bad key?': 'v' } }) },
  { rule: 'label-selector.ts: invalid(labelsPath, value, p)', kind: 'AccessGrant', field: 'spec.resources[0].selector.matchLabels',
    spec: selector({ matchLabels: { k: 'bad value!' } }), edited: selector({ matchLabels: { k: 'bad value?' } }) },
  { rule: "label-selector.ts: required(child(at, 'values')", kind: 'AccessGrant', field: 'spec.resources[0].selector.matchExpressions[0].values',
    spec: expression({ key: 'k', operator: 'In', values: [] }), edited: expression({ key: 'k', operator: 'In' }) },
  { rule: "label-selector.ts: forbidden(child(at, 'values')", kind: 'AccessGrant', field: 'spec.resources[0].selector.matchExpressions[0].values',
    spec: expression({ key: 'k', operator: 'Exists', values: ['a'] }), edited: expression({ key: 'k', operator: 'Exists', values: ['b'] }) },
  { rule: "label-selector.ts: invalid(child(at, 'operator')", kind: 'AccessGrant', field: 'spec.resources[0].selector.matchExpressions[0].operator',
    spec: expression({ key: 'k', operator: 'Near', values: ['a'] }), edited: expression({ key: 'k', operator: 'Far', values: ['a'] }) },
  { rule: "label-selector.ts: invalid(child(at, 'key')", kind: 'AccessGrant', field: 'spec.resources[0].selector.matchExpressions[0].key',
    spec: expression({ key: 'bad key!', operator: 'Exists' }), edited: expression({ key: 'bad key?', operator: 'Exists' }) },
  { rule: "label-selector.ts: invalid(index(child(at, 'values'), j)", kind: 'AccessGrant', field: 'spec.resources[0].selector.matchExpressions[0].values[0]',
    spec: expression({ key: 'k', operator: 'In', values: ['bad value!'] }), edited: expression({ key: 'k', operator: 'In', values: ['bad value?'] }) },
  // Names.
  { rule: 'name-validation.ts: invalid(field, value, problem)', kind: 'Agent', field: 'spec.mcpServers[0]',
    spec: agent({ mcpServers: ['Not_A_Name'] }), edited: agent({ mcpServers: ['Not_B_Name'] }) },
];

/** A lookup whose names `unchecked-*` are never looked up: the request's budget ran out (lookup-budget.ts). */
class Lookup extends MemoryLookup {
  readonly harnessRuntimes = (): HarnessRegistryState => parseHarnessRuntimes(runtimesYaml(BUILTIN_HARNESS_RUNTIMES));
  readonly mcpRuntimes = (): RegistryState => parseRuntimes(runtimesYaml());
  override async get(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    if (name.startsWith('unchecked-')) throw new LookupNotMade('count', budget ?? new LookupBudget());
    return super.get(kind, namespace, name, budget);
  }
}

const world = (): Lookup =>
  new Lookup().setNamespace(NS).add(hosted('m'), chatAPI(), echoMCP('echo'), store('narrow', { maxReadScope: 'session' }), store('wide', { maxReadScope: 'user' })) as Lookup;

const NAME = 'subject';
const build = (kind: KaosKind, spec: Json, metadata: Json = {}): KubeObject => object(kind, NAME, spec, { metadata: { name: NAME, namespace: NS, ...metadata } });

/** An edit of a field no rule reads. */
function unrelatedEdit(c: RuleCase, o: KubeObject): KubeObject {
  if (c.unrelated !== undefined) return c.unrelated(o);
  const spec = o.spec as Json;
  if (c.kind === 'AccessGrant') return { ...o, spec: { ...spec, subjects: [...(spec.subjects as Json[]), { kind: 'Group', name: 'ratchet' }] } };
  return { ...o, spec: { ...spec, container: { ...(spec.container as Json | undefined), args: ['--ratchet'] } } };
}

const causes = (d: AdmissionDecision): string[] => (d.status?.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
const fields = (d: AdmissionDecision): string[] => (d.status?.details?.causes ?? []).map((c) => c.field ?? '');

t.test('every rule has a case, and every case names one rule', async (t) => {
  const sites = ruleSites();
  t.ok(sites.length > 50, `${sites.length} rules found in the rule modules`);
  for (const c of CASES) {
    const [file, text] = c.rule.split(/: (.*)/s) as [string, string];
    const matching = sites.filter((s) => s.startsWith(`${file}: `) && s.includes(text));
    t.equal(matching.length, 1, `"${c.rule}" names exactly one rule (it names ${matching.length})`);
  }
  const uncovered = sites.filter((s) => {
    // A table-driven rule is covered by its table's cases, none of which exists while the table is empty.
    if (s.startsWith('unsupported-features.ts: ') && Object.values(UNSUPPORTED_FIELDS).every((f) => f.length === 0)) return false;
    return !CASES.some((c) => {
      const [file, text] = c.rule.split(/: (.*)/s) as [string, string];
      return s.startsWith(`${file}: `) && s.includes(text);
    });
  });
  t.same(uncovered, [], 'a rule without a case here: add one (its broken object, its field, an edit of that field)');
});

for (const c of CASES) {
  t.test(`${c.rule}: stored broken, an edit of another field is allowed; an edit of ${c.field} is judged`, async (t) => {
    const handler = createValidatingHandler(c.kind, { lookup: world(), config: CONFIG });
    const stored = build(c.kind, c.spec, c.metadata);
    const created = await handler(admissionRequest(c.kind, stored));
    if (c.transition === true) t.equal(created.allowed, true, 'a rule about a change: the object alone is fine');
    else t.ok(fields(created).includes(c.field), `the object breaks the rule on CREATE: ${causes(created).join('; ')}`);

    const other = unrelatedEdit(c, stored);
    const update = (o: KubeObject): Promise<AdmissionDecision> => handler(admissionRequest(c.kind, o, { operation: 'UPDATE', oldObject: stored }));
    const allowed = await update(other);
    t.equal(allowed.allowed, true, `an edit of another field is allowed: ${causes(allowed).join('; ')}`);

    const edited = await update(build(c.kind, c.edited, c.editedMetadata ?? c.metadata));
    t.equal(edited.allowed, false, 'an edit of the field is refused');
    t.ok(fields(edited).includes(c.editedField ?? c.field), `at ${c.editedField ?? c.field}: ${causes(edited).join('; ')}`);
  });
}

t.test('the schema and the pod check ratchet too', async (t) => {
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  // A value the CRD of an earlier version allowed (the API server ratchets its own schema alike).
  const stored = build('Agent', agent({ config: { reasoningLoopMaxSteps: 500 } }));
  t.equal((await handler(admissionRequest('Agent', stored))).allowed, false, 'the schema refuses it on CREATE');
  const other = unrelatedEdit(CASES[0] as RuleCase, stored);
  t.equal((await handler(admissionRequest('Agent', other, { operation: 'UPDATE', oldObject: stored }))).allowed, true, 'an edit of another field is allowed');
  const edited = await handler(admissionRequest('Agent', build('Agent', agent({ config: { reasoningLoopMaxSteps: 501 } })), { operation: 'UPDATE', oldObject: stored }));
  t.same(fields(edited), ['spec.config.reasoningLoopMaxSteps'], 'an edit of the field is judged');

  // The pod check: the API server's dry run, here a fake that refuses a volume mount of a volume
  // whose name starts with "x" (the pod has none).
  const checked: unknown[] = [];
  const podSpecCheck: PodSpecCheck = async (_kind, o) => {
    checked.push(o.spec.podSpec);
    const name = JSON.stringify(o.spec.podSpec ?? {}).match(/"name":"(x[^"]*)"/)?.[1];
    return name === undefined ? [] : [invalid('spec.podSpec.containers[0].volumeMounts[0].name', name, 'not found')];
  };
  const pods = createValidatingHandler('Agent', { lookup: world(), config: CONFIG, podSpecCheck });
  const mount = (name: string): Json => ({ podSpec: { containers: [{ name: 'agent', volumeMounts: [{ name, mountPath: '/m' }] }] } });
  const broken = build('Agent', agent(mount('x')));
  t.equal((await pods(admissionRequest('Agent', broken))).allowed, false, 'the pod check refuses it on CREATE');
  const relabelled = build('Agent', agent({ ...mount('x'), config: { description: 'now described' } }));
  t.same(await pods(admissionRequest('Agent', relabelled, { operation: 'UPDATE', oldObject: broken })), { allowed: true }, 'an edit of another field is allowed');
  t.equal(checked.length, 3, 'the stored pod is checked again only because an error sat at a field the edit left alone');
  const moved = build('Agent', agent(mount('xx')));
  t.equal((await pods(admissionRequest('Agent', moved, { operation: 'UPDATE', oldObject: broken }))).allowed, false, 'an edit of the mount is judged');
});
