// docs/metrics.md's reference table, read back: each row's metric, type and labels, those in
// parentheses being on some series only (e.g. `thread`, on the admission thread's). The
// end-to-end test compares it with the live export, the unit test with src/leaves/metric-names.ts.

export interface DocumentedMetric {
  type: string;
  /** On every series. */
  labels: string[];
  /** On some series only. */
  optional: string[];
}

/** The rows of the table under "## Reference": `| \`name\` | type | labels | meaning |`. */
export function documentedMetrics(markdown: string): Map<string, DocumentedMetric> {
  const section = markdown.slice(markdown.indexOf('## Reference'));
  const table = section.slice(0, section.indexOf('\n## ', 3) === -1 ? undefined : section.indexOf('\n## ', 3));
  const metrics = new Map<string, DocumentedMetric>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([a-z_:][a-z0-9_:]*)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined) continue;
    const labelsCell = cells[3] ?? '';
    const open = labelsCell.indexOf('(');
    const names = (text: string): string[] => [...text.matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1] as string);
    metrics.set(name, {
      type: cells[2] ?? '',
      labels: names(open === -1 ? labelsCell : labelsCell.slice(0, open)),
      optional: open === -1 ? [] : names(labelsCell.slice(open)),
    });
  }
  return metrics;
}
