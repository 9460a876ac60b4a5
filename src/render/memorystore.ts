// MemoryStore → Deployment and Service `memorystore-<name>`, in local mode the PersistentVolumeClaim
// `memorystore-<name>-data`, with two or more replicas the PodDisruptionBudget `memorystore-<name>`,
// and the HTTPRoute (docs/api.md, "MemoryStore").
import { MEMORY_STORE_DEFAULTS } from '../api/defaults.ts';
import { replicasFor } from '../api/defaulting/derived-defaults.ts';
import { persistentVolumeSize } from '../api/memory-rules.ts';
import { applyContainerOverride, copySecretKeySelector, env, httpGetProbe, httpPort, type ProbeTiming } from './container.ts';
import { renderHTTPRoute } from './gateway.ts';
import { configSourceOfSecret } from './hash.ts';
import { imageOf } from './images.ts';
import type { MemoryStoreDeps, MemoryStoreInput, RenderConfig } from './inputs.ts';
import type { Container, EnvVar, PersistentVolumeClaim, PodSpec } from './k8s.ts';
import { childMeta, parentIdentity, type ParentIdentity } from './labels.ts';
import { CONTAINER_NAME, MEMORY_STORE_PORT, persistentVolumeClaimName, serviceURL, workloadName } from './names.ts';
import { agentTelemetryEnv, telemetrySettings } from './observability.ts';
import { memoryPostureEnv } from './posture.ts';
import type { SecurityConfig } from '../config/security.ts';
import { withDefaultResources } from './pod-defaults.ts';
import type { Rendered } from './rendered.ts';
import { buildDeployment, buildDisruptionBudget, buildService } from './workload.ts';

export const MEMORY_DATA_VOLUME = 'data';
export const MEMORY_DATA_DIR = '/data/memory';

const LIVENESS: ProbeTiming = { initialDelaySeconds: 10, periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 3 };
const READINESS: ProbeTiming = { initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 };

type Spec = MemoryStoreInput['spec'];

/** `local` unless the spec says `external` (the schema allows nothing else). */
export function storageMode(spec: Spec): 'local' | 'external' {
  return spec.storage.type === 'external' ? 'external' : 'local';
}

/** `spec.replicas`, else the storage mode's: the webhook's choice (it normally wrote it already). */
export function memoryStoreReplicas(spec: Spec): number {
  return spec.replicas ?? replicasFor(spec) ?? 1;
}

/** The number as Go prints a float64 with 'f' and precision -1: the shortest decimal, never an exponent. */
export function shortestDecimal(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  // Below 1e-6 (or above 1e21) JavaScript switches to exponent form; spell the digits out.
  const [mantissa = '', exponent = '0'] = text.toLowerCase().split('e');
  const negative = mantissa.startsWith('-');
  const [int = '', frac = ''] = mantissa.replace('-', '').split('.');
  const digits = int + frac;
  const point = int.length + Number(exponent);
  const spelled = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${spelled}` : spelled;
}

/** KAOS_MEMORY_<name> = value, when the value is set; numbers in decimal, booleans as true/false. */
function tier(name: string, value: string | number | boolean | undefined): EnvVar[] {
  if (value === undefined || value === '') return [];
  const text = typeof value === 'number' ? shortestDecimal(value) : String(value);
  return [env(`KAOS_MEMORY_${name}`, text)];
}

/** Storage, then the models, then each tier setting that is set (docs/api.md, "MemoryStore"). */
export function memoryStoreEnv(store: MemoryStoreInput, deps: MemoryStoreDeps, security: SecurityConfig): EnvVar[] {
  const { spec } = store;
  const out: EnvVar[] = [];
  if (storageMode(spec) === 'local') {
    out.push(env('KAOS_MEMORY_STORAGE_TYPE', 'local'), env('KAOS_MEMORY_LOCAL_PATH', MEMORY_DATA_DIR), ...tier('LOCAL_COLLECTION', spec.storage.local?.collection));
  } else {
    const external = spec.storage.external;
    out.push(env('KAOS_MEMORY_STORAGE_TYPE', 'external'));
    // The DSN holds credentials: only ever a reference to the Secret, never its value.
    if (external !== undefined) out.push({ name: 'KAOS_MEMORY_EXTERNAL_DSN', valueFrom: { secretKeyRef: copySecretKeySelector(external.connectionSecretRef) } });
    out.push(
      env('KAOS_MEMORY_EXTERNAL_DIMS', String(external?.embeddingDims ?? MEMORY_STORE_DEFAULTS.embeddingDims)),
      ...tier('EXTERNAL_COLLECTION', external?.collection),
    );
  }
  out.push(
    env('KAOS_MEMORY_MODEL_BASE_URL', `${deps.summarizationEndpoint}/v1`),
    env('KAOS_MEMORY_SUMMARIZATION_MODEL', spec.models.summarization.model),
    env('KAOS_MEMORY_EMBEDDING_MODEL', spec.models.embedding.model),
    ...memoryPostureEnv('KAOS_', security),
  );
  const { shortTerm, mediumTerm, longTerm } = spec;
  out.push(
    ...tier('TOKEN_BUDGET', shortTerm?.tokenBudget),
    ...tier('HARD_EVENT_CAP', shortTerm?.hardEventCap),
    ...tier('ROLLING_SUMMARY', mediumTerm?.enabled),
    ...tier('COMPACTION_TRIGGER', mediumTerm?.compactionTrigger),
    ...tier('COMPACTION_TARGET', mediumTerm?.compactionTarget),
    ...tier('DIGEST_RETENTION', mediumTerm?.digestRetention),
    ...tier('SUMMARIZATION_SYSTEM_PROMPT', mediumTerm?.systemPrompt),
    ...tier('LONG_TERM_ENABLED', longTerm?.enabled),
    ...tier('DEFAULT_TOP_K', longTerm?.defaultTopK),
    ...tier('SCORE_THRESHOLD', longTerm?.scoreThreshold),
    ...tier('RERANK', longTerm?.rerank),
    ...tier('EXTRACTION_CONCURRENCY', longTerm?.extraction?.concurrency),
    ...tier('EXTRACTION_MAX_RETRIES', longTerm?.extraction?.maxRetries),
    ...tier('EXTRACTION_SYSTEM_PROMPT', longTerm?.extraction?.systemPrompt),
    ...tier('REQUEST_CONCURRENCY', spec.requestConcurrency),
    ...tier('DEFAULT_FAILURE_MODE', spec.defaultFailureMode),
  );
  return out;
}

export function memoryStoreContainer(store: MemoryStoreInput, deps: MemoryStoreDeps, config: RenderConfig): Container {
  const serviceName = workloadName('MemoryStore', store.metadata?.name ?? '');
  const generated: Container = {
    name: CONTAINER_NAME.MemoryStore,
    image: imageOf(store.spec, config.images.memoryService),
    imagePullPolicy: 'IfNotPresent',
    ports: [httpPort(MEMORY_STORE_PORT)],
    env: [...memoryStoreEnv(store, deps, config.security), ...agentTelemetryEnv(store.metadata, telemetrySettings(store.spec.telemetry, config), serviceName)],
    ...(storageMode(store.spec) === 'local' ? { volumeMounts: [{ name: MEMORY_DATA_VOLUME, mountPath: MEMORY_DATA_DIR }] } : {}),
    livenessProbe: httpGetProbe('/healthz', MEMORY_STORE_PORT, LIVENESS),
    readinessProbe: httpGetProbe('/readyz', MEMORY_STORE_PORT, READINESS),
  };
  // spec.container.env comes last and wins a clash; image, command, args and resources replace the generated ones.
  return applyContainerOverride(withDefaultResources(generated, 'MemoryStore', config.workload), store.spec.container);
}

function renderClaim(parent: ParentIdentity, size: string): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: childMeta(parent, persistentVolumeClaimName(parent.name)),
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  };
}

export function renderMemoryStore(store: MemoryStoreInput, deps: MemoryStoreDeps, config: RenderConfig): Rendered {
  const parent = parentIdentity('MemoryStore', store.metadata);
  const local = storageMode(store.spec) === 'local';
  const podSpec: PodSpec = {
    containers: [memoryStoreContainer(store, deps, config)],
    ...(local ? { volumes: [{ name: MEMORY_DATA_VOLUME, persistentVolumeClaim: { claimName: persistentVolumeClaimName(parent.name) } }] } : {}),
  };
  const external = store.spec.storage.external;
  const secretVersion = deps.connectionSecretResourceVersion;
  const replicas = memoryStoreReplicas(store.spec);
  const deployment = buildDeployment({
    parent,
    podSpec,
    podSpecPatch: store.spec.podSpec,
    defaults: config.workload,
    hashPodSpec: config.podSpecHash !== false,
    replicas,
    // One pod owns the ReadWriteOnce volume: the old one must let go of it before the new one starts.
    recreate: local,
    // The DSN is read only at container start: a new version of its Secret rolls the pods.
    configSource:
      !local && external?.connectionSecretRef.name !== undefined && secretVersion !== undefined
        ? configSourceOfSecret(external.connectionSecretRef.name, secretVersion, external.connectionSecretRef.key)
        : undefined,
  });
  const service = buildService(parent, MEMORY_STORE_PORT);
  const httpRoute = renderHTTPRoute(parent, { name: service.metadata.name, port: MEMORY_STORE_PORT }, store.spec.gatewayRoute, config);
  return {
    deployment,
    service,
    ...(local ? { persistentVolumeClaim: renderClaim(parent, persistentVolumeSize(store.spec)) } : {}),
    ...(replicas >= 2 ? { podDisruptionBudget: buildDisruptionBudget(parent) } : {}),
    ...(httpRoute === undefined ? {} : { httpRoute }),
    endpoint: serviceURL(service.metadata.name, parent.namespace, MEMORY_STORE_PORT),
  };
}
