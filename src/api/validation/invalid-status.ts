// The denial Kubernetes itself returns for an invalid object (apimachinery's errors.NewInvalid),
// so kubectl prints our webhook's verdict exactly like a native schema error:
//   The Agent "a1" is invalid:
//   * spec.modelAPI: Not found: "gpt"
import type { Status } from '../meta.ts';
import { boundedErrors, boundedMessageParts, MAX_MESSAGE_BYTES, utf8Bytes } from './answer-limits.ts';
import type { FieldError } from '../field-error.ts';
import { cut, MAX_VALUE_LENGTH } from '../bounded-text.ts';
import { goQuote } from '../go-format.ts';
import { GROUP, type KaosKind } from '../kinds.ts';

/**
 * Joins error strings like apimachinery's ErrorList.ToAggregate().Error(): duplicates dropped,
 * one error bare, several as `[a, b]`.
 */
export function aggregateMessage(errors: readonly FieldError[], budget?: number): string {
  const unique = boundedMessageParts([...new Set(errors.map((e) => e.errorString()))], budget);
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

/**
 * The 422 for `errors`. Bounded whatever the object (answer-limits.ts): at most MAX_CAUSES causes,
 * the last counting the rest, and a message of a few KiB.
 */
export function invalidStatus(kind: KaosKind, name: string, allErrors: readonly FieldError[]): Status {
  const errors = boundedErrors(allErrors);
  const qualified = `${kind}.${GROUP} ${goQuote(cut(name, MAX_VALUE_LENGTH))} is invalid`;
  return {
    metadata: {},
    status: 'Failure',
    // The whole message within MAX_MESSAGE_BYTES: the prefix and the list's brackets count.
    message: allErrors.length === 0 ? qualified : `${qualified}: ${aggregateMessage(allErrors, MAX_MESSAGE_BYTES - utf8Bytes(qualified) - 4)}`,
    reason: 'Invalid',
    code: 422,
    details: {
      name,
      group: GROUP,
      kind,
      causes: errors.map((e) => ({ reason: e.type, field: e.field, message: e.errorBody() })),
    },
  };
}
