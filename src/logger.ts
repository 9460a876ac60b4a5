// The slice of pino's API the kube layer logs through, so that a pino logger (or a test double)
// can be passed in without this layer depending on pino.

export type LogFn = (obj: Record<string, unknown>, msg: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const noop: LogFn = () => {};

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

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
