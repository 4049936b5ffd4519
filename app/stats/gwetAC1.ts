import { gwetCoefficient, type GwetResult } from "./gwetCoefficient";
import type { Label, ReliabilityInput } from "./types";

/**
 * Gwet's AC1 agreement coefficient for any number of raters, allowing missing
 * ratings. Unlike kappa it stays high when raters agree on a dominant category
 * (the "kappa paradox", e.g. 96% "Yes").
 *
 * Definition, with r_uk raters putting unit u in category k, r_u = Σ_k r_uk,
 * q categories:
 *   pa = mean over units with r_u ≥ 2 of Σ_k r_uk (r_uk - 1) / (r_u (r_u - 1)),
 *   π_k = mean over units with r_u ≥ 1 of r_uk / r_u,
 *   pe = Σ_k π_k (1 - π_k) / (q - 1),   AC1 = (pa - pe) / (1 - pe).
 * Equals irrCAC `gwet.ac1.raw(ratings)$est$coeff.val` (before its rounding to 5 d.p.).
 *
 * References: K. L. Gwet (2008) Br. J. Math. Stat. Psychol. 61, 29-48;
 * K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed., ch. 4.
 *
 * Preconditions: `data` is units × raters (rows of equal length), missing =
 * null/undefined. q counts the categories present, or `categories` when given
 * (declare the scale to keep unused categories: with ["No", "Yes"] and
 * everyone saying "Yes", AC1 = 1). NaN when q < 2 or no unit has two ratings.
 *
 * @throws {Error} "gwetAC1: ..." for ragged rows or invalid values
 * @example
 * gwetAC1([["y", "y"], ["y", "y"], ["y", "n"], ["n", "n"]]).value; // => 0.5294117647058824
 */
export function gwetAC1(data: ReliabilityInput, options: { categories?: readonly Label[] } = {}): GwetResult {
  return gwetCoefficient("gwetAC1", data, "none", options.categories);
}
