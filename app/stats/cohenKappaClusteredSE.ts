import { agreementWeights } from "./agreementWeights";
import { cohenKappaFromTable } from "./cohenKappaFromTable";
import { linearizedSE } from "./linearizedSE";
import type { Interval, WeightScheme } from "./types";

/**
 * Cohen's kappa of rating pairs that come in clusters — the pooled pairs of a
 * unit rated by three or more raters, or several units of one item — with a
 * cluster-robust standard error.
 *
 * The Fleiss-Cohen-Everitt variance is the variance of one value per pair,
 *   d_ij = [w_ij − (w̄_i. + w̄_.j)(1 − κ)] / (1 − pe),
 * divided by n (Fleiss, Cohen & Everitt 1969, eq. 13: its numerator is
 * Σ p_ij (w_ij − (w̄_i. + w̄_.j)(1 − κ))² − (κ − pe(1 − κ))², the second moment
 * of the numerator of d less its squared mean). Those d are kappa's influence
 * values; summing them within clusters before squaring gives the Taylor-
 * linearisation variance under one-stage cluster sampling (Wolter 2007, §6.5),
 * computed by {@link linearizedSE}:
 *   Var = G/(G − 1) · Σ_g (Σ_{pairs in g} (d − d̄))² / n².
 * With every pair its own cluster this is the FCE variance times n/(n − 1).
 *
 * References: J. L. Fleiss, J. Cohen & B. S. Everitt (1969) Psychol. Bull. 72(5),
 * 323-327; K. M. Wolter (2007) Introduction to Variance Estimation, 2nd ed., ch. 6.
 *
 * Preconditions: `a`, `b` are category codes in [0, q) of equal length; `cluster`
 * has one key per pair. NaN (and a [NaN, NaN] interval) when kappa is undefined
 * or there are fewer than two clusters.
 *
 * @throws {Error} "cohenKappaClusteredSE: ..." for mismatched lengths or codes outside [0, q)
 * @example
 * cohenKappaClusteredSE([0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 1, 1], 2).kappa; // => 0.5
 */
export function cohenKappaClusteredSE(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  cluster: ArrayLike<string | number>,
  q: number,
  options: { weights?: WeightScheme; z?: number } = {},
): {
  kappa: number;
  se: number;
  ci: Interval;
  n: number;
  clusters: number;
  /** A rater with one category on every pair: kappa is 0 by construction (see cohenKappaFromTable). */
  constantRater: "a" | "b" | "both" | null;
} {
  const fn = "cohenKappaClusteredSE";
  const n = a.length;
  if (b.length !== n || cluster.length !== n) throw new Error(`${fn}: a, b and cluster must have the same length`);
  const counts = new Float64Array(q * q);
  for (let t = 0; t < n; t++) {
    const x = a[t];
    const y = b[t];
    if (!(x >= 0 && x < q && y >= 0 && y < q) || !Number.isInteger(x) || !Number.isInteger(y))
      throw new Error(`${fn}: codes must be integers in [0, ${q}) (pair ${t})`);
    counts[x * q + y]++;
  }
  const clusters = new Set(Array.from({ length: n }, (_, t) => cluster[t])).size;
  const k = cohenKappaFromTable({ counts, q }, { weights: options.weights ?? "none" });
  const constantRater = k.constantRater;
  if (!Number.isFinite(k.kappa)) return { kappa: k.kappa, se: NaN, ci: [NaN, NaN], n, clusters, constantRater };
  // p_e = p_o exactly: every resample of clusters also gives 0, so the variance is 0 (not rounding's ~1e-18).
  if (constantRater !== null) return { kappa: 0, se: 0, ci: [0, 0], n, clusters, constantRater };
  const w = agreementWeights(Math.max(q, 1), options.weights ?? "none");
  const rowP = new Float64Array(q);
  const colP = new Float64Array(q);
  for (let i = 0; i < q; i++)
    for (let j = 0; j < q; j++) {
      rowP[i] += counts[i * q + j] / n;
      colP[j] += counts[i * q + j] / n;
    }
  const wRow = new Float64Array(q);
  const wCol = new Float64Array(q);
  for (let i = 0; i < q; i++)
    for (let j = 0; j < q; j++) {
      wRow[i] += colP[j] * w[i * q + j];
      wCol[j] += rowP[i] * w[i * q + j];
    }
  const d = new Float64Array(n);
  let mean = 0;
  for (let t = 0; t < n; t++) {
    const i = a[t];
    const j = b[t];
    d[t] = (w[i * q + j] - (wRow[i] + wCol[j]) * (1 - k.kappa)) / (1 - k.pe);
    mean += d[t];
  }
  mean /= n;
  const se = linearizedSE(d, mean, { cluster });
  const z = options.z ?? 1.959963984540054;
  return {
    kappa: k.kappa,
    se,
    ci: Number.isFinite(se) ? [k.kappa - z * se, k.kappa + z * se] : [NaN, NaN],
    n,
    clusters,
    constantRater,
  };
}
