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

/**
 * Wilson score interval for a proportion estimated under a sampling design (weights, strata, a model-assisted
 * correction), from its estimate p̂ and design-based standard error: the Wilson interval at the effective sample
 * size n* = p̂(1 − p̂)/SE², the size of a simple random sample with the same precision (Kish's design effect). Like
 * wilsonCI it never leaves [0, 1]; the Wald interval p̂ ± 1.96·SE does, and covers poorly near 0 and 1.
 *
 * References: E. L. Korn and B. I. Graubard (1998) "Confidence intervals for proportions with small expected
 * number of positive counts estimated from survey data", Survey Methodology 24, 193-201 (the effective sample
 * size, and a design effect of 1 when p̂ is 0 or 1); N. Dean and M. Pagano (2015) "Evaluating confidence interval
 * methods for binomial proportions in clustered surveys", Journal of Survey Statistics and Methodology 3, 484-503
 * (Wilson at the effective sample size among the methods that keep close to nominal coverage).
 *
 * `n` is the number of sampled units, used when p̂ is 0 or 1 (n* is then undefined). SE = 0 gives the zero-width
 * [p̂, p̂]: a census, or labels that never differ from the prediction — there is no sampling error to bound.
 *
 * @example
 * wilsonEffectiveCI(0.3, Math.sqrt(0.3 * 0.7 / 100), 40); // => wilsonCI(30, 100)
 */
export function wilsonEffectiveCI(p: number, se: number, n: number, options: { z?: number } = {}): Interval {
  if (!Number.isFinite(p) || p < 0 || p > 1) throw new Error(`wilsonEffectiveCI: p must be in [0, 1], got ${String(p)}`);
  if (!(se > 0)) return [p, p];
  const nEff = p > 0 && p < 1 ? (p * (1 - p)) / (se * se) : n;
  return wilsonCI(p * nEff, nEff, options);
}
