// What `lint` prints: one line per problem, prefixed with where the object is and which it is,
// then a summary; or all of it as JSON for tools.
import { locate, type Finding } from './set.ts';

export interface Report {
  files: number;
  objects: number;
  ignored: number;
  findings: Finding[];
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function formatText(report: Report): string {
  const lines = report.findings.map((f) => {
    const { kind, namespace, name } = f.object;
    return `${locate(f.origin)} ${kind}/${namespace}/${name}: ${f.severity}: ${f.message}`;
  });
  lines.push(summary(report));
  return `${lines.join('\n')}\n`;
}

export function summary(report: Report): string {
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  const warnings = report.findings.length - errors;
  const checked = `${plural(report.objects, 'kaos.tools object')} in ${plural(report.files, 'file')}`;
  const ignored = report.ignored > 0 ? ` (${plural(report.ignored, 'other object')} ignored)` : '';
  return `${checked}${ignored}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}

export function formatJson(report: Report): string {
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  return `${JSON.stringify(
    {
      files: report.files,
      objects: report.objects,
      ignored: report.ignored,
      errors,
      warnings: report.findings.length - errors,
      findings: report.findings.map((f) => ({ ...f.origin, ...f.object, severity: f.severity, ...(f.field === undefined ? {} : { field: f.field }), message: f.message })),
    },
    null,
    2,
  )}\n`;
}
