// Strategic merge of a user's spec.podSpec fragment onto the generated pod spec (docs/api.md, "Common behaviour").
//
// Follows Kubernetes' strategic-merge-patch for core/v1 PodSpec, restricted to what a pod spec
// needs and implemented without I/O so render stays pure:
// - lists with a merge key merge item by item (containers by name, env by name, ports by
//   containerPort, volumeMounts by mountPath, ...); new items are appended in patch order;
// - every other list replaces the generated one; scalars override; objects merge recursively;
// - `null` deletes a key; `$patch: delete` on a keyed list item removes that item;
//   `$patch: replace` on an object replaces it, and a `{$patch: replace}` list item replaces
//   the whole list; any other `$...` directive key is dropped from the result.
// Deliberate difference: volumes and env items are "one-of" objects (configMap vs secret vs
// emptyDir; value vs valueFrom), so a patched item keeps only the fields the patch gives
// (Kubernetes' retainKeys strategy, which it applies to volumes only when kubectl asks).
// Without that, overriding the `litellm-config` volume with a Secret would yield a volume
// with two sources, which the API server refuses.
//
// The result is only as valid as the fragment; the validating webhook dry-runs it (docs/api.md, "Validation").
import { cloneJson } from '../api/json.ts';
import type { PodSpec } from './k8s.ts';

type JsonObject = Record<string, unknown>;

interface ListRule {
  /** Field identifying an item. */
  readonly key: string;
  /** Rules for merging the fields of a matched item. */
  readonly item?: MergeRules;
  /** A matched item keeps only the fields present in the patch item. */
  readonly retainKeys?: boolean;
}

interface MergeRules {
  readonly lists: Readonly<Record<string, ListRule>>;
}

const NO_RULES: MergeRules = { lists: {} };

/** patchMergeKey tags of core/v1 Container. */
const CONTAINER_RULES: MergeRules = {
  lists: {
    env: { key: 'name', retainKeys: true },
    ports: { key: 'containerPort' },
    volumeMounts: { key: 'mountPath' },
    volumeDevices: { key: 'devicePath' },
  },
};

/** patchMergeKey tags of core/v1 PodSpec. */
const POD_SPEC_RULES: MergeRules = {
  lists: {
    containers: { key: 'name', item: CONTAINER_RULES },
    initContainers: { key: 'name', item: CONTAINER_RULES },
    ephemeralContainers: { key: 'name', item: CONTAINER_RULES },
    volumes: { key: 'name', retainKeys: true },
    imagePullSecrets: { key: 'name' },
    hostAliases: { key: 'ip' },
    resourceClaims: { key: 'name', retainKeys: true },
    schedulingGates: { key: 'name' },
    topologySpreadConstraints: { key: 'topologyKey' },
  },
};

const PATCH = '$patch';

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const DOLLAR = 0x24;

function isDirectiveKey(key: string): boolean {
  return key.charCodeAt(0) === DOLLAR;
}

/**
 * Merges `patch` onto `base` and returns a new pod spec; neither input is modified.
 * A patch that is not an object (absent, null, a string) leaves the pod spec unchanged.
 */
export function mergePodSpec(base: PodSpec, patch: unknown): PodSpec {
  if (!isObject(patch)) return cloneJson(base);
  const merged = mergeObject(base, patch, POD_SPEC_RULES);
  // `$patch: delete` at the top would delete the whole pod spec; that is never meaningful,
  // so the generated spec stands (the webhook reports nothing wrong: there is nothing left
  // to validate).
  return (merged ?? cloneJson(base)) as PodSpec;
}

/** Returns undefined when the patch deletes the object. */
function mergeObject(base: JsonObject, patch: JsonObject, rules: MergeRules): JsonObject | undefined {
  const directive = patch[PATCH];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return mergeObject({}, withoutKey(patch, PATCH), rules);
  // Keys, not entries: a fragment may hold 100,000 items, and a pair for each key of each adds up.
  const out: JsonObject = {};
  for (const key of Object.keys(base)) {
    const value = base[key];
    if (value !== undefined) setOwn(out, key, cloneJson(value));
  }
  for (const key of Object.keys(patch)) {
    const patchValue = patch[key];
    if (patchValue === undefined || isDirectiveKey(key)) continue;
    if (patchValue === null) {
      delete out[key];
      continue;
    }
    // Own keys only: a fragment may name "constructor" or "toString", which every object inherits.
    const merged = mergeValue(Object.hasOwn(out, key) ? out[key] : undefined, patchValue, Object.hasOwn(rules.lists, key) ? rules.lists[key] : undefined);
    if (merged === undefined) delete out[key];
    else setOwn(out, key, merged);
  }
  return out;
}

/** `out[key] = value`, except that "__proto__" (an own key after JSON.parse) stays a plain key. */
function setOwn(out: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

function mergeValue(base: unknown, patch: unknown, listRule: ListRule | undefined): unknown {
  if (Array.isArray(patch)) {
    if (listRule !== undefined) return mergeList(Array.isArray(base) ? base : [], patch, listRule);
    // Unkeyed lists replace; their items may still carry directives to drop. A loop, not
    // flatMap: an array for each item of a list of 100,000 added up.
    const out: unknown[] = [];
    for (const item of patch) {
      if (!isObject(item)) out.push(item);
      else {
        const materialized = isPlain(item) ? { ...item } : mergeObject({}, item, NO_RULES);
        if (materialized !== undefined) out.push(materialized);
      }
    }
    return out;
  }
  if (isObject(patch)) return mergeObject(isObject(base) ? base : {}, patch, NO_RULES);
  return patch;
}

function mergeList(base: readonly unknown[], patch: readonly unknown[], rule: ListRule): unknown[] {
  const itemRules = rule.item ?? NO_RULES;
  const replaceAll = patch.some((item) => isObject(item) && item[PATCH] === 'replace' && !(rule.key in item));
  // Items are found by their key through an index, not a scan: a fragment's list is bounded only
  // by the request's size, and a scan per item made 20,000 env entries cost seconds. `deleted`
  // marks the items a `$patch: delete` removed; they are dropped at the end.
  const out: unknown[] = replaceAll ? [] : base.map((item) => cloneJson(item));
  const byKey = new KeyIndex();
  out.forEach((item, i) => byKey.add(item, rule.key, i));
  const deleted = new Set<number>();
  for (const item of patch) {
    if (!isObject(item)) {
      out.push(item);
      continue;
    }
    if (!(rule.key in item)) {
      // A `{$patch: replace}` marker, or an item the API server will reject for lacking its
      // key: keep the latter so the webhook's dry-run reports it instead of hiding it.
      if (item[PATCH] !== 'replace') out.push(mergeObject({}, item, itemRules) ?? {});
      continue;
    }
    const key = item[rule.key];
    const index = byKey.first(key);
    if (index === undefined) {
      // Merged onto nothing, an item of plain values is a copy of itself: the common item of a
      // long list (an env entry, a port) skips the general merge.
      const created = isPlain(item) ? { ...item } : mergeObject({}, item, itemRules);
      if (created === undefined) continue;
      const position = out.push(created) - 1;
      if (created[rule.key] === key) byKey.addAbsent(key, position);
      else byKey.add(created, rule.key, position);
      continue;
    }
    const existing = out[index] as JsonObject;
    const merged = mergeObject(rule.retainKeys ? retain(existing, item) : existing, item, itemRules);
    if (merged === undefined) {
      byKey.removeFirst(item[rule.key]);
      deleted.add(index);
    } else out[index] = merged;
  }
  return deleted.size === 0 ? out : out.filter((_, i) => !deleted.has(i));
}

/**
 * The positions of a list's items by merge key, in list order: the first is the one a patch item
 * merges into (as a scan from the start would find it). Keys compare as `===` does (a Map's
 * SameValueZero differs only for NaN, which JSON cannot hold).
 */
class KeyIndex {
  /** A key's one position, or its positions in order when several items share it. */
  readonly #positions = new Map<unknown, number | number[]>();

  add(item: unknown, key: string, position: number): void {
    if (!isObject(item)) return;
    const value = item[key];
    const positions = this.#positions.get(value);
    if (positions === undefined) this.#positions.set(value, position);
    else if (typeof positions === 'number') this.#positions.set(value, [positions, position]);
    else positions.push(position);
  }

  /** `value`'s one position: for a value `first` has just found nowhere. */
  addAbsent(value: unknown, position: number): void {
    this.#positions.set(value, position);
  }

  first(value: unknown): number | undefined {
    const positions = this.#positions.get(value);
    return typeof positions === 'number' ? positions : positions?.[0];
  }

  removeFirst(value: unknown): void {
    const positions = this.#positions.get(value);
    if (typeof positions === 'number') this.#positions.delete(value);
    else if (positions !== undefined) {
      positions.shift();
      if (positions.length === 1) this.#positions.set(value, positions[0] as number);
    }
  }
}

/** Whether every value of `item` is a string, number or boolean, and no key a directive. */
function isPlain(item: JsonObject): boolean {
  for (const key of Object.keys(item)) {
    const value = item[key];
    if (isDirectiveKey(key) || value === null || typeof value === 'object' || value === undefined) return false;
  }
  return true;
}

/** The fields of `base` that `patch` also names (retainKeys). */
function retain(base: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(patch)) {
    if (!isDirectiveKey(key) && Object.hasOwn(base, key)) out[key] = base[key];
  }
  return out;
}

function withoutKey(object: JsonObject, key: string): JsonObject {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}

/**
 * The path in the user's fragment of a field that `path` names in the merged pod spec (e.g.
 * `containers[1].ports[1].containerPort` → `containers[0].ports[0].containerPort` when the
 * generated container and port come first), following the same merge keys as the merge. Undefined
 * when the field did not come from the fragment, i.e. the generated pod alone holds it.
 */
export function fragmentPath(merged: unknown, fragment: unknown, path: string): string | undefined {
  const steps = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
  let rules: MergeRules = POD_SPEC_RULES;
  let listRule: ListRule | undefined;
  let m: unknown = merged;
  let f: unknown = fragment;
  let out = '';
  for (const step of steps) {
    if (f === undefined || f === null) return undefined;
    if (step.startsWith('[')) {
      if (!Array.isArray(m) || !Array.isArray(f)) return undefined;
      const i = Number(step.slice(1, -1));
      let j = i;
      if (listRule !== undefined) {
        // A keyed list: the fragment's item is the one with the same key, wherever it stands.
        const key = listRule.key;
        const item: unknown = m[i];
        const wanted = isObject(item) ? item[key] : undefined;
        j = f.findIndex((x) => isObject(x) && x[key] === wanted);
        if (j < 0) return undefined;
      }
      out += `[${j}]`;
      m = m[i];
      f = f[j];
      rules = listRule?.item ?? NO_RULES;
      listRule = undefined;
    } else {
      if (!isObject(m) || !isObject(f)) return undefined;
      out += out === '' ? step : `.${step}`;
      listRule = rules.lists[step];
      m = m[step];
      f = f[step];
      rules = NO_RULES;
    }
  }
  return f === undefined ? undefined : out;
}
