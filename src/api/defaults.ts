// Constant defaults of the API (docs/api.md, "Agent" and "Defaulting"), written once. The schemas carry them as
// `default` keywords, so kube-apiserver applies them too (when decoding a request and when reading
// from etcd), and the mutating webhook applies them from those same schemas (schema-defaults.ts).

export const AGENT_DEFAULTS = {
  waitForDependencies: true,
  /**
   * `agentNetwork` itself defaults to an empty object so that `expose: true` is applied to Agents
   * that omit the block: docs/api.md makes expose default true unconditionally, unlike the config and
   * memory defaults, which apply only inside objects the user wrote.
   */
  agentNetwork: {},
  expose: true,
  reasoningLoopMaxSteps: 5,
  /** The branch a harness workspace clones when it names none (docs/api.md, "Agent harness"). */
  workspaceBranch: 'main',
  /**
   * Inside the `config` of a newer-shape Agent only (docs/api.md, "Agent `config` from KAOS 2026"):
   * the mutating webhook writes and records it, since a CRD default would reach original-shape
   * Agents too, and kube-apiserver applies CRD defaults to stored objects as it reads them.
   */
  toolCallMode: 'auto',
  memory: {
    enabled: true,
    /** Without `memoryStore`; with one, `remote` (docs/api.md, "Agent remote memory"): derived, so the webhook writes it. */
    type: 'local',
    // The original shape's fields: filled by the webhook only in a memory block of that shape
    // (defaulting/shape-defaults.ts), never by the CRD, which would make a remote block mixed.
    contextLimit: 6,
    maxSessions: 1000,
    maxSessionEvents: 500,
    /** The read ceiling of a MemoryStore that names none. */
    storeReadScope: 'agent',
    /** MEMORY_MAX_READ_SCOPE of an Agent with no MemoryStore to read from. */
    unboundReadScope: 'session',
  },
  /**
   * `spec.autoscaling` (docs/api.md, "Agent replicas"): `minReplicas` is a CRD default; the CPU
   * target applies only when no memory target is set, so it is never written into objects: render
   * and admission read it through api/agent-scaling.ts.
   */
  autoscaling: { minReplicas: 1, targetCPUUtilizationPercentage: 80 },
} as const;

/** MemoryStore (docs/api.md, "MemoryStore"). */
export const MEMORY_STORE_DEFAULTS = {
  engine: 'mem0',
  localProvider: 'chroma',
  externalProvider: 'pgvector',
  persistentVolumeSize: '5Gi',
  embeddingDims: 1536,
  extractionConcurrency: 4,
  defaultFailureMode: 'soft',
  /** `spec.replicas` when unset, by storage mode: one pod owns a local volume; pgvector allows two for availability. */
  replicas: { local: 1, external: 2 },
  /** The memory service's own defaults (not written into objects): the compaction marks derive from them. */
  service: { tokenBudget: 4096, hardEventCap: 2000 },
} as const;
