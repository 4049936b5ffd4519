/**
 * Spearman's rho of two ordinal variables from their q × q contingency table
 * (row-major: counts[i * q + j] = pairs in row category i and column category
 * j, categories in ascending order), with tied values at their average rank —
 * the same figure as {@link spearman} on the pairs the table counts, in O(q²)
 * instead of sorting them (bootstraps of 1–5 scores, for example).
 *
 * Definition: with row totals r_i, column totals c_j, n = Σ r_i, midranks
 * R_i = Σ_{i' < i} r_i' + (r_i + 1)/2 and S_j likewise, and m = (n + 1)/2:
 *   rho = Σ_ij n_ij (R_i − m)(S_j − m) / sqrt(Σ_i r_i (R_i − m)² · Σ_j c_j (S_j − m)²),
 * the Pearson correlation of the midranks.
 *
 * Reference: C. Spearman (1904) Am. J. Psychol. 15(1), 72-101; midranks for ties
 * as in M. G. Kendall (1948) Rank Correlation Methods, ch. 3.
 *
 * Preconditions: counts are finite, non-negative, q·q of them. NaN when n < 2
 * or either variable is constant.
 *
 * @throws {Error} "spearmanFromTable: ..." for bad counts
 * @example
 * spearmanFromTable({ counts: [2, 0, 1, 1], q: 2 }).rho; // => 0.5773502691896258
 */
export function spearmanFromTable(table: { counts: ArrayLike<number>; q: number }): { rho: number; n: number } {
  const fn = "spearmanFromTable";
  const { counts, q } = table;
  if (!Number.isInteger(q) || q < 0 || counts.length !== q * q) throw new Error(`${fn}: counts must have q*q entries`);
  const r = new Float64Array(q);
  const c = new Float64Array(q);
  let n = 0;
  for (let i = 0; i < q; i++) {
    for (let j = 0; j < q; j++) {
      const v = counts[i * q + j];
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
        throw new Error(`${fn}: counts must be finite and non-negative (cell ${i},${j} is ${String(v)})`);
      r[i] += v;
      c[j] += v;
      n += v;
    }
  }
  if (n < 2) return { rho: NaN, n };
  const m = (n + 1) / 2;
  const R = new Float64Array(q);
  const S = new Float64Array(q);
  let cr = 0;
  let cc = 0;
  for (let i = 0; i < q; i++) {
    R[i] = cr + (r[i] + 1) / 2 - m;
    S[i] = cc + (c[i] + 1) / 2 - m;
    cr += r[i];
    cc += c[i];
  }
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < q; i++) {
    sxx += r[i] * R[i] * R[i];
    syy += c[i] * S[i] * S[i];
    for (let j = 0; j < q; j++) sxy += counts[i * q + j] * R[i] * S[j];
  }
  return { rho: sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : NaN, n };
}
