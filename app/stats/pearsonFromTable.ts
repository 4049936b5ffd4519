import { normalQuantile } from "./normalQuantile";
import type { Interval } from "./types";

/**
 * Pearson's r of two numeric variables from their q × q table of value pairs
 * (counts[i * q + j] = pairs with x = values[i] and y = values[j]), with the
 * Fisher-z interval — the figure {@link pearson} gives for the pairs the table
 * counts, in O(q²) (bootstraps of 1–5 scores, for example).
 *
 * Definition: r = Σ_ij n_ij (v_i − x̄)(v_j − ȳ) / √(Σ_i r_i (v_i − x̄)² · Σ_j c_j (v_j − ȳ)²),
 * row totals r_i, column totals c_j; CI tanh(atanh r ± z/√(n − 3)).
 *
 * References: K. Pearson (1895); R. A. Fisher (1921) on the z transform.
 *
 * Preconditions: counts finite and non-negative, q·q of them; values finite.
 * r is NaN when n < 2 or either variable is constant; the CI is [NaN, NaN] when n < 3.
 *
 * @throws {Error} "pearsonFromTable: ..." for bad counts or values
 * @example
 * pearsonFromTable({ counts: [2, 0, 1, 1], q: 2 }, [0, 1]).r; // => 0.5773502691896258
 */
export function pearsonFromTable(
  table: { counts: ArrayLike<number>; q: number },
  values: ArrayLike<number>,
  options: { level?: number } = {},
): { r: number; ci: Interval; n: number } {
  const fn = "pearsonFromTable";
  const { counts, q } = table;
  if (!Number.isInteger(q) || q < 0 || counts.length !== q * q) throw new Error(`${fn}: counts must have q*q entries`);
  if (values.length !== q) throw new Error(`${fn}: values must have q = ${q} entries`);
  const rows = new Float64Array(q);
  const cols = new Float64Array(q);
  let n = 0;
  for (let i = 0; i < q; i++) {
    if (!Number.isFinite(values[i])) throw new Error(`${fn}: values must be finite (value ${i} is ${String(values[i])})`);
    for (let j = 0; j < q; j++) {
      const c = counts[i * q + j];
      if (!(c >= 0) || !Number.isFinite(c))
        throw new Error(`${fn}: counts must be finite and non-negative (cell ${i},${j} is ${String(c)})`);
      rows[i] += c;
      cols[j] += c;
      n += c;
    }
  }
  if (n < 2) return { r: NaN, ci: [NaN, NaN], n };
  let mx = 0;
  let my = 0;
  for (let i = 0; i < q; i++) {
    mx += rows[i] * values[i];
    my += cols[i] * values[i];
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < q; i++) {
    const dx = values[i] - mx;
    sxx += rows[i] * dx * dx;
    const dy = values[i] - my;
    syy += cols[i] * dy * dy;
    for (let j = 0; j < q; j++) {
      const c = counts[i * q + j];
      if (c !== 0) sxy += c * dx * (values[j] - my);
    }
  }
  if (sxx === 0 || syy === 0) return { r: NaN, ci: [NaN, NaN], n };
  const r = Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
  if (n < 3) return { r, ci: [NaN, NaN], n };
  const z = Math.atanh(r);
  const se = 1 / Math.sqrt(n - 3);
  const zq = normalQuantile(1 - (1 - (options.level ?? 0.95)) / 2);
  return { r, ci: [Math.tanh(z - zq * se), Math.tanh(z + zq * se)], n };
}
