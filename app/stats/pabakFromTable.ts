/**
 * PABAK (see {@link pabak}) from the 2×2 (or 1×1) contingency table of two
 * raters, row-major: counts[i * q + j] = pairs rated i by the first rater and j
 * by the second.
 *
 * Definition: PABAK = 2·po − 1 with po = Σ_i counts[i, i] / n, computed as
 * 2·agree/n − 1 — the same arithmetic as {@link pabak} on the pairs.
 *
 * Reference: T. Byrt, J. Bishop & J. B. Carlin (1993) J. Clin. Epidemiol. 46(5), 423-429.
 *
 * Preconditions: q ≤ 2; counts are finite, non-negative, q·q of them. NaN when n = 0.
 *
 * @throws {Error} "pabakFromTable: ..." for more than two categories or bad counts
 * @example
 * pabakFromTable({ counts: [3, 0, 1, 0], q: 2 }); // => 0.5
 */
export function pabakFromTable(table: { counts: ArrayLike<number>; q: number }): number {
  const fn = "pabakFromTable";
  const { counts, q } = table;
  if (!Number.isInteger(q) || q < 0 || counts.length !== q * q) throw new Error(`${fn}: counts must have q*q entries`);
  if (q > 2) throw new Error(`${fn}: PABAK is defined for two categories; the table has ${q}`);
  let n = 0;
  let agree = 0;
  for (let i = 0; i < q * q; i++) {
    const c = counts[i];
    if (typeof c !== "number" || !Number.isFinite(c) || c < 0)
      throw new Error(`${fn}: counts must be finite and non-negative (cell ${Math.floor(i / q)},${i % q} is ${String(c)})`);
    n += c;
    if (Math.floor(i / q) === i % q) agree += c;
  }
  return n === 0 ? NaN : (2 * agree) / n - 1;
}
