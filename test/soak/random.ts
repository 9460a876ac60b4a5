// The soak's one source of randomness: a seeded generator (sfc32, a small counter-based generator
// with a 128-bit state, good enough for test input and far from cryptographic), so that a seed
// names a run. Each concern (a client, the fault schedule) takes a stream of its own with
// `fork(label)`, so what one stream draws does not shift another's: the same seed gives each
// client the same operations and the faults the same times whatever the interleaving.

/** A 32-bit hash of a string (FNV-1a), to derive a stream's state from its seed and label. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class Random {
  readonly seed: string;
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: string | number) {
    this.seed = String(seed);
    this.#a = hash32(`a:${this.seed}`);
    this.#b = hash32(`b:${this.seed}`);
    this.#c = hash32(`c:${this.seed}`);
    this.#d = 1;
    // The first outputs of a fresh sfc32 state are poorly mixed: discard them.
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A stream of its own, named by `label` under this one's seed. */
  fork(label: string): Random {
    return new Random(`${this.seed}/${label}`);
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A number in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** One of `weights`' keys, each with its weight's share of the chances. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return (entries.at(-1) as [K, number])[0];
  }

  /** Up to `max` distinct items of `items`, in a random order. */
  some<T>(items: readonly T[], max: number): T[] {
    return this.shuffle(items).slice(0, this.int(Math.min(max, items.length) + 1));
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }
}

/** A seed for a run that names none: printed, so the run can be replayed. */
export function randomSeed(): string {
  return String(Math.floor(Math.random() * 1e9));
}
