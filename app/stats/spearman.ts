import { pairedNumbers } from "./pairedNumbers";
import { pearson } from "./pearson";
import { rankAverage } from "./rankAverage";
import type { NumericRating } from "./types";

/**
 * Spearman's rank correlation rho, with ties handled by average ranks.
 *
 * Definition: rho = Pearson r of the average ranks of x and of y (after
 * dropping pairs with a missing value). Equals
 * `scipy.stats.spearmanr(x, y).statistic`.
 *
 * Reference: C. Spearman (1904) "The proof and measurement of association
 * between two things", Am. J. Psychol. 15(1), 72-101.
 *
 * Preconditions: equal lengths; finite numbers. NaN when n < 2 or either
 * variable is constant.
 *
 * @throws {Error} "spearman: ..." for a length mismatch or non-finite/non-numeric values
 * @example
 * spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]).rho; // => 0.8207826816681233
 */
export function spearman(x: ArrayLike<NumericRating>, y: ArrayLike<NumericRating>): { rho: number; n: number } {
  const p = pairedNumbers("spearman", x, y);
  const n = p.x.length;
  if (n < 2) return { rho: NaN, n };
  return { rho: pearson(rankAverage(p.x), rankAverage(p.y)).r, n };
}
