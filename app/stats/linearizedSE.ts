import type { Interval } from "./types";

/** Result of the analytic-SE agreement functions ({@link fleissKappaSE}, {@link gwetSE}, {@link krippendorffAlphaSE}). */
export interface AgreementSEResult {
  /** The coefficient (equal to the plain function's value). */
  value: number;
  /** Standard error from the linearised (Taylor series) variance; NaN when undefined. */
  se: number;
  /** value ± z·se, clipped to [-1, 1]; [NaN, NaN] when the SE is undefined. */
  ci: Interval;
  /** Units in the variance (Fleiss/AC1: units with ≥ 1 rating; Krippendorff: units with ≥ 2). */
  n: number;
  /** Resampling/sampling clusters (= n without `cluster`). */
  clusters: number;
  /** Observed and chance agreement. */
  pa: number;
  pe: number;
}

/**
 * Standard error of a mean of linearised (influence) values, optionally
 * cluster-robust: the variance estimator behind Gwet's (2008, 2014) standard
 * errors of agreement coefficients, extended to units sampled in clusters.
 *
 * Definition, with values x_i (i = 1..n) whose mean is the estimate x̄ and
 * clusters g = 1..G (each unit its own cluster when `cluster` is omitted):
 *   D_g = Σ_{i ∈ g} (x_i − x̄),   Var = G/(G − 1) · Σ_g D_g² / n².
 * Without clusters (G = n) this is Σ (x_i − x̄)² / (n (n − 1)), exactly the
 * formula of irrCAC's *.raw functions (Gwet 2014, ch. 5). With clusters it is
 * the standard Taylor-linearisation variance of a ratio-type estimator under
 * one-stage cluster sampling with replacement (Wolter 2007, §6.5; the
 * G/(G − 1) factor as in Cameron & Miller 2015), so several labelled units
 * from one item count as one independent draw.
 *
 * References: K. L. Gwet (2008) Br. J. Math. Stat. Psychol. 61, 29-48;
 * K. M. Wolter (2007) Introduction to Variance Estimation, 2nd ed., ch. 6;
 * A. C. Cameron & D. L. Miller (2015) J. Human Resources 50(2), 317-372.
 *
 * `weights` (one per value) makes each value stand for that many units with the
 * same value: Σ w_i (x_i − x̄)² / (N (N − 1)) with N = Σ w_i.
 *
 * Preconditions: `values` finite; `cluster`, when given, has one key per value.
 * NaN when n < 2 or G < 2.
 *
 * @throws {Error} "linearizedSE: ..." when `cluster` has the wrong length
 * @example
 * linearizedSE([1, 2, 3, 4], 2.5); // => 0.6454972243679028 (= sd/√n)
 */
export function linearizedSE(
  values: ArrayLike<number>,
  mean: number,
  options: { cluster?: ArrayLike<string | number>; weights?: ArrayLike<number> } = {},
): number {
  const cluster = options.cluster;
  if (options.weights !== undefined) {
    // values[i] stands for weights[i] units with that same value (rows of distinct patterns).
    const wts = options.weights;
    if (wts.length !== values.length) throw new Error(`linearizedSE: weights has ${wts.length} entries for ${values.length} values`);
    if (cluster !== undefined) throw new Error("linearizedSE: weights and cluster cannot be combined");
    let total = 0;
    let ssw = 0;
    for (let i = 0; i < values.length; i++) {
      total += wts[i];
      ssw += wts[i] * (values[i] - mean) ** 2;
    }
    return total < 2 ? NaN : Math.sqrt(ssw / (total * (total - 1)));
  }
  const n = values.length;
  if (cluster !== undefined && cluster.length !== n) {
    throw new Error(`linearizedSE: cluster has ${cluster.length} keys for ${n} values`);
  }
  if (n < 2) return NaN;
  if (cluster === undefined) {
    let ss = 0;
    for (let i = 0; i < n; i++) ss += (values[i] - mean) ** 2;
    return Math.sqrt(ss / (n * (n - 1)));
  }
  const sums: number[] = [];
  // Clusters numbered in order of first appearance. Integer keys in a range of at most 4n + 1024 (item
  // ids) are looked up in a typed array, others in a Map: the same numbering, so the same sums.
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const key = cluster[i];
    if (typeof key !== "number" || !Number.isInteger(key)) {
      lo = NaN;
      break;
    }
    if (key < lo) lo = key;
    if (key > hi) hi = key;
  }
  if (hi - lo <= 4 * n + 1024) {
    const slot = new Int32Array(hi - lo + 1).fill(-1);
    for (let i = 0; i < n; i++) {
      const k = (cluster[i] as number) - lo;
      let g = slot[k];
      if (g < 0) {
        g = slot[k] = sums.length;
        sums.push(0);
      }
      sums[g] += values[i] - mean;
    }
  } else {
    const index = new Map<string | number, number>();
    for (let i = 0; i < n; i++) {
      const key = cluster[i];
      let g = index.get(key);
      if (g === undefined) {
        g = sums.length;
        index.set(key, g);
        sums.push(0);
      }
      sums[g] += values[i] - mean;
    }
  }
  const G = sums.length;
  if (G < 2) return NaN;
  let ss = 0;
  for (const d of sums) ss += d * d;
  return Math.sqrt(((G / (G - 1)) * ss) / (n * n));
}

/** value ± z·se clipped to [-1, 1] (agreement coefficients never exceed 1). Internal helper. */
export function clippedInterval(value: number, se: number, z: number): Interval {
  if (!Number.isFinite(value) || !Number.isFinite(se)) return [NaN, NaN];
  return [Math.max(-1, value - z * se), Math.min(1, value + z * se)];
}
