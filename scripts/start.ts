// The run command (`npm start`): kaos-operator against the cluster in KUBECONFIG when one is
// reachable, otherwise against a local control plane that this command starts (building it from
// Go modules on first use). Ctrl-C stops everything it started.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { join } from 'node:path';
import { makeDevCerts } from '../certs/make-dev-certs.ts';
import { renderWebhookConfigurations } from '../src/admission/webhook-configs.ts';
import { loadConfig } from '../src/config/config.ts';
import { harnessRuntimesConfigMap } from '../src/api/harness-runtime-defaults.ts';
import { runtimesConfigMap } from '../src/api/mcp-runtime-defaults.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { KubeClient } from '../src/kube/client.ts';
import { isNotFound } from '../src/kube/errors.ts';
import { applySetupObjects, installCrds, ROOT, startLocalStack, type LocalStack } from './local-stack.ts';
import { operatorArgs, operatorProcessEnv } from './operator-command.ts';

const say = (line: string): void => { process.stderr.write(`[kaos] ${line}\n`); };

/**
 * What `npm start` sets for the operator unless this environment sets it (even to empty), as
 * KAOS's chart does: ServiceAccount identity, so that a local run gives Agents KAOS's default
 * children (docs/configuration.md, "The security plane").
 */
const START_DEFAULTS: Readonly<Record<string, string>> = { SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' };

/** START_DEFAULTS less what this environment sets. */
function startDefaults(): Record<string, string> {
  return Object.fromEntries(Object.entries(START_DEFAULTS).filter(([name]) => process.env[name] === undefined));
}

/** The kubeconfig a user means: $KUBECONFIG (first entry), else ~/.kube/config, if it exists. */
function userKubeconfig(): string | undefined {
  const fromEnv = (process.env.KUBECONFIG ?? '').split(':').find((p) => p !== '');
  const path = fromEnv ?? join(homedir(), '.kube', 'config');
  return existsSync(path) ? path : undefined;
}

async function reachable(kubeconfig: string): Promise<KubeClient | undefined> {
  try {
    const client = await KubeClient.fromKubeConfig(kubeconfig);
    await client.get('/version', { timeoutMs: 5000 });
    return client;
  } catch (err) {
    say(`the cluster in ${kubeconfig} is not reachable (${err instanceof Error ? err.message : String(err)})`);
    return undefined;
  }
}

/** Runs the operator in the foreground against an existing cluster. */
async function runAgainst(kubeconfig: string, client: KubeClient): Promise<void> {
  say(`running against ${client.server.origin} (kubeconfig ${kubeconfig})`);
  await installCrds(client);
  say('CRDs from crds/ applied (server-side apply)');
  await ensureLeaseNamespace(client);
  await ensureRuntimeRegistries(client);
  const certDir = process.env.WEBHOOK_CERT_DIR ?? join(ROOT, 'certs', 'dev');
  const webhookUrl = process.env.WEBHOOK_URL;
  const env: NodeJS.ProcessEnv = { ...startDefaults(), ...operatorProcessEnv(), KUBECONFIG: kubeconfig, WEBHOOK_CERT_DIR: certDir };
  // The caBundle of the webhook configurations: the CA of the development certificate made here,
  // or, for a serving certificate of your own (WEBHOOK_CERT_DIR), the ca.crt next to it.
  let caPem: string | undefined;
  if (process.env.WEBHOOK_CERT_DIR === undefined) {
    const host = webhookUrl === undefined ? [] : [new URL(webhookUrl).hostname];
    caPem = (await makeDevCerts({ outDir: certDir, sans: host })).caPem;
  } else if (webhookUrl !== undefined && existsSync(join(certDir, 'ca.crt'))) {
    caPem = readFileSync(join(certDir, 'ca.crt'), 'utf8');
  }
  if (webhookUrl === undefined) {
    say('webhook configurations NOT registered: an API server elsewhere usually cannot reach this machine.');
    say('Set WEBHOOK_URL=https://<address the API server can reach>:<port> to register them (the operator listens on WEBHOOK_PORT, default 9443).');
  } else if (caPem === undefined) {
    say(`webhook configurations NOT registered: ${join(certDir, 'ca.crt')} is missing, and the API server needs the CA that signed the serving certificate.`);
    say('Put that CA in ca.crt next to tls.crt and tls.key, or unset WEBHOOK_CERT_DIR to have a development certificate made in certs/dev/.');
  } else {
    await applySetupObjects(client, renderWebhookConfigurations({ url: webhookUrl, caBundle: caPem }));
    say(`webhook configurations registered for ${webhookUrl}`);
  }
  const child = spawn(process.execPath, operatorArgs(join(ROOT, 'dist', 'main.js')), { stdio: 'inherit', env });
  let received: NodeJS.Signals | undefined;
  const forward = (signal: NodeJS.Signals): void => { received ??= signal; child.kill(signal); };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  // Stopped by Ctrl-C (or SIGTERM) after a clean shutdown: 128 + n, as a shell reports an
  // interrupted command and as the local path does; otherwise the operator's own status.
  child.once('exit', (code, signal) => process.exit(
    received !== undefined && code === 0 ? signalStatus(received) : code ?? (signal === null ? 1 : signalStatus(signal)),
  ));
}

/**
 * With leader election on (the default against a cluster, where a chart-installed operator may
 * run too), the Lease lives in a namespace that a bare cluster lacks: without it the controller
 * would wait for a Lease it can never create. Made here, once, as the chart would.
 */
async function ensureLeaseNamespace(client: KubeClient): Promise<void> {
  let controller;
  try {
    ({ controller } = loadConfig(process.env));
  } catch {
    return; // the operator itself reports a bad configuration, with every problem at once
  }
  if (!controller.leaderElect) return;
  const namespace = controller.leaderElectionNamespace;
  try {
    await client.get(`/api/v1/namespaces/${encodeURIComponent(namespace)}`);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await applySetupObjects(client, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }]);
    say(`namespace ${namespace} created for the leader-election Lease (LEADER_ELECT=false runs without one)`);
  }
}

/**
 * The runtime registries the chart ships — ConfigMap kaos-mcp-runtimes in POD_NAMESPACE,
 * kaos-harness-runtimes in SYSTEM_NAMESPACE — each made when the cluster has none; one that exists
 * (a chart install's, KAOS's own, or edited by hand) is left as is.
 */
async function ensureRuntimeRegistries(client: KubeClient): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch {
    return; // the operator itself reports a bad configuration
  }
  await ensureRegistry(client, runtimesConfigMap(config.operatorNamespace), 'MCP');
  await ensureRegistry(client, harnessRuntimesConfigMap(config.systemNamespace), 'harness');
}

async function ensureRegistry(client: KubeClient, configMap: KubeObject, what: string): Promise<void> {
  const { name = '', namespace = '' } = configMap.metadata ?? {};
  try {
    await client.get(`/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${name}`);
    return;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  await applySetupObjects(client, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, configMap]);
  say(`ConfigMap ${namespace}/${name} created with the built-in ${what} runtimes`);
}

/** The exit status of a command ended by `signal`: 128 + its number (SIGINT 130, SIGTERM 143). */
function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

async function runLocal(): Promise<void> {
  say('no reachable cluster: starting a local control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, and kwok running pods on fake nodes)');
  let stack: LocalStack | undefined;
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping the operator and the control plane`);
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(signalStatus(signal)));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    // One operator on a throwaway control plane: no Lease to wait for.
    stack = await startLocalStack({ log: say, echoOperator: true, operatorEnv: { ...startDefaults(), LEADER_ELECT: 'false' } });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (message.includes('no Go toolchain')) {
      say('no cluster is reachable (set KUBECONFIG to one) and there is no Go toolchain to build a local control plane:');
      say('install Go ≥ 1.26, or point KUBECONFIG at a reachable cluster.');
    } else {
      say(`could not start: ${message}`);
    }
    process.exit(1);
  }
  const kubectl = join(stack.plane.binDir, 'kubectl');
  process.stderr.write(`
kaos-operator is running, with its webhooks registered, against a local control plane.
Use it from another terminal:

  export KUBECONFIG=${stack.plane.kubeconfigPath}
  ${kubectl} apply -f ${join(ROOT, 'test', 'fixtures', 'samples', '1-simple-echo-agent.yaml')}
  ${kubectl} get agents,modelapis,mcpservers -A
  ${kubectl} get deployments,services,configmaps -A -l app.kubernetes.io/managed-by=kaos-operator
  ${kubectl} get pods -A -w

The controller runs too (LEADER_ELECT=false: one replica, no Lease): each object gets its
Deployment and Service (and a ConfigMap for a Proxy ModelAPI), owned by it, and a status.
As with KAOS's chart, each Agent also gets a ServiceAccount kaos-agent-<name> and runs under it
(SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount; set it empty for none).
The pods run on ${stack.plane.nodes.length} fake nodes (${stack.plane.nodes.join(', ')}): kube-scheduler places
them and kwok plays the kubelet (no container runs; a pod turns Running and Ready within
seconds), so the Deployments become available and every object reaches Ready; an Agent
waits for its ModelAPI and MCPServers first (kubectl describe agent <name> -n <namespace>
says why).
Ctrl-C stops the operator and the control plane and removes ${stack.plane.dir}.
`);
}

const kubeconfig = userKubeconfig();
const client = kubeconfig === undefined ? undefined : await reachable(kubeconfig);
if (kubeconfig !== undefined && client !== undefined) await runAgainst(kubeconfig, client);
else await runLocal();
