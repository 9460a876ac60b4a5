// MemoryStore (docs/api.md, "MemoryStore"): a central memory service (the Mem0 engine) that Agents
// bind to for long-term memory. The defaults written here are KAOS's constant ones, applied inside
// the blocks a manifest writes (as the API server applies any CRD default); `replicas` depends on
// the storage mode, so the webhook derives it (defaulting/derived-defaults.ts).
import { Type, type Static } from '@sinclair/typebox';
import { MEMORY_STORE_DEFAULTS } from '../defaults.ts';
import {
  MEMORY_ENGINES,
  MEMORY_EXTERNAL_PROVIDERS,
  MEMORY_FAILURE_MODES,
  MEMORY_LOCAL_PROVIDERS,
  MEMORY_READ_SCOPES,
  MEMORY_STORAGE_TYPES,
  PHASES,
} from '../enums.ts';
import { MAX_INLINE_TEXT_LENGTH, MAX_MODEL_LENGTH, MAX_NAME_LENGTH, MAX_QUANTITY_LENGTH } from './limits.ts';
import { ContainerOverride, GatewayRoute, PodSpecFragment, SecretKeySelector, Telemetry } from './common.ts';
import { Int32, QUANTITY_PATTERN, StringEnum } from './helpers.ts';
import { StatusSchema } from './status.ts';

const defaults = MEMORY_STORE_DEFAULTS;

const collection = (what: string) =>
  Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, description: `Name of the ${what} collection; the service's own when unset.` }));

export const MemoryPersistentVolume = Type.Object(
  {
    size: Type.Optional(
      Type.String({
        pattern: QUANTITY_PATTERN,
        maxLength: MAX_QUANTITY_LENGTH,
        default: defaults.persistentVolumeSize,
        description: 'Requested size of the PersistentVolumeClaim; it can grow, never shrink.',
      }),
    ),
  },
  { description: 'The PersistentVolumeClaim that holds Chroma and the SQLite short-term window.' },
);

export const LocalMemoryStorage = Type.Object(
  {
    provider: Type.Optional(StringEnum(MEMORY_LOCAL_PROVIDERS, { default: defaults.localProvider, description: 'Local vector store.' })),
    persistentVolume: Type.Optional(MemoryPersistentVolume),
    collection: collection('Chroma'),
  },
  { description: 'Local mode: one pod, Chroma and SQLite on a PersistentVolume.' },
);

export const ExternalMemoryStorage = Type.Object(
  {
    provider: Type.Optional(StringEnum(MEMORY_EXTERNAL_PROVIDERS, { default: defaults.externalProvider, description: 'External vector store.' })),
    connectionSecretRef: { ...SecretKeySelector, description: 'The Secret key holding the database DSN (passed to the pod by reference only).' },
    embeddingDims: Type.Optional(
      Int32({ minimum: 1, default: defaults.embeddingDims, description: 'Dimensions of the pgvector embedding column.' }),
    ),
    collection: collection('pgvector'),
  },
  { description: 'External mode: a pgvector database.' },
);

export const MemoryStorage = Type.Object(
  {
    type: StringEnum(MEMORY_STORAGE_TYPES, { description: 'local (one pod with a PersistentVolume) or external (pgvector).' }),
    local: Type.Optional(LocalMemoryStorage),
    external: Type.Optional(ExternalMemoryStorage),
  },
  { description: 'Where memories are kept; external mode needs its block.' },
);

export const MemoryModelRef = Type.Object({
  modelAPI: Type.String({ maxLength: MAX_NAME_LENGTH, description: 'Name of a ModelAPI in the same namespace.' }),
  model: Type.String({ minLength: 1, maxLength: MAX_MODEL_LENGTH, description: 'A model that ModelAPI serves.' }),
});

export const MemoryModels = Type.Object(
  {
    summarization: { ...MemoryModelRef, description: 'Extracts long-term facts and folds the rolling digest.' },
    embedding: { ...MemoryModelRef, description: 'Embeds memories for recall.' },
  },
  { description: 'The two models the service calls.' },
);

const prompt = (what: string) => Type.Optional(Type.String({ maxLength: MAX_INLINE_TEXT_LENGTH, description: `System prompt of ${what}; the service's own when unset.` }));

export const MemoryShortTerm = Type.Object(
  {
    tokenBudget: Type.Optional(Int32({ minimum: 1, description: `Tokens of the short-term window (service default ${defaults.service.tokenBudget}).` })),
    hardEventCap: Type.Optional(Int32({ minimum: 1, description: `Most events kept per session (service default ${defaults.service.hardEventCap}).` })),
  },
  { description: 'The short-term window.' },
);

export const MemoryMediumTerm = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Fold overflowing turns into a rolling digest.' })),
    compactionTrigger: Type.Optional(Int32({ minimum: 0, description: 'Tokens at which compaction starts; 0 or unset: the token budget.' })),
    compactionTarget: Type.Optional(Int32({ minimum: 0, description: 'Tokens compaction brings the window down to; 0 or unset: half the token budget.' })),
    digestRetention: Type.Optional(Int32({ minimum: 1, description: 'Digests kept per session.' })),
    systemPrompt: prompt('the digest summariser'),
  },
  { description: 'The rolling digest.' },
);

export const MemoryExtraction = Type.Object(
  {
    concurrency: Type.Optional(Int32({ minimum: 1, default: defaults.extractionConcurrency, description: 'Extraction workers.' })),
    maxRetries: Type.Optional(Int32({ minimum: 0, description: 'Retries of a failed extraction.' })),
    systemPrompt: prompt('fact extraction'),
  },
  { description: 'Long-term fact extraction.' },
);

export const MemoryLongTerm = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Extract and recall long-term facts.' })),
    defaultTopK: Type.Optional(Int32({ minimum: 1, description: 'Memories a recall returns.' })),
    scoreThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Lowest similarity a recalled memory may have.' })),
    rerank: Type.Optional(Type.Boolean({ description: 'Rerank recalled memories.' })),
    extraction: Type.Optional(MemoryExtraction),
  },
  { description: 'Long-term memory (Mem0).' },
);

export const MemoryStoreSpec = Type.Object({
  engine: Type.Optional(StringEnum(MEMORY_ENGINES, { default: defaults.engine, description: 'The memory engine.' })),
  storage: MemoryStorage,
  replicas: Type.Optional(
    Int32({ minimum: 1, description: `Pods of the memory service; unset: ${defaults.replicas.local} in local mode (the only value it allows), ${defaults.replicas.external} in external mode.` }),
  ),
  models: MemoryModels,
  shortTerm: Type.Optional(MemoryShortTerm),
  mediumTerm: Type.Optional(MemoryMediumTerm),
  longTerm: Type.Optional(MemoryLongTerm),
  requestConcurrency: Type.Optional(Int32({ minimum: 1, description: 'Requests the service handles at once.' })),
  defaultFailureMode: Type.Optional(
    StringEnum(MEMORY_FAILURE_MODES, { default: defaults.defaultFailureMode, description: 'What a failed write does, for Agents that do not say.' }),
  ),
  maxReadScope: Type.Optional(
    StringEnum(MEMORY_READ_SCOPES, { description: 'The widest read scope a bound Agent may ask for; unset: agent. user needs security and the user plane enabled in the operator.' }),
  ),
  gatewayRoute: Type.Optional(GatewayRoute),
  telemetry: Type.Optional(Telemetry),
  container: Type.Optional(ContainerOverride),
  podSpec: Type.Optional(PodSpecFragment),
});
export type MemoryStoreSpec = Static<typeof MemoryStoreSpec>;

export const MemoryStoreStatus = StatusSchema(PHASES, {});
export type MemoryStoreStatus = Static<typeof MemoryStoreStatus>;
