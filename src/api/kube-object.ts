// Recognising a Kubernetes object in JSON of unknown shape (an AdmissionRequest's object).
import { isRecord } from './json.ts';
import type { KubeObject } from './lookup.ts';

export function isKubeObject(value: unknown): value is KubeObject {
  return isRecord(value) && (value.metadata === undefined || isRecord(value.metadata));
}

/** The object, or a TypeError naming what was malformed (the protocol layer answers 400). */
export function requireKubeObject(value: unknown, what: string): KubeObject {
  if (!isKubeObject(value)) throw new TypeError(`${what} is not a Kubernetes object`);
  return value;
}
