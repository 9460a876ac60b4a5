// The sizes the API accepts (docs/limits.md): the CRD schemas carry them as maxItems/maxLength,
// so kube-apiserver refuses an oversized object before any webhook runs, and the webhooks apply
// the same schemas to requests that reach them directly. Generous on purpose: every real manifest
// fits; what they stop is a single object that costs megabytes to read, store and answer about.

/** DNS-1123 subdomain names (object references, Secret names and keys), as Kubernetes limits them. */
export const MAX_NAME_LENGTH = 253;

/** `spec.mcpServers` and `spec.agentNetwork.access`: names of objects in the namespace. */
export const MAX_REFERENCES = 100;

/** Every env list (`config.env`, `proxyConfig.env`, `hostedConfig.env`, `container.env`). */
export const MAX_ENV_VARS = 512;
export const MAX_ENV_NAME_LENGTH = 1024;

/** `container.command` and `container.args`: entries, and the length of each. */
export const MAX_COMMAND_ITEMS = 1024;
export const MAX_ARG_LENGTH = 64 * 1024;

/** URLs (`proxyConfig.apiBase`, `telemetry.endpoint`). */
export const MAX_URL_LENGTH = 2048;
/** Model names (`spec.model`, `proxyConfig.model(s)`, `hostedConfig.model`), package names, container images. */
export const MAX_MODEL_LENGTH = 512;
export const MAX_PACKAGE_LENGTH = 512;
export const MAX_IMAGE_LENGTH = 1024;
/** A branch name (`harness.workspace.branch`): git keeps a ref as a file, so within a file name's 255 bytes. */
export const MAX_GIT_REF_LENGTH = 255;
/** `proxyConfig.models`: model names or patterns a ModelAPI serves. */
export const MAX_MODELS = 256;
/** `proxyConfig.provider`: a LiteLLM provider prefix such as `openai`. */
export const MAX_PROVIDER_LENGTH = 253;
/** `proxyConfig.apiKey.value`: an API key written inline (better kept in a Secret). */
export const MAX_API_KEY_LENGTH = 64 * 1024;
/** Quantities (`storage.local.persistentVolume.size`). */
export const MAX_QUANTITY_LENGTH = 64;
/** Durations (`gatewayRoute.timeout`). */
export const MAX_DURATION_LENGTH = 64;
/** `config.description`. */
export const MAX_DESCRIPTION_LENGTH = 64 * 1024;

/**
 * Free text that is legitimately large: an env value, the agent's instructions, a whole LiteLLM
 * config or MCP tools source given inline (`fromString`). Anything larger belongs in a Secret
 * (`fromSecretKeyRef`); Kubernetes stores at most about 1.5 MiB per object anyway.
 */
export const MAX_INLINE_TEXT_LENGTH = 256 * 1024;

/**
 * `proxyConfig.configYaml.fromString`: a whole LiteLLM config, which the webhook and the controller
 * parse (the other inline texts are passed on unread). LiteLLM's own example configs are 0.2–7 KiB
 * (its `proxy_server_config.yaml`: 19 deployments and every settings block in 6.9 KiB, about 360
 * bytes a deployment), so 64 KiB holds about 180 fully written deployments, or the 256 models of
 * `proxyConfig.models` at 250 bytes each. A larger config, like any config holding keys, belongs
 * in a Secret (`fromSecretKeyRef`), which the operator mounts without reading.
 */
export const MAX_LITELLM_CONFIG_LENGTH = 64 * 1024;

/** An AccessGrant's `subjects` and `resources`. */
export const MAX_GRANT_SUBJECTS = 256;
export const MAX_GRANT_RESOURCES = 256;
/** A subject's name: a token's `sub` or `email`, a group, or an Agent's name. */
export const MAX_SUBJECT_NAME_LENGTH = 1024;
/** A label selector's `matchLabels` entries and `matchExpressions`, and the `values` of one expression. */
export const MAX_SELECTOR_TERMS = 64;
export const MAX_SELECTOR_VALUES = 256;
/** A label key: a DNS-1123 subdomain prefix, `/`, and a name of at most 63 characters. */
export const MAX_LABEL_KEY_LENGTH = 317;
