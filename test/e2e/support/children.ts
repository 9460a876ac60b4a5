// Helpers for the controller's end-to-end tests: drive objects with kubectl as a user would,
// wait (with a deadline) until the operator has done something (pods run on the local control
// plane's kwok nodes, so Deployments become ready by themselves), and read children back in a
// shape that can be compared whole with values written out in a test.
import type { LocalStack } from '../../../scripts/local-stack.ts';
import type { KubectlResult } from '../../cluster/control-plane.ts';
import { eventually } from '../../support/poll.ts';
import type { KaosKind, WorkloadKind } from '../../../src/api/kinds.ts';
import { isNotFound } from '../../../src/kube/errors.ts';
import { objectPath } from './api-paths.ts';

/**
 * How the waits below poll: a deadline against hanging, retrying reads that fail meanwhile. A read
 * is one HTTP request on the stack's client (api-paths.ts), cheap enough to repeat often.
 */
const WAIT = { timeoutMs: 30_000, intervalMs: 100, retryErrors: true } as const;

export type Json = Record<string, unknown>;

/** kubectl against the stack; throws with stderr when it fails, so setup steps cannot fail silently. */
export async function kubectlOk(stack: LocalStack, args: readonly string[], input?: string): Promise<string> {
  const res: KubectlResult = await stack.plane.kubectl(args, input === undefined ? {} : { input });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr}${res.stdout}`);
  return res.stdout;
}

/** `kubectl apply -n ns -f -` of JSON documents (valid YAML; no YAML 1.1 re-typing). */
export function applyObjects(stack: LocalStack, ns: string, objects: readonly Json[]): Promise<string> {
  return kubectlOk(stack, ['apply', '-n', ns, '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n---\n'));
}

export function createNamespace(stack: LocalStack, ns: string): Promise<string> {
  return kubectlOk(stack, ['create', 'namespace', ns]);
}

export const kaos = (kind: KaosKind, name: string, spec: Json): Json => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name },
  spec,
});

/**
 * The stored object, as `kubectl get <resource> <name> -n <ns> -o json` prints it (`resource` in
 * kubectl's words), or undefined when it does not exist; read over the stack's admin client.
 */
export async function getObject(stack: LocalStack, resource: string, ns: string, name: string): Promise<Json | undefined> {
  try {
    return await stack.client.get<Json>(await objectPath(stack.client, resource, ns, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}


/** Waits until the object exists and `accept` holds for it; returns it. */
export function waitForObject(
  stack: LocalStack,
  resource: string,
  ns: string,
  name: string,
  accept: (o: Json) => boolean = () => true,
  what = `${resource} ${ns}/${name}`,
): Promise<Json> {
  return eventually(what, async () => {
    const o = await getObject(stack, resource, ns, name);
    return o !== undefined && accept(o) ? o : undefined;
  }, WAIT);
}

/** Waits until the object no longer exists. */
export function waitForGone(stack: LocalStack, resource: string, ns: string, name: string): Promise<true> {
  return eventually(`${resource} ${ns}/${name} to be gone`, async () =>
    (await getObject(stack, resource, ns, name)) === undefined ? true : undefined,
  WAIT);
}

/**
 * Waits until every child is gone and returns the ones still there: the test asserts that list
 * is empty, naming what is left. 60 s, because kube-controller-manager's garbage collector learns
 * new resource types (the kaos.tools CRDs installed after it started) only at its discovery resync,
 * every 30 s; until then it cannot resolve an Agent owner and retries with backoff.
 */
export async function remainingAfterGC(stack: LocalStack, ns: string, children: readonly (readonly [string, string])[]): Promise<string[]> {
  const left = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const [resource, name] of children) if ((await getObject(stack, resource, ns, name)) !== undefined) out.push(`${resource}/${name}`);
    return out;
  };
  try {
    await eventually(`${children.map(([r, n]) => `${r}/${n}`).join(', ')} in ${ns} to be gone`, async () => ((await left()).length === 0 ? true : undefined), { ...WAIT, timeoutMs: 60_000 });
  } catch {
    // reported by the caller's assertion, with what is left
  }
  return left();
}

// ---- reading fields ---------------------------------------------------------------------------

export const at = (o: unknown, ...path: (string | number)[]): unknown => {
  let cur: unknown = o;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
};

export const uidOf = (o: Json): string => String(at(o, 'metadata', 'uid'));
export const resourceVersionOf = (o: Json): string => String(at(o, 'metadata', 'resourceVersion'));
export const podAnnotations = (deployment: Json): Json => (at(deployment, 'spec', 'template', 'metadata', 'annotations') ?? {}) as Json;
export const podSpecHash = (deployment: Json): string => String(podAnnotations(deployment)['kaos.tools/pod-spec-hash']);
export const configHash = (deployment: Json): unknown => podAnnotations(deployment)['kaos.tools/config-hash'];

/** The parts of a child's metadata the operator sets: labels and ownerReferences. */
export function childIdentity(o: Json): Json {
  return { name: at(o, 'metadata', 'name'), labels: at(o, 'metadata', 'labels'), ownerReferences: at(o, 'metadata', 'ownerReferences') };
}

/** What every child's metadata must be (docs/api.md, "Common behaviour"): the two labels plus managed-by; one controller ownerReference. */
export function expectedIdentity(kind: WorkloadKind, parent: Json, childName: string): Json {
  const app = { Agent: 'agent', ModelAPI: 'modelapi', MCPServer: 'mcpserver', MemoryStore: 'memorystore' }[kind];
  return {
    name: childName,
    labels: { app, [app]: String(at(parent, 'metadata', 'name')), 'app.kubernetes.io/managed-by': 'kaos-operator' },
    ownerReferences: [
      { apiVersion: 'kaos.tools/v1alpha1', kind, name: at(parent, 'metadata', 'name'), uid: uidOf(parent), controller: true, blockOwnerDeletion: true },
    ],
  };
}

// Fields kube-apiserver fills in by defaulting; removed so that the rest of a pod spec can be
// compared whole (anything else the operator or the user set stays and is asserted).
const POD_DEFAULTED = ['restartPolicy', 'terminationGracePeriodSeconds', 'dnsPolicy', 'schedulerName'];
const CONTAINER_DEFAULTED = ['terminationMessagePath', 'terminationMessagePolicy'];

function withoutKeys(o: Json, keys: readonly string[]): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** A Deployment's pod spec without the API server's defaulted fields. */
export function podSpecOf(deployment: Json): Json {
  const spec = withoutKeys((at(deployment, 'spec', 'template', 'spec') ?? {}) as Json, POD_DEFAULTED);
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(spec[list])) spec[list] = (spec[list] as Json[]).map((c) => withoutKeys(c, CONTAINER_DEFAULTED));
  }
  return spec;
}

/** The Deployment's spec fields the operator decides, besides the pod spec. */
export function deploymentShape(deployment: Json): Json {
  return {
    replicas: at(deployment, 'spec', 'replicas'),
    selector: at(deployment, 'spec', 'selector'),
    podLabels: at(deployment, 'spec', 'template', 'metadata', 'labels'),
    podAnnotationKeys: Object.keys(podAnnotations(deployment)).sort(),
  };
}

/** The Service's spec fields the operator decides (the API server adds clusterIP, ipFamilies, …). */
export function serviceShape(service: Json): Json {
  return { type: at(service, 'spec', 'type'), selector: at(service, 'spec', 'selector'), ports: at(service, 'spec', 'ports') };
}

// ---- expected values shared by the tests ------------------------------------------------------

/** The generated containers' security context with the default POD_SECURITY_CONTEXT=hardened. */
export const HARDENED = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } as const;
export const POD_SECURITY = { seccompProfile: { type: 'RuntimeDefault' } } as const;

/** A probe as stored: the API server defaults timeoutSeconds 1, successThreshold 1, failureThreshold 3. */
export function probe(handler: Json, initialDelaySeconds: number, periodSeconds: number, timeoutSeconds = 1, failureThreshold = 3): Json {
  return { ...handler, initialDelaySeconds, periodSeconds, timeoutSeconds, successThreshold: 1, failureThreshold };
}

export const httpGet = (path: string, port: number): Json => ({ httpGet: { path, port, scheme: 'HTTP' } });
export const tcpSocket = (port: number): Json => ({ tcpSocket: { port } });
export const httpPort = (port: number): Json[] => [{ name: 'http', containerPort: port, protocol: 'TCP' }];
export const servicePorts = (port: number): Json[] => [{ name: 'http', port, targetPort: port, protocol: 'TCP' }];

/** Waits until a KAOS object reports `status.phase`. */
export function waitForPhase(stack: LocalStack, resource: string, ns: string, name: string, phase: string): Promise<Json> {
  return waitForObject(stack, resource, ns, name, (o) => at(o, 'status', 'phase') === phase, `${resource} ${ns}/${name} phase ${phase}`);
}
