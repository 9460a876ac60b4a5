// Errors from the API server, in its own terms (metav1.Status), so callers branch on `code` and
// `reason` instead of parsing messages.

import type { ApiStatus, StatusDetails } from './meta.ts';

export type { ApiStatus, StatusDetails };

export class ApiError extends Error {
  /** HTTP status code (from the Status body when present, else from the response). */
  readonly code: number;
  /** metav1.StatusReason, e.g. NotFound, AlreadyExists, Conflict, Invalid, Expired, Gone. */
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /**
   * Builds the error from a response. `body` is whatever came back: a Status object when the
   * API server produced the error, or text from something in between (a proxy, a dying server).
   */
  static fromResponse(httpCode: number, body: string): ApiError {
    const status = parseStatus(body);
    if (status !== undefined) return ApiError.fromStatus(status, httpCode);
    const text = body.trim().slice(0, 500);
    return new ApiError(httpCode, reasonForCode(httpCode), text === '' ? `HTTP ${httpCode}` : `HTTP ${httpCode}: ${text}`);
  }

  static fromStatus(status: ApiStatus, fallbackCode = 500): ApiError {
    const code = typeof status.code === 'number' && status.code > 0 ? status.code : fallbackCode;
    const reason = status.reason !== undefined && status.reason !== '' ? status.reason : reasonForCode(code);
    return new ApiError(code, reason, status.message ?? `HTTP ${code}`, status.details);
  }
}

function parseStatus(body: string): ApiStatus | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isStatus(parsed)) return parsed;
  } catch {
    // Not JSON: handled by the caller.
  }
  return undefined;
}

export function isStatus(value: unknown): value is ApiStatus {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

function reasonForCode(code: number): string {
  switch (code) {
    case 400: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 405: return 'MethodNotAllowed';
    case 409: return 'Conflict';
    case 410: return 'Gone';
    case 415: return 'UnsupportedMediaType';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    case 500: return 'InternalError';
    case 503: return 'ServiceUnavailable';
    case 504: return 'Timeout';
    default: return 'Unknown';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.code === 404;
}

export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.code === 409;
}

/**
 * "Your resourceVersion is too old": HTTP 410, or a watch ERROR event with code 410 (reason
 * Expired or Gone). The only remedy is a fresh list.
 */
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && (err.code === 410 || err.reason === 'Expired' || err.reason === 'Gone');
}

/**
 * A short, bounded name for why a request failed, for a metric's label: the API server's reason
 * (metav1.StatusReason: Conflict, Forbidden, Invalid, NotFound, Timeout…) when it answered, else
 * `Timeout` for a request that ran out of time, `Unreachable` for one that never reached it (no
 * connection, a reset), `Internal` for anything else (a bug of ours).
 */
export function errorReason(err: unknown): string {
  if (err instanceof ApiError) return /^[A-Za-z]{1,40}$/.test(err.reason) ? err.reason : 'Unknown';
  const name = err instanceof Error ? err.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return 'Timeout';
  const code = errorCode(err) ?? errorCode(err instanceof Error ? err.cause : undefined);
  if (code !== undefined && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code.includes('TIMEOUT') ? 'Timeout' : 'Unreachable';
  return 'Internal';
}

function errorCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
