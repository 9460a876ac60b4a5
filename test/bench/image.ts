// npm run bench:image — the operator's resident memory as a process (`node dist/main.js`, as `npm
// start` and the e2e tests run it) and in its image (as the chart runs it: test/e2e/support/
// container.ts), side by side on one control plane, alternated ROUNDS times (default 3): each
// started alone, leading (the Lease of the one before released), on an empty cluster, its VmRSS
// read once /readyz answers and again after IDLE_SECONDS (default 10). Prints the image's size and
// each figure with the ratio of the medians. Never part of pass/fail.
import { join } from 'node:path';
import { IMAGE } from '../../scripts/image/build.ts';
import { engineOk } from '../../scripts/image/engine.ts';
import { startLocalStack, startOperator, type OperatorProcess } from '../../scripts/local-stack.ts';
import { CHART_NAMESPACE, nodeOf, prepareImage, rssMiB, startContainerOperator } from '../e2e/support/container.ts';

const ROUNDS = Number(process.env['ROUNDS'] ?? 3);
const IDLE_SECONDS = Number(process.env['IDLE_SECONDS'] ?? 10);
const log = (line: string): void => { process.stderr.write(`${line}\n`); };
const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const { engine, deployment } = await prepareImage(log);
const size = Number((await engineOk(engine, ['image', 'inspect', '--format', '{{.Size}}', IMAGE])).trim()) / 2 ** 20;
const stack = await startLocalStack({ log: () => {} });
await stack.operator.stop();

interface Sample { ready: number; idle: number }
const figures: Record<'process' | 'image', Sample[]> = { process: [], image: [] };

/** Starts one, reads its node's RSS at ready and after the idle time, stops it. */
async function measure(kind: 'process' | 'image', round: number): Promise<Sample> {
  const podName = `bench-${kind}-${round}`;
  const common = { kubeconfig: stack.operatorKubeconfig, certDir: stack.certDir, logFile: join(stack.plane.dir, `${podName}.log`) };
  // The chart's env for the process too: leader election, its pod's name and namespace.
  const operator: OperatorProcess = kind === 'process'
    ? await startOperator({ ...common, env: { LEADER_ELECT: 'true', POD_NAME: podName, POD_NAMESPACE: CHART_NAMESPACE } })
    : await startContainerOperator(engine, deployment, { ...common, podName });
  try {
    const pid = kind === 'process' ? operator.pid : nodeOf(operator.pid).pid;
    const ready = rssMiB(pid);
    await sleep(IDLE_SECONDS * 1000);
    return { ready, idle: rssMiB(pid) };
  } finally {
    await operator.stop();
  }
}

try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of round % 2 === 1 ? (['process', 'image'] as const) : (['image', 'process'] as const)) {
      const sample = await measure(kind, round);
      figures[kind].push(sample);
      log(`round ${round} ${kind}: ${sample.ready.toFixed(1)} MiB at ready, ${sample.idle.toFixed(1)} MiB after ${IDLE_SECONDS} s`);
    }
  }
} finally {
  await stack.stop();
}

const row = (kind: 'process' | 'image', at: keyof Sample): string => figures[kind].map((s) => s[at].toFixed(1)).join(', ');
const ratio = (at: keyof Sample): string => (median(figures.image.map((s) => s[at])) / median(figures.process.map((s) => s[at]))).toFixed(2);
process.stdout.write([
  `image ${IMAGE}: ${size.toFixed(1)} MiB (${engine.name})`,
  '',
  '| operator | RSS at ready (MiB) | after ' + `${IDLE_SECONDS} s idle (MiB) |`,
  '|---|---|---|',
  `| process: node dist/main.js | ${row('process', 'ready')} | ${row('process', 'idle')} |`,
  `| image, as the chart runs it | ${row('image', 'ready')} | ${row('image', 'idle')} |`,
  `| image / process (medians) | ${ratio('ready')}× | ${ratio('idle')}× |`,
  '',
].join('\n'));
