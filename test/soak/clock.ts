// How the soak tells time in its log and report: seconds since its start.

/** `+12.3 s`: `ms` since the soak's start. */
export function seconds(ms: number): string {
  return `+${(ms / 1000).toFixed(1)} s`;
}
