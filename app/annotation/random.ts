/**
 * Seeded randomness for annotation: sampling plans, assignment tie-breaks and
 * the per-assignment shuffle of compared responses. Same seed, same result.
 */
import { seededRandom } from "~/stats/seededRandom";

/** Mixes several integers into one 32-bit seed (FNV-1a over their decimal text). */
export function mixSeed(...parts: (number | string)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("|")) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function rng(...parts: (number | string)[]): () => number {
  return seededRandom(mixSeed(...parts));
}

/** Fisher–Yates on a copy. */
export function shuffle<T>(xs: readonly T[], rand: () => number): T[] {
  const out = xs.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** k distinct elements drawn without replacement, in drawn order. */
export function sample<T>(xs: readonly T[], k: number, rand: () => number): T[] {
  return shuffle(xs, rand).slice(0, Math.max(0, k));
}

export function pick<T>(xs: readonly T[], rand: () => number): T {
  return xs[Math.floor(rand() * xs.length)];
}

/** The order compared responses are shown in for one assignment. */
export function shownOrderFor<T>(
  responseIds: readonly T[] | null | undefined,
  seed: number,
  unitId: number,
  annotatorId: number,
): T[] | null {
  if (!responseIds || responseIds.length === 0) return null;
  return shuffle(responseIds, rng("shown", seed, unitId, annotatorId));
}

/** "A", "B", ... for shown positions. */
export const letter = (i: number) => String.fromCharCode(65 + i);
export const letterIndex = (l: string) => (/^[A-Z]$/.test(l) ? l.charCodeAt(0) - 65 : -1);
