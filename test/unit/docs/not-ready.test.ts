// docs/not-ready.md answers "why is my object not Ready" for every phase and every reason the
// controller can write. The reasons are read from the code that writes them (the status builders
// of src/controller/status.ts, the `failed(…)` calls of the reconcilers, the AccessGrant gates of
// src/api/access-grants.ts and the CRD's default status), never from a list kept here, so a new
// reason without its section on the page fails this test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AGENT_PHASES } from '../../../src/api/enums.ts';
import { INITIAL_STATUS } from '../../../src/api/schema/status.ts';
import * as status from '../../../src/controller/status.ts';
import { ROOT } from '../../../scripts/image/build.ts';

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const page = read('docs/not-ready.md');

/** The files that decide a status or condition reason. */
const REASON_SOURCES = [
  'src/controller/status.ts',
  'src/api/access-grants.ts',
  ...readdirSync(join(ROOT, 'src/controller/reconcile')).filter((f) => f.endsWith('.ts')).map((f) => `src/controller/reconcile/${f}`),
];

/** Event reasons and the like: written in Events, never in a status. */
const NOT_STATUS_REASONS = new Set(['ReconcileFailed', 'Deleted', 'MemoryDegraded', 'MemoryRecovered']);

/**
 * Every reason literal the sources write: `reason: 'X'` (the last literal of the expression, so
 * `reason: cond ? other : 'X'` counts), `failed('X', …)`, and a Deployment reason compared with
 * `reason === 'X'` (copied into the status as it is).
 */
function reasonsInSource(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of REASON_SOURCES) {
    const text = read(file);
    for (const m of text.matchAll(/\breason: [^,}\n]*'([A-Z][A-Za-z]+)'|\bfailed\('([A-Z][A-Za-z]+)'|\.reason === '([A-Z][A-Za-z]+)'/g)) {
      const reason = m[1] ?? m[2] ?? m[3] ?? '';
      if (!NOT_STATUS_REASONS.has(reason) && !found.has(reason)) found.set(reason, file);
    }
  }
  for (const c of INITIAL_STATUS.conditions) found.set(c.reason, 'src/api/schema/status.ts');
  return found;
}

/** The reasons the page has a section for: headings `### \`Reason\``. */
const sections = new Set([...page.matchAll(/^### `([A-Za-z]+)`$/gm)].map((m) => m[1] ?? ''));
const reasons = reasonsInSource();

t.test('the scan finds the reasons of every source: builders, reconcilers, gates, the Deployment, the CRD default', async (t) => {
  for (const known of ['ModelAPIUnresolved', 'MemoryStoreNotFound', 'RuntimeNotFound', 'ImageRequired', 'AuthorizationDisabled', 'Enforced', 'ProgressDeadlineExceeded', 'DeploymentRollingOut', 'CRDNotInstalled', 'Pending']) {
    t.ok(reasons.has(known), known);
  }
  t.notOk(reasons.has('ReconcileFailed'), 'Event reasons are left out');
});

t.test('every Verdict builder of status.ts writes a reason the scan found', async (t) => {
  let called = 0;
  for (const [name, fn] of Object.entries(status)) {
    if (typeof fn !== 'function' || name === 'failed' || fn.length === 0) continue;
    let result: unknown;
    try {
      result = (fn as (...args: unknown[]) => unknown)(...Array.from({ length: fn.length }, () => 'x'));
    } catch {
      continue; // takes objects, not names: not a builder
    }
    const reason = (result as { reason?: unknown } | undefined)?.reason;
    if (typeof reason !== 'string' || reason === 'x') continue;
    called++;
    t.ok(reasons.has(reason), `${name}() → ${reason}`);
  }
  t.ok(called >= 15, `builders called: ${called}`);
});

t.test('docs/not-ready.md has a section for every reason the code can write', async (t) => {
  for (const [reason, file] of [...reasons].sort()) t.ok(sections.has(reason), `${reason} (${file}): a "### \`${reason}\`" section`);
});

t.test('docs/api.md names every reason the code can write too', async (t) => {
  const api = read('docs/api.md');
  for (const reason of [...reasons.keys()].sort()) t.match(api, `\`${reason}\``, reason);
});

t.test('every section is a reason the code writes, or one it copies from the Deployment', async (t) => {
  // The Deployment's Available reason is copied as the Deployment controller sets it: its usual one.
  const copied = new Set(['MinimumReplicasUnavailable']);
  for (const reason of sections) t.ok(reasons.has(reason) || copied.has(reason), `${reason} is written by the code`);
});

t.test('every phase has a row, and each section says its phase or condition', async (t) => {
  for (const phase of AGENT_PHASES) t.match(page, new RegExp(`^\\| \`${phase}\` \\|`, 'm'), `phase ${phase}`);
  const blocks = page.split(/^### /m).slice(1);
  for (const block of blocks) {
    const reason = /^`([A-Za-z]+)`/.exec(block)?.[1] ?? block.slice(0, 20);
    t.match(block, /[Pp]hase `|True|False|CRD's default/, `${reason}: says its phase or condition status`);
  }
});

t.test('the pages users read first link to it', async (t) => {
  for (const file of ['docs/README.md', 'docs/errors.md', 'docs/troubleshooting.md', 'docs/api.md']) t.match(read(file), 'not-ready.md', file);
});

t.test('its transcript is the real one: every line is in docs/lifecycle.md (npm run docs:lifecycle)', async (t) => {
  const transcript = /^```\n(\$ kubectl[\s\S]*?)^```/m.exec(page)?.[1] ?? '';
  const lifecycle = read('docs/lifecycle.md');
  const lines = transcript.split('\n').filter((l) => l !== '');
  t.ok(lines.length >= 5, `lines: ${lines.length}`);
  for (const line of lines) t.ok(lifecycle.includes(`${line}\n`), line);
});
