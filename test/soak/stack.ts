// The soak's installation: the local control plane with pods (kube-scheduler and kwok) and an audit
// log of the operator's requests, and two operator replicas as a Deployment of two would run
// them — both under leader election, both serving the webhooks — with two proxies:
// - the API server is reached by the replicas through a TCP proxy, so their connections (watches
//   first) can be cut at once;
// - the webhooks are reached through their Service (webhook-service.ts): the replicas that pass
//   their readiness probe, with a retry on the other when one dies or freezes under a review.
// A replica that is killed is started again under a new name, as a Deployment's new pod would be.
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { LEASE_NAME } from '../../src/controller/controller.ts';
import type { Lease } from '../../src/kube/leader-election.ts';
import { LEASE, resourcePath } from '../../src/kube/paths.ts';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import { isNotFound } from '../../src/kube/errors.ts';
import {
  installLocalStack, registerWebhooks, startOperator, writeTokenKubeconfig, type Installation, type Log, type OperatorProcess,
} from '../../scripts/local-stack.ts';
import { TcpProxy } from './tcp-proxy.ts';
import { WebhookService } from './webhook-service.ts';

/** The operator's environment in the soak (on top of this process's, as startOperator gives it). */
export const SOAK_OPERATOR_ENV: Readonly<Record<string, string>> = {
  LEADER_ELECT: 'true',
  // Killed replicas come back under a new name: a stop need not wait for endpoints to drop it.
  SHUTDOWN_DELAY_SECONDS: '0',
};

export interface Replica {
  /** Its slot (a, b): which of the two it is, across restarts. */
  readonly slot: string;
  /** Its leader-election identity (POD_NAME), new at each start. */
  readonly name: string;
  readonly process: OperatorProcess;
  /** Its exit is no crash to report: a fault kills it, or its crash was reported already. */
  exitExpected: boolean;
}

export interface SoakStack {
  readonly installation: Installation;
  /** The operators' configuration, as they load it (what the checker renders with). */
  readonly config: Config;
  /** In front of the API server, for the replicas. */
  readonly apiProxy: TcpProxy;
  /** In front of the replicas' webhooks, for the API server. */
  readonly webhooks: WebhookService;
  /** The replicas now, by slot. */
  replicas(): readonly Replica[];
  /** (Re)starts the replica of `slot` under a new name; resolves once it is ready. */
  startReplica(slot: string): Promise<Replica>;
  /** The replica holding the Lease, if any does. */
  leader(): Promise<Replica | undefined>;
  /** Every replica's log, by name (killed ones too). */
  logs(): Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

export const SLOTS = ['a', 'b'] as const;

export async function startSoakStack(log: Log): Promise<SoakStack> {
  const installation = await installLocalStack({ log, audit: { users: [OPERATOR_USER], othersWrites: true } });
  const { plane, client } = installation;
  const env = { ...SOAK_OPERATOR_ENV };
  const config = loadConfig({ ...process.env, ...env });
  const current = new Map<string, Replica>();
  const logFiles = new Map<string, OperatorProcess>();
  // A restarted kube-apiserver listens on the same port.
  const apiProxy = new TcpProxy(() => Number(new URL(plane.server).port));
  const webhooks = new WebhookService({
    certDir: installation.certDir,
    backends: () => [...current.values()].map((r) => ({ id: r.name, webhookPort: r.process.webhookPort, metricsPort: r.process.metricsPort })),
    onChange: (id, ready) => log(`[soak] ${id} ${ready ? 'is back in' : 'left'} the webhook Service (readiness probe)`),
  });
  let restarts = 0;
  const stop = async (): Promise<void> => {
    for (const replica of current.values()) {
      try {
        process.kill(replica.process.pid, 'SIGCONT');
      } catch {
        // gone already
      }
      await replica.process.stop();
    }
    // Neither proxy may keep the control plane from being stopped.
    await bounded('the API server proxy', apiProxy.close(), log);
    await bounded('the webhook Service', webhooks.close(), log);
    installation.client.close();
    await installation.stop();
  };
  try {
    const apiProxyPort = await apiProxy.listen();
    const webhookPort = await webhooks.listen();
    const kubeconfig = join(plane.dir, 'operator-via-proxy.kubeconfig');
    await writeTokenKubeconfig(plane.kubeconfigPath, kubeconfig, installation.operatorToken, OPERATOR_USER, `https://127.0.0.1:${apiProxyPort}`);

    const startReplica = async (slot: string): Promise<Replica> => {
      const name = `kaos-operator-${slot}-${restarts++}`;
      const operator = await startOperator({
        kubeconfig,
        certDir: installation.certDir,
        logFile: join(plane.dir, `${name}.log`),
        env: { ...env, POD_NAME: name },
      });
      logFiles.set(name, operator);
      const replica: Replica = { slot, name, process: operator, exitExpected: false };
      current.set(slot, replica);
      return replica;
    };
    for (const slot of SLOTS) await startReplica(slot);
    log(`[soak] webhooks through their Service at https://127.0.0.1:${webhookPort}, replicas ${[...current.values()].map((r) => r.name).join(', ')}`);
    await registerWebhooks(client, `https://127.0.0.1:${webhookPort}`, installation.caPem);

    return {
      installation,
      config,
      apiProxy,
      webhooks,
      replicas: () => [...current.values()],
      startReplica,
      async leader() {
        try {
          const lease = await client.get<Lease>(resourcePath(LEASE, { namespace: config.controller.leaderElectionNamespace, name: LEASE_NAME }));
          return [...current.values()].find((r) => r.name === lease.spec?.holderIdentity);
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      logs: () => Object.fromEntries([...logFiles].map(([name, p]) => [name, p.log()])),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits for `closing` up to 10 s; past that, says so and goes on. */
async function bounded(what: string, closing: Promise<void>, log: Log): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), 10_000); });
  if ((await Promise.race([closing.then(() => 'closed' as const), late])) === 'late') log(`[soak] ${what} did not close within 10 s; stopping the rest anyway`);
  clearTimeout(timer);
}
