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
  /**
   * Inside the `config` of a newer-shape Agent only (docs/api.md, "Agent `config` from KAOS 2026"):
   * the mutating webhook writes and records it, since a CRD default would reach original-shape
   * Agents too, and kube-apiserver applies CRD defaults to stored objects as it reads them.
   */
  toolCallMode: 'auto',
  memory: {
    enabled: true,
    type: 'local',
    contextLimit: 6,
    maxSessions: 1000,
    maxSessionEvents: 500,
  },
} as const;
