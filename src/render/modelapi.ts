// ModelAPI → Deployment and Service `modelapi-<name>`, the LiteLLM ConfigMap in Proxy mode,
// and the HTTPRoute (docs/api.md, "ModelAPI").
import {
  applyContainerOverride,
  copyEnv,
  copySecretKeySelector,
  env,
  hasEnv,
  httpGetProbe,
  httpPort,
  uniqueEnv,
  withoutEnv,
  type ProbeTiming,
} from './container.ts';
import { liteLLMTelemetryEnv, logLevelEnv, telemetrySettings } from './observability.ts';
import { shapeOf } from '../api/shapes.ts';
import { renderHTTPRoute } from './gateway.ts';
import { defaultModelAPIImage, imageOf } from './images.ts';
import { configSourceOfConfigMap, configSourceOfSecret } from './hash.ts';
import type { ConfigSourceDeps, ModelAPIInput, RenderConfig } from './inputs.ts';
import type { ConfigMap, Container, EnvVar, PodSpec, Volume } from './k8s.ts';
import { childMeta, parentIdentity, type ParentIdentity } from './labels.ts';
import { liteLLMConfigMapContent, PROXY_API_BASE_ENV, PROXY_API_KEY_ENV } from './litellm.ts';
import { liteLLMConfigSource } from './sources.ts';
import { CONTAINER_NAME, LITELLM_PORT, OLLAMA_PORT, configMapName, modelAPIMode, serviceURL, workloadName } from './names.ts';
import type { Rendered } from './rendered.ts';
import { withDefaultResources } from './pod-defaults.ts';
import { buildDeployment, buildService } from './workload.ts';

export const LITELLM_CONFIG_VOLUME = 'litellm-config';
export const LITELLM_CONFIG_DIR = '/etc/litellm';
export const LITELLM_CONFIG_KEY = 'config.yaml';
export const OLLAMA_DATA_VOLUME = 'ollama-data';
export const OLLAMA_DATA_DIR = '/root/.ollama';
/** The env var that carries the model into the pull script; see PULL_MODEL_SCRIPT. */
export const OLLAMA_MODEL_ENV = 'OLLAMA_MODEL';
/**
 * Starts a temporary server, pulls the model into the shared volume, stops the server. The model
 * name is read from $OLLAMA_MODEL, double-quoted, never spliced into the script: whatever
 * characters it holds reach `ollama pull` as one argument and are never parsed by the shell.
 */
export const PULL_MODEL_SCRIPT = `ollama serve & OLLAMA_PID=$! && sleep 5 && ollama pull "$${OLLAMA_MODEL_ENV}" && kill $OLLAMA_PID`;

const LIVENESS: ProbeTiming = { initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 };
const READINESS: ProbeTiming = { initialDelaySeconds: 15, periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 3 };

interface ModelAPIPod {
  podSpec: PodSpec;
  configMap?: ConfigMap;
  /** What identifies the mounted config file, when known (for the config hash). */
  configSource: string | undefined;
  port: number;
}

/** docs/api.md, "Newer KAOS shapes": `models`, `provider`, `apiKey` or a telemetry block make a ModelAPI new-shape (api/shapes.ts decides). */
export function isNewShapeModelAPI(modelAPI: ModelAPIInput): boolean {
  return shapeOf('ModelAPI', modelAPI.spec) === 'new';
}

/** PROXY_API_KEY from the key itself or from a Secret's or ConfigMap's key (never read by the operator). */
function proxyApiKeyEnv(apiKey: NonNullable<NonNullable<ModelAPIInput['spec']['proxyConfig']>['apiKey']>): EnvVar {
  const secret = apiKey.valueFrom?.secretKeyRef;
  if (secret !== undefined) return { name: PROXY_API_KEY_ENV, valueFrom: { secretKeyRef: copySecretKeySelector(secret) } };
  const configMap = apiKey.valueFrom?.configMapKeyRef;
  if (configMap !== undefined) return { name: PROXY_API_KEY_ENV, valueFrom: { configMapKeyRef: copySecretKeySelector(configMap) } };
  return env(PROXY_API_KEY_ENV, apiKey.value ?? '');
}

/**
 * The `model-api` env of a Proxy. Original shape (docs/api.md, "Proxy mode"): proxyConfig.env, then LITELLM_LOG=INFO
 * unless set. New shape (docs/api.md, "Newer KAOS shapes"): PROXY_API_BASE, PROXY_API_KEY, the user's list (proxyConfig.env,
 * or container.env in its place, which wins a clash), LITELLM_LOG at the configured level unless
 * set, then the OpenTelemetry variables.
 */
function proxyEnv(modelAPI: ModelAPIInput, config: RenderConfig): EnvVar[] {
  const proxy = modelAPI.spec.proxyConfig;
  if (!isNewShapeModelAPI(modelAPI)) {
    const envList = copyEnv(proxy?.env);
    if (!hasEnv(proxy?.env, 'LITELLM_LOG')) envList.push(env('LITELLM_LOG', 'INFO'));
    return uniqueEnv(envList);
  }
  const containerEnv = modelAPI.spec.container?.env;
  const user = [...copyEnv(proxy?.env), ...copyEnv(containerEnv)];
  const userNames = new Set(copyEnv(containerEnv).map((e) => e.name));
  const generated: EnvVar[] = [];
  if (proxy?.apiBase !== undefined && proxy.apiBase !== '') generated.push(env(PROXY_API_BASE_ENV, proxy.apiBase));
  if (proxy?.apiKey !== undefined) generated.push(proxyApiKeyEnv(proxy.apiKey));
  const after = [
    ...logLevelEnv('LITELLM_LOG', config.defaultLogLevel, proxy?.env, containerEnv),
    ...liteLLMTelemetryEnv(modelAPI.metadata, telemetrySettings(modelAPI.spec.telemetry, config)),
  ];
  const keep = (e: EnvVar): boolean => !userNames.has(e.name);
  return uniqueEnv([...generated.filter(keep), ...user, ...after.filter(keep)]);
}

function proxyPod(modelAPI: ModelAPIInput, parent: ParentIdentity, deps: ConfigSourceDeps, config: RenderConfig): ModelAPIPod {
  const proxy = modelAPI.spec.proxyConfig;
  const newShape = isNewShapeModelAPI(modelAPI);
  const container: Container = {
    name: CONTAINER_NAME.ModelAPI,
    image: defaultModelAPIImage(modelAPI.spec, config),
    imagePullPolicy: 'IfNotPresent',
    args: ['--config', `${LITELLM_CONFIG_DIR}/${LITELLM_CONFIG_KEY}`, '--port', String(LITELLM_PORT)],
    ports: [httpPort(LITELLM_PORT)],
    env: proxyEnv(modelAPI, config),
    volumeMounts: [{ name: LITELLM_CONFIG_VOLUME, mountPath: LITELLM_CONFIG_DIR }],
    livenessProbe: httpGetProbe('/health/liveliness', LITELLM_PORT, LIVENESS),
    readinessProbe: httpGetProbe('/health/liveliness', LITELLM_PORT, READINESS),
  };
  // A new-shape object's container.env is already in place (proxyEnv).
  const override = newShape ? withoutEnv(modelAPI.spec.container) : modelAPI.spec.container;
  const podSpec = (volume: Volume): PodSpec => ({
    containers: [applyContainerOverride(withDefaultResources(container, 'ModelAPI', config.workload), override)],
    volumes: [volume],
  });

  const secretRef = proxy?.configYaml?.fromSecretKeyRef;
  if (liteLLMConfigSource(modelAPI.spec) === 'fromSecretKeyRef' && secretRef !== undefined) {
    // The Secret's key becomes config.yaml in the same directory the ConfigMap would use.
    const selector = copySecretKeySelector(secretRef);
    const volume: Volume = {
      name: LITELLM_CONFIG_VOLUME,
      secret: {
        secretName: selector.name ?? '',
        items: [{ key: selector.key, path: LITELLM_CONFIG_KEY }],
        ...(selector.optional !== undefined ? { optional: selector.optional } : {}),
      },
    };
    const version = deps.secretResourceVersion;
    const configSource = version === undefined ? undefined : configSourceOfSecret(volume.secret?.secretName ?? '', version, selector.key);
    return { podSpec: podSpec(volume), configSource: withApiKeySource(configSource, modelAPI, deps), port: LITELLM_PORT };
  }

  const telemetry = newShape && telemetrySettings(modelAPI.spec.telemetry, config).enabled;
  const content = liteLLMConfigMapContent(modelAPI.spec, telemetry) ?? '';
  const name = configMapName(parent.name);
  const configMap: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: childMeta(parent, name),
    data: { [LITELLM_CONFIG_KEY]: content },
  };
  return {
    podSpec: podSpec({ name: LITELLM_CONFIG_VOLUME, configMap: { name } }),
    configMap,
    configSource: withApiKeySource(content, modelAPI, deps),
    port: LITELLM_PORT,
  };
}

/**
 * The config source with the API key's Secret or ConfigMap version appended (new shape, key from
 * a Secret or a ConfigMap, its version known), so that a new key rolls the pods; otherwise the
 * source unchanged.
 */
function withApiKeySource(source: string | undefined, modelAPI: ModelAPIInput, deps: ConfigSourceDeps): string | undefined {
  if (source === undefined) return source;
  const valueFrom = modelAPI.spec.proxyConfig?.apiKey?.valueFrom;
  const secret = valueFrom?.secretKeyRef;
  if (secret !== undefined && deps.apiKeySecretResourceVersion !== undefined) {
    return `${source}\n${configSourceOfSecret(secret.name ?? '', deps.apiKeySecretResourceVersion, secret.key)}`;
  }
  const configMap = valueFrom?.configMapKeyRef;
  if (configMap !== undefined && deps.apiKeyConfigMapResourceVersion !== undefined) {
    return `${source}\n${configSourceOfConfigMap(configMap.name ?? '', deps.apiKeyConfigMapResourceVersion, configMap.key)}`;
  }
  return source;
}

function hostedPod(modelAPI: ModelAPIInput, config: RenderConfig): ModelAPIPod {
  const hosted = modelAPI.spec.hostedConfig;
  // New shape (docs/api.md, "Newer KAOS shapes"): container.env in hostedConfig.env's place, then OLLAMA_DEBUG unless set; no OTel.
  const newShape = isNewShapeModelAPI(modelAPI);
  const containerEnv = modelAPI.spec.container?.env;
  const mainEnv = newShape
    ? uniqueEnv([...copyEnv(hosted?.env), ...copyEnv(containerEnv), ...logLevelEnv('OLLAMA_DEBUG', config.defaultLogLevel, hosted?.env, containerEnv)])
    : uniqueEnv(copyEnv(hosted?.env));
  const dataMount = { name: OLLAMA_DATA_VOLUME, mountPath: OLLAMA_DATA_DIR };
  const main: Container = {
    name: CONTAINER_NAME.ModelAPI,
    image: defaultModelAPIImage(modelAPI.spec, config),
    imagePullPolicy: 'IfNotPresent',
    ports: [httpPort(OLLAMA_PORT)],
    env: mainEnv,
    volumeMounts: [{ ...dataMount }],
    livenessProbe: httpGetProbe('/', OLLAMA_PORT, LIVENESS),
    readinessProbe: httpGetProbe('/', OLLAMA_PORT, READINESS),
  };
  const pull: Container = {
    name: 'pull-model',
    // "Same image" as the main container, including a spec.container.image override.
    image: imageOf(modelAPI.spec, main.image),
    imagePullPolicy: 'IfNotPresent',
    command: ['/bin/sh', '-c'],
    args: [PULL_MODEL_SCRIPT],
    // hostedConfig.env too: the pull is what needs proxy settings or OLLAMA_* tuning; the
    // model comes last so no user entry can replace it.
    env: uniqueEnv([...copyEnv(hosted?.env), env(OLLAMA_MODEL_ENV, hosted?.model ?? '')]),
    volumeMounts: [{ ...dataMount }],
  };
  return {
    podSpec: {
      initContainers: [pull],
      containers: [
        applyContainerOverride(
          withDefaultResources(main, 'ModelAPI', config.workload),
          newShape ? withoutEnv(modelAPI.spec.container) : modelAPI.spec.container,
        ),
      ],
      volumes: [{ name: OLLAMA_DATA_VOLUME, emptyDir: {} }],
    },
    configSource: undefined,
    port: OLLAMA_PORT,
  };
}

/**
 * deps.secretResourceVersion: the resourceVersion of the Secret named by
 * configYaml.fromSecretKeyRef, from a metadata-only watch; it only feeds the config hash
 * (omitted when unknown). Ignored unless the config comes from that Secret.
 */
export function renderModelAPI(modelAPI: ModelAPIInput, deps: ConfigSourceDeps, config: RenderConfig): Rendered {
  const parent = parentIdentity('ModelAPI', modelAPI.metadata);
  const pod =
    modelAPIMode(modelAPI.spec.mode) === 'Hosted' ? hostedPod(modelAPI, config) : proxyPod(modelAPI, parent, deps, config);
  const deployment = buildDeployment({
    parent,
    podSpec: pod.podSpec,
    podSpecPatch: modelAPI.spec.podSpec,
    defaults: config.workload,
    hashPodSpec: config.podSpecHash !== false,
    configSource: pod.configSource,
  });
  const service = buildService(parent, pod.port);
  const httpRoute = renderHTTPRoute(parent, { name: service.metadata.name, port: pod.port }, modelAPI.spec.gatewayRoute, config);
  const endpoint = serviceURL(workloadName('ModelAPI', parent.name), parent.namespace, pod.port);
  return {
    deployment,
    service,
    endpoint,
    ...(pod.configMap !== undefined ? { configMap: pod.configMap } : {}),
    ...(httpRoute !== undefined ? { httpRoute } : {}),
  };
}
