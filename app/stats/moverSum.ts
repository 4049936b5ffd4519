import type { Interval } from "./types";

/** One independent estimate entering {@link moverSum}: its point, its confidence interval and its coefficient. */
export interface MoverPart {
  estimate: number;
  ci: Interval;
  /** Coefficient c_k of the part in Σ c_k·θ_k (default 1). */
  weight?: number;
}

/**
 * MOVER ("method of variance estimates recovery") interval for a linear combination Σ c_k·θ_k of
 * independently estimated quantities, from each one's point estimate and confidence interval. The
 * distance from each estimate to its own limits stands in for its variance, so asymmetric intervals
 * (Wilson, score, bound-based) keep their asymmetry in the combination:
 *   L = Σ c_k·θ̂_k − √( Σ_{c_k>0} c_k²(θ̂_k − l_k)² + Σ_{c_k<0} c_k²(u_k − θ̂_k)² ),
 *   U = Σ c_k·θ̂_k + √( Σ_{c_k>0} c_k²(u_k − θ̂_k)² + Σ_{c_k<0} c_k²(θ̂_k − l_k)² ).
 * With symmetric Wald intervals it reduces to Σ c_k·θ̂_k ± z·√(Σ c_k²·SE_k²).
 *
 * References: G. Y. Zou and A. Donner (2008) "Construction of confidence limits about effect measures: a
 * general approach", Statistics in Medicine 27, 1693-1702 (§2, eqs. 3-4); R. G. Newcombe (2011)
 * "Propagating imprecision: combining confidence intervals from independent sources", Communications in
 * Statistics — Theory and Methods 40, 3154-3180.
 *
 * Preconditions: every part has finite numbers with l_k ≤ θ̂_k ≤ u_k; the parts are independent.
 *
 * @throws {Error} "moverSum: ..." for no parts, a non-finite number or an interval not around its estimate
 * @example
 * moverSum([{ estimate: 0.5, ci: [0.3, 0.6] }, { estimate: 0.2, ci: [0.1, 0.5], weight: -1 }]);
 * // => { estimate: 0.3, ci: [0.3 - √(0.04 + 0.09), 0.3 + √(0.01 + 0.01)] } = [-0.0606, 0.4414]
 */
export function moverSum(parts: readonly MoverPart[]): { estimate: number; ci: Interval } {
  const fn = "moverSum";
  if (!Array.isArray(parts) || parts.length === 0) throw new Error(`${fn}: at least one part is required`);
  let estimate = 0;
  let below = 0;
  let above = 0;
  parts.forEach((p, k) => {
    const c = p.weight ?? 1;
    const [l, u] = p.ci;
    if (![p.estimate, l, u, c].every(Number.isFinite)) throw new Error(`${fn}: part ${k} has a non-finite estimate, limit or weight`);
    const tol = 1e-12 * Math.max(1, Math.abs(p.estimate));
    if (l - p.estimate > tol || p.estimate - u > tol)
      throw new Error(`${fn}: part ${k}'s interval [${l}, ${u}] does not contain its estimate ${p.estimate}`);
    estimate += c * p.estimate;
    // Limits within rounding of their estimate count as the estimate.
    const lower = Math.max(0, p.estimate - l);
    const upper = Math.max(0, u - p.estimate);
    const down = (c >= 0 ? lower : upper) * c;
    const up = (c >= 0 ? upper : lower) * c;
    below += down * down;
    above += up * up;
  });
  return { estimate, ci: [estimate - Math.sqrt(below), estimate + Math.sqrt(above)] };
}
