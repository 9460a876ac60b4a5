// resource.Quantity as exact fractions: "500m" = "0.5", "1Gi" = "1024Mi". The API server stores
// quantities canonicalized, so a value is compared by what it means, never by its spelling. A
// pure leaf: apply's "would this change anything", and admission's "does this PersistentVolumeClaim
// shrink" (through api/quantity.ts), read it.

export interface Fraction {
  num: bigint;
  den: bigint;
}

const BINARY: Readonly<Record<string, bigint>> = {
  Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n,
};
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** A quantity ("500m", "0.5", "1Gi", "1e3", 2) as an exact fraction; undefined if it is none. */
export function parseQuantity(value: unknown): Fraction | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/.exec(text.trim());
  if (m === null) return undefined;
  const [, sign = '', mantissa = '', suffix = '', exponent] = m;
  const [int = '', frac = ''] = mantissa.split('.');
  let num = BigInt((int + frac) || '0') * (sign === '-' ? -1n : 1n);
  let den = 10n ** BigInt(frac.length);
  const binary = BINARY[suffix];
  let exp = 0;
  if (binary !== undefined) num *= binary;
  else if (exponent !== undefined) exp = Number(exponent);
  else exp = DECIMAL[suffix] ?? 0;
  if (Math.abs(exp) > 60) return undefined;
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else den *= 10n ** BigInt(-exp);
  return { num, den };
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`; undefined when either is no quantity. */
export function compareQuantities(a: unknown, b: unknown): -1 | 0 | 1 | undefined {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (x === undefined || y === undefined) return undefined;
  const left = x.num * y.den;
  const right = y.num * x.den;
  return left < right ? -1 : left > right ? 1 : 0;
}

export function sameQuantity(a: unknown, b: unknown): boolean {
  return compareQuantities(a, b) === 0;
}
