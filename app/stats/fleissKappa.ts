import { unitCategoryCounts } from "./unitCategoryCounts";
import type { Label, ReliabilityInput } from "./types";

/** Result of {@link fleissKappa}. */
export interface FleissKappaResult {
  /** Fleiss' kappa; NaN when pe = 1 (one category in use) or no unit has 2+ ratings. */
  kappa: number;
  /** Observed agreement P̄ (mean over units with ≥ 2 ratings). */
  po: number;
  /** Chance agreement P̄e = Σ_k π_k². */
  pe: number;
  /** Units with at least one rating. */
  n: number;
  /** Categories in code order. */
  categories: Label[];
}

/**
 * Fleiss' kappa for any number of raters (Fleiss 1971), in the generalised
 * form that allows a varying number of ratings per unit (missing values).
 *
 * Definition, with r_uk = raters putting unit u in category k, r_u = Σ_k r_uk:
 *   P̄  = mean over units with r_u ≥ 2 of Σ_k r_uk (r_uk - 1) / (r_u (r_u - 1)),
 *   π_k = mean over units with r_u ≥ 1 of r_uk / r_u,   P̄e = Σ_k π_k²,
 *   κ = (P̄ - P̄e) / (1 - P̄e).
 * With complete data (every unit rated by all m raters) this is exactly Fleiss
 * (1971) eq. 1-9; with missing ratings it equals irrCAC `fleiss.kappa.raw`
 * (Gwet 2014, ch. 2).
 *
 * References: J. L. Fleiss (1971) "Measuring nominal scale agreement among many
 * raters", Psychol. Bull. 76(5), 378-382; K. L. Gwet (2014) Handbook of
 * Inter-Rater Reliability, 4th ed.
 *
 * Preconditions: `data` is units × raters (rows of equal length), missing =
 * null/undefined. Units nobody rated are ignored. NaN when undefined (pe = 1,
 * or no unit has two ratings).
 *
 * @throws {Error} "fleissKappa: ..." for ragged rows or invalid values
 * @example
 * fleissKappa([["a", "a", "a"], ["b", "b", "a"], ["b", "b", "b"]]).kappa; // => 0.5499999999999998
 */
export function fleissKappa(data: ReliabilityInput, options: { categories?: readonly Label[] } = {}): FleissKappaResult {
  const { counts, ratingsPerUnit, units, q, categories } = unitCategoryCounts("fleissKappa", data, options.categories);
  let sumPa = 0;
  let n2 = 0;
  let n1 = 0;
  const pi = new Float64Array(q);
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r === 0) continue;
    n1++;
    let s = 0;
    for (let k = 0; k < q; k++) {
      const c = counts[u * q + k];
      pi[k] += c / r;
      s += c * (c - 1);
    }
    if (r >= 2) {
      sumPa += s / (r * (r - 1));
      n2++;
    }
  }
  let pe = 0;
  for (let k = 0; k < q; k++) {
    pi[k] /= n1;
    pe += pi[k] * pi[k];
  }
  const po = n2 === 0 ? NaN : sumPa / n2;
  if (n1 === 0) return { kappa: NaN, po, pe: NaN, n: 0, categories };
  const kappa = 1 - pe <= 1e-15 ? NaN : (po - pe) / (1 - pe);
  return { kappa, po, pe, n: n1, categories };
}
