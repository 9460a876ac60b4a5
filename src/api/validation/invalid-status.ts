// The denial Kubernetes itself returns for an invalid object (apimachinery's errors.NewInvalid),
// so kubectl prints our webhook's verdict exactly like a native schema error:
//   The Agent "a1" is invalid:
//   * spec.modelAPI: Not found: "gpt"
import type { Status } from '../meta.ts';
import type { FieldError } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { GROUP, type KaosKind } from '../kinds.ts';

/**
 * Joins error strings like apimachinery's ErrorList.ToAggregate().Error(): duplicates dropped,
 * one error bare, several as `[a, b]`.
 */
export function aggregateMessage(errors: readonly FieldError[]): string {
  const unique = [...new Set(errors.map((e) => e.errorString()))];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

export function invalidStatus(kind: KaosKind, name: string, errors: readonly FieldError[]): Status {
  const qualified = `${kind}.${GROUP} ${goQuote(name)} is invalid`;
  return {
    metadata: {},
    status: 'Failure',
    message: errors.length === 0 ? qualified : `${qualified}: ${aggregateMessage(errors)}`,
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
