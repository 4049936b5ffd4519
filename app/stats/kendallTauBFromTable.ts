/**
 * Kendall's tau-b of two ordinal variables from their q × q contingency table
 * (row-major, categories in ascending order) — the figure {@link kendallTauB}
 * gives for the pairs the table counts, in O(q²).
 *
 * Definition: with n0 = n(n − 1)/2, n1 = Σ_i r_i(r_i − 1)/2 (ties in x), n2 =
 * Σ_j c_j(c_j − 1)/2 (ties in y), concordant pairs C = Σ_ij n_ij Σ_{i'>i, j'>j} n_i'j'
 * and discordant pairs D = Σ_ij n_ij Σ_{i'>i, j'<j} n_i'j':
 *   tau_b = (C − D) / √((n0 − n1)(n0 − n2)).
 *
 * Reference: M. G. Kendall (1945) "The treatment of ties in ranking problems",
 * Biometrika 33(3), 239-251; A. Agresti (2010) Analysis of Ordinal Categorical
 * Data, 2nd ed., §7.1 (C and D from a contingency table).
 *
 * Preconditions: counts finite and non-negative, q·q of them. NaN when n < 2 or
 * either variable is constant.
 *
 * @throws {Error} "kendallTauBFromTable: ..." for bad counts
 * @example
 * kendallTauBFromTable({ counts: [2, 0, 1, 1], q: 2 }).tau; // => 0.5773502691896258
 */
export function kendallTauBFromTable(table: { counts: ArrayLike<number>; q: number }): { tau: number; n: number } {
  const fn = "kendallTauBFromTable";
  const { counts, q } = table;
  if (!Number.isInteger(q) || q < 0 || counts.length !== q * q) throw new Error(`${fn}: counts must have q*q entries`);
  // below[i * q + j] = Σ_{i' > i, j' > j} n_i'j' and left likewise for j' < j: suffix sums over rows.
  const rowT = new Float64Array(q);
  const colT = new Float64Array(q);
  let n = 0;
  for (let k = 0; k < q * q; k++) {
    const c = counts[k];
    if (!(c >= 0) || !Number.isFinite(c))
      throw new Error(`${fn}: counts must be finite and non-negative (cell ${Math.floor(k / q)},${k % q} is ${String(c)})`);
    rowT[Math.floor(k / q)] += c;
    colT[k % q] += c;
    n += c;
  }
  if (n < 2) return { tau: NaN, n };
  // acc[j] = Σ over rows below the current one of column j; prefix sums of acc give both directions.
  const acc = new Float64Array(q);
  let C = 0;
  let D = 0;
  for (let i = q - 1; i >= 0; i--) {
    // after[j] = Σ_{j' > j} acc[j'], beforeJ = Σ_{j' < j} acc[j'].
    let total = 0;
    for (let j = 0; j < q; j++) total += acc[j];
    let before = 0;
    for (let j = 0; j < q; j++) {
      const c = counts[i * q + j];
      const after = total - before - acc[j];
      if (c !== 0) {
        C += c * after;
        D += c * before;
      }
      before += acc[j];
    }
    for (let j = 0; j < q; j++) acc[j] += counts[i * q + j];
  }
  const n0 = (n * (n - 1)) / 2;
  let n1 = 0;
  let n2 = 0;
  for (let i = 0; i < q; i++) {
    n1 += (rowT[i] * (rowT[i] - 1)) / 2;
    n2 += (colT[i] * (colT[i] - 1)) / 2;
  }
  const den = (n0 - n1) * (n0 - n2);
  return { tau: den > 0 ? (C - D) / Math.sqrt(den) : NaN, n };
}
