// Recognising a Kubernetes object in JSON of unknown shape (an AdmissionRequest's object).
import type { KubeObject } from './lookup.ts';
import { kubeObjectProblem } from './object-meta.ts';

/** A record whose metadata, when present, has the types KubeObject promises (object-meta.ts). */
export function isKubeObject(value: unknown): value is KubeObject {
  return kubeObjectProblem(value, '') === undefined;
}

/**
 * The object, or a TypeError naming what was malformed. decodeReview refuses such objects with
 * a 400 before any handler runs, so in a handler this only guards against a caller that skipped it.
 */
export function requireKubeObject(value: unknown, what: string): KubeObject {
  const problem = kubeObjectProblem(value, what);
  if (problem !== undefined) throw new TypeError(problem);
  return value as KubeObject;
}
