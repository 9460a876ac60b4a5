// The failed tests of a tap run, from its TAP output, for npm test's closing lines: CI keeps the
// tail of a log, and the failures of a run of fourteen thousand tests are otherwise somewhere in
// its middle.

export interface TapFailure {
  /** The subtests leading to it, outermost first (the file first, in a run of several). */
  path: string[];
  /** The failed point's own name. */
  name: string;
  /** The first lines of its YAML diagnostic (found, wanted, at, stack…), without its source excerpt. */
  detail: string[];
}

/** How many lines of one failure's diagnostic are kept. */
const DETAIL_LINES = 14;

interface Open {
  indent: number;
  name: string;
  /** Failures found inside it so far: a subtest that fails with none is itself reported. */
  failuresInside: number;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;
/** `not ok 3 - name # time=12ms` → `name`. */
const pointName = (rest: string): string => rest.replace(/^\d+(?: - )?/, '').replace(/ # (?:time=|SKIP|TODO).*$/, '');

/**
 * Reads TAP line by line: a `not ok` that closes a subtest with failures inside is not repeated
 * (its failures are), one that closes a subtest without any (a timeout, a wrong plan) is kept.
 */
export function tapFailures(lines: readonly string[]): TapFailure[] {
  const failures: TapFailure[] = [];
  const open: Open[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const indent = indentOf(line);
    const text = line.trimStart();
    const subtest = /^# Subtest: (.*)$/.exec(text);
    if (subtest !== null) {
      while (open.length > 0 && open.at(-1)!.indent >= indent) open.pop();
      open.push({ indent, name: subtest[1]!, failuresInside: 0 });
      continue;
    }
    const point = /^(not ok|ok) (.*)$/.exec(text);
    if (point === null) continue;
    const name = pointName(point[2]!);
    const top = open.at(-1);
    const closes = top !== undefined && top.indent === indent && top.name === name;
    if (closes) open.pop();
    if (point[1] === 'ok' || (closes && top.failuresInside > 0)) continue;
    const path = open.filter((o) => o.indent < indent).map((o) => o.name);
    failures.push({ path, name, detail: diagnostic(lines, i + 1, indent) });
    for (const o of open) o.failuresInside++;
  }
  return failures;
}

/** The YAML block (`---` … `...`) right after line `from - 1`, its `source:` excerpt left out. */
function diagnostic(lines: readonly string[], from: number, indent: number): string[] {
  if (lines[from]?.trim() !== '---') return [];
  const out: string[] = [];
  let skipping = -1;
  for (let j = from + 1; j < lines.length && out.length < DETAIL_LINES; j++) {
    const line = lines[j]!;
    if (line.trim() === '...' && indentOf(line) <= indent + 2) break;
    const inner = indentOf(line);
    if (skipping >= 0 && (line.trim() === '' || inner > skipping)) continue;
    skipping = -1;
    if (/^source: /.test(line.trim())) {
      skipping = inner;
      continue;
    }
    out.push(line.slice(Math.min(inner, indent + 2)));
  }
  return out;
}

/** The failures as comment lines (`# ` before each), most `limit` of them, then how many more. */
export function formatFailures(failures: readonly TapFailure[], limit = 30): string {
  const shown = failures.slice(0, limit).map((f) => [`not ok ${[...f.path, f.name].join(' > ')}`, ...f.detail.map((d) => `    ${d}`)].join('\n'));
  if (failures.length > limit) shown.push(`… and ${failures.length - limit} more (above)`);
  return shown.join('\n').replace(/^/gm, '# ');
}
