import { agreementWeights } from "./agreementWeights";
import { normalQuantile } from "./normalQuantile";
import type { Interval, WeightScheme } from "./types";

/** Result of {@link cohenKappaFromTable} and {@link cohenKappa}. */
export interface CohenKappaResult {
  /** Cohen's kappa (weighted when weights are given); NaN when pe = 1 or n = 0. */
  kappa: number;
  /** Asymptotic standard error under the alternative (Fleiss, Cohen & Everitt 1969): use it for the CI. */
  se: number;
  /** Asymptotic standard error under H0: kappa = 0 (for the z test only). */
  seNull: number;
  /** kappa ± z·se, with z = Φ⁻¹(1 - (1 - level)/2) (1.95996 for 95%). */
  ci: Interval;
  /** Observed (weighted) agreement. */
  po: number;
  /** Chance-expected (weighted) agreement. */
  pe: number;
  /** Number of rated pairs. */
  n: number;
  /**
   * Which rater used a single category on every pair ("a": rows, "b": columns, "both"),
   * or null. Then p_e = p_o by construction (with rater A always on category x,
   * p_e = Σ_j w_xj p_.j = Σ_j w_xj p_xj = p_o), so kappa is exactly 0 whatever the other
   * rater does, and so is every resample's: kappa has no sampling variability (the FCE
   * variance is 0 exactly) and its interval is not estimable — not a [0, 0] interval.
   * Detected from the margins, not from a rounded SE.
   */
  constantRater: "a" | "b" | "both" | null;
}

/**
 * Cohen's kappa, unweighted or weighted, from a q×q contingency table of two
 * raters (rows: rater A, columns: rater B), with its asymptotic standard error
 * and confidence interval.
 *
 * Definition, with p_ij = n_ij / n, agreement weights w_ij (w_ii = 1),
 * p_i. and p_.j the margins:
 *   po = Σ w_ij p_ij,  pe = Σ w_ij p_i. p_.j,  κ = (po - pe) / (1 - pe).
 * Standard error under the alternative (Fleiss, Cohen & Everitt 1969, eq. 13):
 *   w̄_i. = Σ_j p_.j w_ij,  w̄_.j = Σ_i p_i. w_ij,
 *   var κ = [Σ_ij p_ij (w_ij - (w̄_i. + w̄_.j)(1 - κ))² - (κ - pe(1 - κ))²] / (n (1 - pe)²).
 * Under H0 (κ = 0): var₀ = [Σ_ij p_i. p_.j (w_ij - (w̄_i. + w̄_.j))² - pe²] / (n (1 - pe)²).
 * This is the "ASE" printed by SAS PROC FREQ (AGREE), statsmodels `cohens_kappa`
 * (`std_kappa`) and irrCAC `kappa2.table` (`coeff.se`).
 *
 * References: J. Cohen (1960) Educ. Psychol. Meas. 20; J. Cohen (1968) Psychol.
 * Bull. 70; J. L. Fleiss, J. Cohen & B. S. Everitt (1969) "Large sample standard
 * errors of kappa and weighted kappa", Psychol. Bull. 72(5), 323-327.
 *
 * Preconditions: `table` is square with non-negative finite counts; `weights` is
 * a scheme or a q×q agreement-weight matrix with values in [0, 1]; 0 < level < 1.
 * A kappa undefined by the mathematics (pe = 1, e.g. both raters always use the
 * same single category; or an empty table) is NaN, and so are its se and CI.
 *
 * @throws {Error} "cohenKappaFromTable: ..." for a non-square table, negative or
 *   non-finite counts, or bad weights
 * @example
 * cohenKappaFromTable([[0, 4, 1], [0, 8, 0], [0, 1, 5]]).kappa; // => 0.4841628959276017 (SAS PROC FREQ: 0.4842)
 */
export function cohenKappaFromTable(
  table: readonly (readonly number[])[] | { counts: ArrayLike<number>; q: number },
  options: { weights?: WeightScheme | readonly (readonly number[])[]; level?: number } = {},
): CohenKappaResult {
  const fn = "cohenKappaFromTable";
  let q: number;
  let counts: ArrayLike<number>;
  if (Array.isArray(table)) {
    q = table.length;
    const flat = new Float64Array(q * q);
    for (let i = 0; i < q; i++) {
      const row = table[i];
      if (!Array.isArray(row) || row.length !== q)
        throw new Error(`${fn}: table must be square (row ${i} has ${Array.isArray(row) ? row.length : "no"} entries, expected ${q})`);
      for (let j = 0; j < q; j++) flat[i * q + j] = row[j];
    }
    counts = flat;
  } else {
    const t = table as { counts: ArrayLike<number>; q: number };
    q = t.q;
    counts = t.counts;
    if (!Number.isInteger(q) || q < 0 || counts.length !== q * q) throw new Error(`${fn}: counts must have q*q entries`);
  }
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new Error(`${fn}: level must be in (0, 1), got ${String(level)}`);
  const w = resolveWeights(fn, options.weights ?? "none", q);

  let n = 0;
  for (let k = 0; k < q * q; k++) {
    const c = counts[k];
    if (typeof c !== "number" || !Number.isFinite(c) || c < 0)
      throw new Error(`${fn}: counts must be finite and non-negative (cell ${Math.floor(k / q)},${k % q} is ${String(c)})`);
    n += c;
  }
  const nan: CohenKappaResult = { kappa: NaN, se: NaN, seNull: NaN, ci: [NaN, NaN], po: NaN, pe: NaN, n, constantRater: null };
  if (n === 0) return nan;

  const rowP = new Float64Array(q);
  const colP = new Float64Array(q);
  let po = 0;
  for (let i = 0; i < q; i++) {
    for (let j = 0; j < q; j++) {
      const p = counts[i * q + j] / n;
      rowP[i] += p;
      colP[j] += p;
      po += w[i * q + j] * p;
    }
  }
  let pe = 0;
  const wRow = new Float64Array(q); // w̄_i. = Σ_j p_.j w_ij
  const wCol = new Float64Array(q); // w̄_.j = Σ_i p_i. w_ij
  for (let i = 0; i < q; i++) {
    for (let j = 0; j < q; j++) {
      const wij = w[i * q + j];
      pe += wij * rowP[i] * colP[j];
      wRow[i] += colP[j] * wij;
      wCol[j] += rowP[i] * wij;
    }
  }
  // Clamp rounding noise: pe can exceed 1 by an ulp when one category is used.
  if (pe > 1) pe = 1;
  if (po > 1) po = 1;
  let rowsUsed = 0;
  let colsUsed = 0;
  for (let i = 0; i < q; i++) {
    if (rowP[i] > 0) rowsUsed++;
    if (colP[i] > 0) colsUsed++;
  }
  const constantRater = rowsUsed === 1 && colsUsed === 1 ? "both" : rowsUsed === 1 ? "a" : colsUsed === 1 ? "b" : null;
  if (1 - pe <= 1e-15) return { ...nan, po, pe, constantRater };
  if (constantRater !== null) {
    // p_e = p_o exactly (see constantRater): kappa is 0 and its FCE variance is 0, not the ~1e-18
    // that rounding leaves in p_o − p_e and in the variance's numerator (an SE of ~1e-9).
    return { kappa: 0, se: 0, seNull: nullSE(q, n, w, rowP, colP, wRow, wCol, pe), ci: [0, 0], po, pe, n, constantRater };
  }
  const kappa = (po - pe) / (1 - pe);

  let sum = 0;
  let sum0 = 0;
  for (let i = 0; i < q; i++) {
    for (let j = 0; j < q; j++) {
      const pij = counts[i * q + j] / n;
      const wij = w[i * q + j];
      if (pij > 0) {
        const d = wij - (wRow[i] + wCol[j]) * (1 - kappa);
        sum += pij * d * d;
      }
      const d0 = wij - (wRow[i] + wCol[j]);
      sum0 += rowP[i] * colP[j] * d0 * d0;
    }
  }
  const denom = n * (1 - pe) * (1 - pe);
  const a = kappa - pe * (1 - kappa);
  const variance = Math.max(0, (sum - a * a) / denom);
  const variance0 = Math.max(0, (sum0 - pe * pe) / denom);
  const se = Math.sqrt(variance);
  const z = normalQuantile(1 - (1 - level) / 2);
  return { kappa, se, seNull: Math.sqrt(variance0), ci: [kappa - z * se, kappa + z * se], po, pe, n, constantRater: null };
}

/** The SE under H0 (κ = 0), as in the main formula above. */
function nullSE(
  q: number,
  n: number,
  w: Float64Array,
  rowP: Float64Array,
  colP: Float64Array,
  wRow: Float64Array,
  wCol: Float64Array,
  pe: number,
): number {
  let sum0 = 0;
  for (let i = 0; i < q; i++)
    for (let j = 0; j < q; j++) {
      const d0 = w[i * q + j] - (wRow[i] + wCol[j]);
      sum0 += rowP[i] * colP[j] * d0 * d0;
    }
  return Math.sqrt(Math.max(0, (sum0 - pe * pe) / (n * (1 - pe) * (1 - pe))));
}

function resolveWeights(fn: string, weights: WeightScheme | readonly (readonly number[])[], q: number): Float64Array {
  if (typeof weights === "string") {
    if (weights !== "none" && weights !== "linear" && weights !== "quadratic") {
      throw new Error(`${fn}: unknown weights "${weights}" (use "none", "linear", "quadratic" or a q×q matrix)`);
    }
    return agreementWeights(Math.max(q, 1), weights);
  }
  if (!Array.isArray(weights) || weights.length !== q) throw new Error(`${fn}: a weight matrix must be ${q}×${q}`);
  const w = new Float64Array(q * q);
  for (let i = 0; i < q; i++) {
    const row = weights[i];
    if (!Array.isArray(row) || row.length !== q) throw new Error(`${fn}: a weight matrix must be ${q}×${q}`);
    for (let j = 0; j < q; j++) {
      const v = row[j];
      if (typeof v !== "number" || !(v >= 0 && v <= 1))
        throw new Error(`${fn}: weights must be numbers in [0, 1] (w[${i}][${j}] = ${String(v)})`);
      w[i * q + j] = v;
    }
    if (row[i] !== 1) throw new Error(`${fn}: agreement weights need w[i][i] = 1 (w[${i}][${i}] = ${String(row[i])})`);
  }
  return w;
}
