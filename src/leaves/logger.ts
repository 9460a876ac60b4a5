// The one Logger type of the process: the slice of pino's API every layer logs through, so that
// the pino logger server/pino-logger.ts makes (or a test double) is passed in and no layer but that
// one depends on pino.

export type LogFn = (obj: Record<string, unknown>, msg: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** Lets a hot path skip building fields for a line that would be dropped. */
  isLevelEnabled(level: string): boolean;
}

const noop: LogFn = () => {};

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop, fatal: noop, isLevelEnabled: () => false };

/** Error fields worth logging, without stack noise for API errors. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const fields: Record<string, unknown> = { err: err.message };
    const { code, reason } = err as { code?: unknown; reason?: unknown };
    if (code !== undefined) fields.code = code;
    if (reason !== undefined) fields.reason = reason;
    return fields;
  }
  return { err: String(err) };
}
