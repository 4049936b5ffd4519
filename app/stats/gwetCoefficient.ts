import { unitAgreementTerms } from "./unitAgreementTerms";
import type { Label, ReliabilityInput, WeightScheme } from "./types";

/** Result of {@link gwetAC2} and {@link gwetAC1}. */
export interface GwetResult {
  /** The coefficient (AC2, or AC1 with identity weights); NaN when undefined. */
  value: number;
  /** Observed (weighted) agreement pa over units with ≥ 2 ratings. */
  pa: number;
  /** Chance agreement pe. */
  pe: number;
  /** Units with at least one rating. */
  n: number;
  /** Categories in code order (weights use these positions). */
  categories: Label[];
}

/**
 * The common engine of Gwet's AC1 and AC2 (see {@link gwetAC1}, {@link gwetAC2}):
 * computes pa, pe and (pa - pe)/(1 - pe) with agreement weights `weights`
 * (identity weights give AC1).
 *
 * Reference: K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.;
 * irrCAC `gwet.ac1.raw`.
 *
 * Preconditions: as for {@link gwetAC2}; `fn` names the caller in errors.
 *
 * @throws {Error} "<fn>: ..." for ragged rows, invalid values or bad weights
 * @example
 * gwetCoefficient("gwetAC1", [["y", "y"], ["y", "y"], ["y", "n"], ["n", "n"]], "none").value; // => 0.5294117647058824
 */
export function gwetCoefficient(
  fn: string,
  data: ReliabilityInput,
  weights: WeightScheme | readonly (readonly number[])[],
  categoriesIn?: readonly Label[],
): GwetResult {
  const { q, categories, w, piSum: pi, n: n1, n2, sumPa } = unitAgreementTerms(fn, data, { categories: categoriesIn, weights });
  const pa = n2 === 0 ? NaN : sumPa / n2;
  if (q < 2 || n1 === 0) return { value: NaN, pa, pe: NaN, n: n1, categories };
  let sumW = 0;
  for (let k = 0; k < q * q; k++) sumW += w[k];
  let s = 0;
  for (let k = 0; k < q; k++) {
    const p = pi[k] / n1;
    s += p * (1 - p);
  }
  const pe = (sumW * s) / (q * (q - 1));
  const value = 1 - pe <= 1e-15 ? NaN : (pa - pe) / (1 - pe);
  return { value, pa, pe, n: n1, categories };
}
