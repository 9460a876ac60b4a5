// The two shapes of kaos.tools/v1alpha1 (docs/api.md, "Newer KAOS shapes"): the original one, and the one KAOS
// released in v0.1.2–v0.1.3 and on its main branch. Both are served; an object part uses one of
// them, never a mix; nothing ever rewrites an object from one to the other. Pure.
//
// What decides the shape of an object (for rendering and for the env rules below):
// - Agent: `spec.model`, `spec.config.telemetry`, a field of NEWER_AGENT_CONFIG or `spec.harness` → new.
// - ModelAPI: `proxyConfig.models`, `provider`, `apiKey` or `spec.telemetry` → new.
// - MCPServer: `spec.telemetry` or `spec.runtime` (a server from the runtime registry) → new.
// - MemoryStore: KAOS 2026's kind has one shape, the newest.
// An Agent's `config.memory` is an object part of its own (docs/api.md, "Agent remote memory"):
// the original fields keep memory in the agent, the newest bind it to a MemoryStore; the block's
// shape (memoryShapeOf) decides its defaults and its env, never the Agent's.
// `spec.container.env` alone decides nothing: it is also the original shape's ContainerOverride
// (docs/api.md, "Overrides: `spec.container` and `spec.podSpec`"), whose entries come last; in a new-shape object it takes the place of the kind's own env
// list, so there the two are one part and only one of them may be set.
import { forbidden, index, type FieldError } from './field-error.ts';
import { asArray, asRecord, getIn, isRecord, isSet } from './json.ts';
import type { WorkloadKind } from './kinds.ts';

export type Shape = 'original' | 'new';

/**
 * The Agent `config` fields KAOS added in 2026 (docs/api.md, "Agent `config` from KAOS 2026"). None
 * replaces an original field, so they never clash with one; like `telemetry`, they exist only in
 * the newer shape, which is the one that renders their env (an original-shape Agent renders
 * exactly the original env). `toolCallMode` is one of them, so the webhook defaults it only in a
 * config that is newer-shape for another reason (defaulting/default-object.ts).
 */
export const NEWER_AGENT_CONFIG = ['systemPrompt', 'toolCallMode', 'autonomous', 'taskConfig'] as const;

/** The new-shape fields set in `spec`, as field paths. */
function newShapeFields(kind: WorkloadKind, spec: unknown): string[] {
  const set = (path: string, ...keys: string[]): string[] => (isSet(getIn(spec, ...keys)) ? [path] : []);
  switch (kind) {
    case 'Agent':
      return [
        ...set('spec.model', 'model'),
        ...set('spec.config.telemetry', 'config', 'telemetry'),
        ...NEWER_AGENT_CONFIG.flatMap((k) => set(`spec.config.${k}`, 'config', k)),
        // KAOS 2026's harness (docs/api.md, "Agent harness"): its env follows LOG_LEVEL.
        ...set('spec.harness', 'harness'),
      ];
    case 'ModelAPI':
      return [
        ...set('spec.proxyConfig.models', 'proxyConfig', 'models'),
        ...set('spec.proxyConfig.provider', 'proxyConfig', 'provider'),
        ...set('spec.proxyConfig.apiKey', 'proxyConfig', 'apiKey'),
        ...set('spec.telemetry', 'telemetry'),
      ];
    case 'MCPServer':
      return [...set('spec.runtime', 'runtime'), ...set('spec.telemetry', 'telemetry')];
    case 'MemoryStore':
      return ['spec'];
  }
}

export function shapeOf(kind: WorkloadKind, spec: unknown): Shape {
  return newShapeFields(kind, spec).length > 0 ? 'new' : 'original';
}

const MEMORY = 'spec.config.memory';
/** The fields of an Agent's memory block that keep memory in the agent (the original shape). */
export const ORIGINAL_MEMORY_FIELDS = ['contextLimit', 'maxSessions', 'maxSessionEvents'] as const;
/** The fields that bind it to a MemoryStore (KAOS's newest shape); `type: remote` is one too. */
export const REMOTE_MEMORY_FIELDS = ['memoryStore', 'maxReadScope', 'clientParams', 'tools', 'failureMode'] as const;

/**
 * The fields of each shape set in a memory block, as field paths. `type` is a field of both shapes
 * (the webhook may have chosen it), so it never counts in a mix; `remote` still makes a block new.
 */
function memoryFields(memory: unknown): { original: SetField[]; updated: SetField[]; remote: boolean } {
  const block = asRecord(memory) ?? {};
  const present = (names: readonly string[]): SetField[] => names.filter((k) => isSet(block[k])).map((k) => ({ field: `${MEMORY}.${k}` }));
  return { original: present(ORIGINAL_MEMORY_FIELDS), updated: present(REMOTE_MEMORY_FIELDS), remote: block.type === 'remote' };
}

/** The shape of an Agent's `config.memory` block: `new` once a field of the newest form is set, or `type: remote`. */
export function memoryShapeOf(memory: unknown): Shape {
  const fields = memoryFields(memory);
  return fields.remote || fields.updated.length > 0 ? 'new' : 'original';
}

/** The kind's own env list of the original shape (`container.env` replaces it in the new one); none for a MemoryStore. */
export function ownEnvPath(kind: WorkloadKind, spec: unknown): { path: string; keys: string[] } | undefined {
  switch (kind) {
    case 'MemoryStore':
      return undefined;
    case 'Agent':
      return { path: 'spec.config.env', keys: ['config', 'env'] };
    case 'MCPServer':
      return { path: 'spec.config.env', keys: ['config', 'env'] };
    case 'ModelAPI':
      return getIn(spec, 'mode') === 'Hosted'
        ? { path: 'spec.hostedConfig.env', keys: ['hostedConfig', 'env'] }
        : { path: 'spec.proxyConfig.env', keys: ['proxyConfig', 'env'] };
  }
}

/** A field set in a spec: its path, and how a message names it (e.g. an env entry by its name). */
export interface SetField {
  field: string;
  label?: string;
}

/**
 * One object part written in both shapes: each field of the shape with fewer fields set (the
 * new one on a tie) gets `Forbidden: may not be set together with <the other shape's fields>`.
 */
export function mixedPartErrors(original: readonly SetField[], updated: readonly SetField[]): FieldError[] {
  if (original.length === 0 || updated.length === 0) return [];
  const [minority, majority] = updated.length <= original.length ? [updated, original] : [original, updated];
  const others = majority.map((f) => f.label ?? f.field).join(', ');
  return minority.map((f) => forbidden(f.field, `may not be set together with ${others}`));
}

const fields = (...paths: string[]): SetField[] => paths.map((field) => ({ field }));

/** Every object part of `spec` that mixes the shapes, in field order. */
export function mixedShapeErrors(kind: WorkloadKind, spec: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (kind === 'Agent') {
    // The model: spec.model, or a MODEL_NAME entry in config.env.
    const env = asArray(getIn(spec, 'config', 'env')) ?? [];
    const modelNameEntries = env.flatMap((e, i): SetField[] =>
      isRecord(e) && e.name === 'MODEL_NAME' ? [{ field: index('spec.config.env', i), label: 'spec.config.env[MODEL_NAME]' }] : [],
    );
    errors.push(...mixedPartErrors(modelNameEntries, isSet(getIn(spec, 'model')) ? fields('spec.model') : []));
    const memory = memoryFields(getIn(spec, 'config', 'memory'));
    errors.push(...mixedPartErrors(memory.original, memory.updated));
  }
  if (kind === 'ModelAPI') {
    const proxy = asRecord(getIn(spec, 'proxyConfig')) ?? {};
    const original = isSet(proxy.model) ? fields('spec.proxyConfig.model') : [];
    const updated = fields(...(['models', 'provider', 'apiKey'] as const).filter((k) => isSet(proxy[k])).map((k) => `spec.proxyConfig.${k}`));
    errors.push(...mixedPartErrors(original, updated));
  }
  // The env part, for new-shape objects only (see the header).
  const own = ownEnvPath(kind, spec);
  if (own !== undefined && shapeOf(kind, spec) === 'new') {
    // The object is in the new shape, so the original list is the one refused, naming its successor.
    // An Agent's MODEL_NAME entry is the model part (above; the webhook may have chosen it), not this one.
    const isModelName = (e: unknown): boolean => kind === 'Agent' && isRecord(e) && e.name === 'MODEL_NAME';
    const ownEntries = (asArray(getIn(spec, ...own.keys)) ?? []).filter((e) => !isModelName(e));
    if (ownEntries.length > 0 && (asArray(getIn(spec, 'container', 'env'))?.length ?? 0) > 0) {
      errors.push(forbidden(own.path, `may not be set together with spec.container.env`));
    }
  }
  return errors;
}
