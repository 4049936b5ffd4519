import { gwetCoefficient, type GwetResult } from "./gwetCoefficient";
import type { Label, ReliabilityInput, WeightScheme } from "./types";

/**
 * Gwet's AC2: the weighted form of Gwet's AC1 agreement coefficient, for any
 * number of raters with missing ratings, for ordered categories.
 *
 * Definition (Gwet 2014, eqs. 3.x; irrCAC `gwet.ac1.raw` with weights), with
 * r_uk raters putting unit u in category k, r_u = Σ_k r_uk, agreement weights
 * w_kl and r*_uk = Σ_l w_kl r_ul:
 *   pa = mean over units with r_u ≥ 2 of Σ_k r_uk (r*_uk - 1) / (r_u (r_u - 1)),
 *   π_k = mean over units with r_u ≥ 1 of r_uk / r_u,
 *   pe = (Σ_kl w_kl) / (q (q - 1)) · Σ_k π_k (1 - π_k),
 *   AC2 = (pa - pe) / (1 - pe).
 * With identity weights this is AC1. Weights use the positions of `categories`
 * (equally spaced), like irrCAC for equally spaced numeric categories.
 *
 * References: K. L. Gwet (2008) "Computing inter-rater reliability and its
 * variance in the presence of high agreement", Br. J. Math. Stat. Psychol. 61,
 * 29-48; K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.
 *
 * Preconditions: `data` is units × raters (rows of equal length), missing =
 * null/undefined. Undefined (NaN) when fewer than 2 categories exist (q < 2;
 * pass `categories` to declare the scale, e.g. ["No", "Yes"]) or when no unit
 * has two ratings.
 *
 * @throws {Error} "gwetAC2: ..." for ragged rows, invalid values or bad weights
 * @example
 * gwetAC2([[1, 1], [1, 2], [2, 2], [3, 3], [3, 2]], { weights: "quadratic" }).value; // => 0.7058823529411766
 */
export function gwetAC2(
  data: ReliabilityInput,
  options: { weights?: WeightScheme | readonly (readonly number[])[]; categories?: readonly Label[] } = {},
): GwetResult {
  return gwetCoefficient("gwetAC2", data, options.weights ?? "quadratic", options.categories);
}
