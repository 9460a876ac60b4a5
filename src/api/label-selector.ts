// metav1.LabelSelector as Kubernetes reads it: validated with apimachinery's messages
// (ValidateLabelSelector), parsed into requirements (LabelSelectorAsSelector) and matched against
// an object's labels (labels.Selector.Matches). Pure; AccessGrant's `resources[].selector` uses it
// at admission and in the projection alike, so what admission accepts is what the projection reads.
import { LABEL_SELECTOR_OPERATORS, type LabelSelectorOperator } from './enums.ts';
import { child, forbidden, index, invalid, required, type FieldError } from './field-error.ts';
import { asArray, asRecord } from './json.ts';
import { labelValueProblems, qualifiedNameProblems } from './name-validation.ts';

/** One term of a parsed selector; `matchLabels` entries become `Equals`. */
export interface Requirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator | 'Equals';
  readonly values: readonly string[];
}

const isOperator = (value: unknown): value is LabelSelectorOperator =>
  typeof value === 'string' && (LABEL_SELECTOR_OPERATORS as readonly string[]).includes(value);

const strings = (value: unknown): string[] => (asArray(value) ?? []).filter((v): v is string => typeof v === 'string');

/**
 * Every problem of `selector` at `path`, as ValidateLabelSelector reports them: matchLabels (keys
 * in sorted order, where Go's map order is random), then each expression's operator and values,
 * key, and each value.
 */
export function labelSelectorErrors(selector: unknown, path: string): FieldError[] {
  const s = asRecord(selector);
  if (s === undefined) return [];
  const errors: FieldError[] = [];
  const labelsPath = child(path, 'matchLabels');
  const matchLabels = asRecord(s.matchLabels) ?? {};
  for (const key of Object.keys(matchLabels).sort()) {
    errors.push(...qualifiedNameProblems(key).map((p) => invalid(labelsPath, key, p)));
    const value = matchLabels[key];
    if (typeof value === 'string') errors.push(...labelValueProblems(value).map((p) => invalid(labelsPath, value, p)));
  }
  (asArray(s.matchExpressions) ?? []).forEach((term, i) => {
    const t = asRecord(term) ?? {};
    const at = index(child(path, 'matchExpressions'), i);
    const values = strings(t.values);
    const operator = t.operator;
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0) errors.push(required(child(at, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0) errors.push(forbidden(child(at, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errors.push(invalid(child(at, 'operator'), operator, 'not a valid selector operator'));
    }
    const key = typeof t.key === 'string' ? t.key : '';
    errors.push(...qualifiedNameProblems(key).map((p) => invalid(child(at, 'key'), key, p)));
    values.forEach((value, j) => errors.push(...labelValueProblems(value).map((p) => invalid(index(child(at, 'values'), j), value, p))));
  });
  return errors;
}

/**
 * The requirements of a valid selector (an empty one has none, and matches everything); undefined
 * for one Kubernetes could not parse (labelSelectorErrors names why), which matches nothing.
 */
export function parseLabelSelector(selector: unknown): Requirement[] | undefined {
  const s = asRecord(selector);
  if (s === undefined || labelSelectorErrors(s, '').length > 0) return undefined;
  const out: Requirement[] = [];
  const matchLabels = asRecord(s.matchLabels) ?? {};
  for (const key of Object.keys(matchLabels).sort()) out.push({ key, operator: 'Equals', values: [String(matchLabels[key])] });
  for (const term of asArray(s.matchExpressions) ?? []) {
    const t = asRecord(term) ?? {};
    if (isOperator(t.operator) && typeof t.key === 'string') out.push({ key: t.key, operator: t.operator, values: strings(t.values) });
  }
  return out;
}

/** Whether `labels` satisfy every requirement (labels.Selector.Matches). */
export function matchesLabels(requirements: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const has = (key: string): boolean => labels !== undefined && Object.hasOwn(labels, key);
  return requirements.every(({ key, operator, values }) => {
    switch (operator) {
      case 'Equals':
      case 'In':
        return has(key) && values.includes(labels?.[key] as string);
      case 'NotIn':
        return !has(key) || !values.includes(labels?.[key] as string);
      case 'Exists':
        return has(key);
      case 'DoesNotExist':
        return !has(key);
    }
  });
}
