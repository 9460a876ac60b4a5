// npm run soak [-- --minutes N] [--seed S ...] [--clients N] [--quiet-seconds N]: the soak of
// soak.ts against a fresh local control plane. --minutes is the traffic (default 3), shared
// evenly by the seeds given (default: one random seed, printed). Prints the faults as they are
// injected and the report at the end; exits 1 when any invariant was violated.
import { parseArgs } from 'node:util';
import { randomSeed } from './random.ts';
import { runSoak } from './soak.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    seed: { type: 'string', multiple: true },
    clients: { type: 'string', default: '4' },
    'quiet-seconds': { type: 'string', default: '60' },
  },
});

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    process.stderr.write(`soak: --${name} must be a positive number, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return value;
}

const minutes = positive('minutes', values.minutes);
const seeds = values.seed === undefined || values.seed.length === 0 ? [randomSeed()] : values.seed;
const ms = (minutes * 60_000) / seeds.length;
const started = Date.now();
const log = (line: string): void => void process.stderr.write(`${line}\n`);
log(`soak: ${minutes} min of traffic, seed${seeds.length > 1 ? 's' : ''} ${seeds.join(', ')}`);

const result = await runSoak({
  phases: seeds.map((seed) => ({ seed, ms })),
  clients: Math.round(positive('clients', values.clients)),
  quietMs: positive('quiet-seconds', values['quiet-seconds']) * 1000,
  log,
});
log(`soak: done in ${((Date.now() - started) / 60_000).toFixed(1)} min`);
// Exit once the report is out, whatever a fault may have left behind in this process (the CI test
// checks that nothing is: test/e2e/soak.test.ts).
process.stdout.write(`${result.report}\n`, () => process.exit(result.violations.length > 0 ? 1 : 0));
