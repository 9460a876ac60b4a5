// The configuration table of docs/configuration.md and src/config*.ts cannot drift: every environment variable the
// operator reads has exactly one row, with a default and a meaning; a documented default is the
// real one; and a row names only variables that something reads.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DOC = 'docs/configuration.md';
const SECTION = '## Environment variables';
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const CONFIG_SOURCES = ['src/config/config.ts', 'src/config/workload.ts', 'src/config/security.ts'];
/** Rows for the run command and the control-plane build, not the operator: who reads each. */
const RUN_COMMAND_VARIABLES: Readonly<Record<string, string>> = { WEBHOOK_URL: 'scripts/start.ts', KAOS_CACHE_DIR: 'test/cluster/build.sh', KAOS_KUBE_VERSION: 'test/cluster/build-version.sh' };

interface Row { names: string[]; defaultCell: string; meaning: string; line: number }

/** A Markdown table row's cells; a `|` inside backticks belongs to its cell. */
function cells(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (const ch of line.trim().replace(/^\||\|$/g, '')) {
    if (ch === '`') code = !code;
    if (ch === '|' && !code) {
      out.push(cell.trim());
      cell = '';
    } else {
      cell += ch;
    }
  }
  out.push(cell.trim());
  return out;
}

/** The rows of the first table under SECTION; a row's names are the backticked words of its first cell. */
function configurationTable(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === SECTION);
  if (start < 0) throw new Error(`${DOC} has no "${SECTION}" section`);
  const rows: Row[] = [];
  let inTable = false;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('## ')) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    const header = !inTable;
    inTable = true;
    if (header || /^\|[-| :]+\|$/.test(line.trim())) continue;
    const [first = '', defaultCell = '', meaning = ''] = cells(line);
    const names = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
    rows.push({ names, defaultCell, meaning, line: i + 1 });
  }
  return rows;
}

/** Every variable loadConfig reads with an empty environment, recorded as it reads them. */
function variablesReadAtRuntime(): Set<string> {
  const seen = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_target, key) => {
      if (typeof key === 'string') seen.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  return seen;
}

/**
 * Every quoted upper-case name in the config sources: also the variables read only on some paths.
 * A name ending in `_` is a prefix (every variable starting with it), documented as `NAME_*`.
 */
function variablesNamedInSource(): Set<string> {
  const names = new Set<string>();
  for (const file of CONFIG_SOURCES) {
    for (const m of read(file).matchAll(/['"]([A-Z][A-Z0-9_]{2,})['"]/g)) names.add(m[1] ?? '');
  }
  return names;
}

const rows = configurationTable(read(DOC));
const runtime = variablesReadAtRuntime();
const source = variablesNamedInSource();
const readByConfig = new Set([...runtime, ...source]);

t.test('the parsers find the table and the variables', async (t) => {
  t.ok(rows.length >= 30, `rows of the configuration table: ${rows.length}`);
  t.ok(runtime.has('MAX_CONCURRENT_RECONCILES') && runtime.has('LOG_LEVEL'), 'loadConfig is seen reading the environment');
  t.same(cells('| `A` | `x|y` | z |'), ['`A`', '`x|y`', 'z'], 'a | inside backticks stays in its cell');
  t.same(
    configurationTable(SECTION + '\n\ntext\n\n| variable | default | meaning |\n|---|---|---|\n| `A`, `B` | — | m |\n\n| x |\n## Next').map((r) => r.names),
    [['A', 'B']],
    'only the first table of the section, header and separator skipped',
  );
});

/** A row's name for a variable, or for a prefix (`AIB_` is documented as `AIB_*`). */
const documentedAs = (name: string): string => (name.endsWith('_') ? `${name}*` : name);

t.test('every variable src/config*.ts reads has exactly one row, with a default and a meaning', async (t) => {
  for (const name of [...readByConfig].sort()) {
    const found = rows.filter((r) => r.names.includes(documentedAs(name)));
    t.equal(found.length, 1, `${name}: rows in ${DOC}'s configuration table (lines ${found.map((r) => r.line).join(', ') || 'none'})`);
    for (const row of found) {
      t.not(row.defaultCell, '', `${name}: a default (— when there is none)`);
      t.ok(row.meaning.length > 3, `${name}: a meaning`);
    }
  }
});

t.test('each name appears in one row only, and every row names a variable something reads', async (t) => {
  const names = rows.flatMap((r) => r.names);
  t.same(names.filter((n, i) => names.indexOf(n) !== i), [], 'no variable documented twice');
  for (const name of names) {
    const reader = RUN_COMMAND_VARIABLES[name];
    if (readByConfig.has(name.endsWith('_*') ? name.slice(0, -1) : name)) continue;
    t.ok(reader !== undefined && read(reader).includes(name), `${name}: read by src/config*.ts or by ${reader ?? 'nothing known'}`);
  }
});

t.test('a documented default is the real one: setting a variable to it changes nothing', async (t) => {
  const defaults = loadConfig({});
  let checked = 0;
  for (const row of rows) {
    const literal = /^`([^`]*)`$/.exec(row.defaultCell)?.[1];
    if (literal === undefined) continue;
    for (const name of row.names.filter((n) => readByConfig.has(n))) {
      t.same(loadConfig({ [name]: literal }), defaults, `${name}=${literal} is the default`);
      checked++;
    }
  }
  t.ok(checked >= 20, `defaults checked: ${checked}`);
});
