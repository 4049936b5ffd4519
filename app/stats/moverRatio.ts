import type { Interval } from "./types";

/**
 * MOVER-R interval for a ratio θ₁/θ₂ of two independent non-negative estimates, from each one's point
 * estimate and confidence interval (l, u), l ≥ 0. It inverts the MOVER interval of θ₁ − R·θ₂ (Fieller's
 * construction with the variances recovered from the limits): the limits are the R at which that
 * interval just reaches 0, the roots of
 *   lower limit:  u₂(2θ̂₂ − u₂)·R² − 2θ̂₁θ̂₂·R + l₁(2θ̂₁ − l₁) = 0  (the root ≤ θ̂₁/θ̂₂),
 *   upper limit:  l₂(2θ̂₂ − l₂)·R² − 2θ̂₁θ̂₂·R + u₁(2θ̂₁ − u₁) = 0  (the root ≥ θ̂₁/θ̂₂),
 * i.e. L = [θ̂₁θ̂₂ − √((θ̂₁θ̂₂)² − l₁u₂(2θ̂₁ − l₁)(2θ̂₂ − u₂))] / [u₂(2θ̂₂ − u₂)] and
 *      U = [θ̂₁θ̂₂ + √((θ̂₁θ̂₂)² − u₁l₂(2θ̂₁ − u₁)(2θ̂₂ − l₂))] / [l₂(2θ̂₂ − l₂)].
 * When the denominator's interval reaches 0 (l₂ ≤ 0) the ratio is unbounded above: the result is null.
 *
 * References: R. G. Newcombe (2016) "MOVER-R confidence intervals for ratios and products of two
 * independently estimated quantities", Statistical Methods in Medical Research 25, 1774-1778;
 * A. Donner and G. Y. Zou (2012) "Closed-form confidence intervals for functions of the normal mean and
 * standard deviation", Statistical Methods in Medical Research 21, 347-359.
 *
 * Preconditions: finite numbers; 0 ≤ l ≤ θ̂ ≤ u for both; θ̂₂ > 0.
 *
 * @throws {Error} "moverRatio: ..." for non-finite input, a negative limit, an interval not around its estimate or θ̂₂ ≤ 0
 * @example
 * moverRatio(0.4, [0.3, 0.5], 0.8, [0.7, 0.9]); // => [0.36685…, 0.64902…] (ratio 0.5)
 */
export function moverRatio(e1: number, ci1: Interval, e2: number, ci2: Interval): Interval | null {
  const fn = "moverRatio";
  const [l1, u1] = ci1;
  const [l2, u2] = ci2;
  if (![e1, l1, u1, e2, l2, u2].every(Number.isFinite)) throw new Error(`${fn}: estimates and limits must be finite numbers`);
  if (l1 < 0 || l2 < 0) throw new Error(`${fn}: the estimates must be non-negative, with limits ≥ 0`);
  const tol = (e: number) => 1e-12 * Math.max(1, Math.abs(e));
  if (l1 - e1 > tol(e1) || e1 - u1 > tol(e1) || l2 - e2 > tol(e2) || e2 - u2 > tol(e2))
    throw new Error(`${fn}: each interval must contain its estimate`);
  if (!(e2 > 0)) throw new Error(`${fn}: the denominator's estimate must be positive, got ${e2}`);
  if (!(l2 > 0)) return null;
  const b = e1 * e2;
  // Lower limit. a ≤ 0 (u₂ ≥ 2θ̂₂) keeps one non-negative root; a = 0 makes the equation linear.
  const aL = u2 * (2 * e2 - u2);
  const cL = l1 * (2 * e1 - l1);
  const lower = aL === 0 ? cL / (2 * b) : (b - Math.sqrt(Math.max(0, b * b - aL * cL))) / aL;
  const aU = l2 * (2 * e2 - l2);
  const cU = u1 * (2 * e1 - u1);
  const upper = (b + Math.sqrt(Math.max(0, b * b - aU * cU))) / aU;
  const ratio = e1 / e2;
  return [Math.max(0, Math.min(lower, ratio)), Math.max(upper, ratio)];
}
