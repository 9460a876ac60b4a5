// What a client's request came to, pure: an expected outcome (done, denied by a documented rule,
// a race lost to another client, the API server away while it restarts) or a violation. Denials
// are expected (the traffic breaks rules on purpose, and references dangle); what may never reach
// a user is an answer that is no rule at all: a 500 (a webhook that failed or could not be
// reached), a timeout, a 422 naming no field, or no answer while the API server was up.
import { TYPE_TEXT } from '../../src/api/field-error.ts';
import { ApiError } from '../../src/kube/errors.ts';

export type Outcome = 'ok' | 'denied' | 'conflict' | 'exists' | 'not-found' | 'unavailable' | 'failed';

export interface Classified {
  readonly outcome: Outcome;
  /** Why the answer breaks the denial invariant; absent for an expected outcome. */
  readonly violation?: string;
  /** The write may or may not have been made (no answer, or no complete one). */
  readonly inDoubt?: boolean;
}

/** Who may deny a KAOS object: one of its webhooks, or the API server checking the CRD's schema. */
const DENIER = /^(admission webhook "[a-z-]+\.kaos\.tools" denied the request: )?[A-Za-z]+\.kaos\.tools "[^"]*" is invalid: /;

/**
 * Pure: the outcome of a request that failed with `err`. `apiServerDown`: the request overlapped a
 * restart of the API server (a fault), so no answer is expected.
 */
export function classify(err: unknown, apiServerDown: boolean): Classified {
  if (!(err instanceof ApiError)) {
    // No HTTP answer: connection refused or reset, the socket closed.
    if (apiServerDown) return { outcome: 'unavailable', inDoubt: true };
    return { outcome: 'failed', inDoubt: true, violation: `no answer from the API server: ${errorText(err)}` };
  }
  if (err.code === 404) return { outcome: 'not-found' };
  if (err.code === 409) return { outcome: err.reason === 'AlreadyExists' ? 'exists' : 'conflict' };
  if (err.code === 422) {
    const problem = undocumentedDenial(err);
    return problem === undefined ? { outcome: 'denied' } : { outcome: 'failed', violation: problem };
  }
  // The API server refusing requests while it starts (its readiness not reached yet).
  if (apiServerDown && (err.code === 503 || err.code === 500 && /not yet ready|shutting down|starting/i.test(err.message))) {
    return { outcome: 'unavailable', inDoubt: true };
  }
  const inDoubt = err.code === 504 || err.code >= 500;
  return { outcome: 'failed', inDoubt, violation: `${err.code} ${err.reason}: ${clip(err.message)}` };
}

/** Why a 422 is not a documented denial; undefined when it is one. */
function undocumentedDenial(err: ApiError): string | undefined {
  if (!DENIER.test(err.message)) return `422 from neither a kaos.tools webhook nor the CRD schema: ${clip(err.message)}`;
  const causes = err.details?.causes ?? [];
  if (causes.length === 0) {
    const words = Object.values(TYPE_TEXT);
    return words.some((w) => err.message.includes(`: ${w}`)) ? undefined : `422 naming no documented kind of error: ${clip(err.message)}`;
  }
  for (const cause of causes) {
    const field = cause.field ?? '';
    // The kinds of field error docs/api.md ("Validation") documents: Kubernetes' own.
    if (!Object.hasOwn(TYPE_TEXT, cause.reason ?? '')) return `422 with an undocumented cause ${cause.reason ?? '(none)'} on ${field || '(no field)'}: ${clip(err.message)}`;
    if (!/^(spec|metadata)(\.|\[|$)/.test(field)) return `422 with a cause on ${field || '(no field)'}, not a field of the object: ${clip(err.message)}`;
  }
  return undefined;
}

function errorText(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${(err.cause as NodeJS.ErrnoException).code ?? err.cause.message})` : '';
  return clip(`${err instanceof Error ? err.message : String(err)}${cause}`);
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
