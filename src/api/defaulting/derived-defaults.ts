// Values the webhook derives from other fields or from the operator's configuration (docs/api.md, "Defaulting"):
// the container image of each kind, an Agent's MODEL_NAME, memory type and (newer shape) toolCallMode,
// a MemoryStore's replicas.
import type { Config, ImageDefaults } from '../../config/config.ts';
import { AGENT_DEFAULTS, MEMORY_STORE_DEFAULTS } from '../defaults.ts';
import { asArray, asRecord, asString, getIn, isRecord, isSet, type JsonRecord } from '../json.ts';
import type { KaosKind } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import { ORIGINAL_MEMORY_FIELDS, shapeOf } from '../shapes.ts';

export const IMAGE_FIELD = 'spec.container.image';
export const REPLICAS_FIELD = 'spec.replicas';
export const MODEL_NAME_ENV = 'MODEL_NAME';
export const MODEL_NAME_FIELD = `spec.config.env[${MODEL_NAME_ENV}]`;
export const TOOL_CALL_MODE_FIELD = 'spec.config.toolCallMode';

/** One spec field whose value the webhook may choose. */
export interface DerivedField {
  /** The path recorded in the kaos.tools/defaulted annotation. */
  readonly path: string;
  read(spec: JsonRecord): unknown;
  /** Returns false when the spec's shape leaves no place for the value (the schema check reports it). */
  write(spec: JsonRecord, value: unknown): boolean;
}

/** Returns the object at spec[key], creating it when absent; undefined when something else is there. */
function ensureRecord(parent: JsonRecord, key: string): JsonRecord | undefined {
  if (parent[key] === undefined || parent[key] === null) parent[key] = {};
  return asRecord(parent[key]);
}

/** A derived field the webhook also takes back, when a request leaves its value no place. */
export interface RemovableField extends DerivedField {
  /** Deletes the field's value. */
  remove(spec: JsonRecord): void;
}

export const imageField: RemovableField = {
  path: IMAGE_FIELD,
  read: (spec) => getIn(spec, 'container', 'image'),
  write(spec, value) {
    const container = ensureRecord(spec, 'container');
    if (container === undefined) return false;
    container.image = value;
    return true;
  },
  remove(spec) {
    const container = asRecord(spec.container);
    if (container === undefined) return;
    delete container.image;
    // The block the webhook made for the image goes with it.
    if (Object.keys(container).length === 0) delete spec.container;
  },
};

/** A field of an Agent's memory block, written only into a block the spec already has, never one of its own making. */
export type MemoryField = RemovableField;

function memoryField(name: string): MemoryField {
  const block = (spec: JsonRecord): JsonRecord | undefined => asRecord(getIn(spec, 'config', 'memory'));
  return {
    path: `spec.config.memory.${name}`,
    read: (spec) => block(spec)?.[name],
    write(spec, value) {
      const memory = block(spec);
      if (memory === undefined) return false;
      memory[name] = value;
      return true;
    },
    remove(spec) {
      const memory = block(spec);
      if (memory !== undefined) delete memory[name];
    },
  };
}

/** An Agent's memory type (docs/api.md, "Agent remote memory"). */
export const memoryTypeField: MemoryField = memoryField('type');

/**
 * The original shape's memory defaults (contextLimit, maxSessions, maxSessionEvents), with their
 * values: the webhook fills them into an original-shape block only, and records them, so that they
 * go with the request that binds the block to a MemoryStore.
 */
export const ORIGINAL_MEMORY_DEFAULTS: readonly { field: MemoryField; value: number }[] = ORIGINAL_MEMORY_FIELDS.map((name) => ({
  field: memoryField(name),
  value: AGENT_DEFAULTS.memory[name],
}));

/** `remote` when the block names a MemoryStore, else `local`; nothing without a memory block. */
export function memoryTypeFor(spec: unknown): string | undefined {
  const memory = asRecord(getIn(spec, 'config', 'memory'));
  if (memory === undefined) return undefined;
  return isSet(memory.memoryStore) ? 'remote' : AGENT_DEFAULTS.memory.type;
}

/** A MemoryStore's replicas (docs/api.md, "MemoryStore"). */
export const replicasField: DerivedField = {
  path: REPLICAS_FIELD,
  read: (spec) => spec.replicas,
  write(spec, value) {
    spec.replicas = value;
    return true;
  },
};

/** By storage mode; nothing for a mode the schema refuses. */
export function replicasFor(spec: unknown): number | undefined {
  const type = getIn(spec, 'storage', 'type');
  return type === 'local' || type === 'external' ? MEMORY_STORE_DEFAULTS.replicas[type] : undefined;
}

const isModelNameEntry = (e: unknown): boolean => isRecord(e) && e.name === MODEL_NAME_ENV;

/** The whole env entry is the value, so an entry using valueFrom never equals a derived one. */
export const modelNameField: RemovableField = {
  path: MODEL_NAME_FIELD,
  read: (spec) => asArray(getIn(spec, 'config', 'env'))?.find(isModelNameEntry),
  write(spec, value) {
    const config = ensureRecord(spec, 'config');
    if (config === undefined) return false;
    if (config.env === undefined || config.env === null) config.env = [];
    if (!Array.isArray(config.env)) return false;
    const env: unknown[] = config.env;
    const at = env.findIndex(isModelNameEntry);
    if (at >= 0) env[at] = value;
    else env.push(value);
    return true;
  },
  remove(spec) {
    // The entry, and the list when nothing else is left in it.
    const config = asRecord(spec.config);
    const env = asArray(config?.env);
    if (config === undefined || env === undefined) return;
    const rest = env.filter((e) => !isModelNameEntry(e));
    if (rest.length === 0) delete config.env;
    else config.env = rest;
  },
};

export const modelNameEntry = (model: string): JsonRecord => ({ name: MODEL_NAME_ENV, value: model });

// Not render's mcpToolsSource, which picks one even when several are set: no image is defaulted for those.
/** The single tools source an MCPServer names, or undefined when it names none or several. */
function toolsSource(spec: unknown): 'fromPackage' | 'fromString' | 'fromSecretKeyRef' | undefined {
  const tools = asRecord(getIn(spec, 'config', 'tools')) ?? {};
  const set = (['fromPackage', 'fromString', 'fromSecretKeyRef'] as const).filter((k) => isSet(tools[k]));
  return set.length === 1 ? set[0] : undefined;
}

/**
 * The image for this spec, or undefined when the spec does not determine one (e.g. an unknown mode).
 * Any spec shape is read safely, so the webhook (raw JSON) and render (typed inputs) share it.
 */
export function defaultImage(kind: KaosKind, spec: unknown, images: ImageDefaults): string | undefined {
  const mode = getIn(spec, 'mode');
  const type = getIn(spec, 'type');
  switch (kind) {
    case 'Agent':
      // A harness Agent's image is its runtime's (docs/api.md, "Agent harness"), unless the user names one.
      return isSet(getIn(spec, 'harness')) ? undefined : images.agent;
    case 'ModelAPI':
      return mode === 'Proxy' ? images.litellm : mode === 'Hosted' ? images.ollama : undefined;
    case 'MCPServer': {
      const source = toolsSource(spec);
      if (source === 'fromString' || source === 'fromSecretKeyRef') return images.mcpServer;
      if (source !== 'fromPackage') return undefined;
      return type === 'python-runtime' ? images.mcpPython : type === 'node-runtime' ? images.mcpNode : undefined;
    }
    case 'MemoryStore':
      return images.memoryService;
  }
}

/** Why MODEL_NAME fell back to the configured default, when it did. */
export type ModelNameFallback = 'unknown-model-api' | 'model-api-without-model';

/**
 * The model an Agent should name, from its ModelAPI when that is known (Hosted: hostedConfig.model;
 * Proxy: proxyConfig.model), else the operator's DEFAULT_MODEL_NAME.
 */
export function modelNameFor(
  modelAPI: KubeObject | undefined,
  config: Pick<Config, 'defaultModelName'>,
): { model: string; fallback?: ModelNameFallback } {
  if (modelAPI === undefined) return { model: config.defaultModelName, fallback: 'unknown-model-api' };
  const mode = getIn(modelAPI.spec, 'mode');
  const model = asString(
    mode === 'Hosted' ? getIn(modelAPI.spec, 'hostedConfig', 'model') : mode === 'Proxy' ? getIn(modelAPI.spec, 'proxyConfig', 'model') : undefined,
  );
  return model !== undefined && model !== '' ? { model } : { model: config.defaultModelName, fallback: 'model-api-without-model' };
}

/**
 * `config.toolCallMode` (docs/api.md, "Agent `config` from KAOS 2026"): `auto` inside a config the
 * Agent has, as KAOS's CRD defaults it, but only when the Agent is newer-shape for a reason other
 * than a toolCallMode the webhook chose: defaults are filled per shape, and an original-shape
 * Agent renders exactly the original env. The webhook's value (`auto`, recorded) goes again when
 * the Agent returns to the original shape; any other value is the user's and never touched.
 * Changes `spec` in place; returns whether the value now there is the webhook's, to be recorded.
 */
export function deriveToolCallMode(spec: JsonRecord, recorded: boolean): boolean {
  const config = asRecord(spec.config);
  if (config === undefined) return false;
  const fallback = AGENT_DEFAULTS.toolCallMode;
  const current = config.toolCallMode;
  if (current !== undefined && !(recorded && current === fallback)) return false;
  const { toolCallMode: _chosen, ...rest } = config;
  if (shapeOf('Agent', { ...spec, config: rest }) === 'new') {
    config.toolCallMode = fallback;
    return true;
  }
  delete config.toolCallMode;
  return false;
}
