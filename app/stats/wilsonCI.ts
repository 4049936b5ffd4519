import type { Interval } from "./types";

/**
 * Wilson score interval for a binomial proportion: never leaves [0, 1] and
 * keeps close to nominal coverage for small n and proportions near 0 or 1,
 * where the Wald interval p̂ ± z·√(p̂(1 − p̂)/n) fails (and can exceed 100%).
 *
 * Definition, with p̂ = successes/n and z the normal quantile (1.96 for 95%):
 *   centre = (p̂ + z²/(2n)) / (1 + z²/n),
 *   half   = z/(1 + z²/n) · √(p̂(1 − p̂)/n + z²/(4n²)),
 *   CI = [centre − half, centre + half]  (no continuity correction).
 * Accepts a fractional `successes` (a mean of per-unit proportions × n).
 *
 * References: E. B. Wilson (1927) "Probable inference, the law of succession,
 * and statistical inference", JASA 22, 209-212; R. G. Newcombe (1998) "Two-sided
 * confidence intervals for the single proportion: comparison of seven methods",
 * Statistics in Medicine 17, 857-872 (method 3; worked examples 81/263 →
 * 0.2553-0.3662, 15/148 → 0.0624-0.1605, 0/20 → 0-0.1611, 1/29 → 0.0061-0.1718).
 *
 * Preconditions: n > 0, 0 ≤ successes ≤ n; z > 0. n = 0 gives [NaN, NaN].
 *
 * @throws {Error} "wilsonCI: ..." for negative/non-finite counts, successes > n or a bad z
 * @example
 * wilsonCI(81, 263); // => [0.2552876130636696, 0.36621068405342155]
 */
export function wilsonCI(successes: number, n: number, options: { z?: number } = {}): Interval {
  const fn = "wilsonCI";
  const z = options.z ?? 1.96;
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) throw new Error(`${fn}: n must be a finite number ≥ 0, got ${String(n)}`);
  if (typeof successes !== "number" || !Number.isFinite(successes) || successes < 0 || successes > n + 1e-9 * n) {
    throw new Error(`${fn}: successes must be in [0, n], got ${String(successes)} of ${String(n)}`);
  }
  if (typeof z !== "number" || !(z > 0) || !Number.isFinite(z)) throw new Error(`${fn}: z must be a positive finite number`);
  if (n === 0) return [NaN, NaN];
  const p = Math.min(1, successes / n);
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
