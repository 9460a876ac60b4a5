// The mutating webhook's decision, as a pure function (docs/api.md, "Defaulting"): derived values
// (container image, an Agent's MODEL_NAME, toolCallMode and memory defaults, a MemoryStore's
// replicas) first, then the schema's constant defaults. Idempotent: running it on its own output
// changes nothing. Never touches status.
import type { Config } from '../../config/config.ts';
import { readDefaulted, writeDefaulted } from './defaulted-annotation.ts';
import {
  defaultImage,
  deriveToolCallMode,
  imageField,
  memoryTypeField,
  memoryTypeFor,
  modelNameEntry,
  modelNameField,
  modelNameFor,
  ORIGINAL_MEMORY_DEFAULTS,
  replicasField,
  replicasFor,
  TOOL_CALL_MODE_FIELD,
  type DerivedField,
  type RemovableField,
} from './derived-defaults.ts';
import { goQuote } from '../go-format.ts';
import { asRecord, cloneJson, getIn, isRecord, isSet, jsonEqual, type JsonRecord } from '../json.ts';
import type { KaosKind } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import { applySchemaDefaults, copyForDefaults } from './schema-defaults.ts';
import { SPEC_SCHEMAS } from '../schema/index.ts';
import { memoryShapeOf } from '../shapes.ts';
import { clampWarning } from '../warnings.ts';

export interface DefaultingContext {
  config: Pick<Config, 'images' | 'defaultModelName'>;
  /** The stored object on UPDATE; absent on CREATE. */
  oldObject?: KubeObject;
  /** Agents: the ModelAPI that spec.modelAPI names, when it exists. */
  modelAPI?: KubeObject;
}

export interface DefaultingResult {
  /**
   * A new object, sharing with the input the parts defaulting leaves alone: the input is never
   * modified, and neither may this be.
   */
  object: KubeObject;
  /** Fields now listed in kaos.tools/defaulted, sorted. */
  defaulted: string[];
  warnings: string[];
}

interface Derivation {
  /** Value for an absent field; undefined when the spec determines none. */
  fill: unknown;
  /** Value for a field we chose before; undefined keeps the current value. */
  refresh: unknown;
}

interface FieldHistory {
  /** The stored object's spec, on UPDATE. */
  oldSpec: JsonRecord | undefined;
  /** Whether this request's annotation lists the field. */
  recorded: boolean;
  /** Whether the stored object's annotation listed it. */
  recordedBefore: boolean;
}

/**
 * Decides one derived field. A value is ours when we wrote it now, or when the annotation says we
 * chose it and this request did not change it (equal to the stored object's value): then it
 * follows its source. A recorded value the user changed, or any value without a record, is theirs.
 */
function decide(field: DerivedField, spec: JsonRecord, h: FieldHistory, d: Derivation) {
  const current = field.read(spec);
  if (current === undefined) {
    // Server-side apply drops our value whenever the applier's manifest omits it (the webhook's
    // additions belong to the request's field manager). Where the source is out of sight, the
    // value we chose before is restored rather than replaced by a guess.
    const previous = h.recordedBefore && h.oldSpec !== undefined ? field.read(h.oldSpec) : undefined;
    const value = d.refresh === undefined && previous !== undefined ? previous : d.fill;
    const wrote = value !== undefined && field.write(spec, cloneJson(value));
    return { ours: wrote, wrote };
  }
  const { oldSpec, recorded } = h;
  if (!recorded) return { ours: false, wrote: false };
  if (d.fill !== undefined && jsonEqual(current, d.fill)) return { ours: true, wrote: false };
  const changedByUser = oldSpec !== undefined && !jsonEqual(current, field.read(oldSpec));
  if (changedByUser) return { ours: false, wrote: false };
  if (d.refresh === undefined) return { ours: true, wrote: false };
  field.write(spec, cloneJson(d.refresh));
  return { ours: true, wrote: true };
}

export function defaultObject(kind: KaosKind, object: KubeObject, ctx: DefaultingContext): DefaultingResult {
  // Defaulting writes only into spec and metadata.annotations, and in the spec only where one of
  // the schema's defaults can land (copyForDefaults) or a derived value goes (ownDerivedParts):
  // copy those, share the rest (an opaque podSpec, lists of names, managedFields, status) with the
  // input, which is never modified. The patch's diff passes over what is shared (the same object
  // on both sides), so megabytes the defaults never touch cost nothing to copy or to compare.
  const out: KubeObject = {
    ...object,
    metadata: { ...object.metadata, ...(object.metadata?.annotations === undefined ? {} : { annotations: { ...object.metadata.annotations } }) },
    spec: ownDerivedParts(copyForDefaults(SPEC_SCHEMAS[kind], object.spec)),
  };
  const spec = asRecord(out.spec);
  if (spec === undefined) return { object: out, defaulted: [], warnings: [] };
  const oldSpec = asRecord(ctx.oldObject?.spec);
  const recorded = readDefaulted(out);
  const recordedBefore = readDefaulted(ctx.oldObject);
  const history = (field: DerivedField): FieldHistory => ({
    oldSpec,
    recorded: recorded.has(field.path),
    recordedBefore: recordedBefore.has(field.path),
  });
  const ours = new Set<string>();
  const warnings: string[] = [];

  if (kind === 'Agent' && isSet(spec.harness)) {
    // A harness Agent runs its runtime's image (docs/api.md, "Agent harness"): none is chosen, and
    // the agent image chosen earlier goes with the request that adds the harness.
    if (withdraw(imageField, spec, history(imageField), ctx.config.images.agent)) ours.add(imageField.path);
  } else {
    const image = defaultImage(kind, spec, ctx.config.images);
    if (decide(imageField, spec, history(imageField), { fill: image, refresh: image }).ours) ours.add(imageField.path);
  }

  if (kind === 'Agent' && isSet(spec.model)) {
    // The new shape names its model in spec.model (docs/api.md, "Newer KAOS shapes"): no MODEL_NAME is chosen,
    // and one we chose earlier goes with the request that adds spec.model. A MODEL_NAME the user
    // wrote is never touched.
    if (withdraw(modelNameField, spec, history(modelNameField))) ours.add(modelNameField.path);
  } else if (kind === 'Agent') {
    const { model, fallback } = modelNameFor(ctx.modelAPI, ctx.config);
    const entry = modelNameEntry(model);
    // With the ModelAPI out of sight (deleted, or not yet in the cache) and the reference
    // unchanged, the value chosen earlier is still the best guess: keep it rather than flap.
    const keep = fallback === 'unknown-model-api' && oldSpec !== undefined && oldSpec.modelAPI === spec.modelAPI;
    const result = decide(modelNameField, spec, history(modelNameField), {
      fill: entry,
      refresh: keep ? undefined : entry,
    });
    if (result.ours) ours.add(modelNameField.path);
    if (result.wrote && fallback === 'model-api-without-model') {
      warnings.push(
        clampWarning(`${modelNameField.path} defaulted to ${goQuote(model)}: ModelAPI ${goQuote(String(spec.modelAPI))} names no model`),
      );
    }
  }

  if (kind === 'Agent' && deriveToolCallMode(spec, recorded.has(TOOL_CALL_MODE_FIELD))) ours.add(TOOL_CALL_MODE_FIELD);
  if (kind === 'Agent') {
    for (const path of defaultMemory(spec, history)) ours.add(path);
  }
  if (kind === 'MemoryStore') {
    const replicas = replicasFor(spec);
    if (decide(replicasField, spec, history(replicasField), { fill: replicas, refresh: replicas }).ours) ours.add(replicasField.path);
  }

  writeDefaulted(out, ours);
  // After the derived values, so that a config block created for MODEL_NAME gets its defaults too.
  applySchemaDefaults(SPEC_SCHEMAS[kind], spec);
  return { object: out, defaulted: [...ours].sort(), warnings };
}

/**
 * An Agent's memory block (docs/api.md, "Agent remote memory"): its `type` follows its MemoryStore
 * binding, and the original shape's defaults fill an original-shape block only. When a request
 * binds the block to a MemoryStore, the defaults chosen for the original shape that it left as
 * stored go (as a chosen MODEL_NAME goes with spec.model): a user's own value stays, and
 * validation names the mix. Returns the fields that hold our value.
 */
function defaultMemory(spec: JsonRecord, history: (field: DerivedField) => FieldHistory): string[] {
  const ours: string[] = [];
  const type = memoryTypeFor(spec);
  if (decide(memoryTypeField, spec, history(memoryTypeField), { fill: type, refresh: type }).ours) ours.push(memoryTypeField.path);
  const original = memoryShapeOf(getIn(spec, 'config', 'memory')) === 'original';
  for (const { field, value } of ORIGINAL_MEMORY_DEFAULTS) {
    const h = history(field);
    if (original) {
      if (decide(field, spec, h, { fill: value, refresh: value }).ours) ours.push(field.path);
      continue;
    }
    const current = field.read(spec);
    if (!h.recorded || current === undefined) continue;
    const untouched = h.oldSpec === undefined ? jsonEqual(current, value) : h.recordedBefore && jsonEqual(current, field.read(h.oldSpec));
    if (untouched) field.remove(spec);
    else ours.push(field.path);
  }
  return ours;
}

/**
 * `spec` with its own copy of each part a derived value is written into (derived-defaults.ts):
 * the spec itself (replicas), its container (image), its config (toolCallMode, env) with the env
 * list (MODEL_NAME: an entry is replaced or added, never changed in place) and the memory block.
 */
function ownDerivedParts(spec: unknown): unknown {
  if (!isRecord(spec)) return spec;
  const own: JsonRecord = { ...spec };
  if (isRecord(own.container)) own.container = { ...own.container };
  if (isRecord(own.config)) {
    const config: JsonRecord = { ...own.config };
    if (Array.isArray(config.env)) config.env = [...(config.env as unknown[])];
    if (isRecord(config.memory)) config.memory = { ...config.memory };
    own.config = config;
  }
  return own;
}

/**
 * A value the webhook chose earlier that the spec now leaves no place for (a MODEL_NAME beside
 * spec.model, an agent image beside a harness): it goes with the request when the annotation says
 * it is ours and the request left it as stored — on CREATE, as `chosen`, what the webhook would
 * have written. Any other value stays. Returns whether the value still there is recorded as ours.
 */
function withdraw(field: RemovableField, spec: JsonRecord, h: FieldHistory, chosen?: unknown): boolean {
  const current = field.read(spec);
  if (!h.recorded || current === undefined) return false;
  const stored = h.oldSpec === undefined ? chosen : h.recordedBefore ? field.read(h.oldSpec) : undefined;
  if (stored === undefined || !jsonEqual(current, stored)) return true;
  field.remove(spec);
  return false;
}
