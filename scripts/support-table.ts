// README's table of supported Kubernetes versions, as `npm run test:kube` writes it: one row per
// minor it ran the end-to-end suite on, stating that run (its date, commit and counts). Pure
// functions: scripts/test-kube.ts reads the files and runs the suite.

/**
 * The Kubernetes release a control-plane build is, from its bin/.stamp (test/cluster/build.sh:
 * "<kubernetes version>+<hash of its inputs>").
 */
export function stampVersion(stamp: string): { minor: string; kubernetes: string } {
  const version = /^(v(\d+\.\d+)\.\d+)\+/.exec(stamp.trim());
  if (version === null) throw new Error(`not a control-plane build's stamp: ${JSON.stringify(stamp.trim())}`);
  return { kubernetes: version[1]!, minor: version[2]! };
}

export interface SuiteRun {
  minor: string;
  /** The patch release the run built and ran (v1.37.2). */
  kubernetes: string;
  /** UTC, YYYY-MM-DD. */
  date: string;
  /** The commit the run tested, with "+ changes" when the working tree had some. */
  commit: string;
  total: number;
  pass: number;
  fail: number;
}

const HEADER = '| Kubernetes | status | last full end-to-end run (`npm run test:kube -- <minor>`) |';

/** The row a run writes: tested when every end-to-end test passed, failing otherwise. */
export function supportRow(run: SuiteRun): string {
  const status = run.fail === 0 && run.pass === run.total
    ? `**tested**: the whole end-to-end suite passed against kube-apiserver, kube-controller-manager, kube-scheduler and kubectl ${run.kubernetes}, built from source by the tests`
    : `**failing**: ${run.total - run.pass} of the ${run.total} end-to-end tests did not pass against ${run.kubernetes}`;
  return `| v${run.minor} | ${status} | ${run.date}, ${run.commit}: ${run.pass} passed, ${run.fail} failed |`;
}

/** The first version a row's first cell names, as a number to sort by (v1.30 – v1.35 → 1.30); undefined for "before …". */
function rowMinor(row: string): number | undefined {
  const first = /^\|\s*v1\.(\d+)/.exec(row);
  return first === null ? undefined : Number(first[1]);
}

/**
 * README with `run`'s row in the support table: in place of that minor's row, else above the
 * first row of an older minor (rows go newest first). Throws when README has no such table.
 */
export function withSupportRow(readme: string, run: SuiteRun): string {
  const lines = readme.split('\n');
  const header = lines.indexOf(HEADER);
  if (header < 0 || !/^\|(---\|)+$/.test(lines[header + 1] ?? '')) throw new Error(`README.md has no support table (a table headed ${HEADER})`);
  let end = header + 2;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  const row = supportRow(run);
  const minor = Number(run.minor.split('.')[1]);
  for (let i = header + 2; i < end; i++) {
    const at = rowMinor(lines[i]!);
    if (lines[i]!.startsWith(`| v${run.minor} |`)) {
      lines[i] = row;
      return lines.join('\n');
    }
    if (at === undefined || at < minor) {
      lines.splice(i, 0, row);
      return lines.join('\n');
    }
  }
  lines.splice(end, 0, row);
  return lines.join('\n');
}
