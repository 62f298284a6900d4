/**
 * The simulation's one source of random choices, seeded (SIM_SEED), so that a run that failed can
 * be run again making the same choices. Timing still varies between runs (real processes, a real
 * network), so a replay makes the same requests in the same order, not at the same instants.
 */
export interface SeededRandom {
  readonly seed: number;
  /** In [0, 1). */
  next(): number;
  /** An integer in [low, high]. */
  between(low: number, high: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** base64url characters, as many as asked. */
  text(length: number): string;
}

/** mulberry32: 32 bits of state, enough for choosing requests, and the same sequence on every machine. */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  return {
    seed: seed >>> 0,
    next,
    between: (low, high) => low + Math.floor(next() * (high - low + 1)),
    chance: (probability) => next() < probability,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    text: (length) => Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  };
}
