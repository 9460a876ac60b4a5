// The process logger: pino, one JSON line per event, level as a word so that log systems do not
// need pino's number table. Callers log identifiers (kind, namespace, name, uid, operation),
// never whole objects; the redaction below is a second line of defence, not the policy.
import { hostname } from 'node:os';
import { pino, type DestinationStream } from 'pino';
import type { Logger } from '../leaves/logger.ts';

export type { Logger };
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; process.stdout (synchronously, via pino's default) when omitted. */
  destination?: DestinationStream;
  /** Bound to every line as `logger`. */
  name?: string;
}

/** Fields that hold objects or credentials if a caller ever passes them by mistake. */
const REDACT = [
  'object',
  'oldObject',
  'request.object',
  'request.oldObject',
  '*.object',
  '*.oldObject',
  'headers.authorization',
  '*.headers.authorization',
];

export function createLogger(options: LoggerOptions = {}): Logger {
  const config = {
    level: options.level ?? 'info',
    // `logger`, not pino's `name`: callers log the object's `name`, and a line with two `name`
    // keys keeps only one of them in most log systems.
    base: { pid: process.pid, hostname: hostname(), logger: options.name ?? 'kaos-operator' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: REDACT, censor: '[redacted]' },
  };
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}
