import { agreementWeights } from "./agreementWeights";
import { unitCategoryCounts } from "./unitCategoryCounts";
import type { Label, ReliabilityInput, WeightScheme } from "./types";

export type UnitAgreementTerms = ReturnType<typeof unitCategoryCounts> & {
  /** Agreement weights, q × q row-major. */
  w: Float64Array;
  /** pa_i per row (0 for rows with fewer than two ratings). */
  paI: Float64Array;
  /** Σ_i r_ik / r_i over rated rows (divide by n for π_k). */
  piSum: Float64Array;
  /** Rows with at least one rating, and with at least two (weighted by unitWeights when given). */
  n: number;
  n2: number;
  /** Σ pa_i over rows with two or more ratings. */
  sumPa: number;
  z: number;
};

/**
 * The per-unit terms shared by the analytic standard errors of Fleiss' kappa,
 * Gwet's AC1/AC2 and Krippendorff's alpha (Gwet 2014, Handbook of Inter-Rater
 * Reliability, 4th ed., ch. 5; irrCAC's `*.raw` functions): with r_ik raters
 * putting unit i in category k, r_i = Σ_k r_ik and r*_ik = Σ_l w_kl r_il,
 *   pa_i = Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1))  (rows with r_i ≥ 2),
 *   π_k = (1/n) Σ_i r_ik / r_i  (rows with r_i ≥ 1).
 * Also checks the options every one of them takes, with errors naming `fn`.
 *
 * @throws {Error} "<fn>: ..." for ragged rows, invalid values, unknown weights or a cluster array of the wrong length
 * @example
 * unitAgreementTerms("f", [["a", "a"], ["a", "b"]]).sumPa; // => 1 (pa_1 = 1, pa_2 = 0)
 */
export function unitAgreementTerms(
  fn: string,
  data: ReliabilityInput,
  options: {
    categories?: readonly Label[];
    /** A named scheme, or a q × q matrix of weights in [0, 1] (categories in code order). */
    weights?: WeightScheme | readonly (readonly number[])[];
    cluster?: ArrayLike<string | number>;
    /** How many units each row stands for (rows of distinct rating patterns); default 1 each. */
    unitWeights?: ArrayLike<number>;
    z?: number;
  },
): UnitAgreementTerms {
  const counted = unitCategoryCounts(fn, data, options.categories);
  const { counts, ratingsPerUnit, units, q } = counted;
  if (options.cluster !== undefined && options.cluster.length !== units)
    throw new Error(`${fn}: cluster has ${options.cluster.length} keys for ${units} rows`);
  const uw = options.unitWeights;
  if (uw !== undefined) {
    if (uw.length !== units) throw new Error(`${fn}: unitWeights has ${uw.length} entries for ${units} rows`);
    if (options.cluster !== undefined) throw new Error(`${fn}: unitWeights and cluster cannot be combined`);
    for (let u = 0; u < units; u++)
      if (!(uw[u] >= 0) || !Number.isFinite(uw[u]))
        throw new Error(`${fn}: unitWeights must be finite and non-negative (entry ${u} is ${String(uw[u])})`);
  }
  const w = weightMatrix(fn, options.weights ?? "none", q);
  const paI = new Float64Array(units);
  const piSum = new Float64Array(q);
  let n = 0;
  let n2 = 0;
  let sumPa = 0;
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r === 0) continue;
    const wt = uw === undefined ? 1 : uw[u];
    n += wt;
    const base = u * q;
    if (uw === undefined) for (let k = 0; k < q; k++) piSum[k] += counts[base + k] / r;
    else for (let k = 0; k < q; k++) piSum[k] += (wt * counts[base + k]) / r;
    if (r >= 2) {
      let s = 0;
      for (let k = 0; k < q; k++) {
        const c = counts[base + k];
        if (c === 0) continue;
        let star = 0;
        for (let l = 0; l < q; l++) star += w[k * q + l] * counts[base + l];
        s += c * (star - 1);
      }
      paI[u] = s / (r * (r - 1));
      if (uw === undefined) sumPa += paI[u];
      else sumPa += wt * paI[u];
      n2 += wt;
    }
  }
  return { ...counted, w, paI, piSum, n, n2, sumPa, z: options.z ?? 1.96 };
}

function weightMatrix(fn: string, weights: WeightScheme | readonly (readonly number[])[], q: number): Float64Array {
  if (typeof weights === "string") {
    if (weights !== "none" && weights !== "linear" && weights !== "quadratic") throw new Error(`${fn}: unknown weights "${weights}"`);
    return agreementWeights(Math.max(q, 1), weights);
  }
  if (!Array.isArray(weights) || weights.length !== q || weights.some((row) => !Array.isArray(row) || row.length !== q)) {
    throw new Error(`${fn}: a weight matrix must be ${q}×${q}`);
  }
  const w = new Float64Array(q * q);
  for (let k = 0; k < q; k++) {
    for (let l = 0; l < q; l++) {
      const v = weights[k][l];
      if (typeof v !== "number" || !(v >= 0 && v <= 1))
        throw new Error(`${fn}: weights must be numbers in [0, 1] (w[${k}][${l}] = ${String(v)})`);
      w[k * q + l] = v;
    }
  }
  return w;
}
