import { unitCategoryCounts } from "./unitCategoryCounts";
import type { Label, ReliabilityInput } from "./types";

/**
 * Percent agreement among any number of raters, allowing missing ratings.
 *
 * Definition: for each unit u with r_u ≥ 2 ratings, the share of agreeing
 * ordered rater pairs, Σ_k r_uk (r_uk - 1) / (r_u (r_u - 1)); the result is the
 * mean over those units. With two raters this is the share of units on which
 * they give the same label (pairs with a missing rating are dropped).
 *
 * Reference: K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.,
 * eq. 2.6 — the `pa` of irrCAC `pa.coeff.raw` (R package by the same author).
 *
 * Preconditions: `data` is units × raters (rows of equal length), missing =
 * null/undefined. NaN when no unit has two or more ratings.
 *
 * @throws {Error} "percentAgreement: ..." for ragged rows or invalid values
 * @example
 * percentAgreement([["y", "y"], ["y", "n"], ["n", "n"], ["n", null]]); // => 0.6666666666666666
 */
export function percentAgreement(data: ReliabilityInput, options: { categories?: readonly Label[] } = {}): number {
  const { counts, ratingsPerUnit, units, q } = unitCategoryCounts("percentAgreement", data, options.categories);
  let sum = 0;
  let m = 0;
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r < 2) continue;
    let s = 0;
    for (let k = 0; k < q; k++) {
      const c = counts[u * q + k];
      s += c * (c - 1);
    }
    sum += s / (r * (r - 1));
    m++;
  }
  return m === 0 ? NaN : sum / m;
}
