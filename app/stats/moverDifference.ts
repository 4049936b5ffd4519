import type { Interval } from "./types";

/**
 * MOVER interval for a difference θ₁ − θ₂ of two possibly correlated estimates, from each one's point
 * estimate and confidence interval (l, u) and their correlation r:
 *   L = θ̂₁ − θ̂₂ − √( (θ̂₁ − l₁)² + (u₂ − θ̂₂)² − 2r·(θ̂₁ − l₁)(u₂ − θ̂₂) ),
 *   U = θ̂₁ − θ̂₂ + √( (u₁ − θ̂₁)² + (θ̂₂ − l₂)² − 2r·(u₁ − θ̂₁)(θ̂₂ − l₂) ).
 * With Wilson intervals for two proportions of one multinomial sample (r < 0) this is Newcombe's method
 * 10 for paired proportions; with r = 0 his method 10 for independent ones (square-and-add).
 *
 * References: G. Y. Zou and A. Donner (2008) "Construction of confidence limits about effect measures: a
 * general approach", Statistics in Medicine 27, 1693-1702 (eqs. 7-8, correlated estimates); R. G.
 * Newcombe (1998) "Improved confidence intervals for the difference between binomial proportions based
 * on paired data", Statistics in Medicine 17, 2635-2650 (method 10).
 *
 * Preconditions: finite numbers, l ≤ θ̂ ≤ u for both, −1 ≤ r ≤ 1 (rounding beyond ±1 by up to 1e-9 is clamped).
 *
 * @throws {Error} "moverDifference: ..." for non-finite input, an interval not around its estimate, or |r| > 1
 * @example
 * moverDifference(0.3, [0.2, 0.45], 0.1, [0.05, 0.2], 0); // => [0.3 - 0.1 - √(0.01 + 0.01), 0.2 + √(0.0225 + 0.0025)] = [0.0586, 0.3581]
 */
export function moverDifference(e1: number, ci1: Interval, e2: number, ci2: Interval, r = 0): Interval {
  const fn = "moverDifference";
  const [l1, u1] = ci1;
  const [l2, u2] = ci2;
  if (![e1, l1, u1, e2, l2, u2, r].every(Number.isFinite)) throw new Error(`${fn}: estimates, limits and r must be finite numbers`);
  if (outside(e1, l1, u1) || outside(e2, l2, u2)) throw new Error(`${fn}: each interval must contain its estimate`);
  if (r < -1 - 1e-9 || r > 1 + 1e-9) throw new Error(`${fn}: r must be in [-1, 1], got ${r}`);
  r = Math.max(-1, Math.min(1, r)); // a computed ±1 may be off by rounding
  // Limits within rounding of their estimate (Wilson's upper limit of n/n is 1 − 1e-16) count as the estimate.
  const d = e1 - e2;
  const a = Math.max(0, e1 - l1);
  const b = Math.max(0, u2 - e2);
  const c = Math.max(0, u1 - e1);
  const e = Math.max(0, e2 - l2);
  return [d - Math.sqrt(Math.max(0, a * a + b * b - 2 * r * a * b)), d + Math.sqrt(Math.max(0, c * c + e * e - 2 * r * c * e))];
}

/** A limit on the wrong side of its estimate by more than rounding. */
const outside = (e: number, l: number, u: number) => l - e > 1e-12 * Math.max(1, Math.abs(e)) || e - u > 1e-12 * Math.max(1, Math.abs(e));
