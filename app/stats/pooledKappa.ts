import { agreementWeights } from "./agreementWeights";
import { cohenKappaFromTable } from "./cohenKappaFromTable";
import type { RatingPatterns } from "./ratingPatterns";
import type { Interval, WeightScheme } from "./types";

/**
 * Pooled-pairs Cohen's kappa of three or more raters from their rating patterns:
 * every pair of ratings of a unit (raters g < h, in rater order) counted in one
 * q × q table, with the cluster-robust SE of {@link cohenKappaClusteredSE} — the
 * pairs of a unit form one cluster — computed per pattern instead of per pair.
 *
 * Definition: the table T = Σ_p w_p Σ_{g<h} e(x_pg, x_ph); κ, pe and the influence
 * values d_ij as in cohenKappaClusteredSE; a unit with pattern p contributes
 * D_p = Σ_{g<h} (d(x_pg, x_ph) − d̄) to its cluster, so with n pairs and G units
 * that have a pair,
 *   Var = G/(G − 1) · Σ_p w_p D_p² / n²
 * (Taylor linearisation under one-stage cluster sampling, Wolter 2007, §6.5).
 *
 * References: J. L. Fleiss, J. Cohen & B. S. Everitt (1969) Psychol. Bull. 72(5);
 * K. M. Wolter (2007) Introduction to Variance Estimation, 2nd ed., ch. 6.
 *
 * Preconditions: patterns with codes in [0, q); weights (units per pattern)
 * finite and non-negative. NaN when kappa is undefined or fewer than two units have a pair.
 *
 * @example
 * const { patterns } = ratingPatterns([["a", "a", "a"], ["a", "b", "b"], ["b", "b", "b"]]);
 * pooledKappa(patterns, patterns.counts).kappa; // => 0.5714285714285714 (po = 7/9, pe = 39/81)
 */
export function pooledKappa(
  patterns: RatingPatterns,
  weights: ArrayLike<number>,
  options: { weights?: WeightScheme; z?: number } = {},
): {
  kappa: number;
  se: number;
  ci: Interval;
  pairs: number;
  units: number;
  table: Float64Array;
  /** The pooled table's rows (or columns) use one category: kappa is 0 by construction (see cohenKappaFromTable). */
  constantRater: "a" | "b" | "both" | null;
} {
  const { raters: R, q, codes } = patterns;
  const P = weights.length;
  const table = new Float64Array(q * q);
  let units = 0;
  for (let p = 0; p < P; p++) {
    const w = weights[p];
    if (w === 0) continue;
    let pairs = 0;
    for (let g = 0; g < R; g++) {
      const x = codes[p * R + g];
      if (x < 0) continue;
      for (let h = g + 1; h < R; h++) {
        const y = codes[p * R + h];
        if (y < 0) continue;
        table[x * q + y] += w;
        pairs++;
      }
    }
    if (pairs > 0) units += w;
  }
  let n = 0;
  for (let k = 0; k < q * q; k++) n += table[k];
  const k = cohenKappaFromTable({ counts: table, q }, { weights: options.weights ?? "none" });
  const constantRater = k.constantRater;
  const nan = { kappa: k.kappa, se: NaN, ci: [NaN, NaN] as Interval, pairs: n, units, table, constantRater };
  if (!Number.isFinite(k.kappa) || units < 2) return nan;
  // p_e = p_o exactly: the variance is 0 (not rounding's ~1e-18).
  if (constantRater !== null) return { ...nan, kappa: 0, se: 0, ci: [0, 0] };
  const wt = agreementWeights(Math.max(q, 1), options.weights ?? "none");
  const rowP = new Float64Array(q);
  const colP = new Float64Array(q);
  for (let i = 0; i < q; i++)
    for (let j = 0; j < q; j++) {
      rowP[i] += table[i * q + j] / n;
      colP[j] += table[i * q + j] / n;
    }
  const wRow = new Float64Array(q);
  const wCol = new Float64Array(q);
  for (let i = 0; i < q; i++)
    for (let j = 0; j < q; j++) {
      wRow[i] += colP[j] * wt[i * q + j];
      wCol[j] += rowP[i] * wt[i * q + j];
    }
  const d = (i: number, j: number) => (wt[i * q + j] - (wRow[i] + wCol[j]) * (1 - k.kappa)) / (1 - k.pe);
  let mean = 0;
  for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) if (table[i * q + j] > 0) mean += table[i * q + j] * d(i, j);
  mean /= n;
  let ss = 0;
  for (let p = 0; p < P; p++) {
    const w = weights[p];
    if (w === 0) continue;
    let D = 0;
    for (let g = 0; g < R; g++) {
      const x = codes[p * R + g];
      if (x < 0) continue;
      for (let h = g + 1; h < R; h++) {
        const y = codes[p * R + h];
        if (y >= 0) D += d(x, y) - mean;
      }
    }
    ss += w * D * D;
  }
  const se = Math.sqrt(((units / (units - 1)) * ss) / (n * n));
  const z = options.z ?? 1.959963984540054;
  return { kappa: k.kappa, se, ci: [k.kappa - z * se, k.kappa + z * se], pairs: n, units, table, constantRater };
}
