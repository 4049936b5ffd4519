/**
 * A seeded pseudo-random number generator: mulberry32 (Tommy Ettinger, 2017),
 * a 32-bit state generator with period 2^32 that passes gjrand/PractRand for the
 * sample sizes used here (bootstrap and simulation). Returns a function that
 * yields uniform numbers in [0, 1) and is fully determined by `seed`.
 *
 * Reference: https://gist.github.com/tommyettinger/46a874533244883189143505d203312c
 *
 * Preconditions: `seed` is a finite number; it is reduced to an unsigned 32-bit
 * integer (`seed >>> 0`), so 1 and 2^32 + 1 give the same stream.
 *
 * @param seed any finite number
 * @returns a generator `() => number` in [0, 1)
 * @throws {Error} "seededRandom: ..." when `seed` is not finite
 * @example
 * const random = seededRandom(42);
 * random(); // => 0.6011037519201636 (the same on every run)
 */
export function seededRandom(seed: number): () => number {
  if (typeof seed !== "number" || !Number.isFinite(seed)) {
    throw new Error(`seededRandom: seed must be a finite number, got ${String(seed)}`);
  }
  let state = Math.trunc(seed) >>> 0;
  return function next(): number {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
