import { cohenKappaFromTable, type CohenKappaResult } from "./cohenKappaFromTable";
import { encodeLabels } from "./encodeLabels";
import type { Label, Rating, WeightScheme } from "./types";

/** Options of {@link cohenKappa}. */
export interface CohenKappaOptions {
  /** "none" (default), "linear", "quadratic", or a q×q agreement-weight matrix in category order. */
  weights?: WeightScheme | readonly (readonly number[])[];
  /** Ordered list of all categories (sets the weight positions and keeps unused categories). */
  categories?: readonly Label[];
  /** Confidence level of `ci` (default 0.95). */
  level?: number;
}

/**
 * Cohen's kappa for two raters, unweighted or with linear/quadratic weights,
 * with its asymptotic standard error and confidence interval.
 *
 * Definition: κ = (po - pe) / (1 - pe) on the contingency table of the pairs
 * (a_i, b_i); see {@link cohenKappaFromTable} for po, pe and the standard error
 * (Fleiss, Cohen & Everitt 1969, the SE under the alternative, used for the CI;
 * `seNull` is the SE under κ = 0, for tests only). Pairs where either rating is
 * missing (null/undefined) are dropped. Weighted kappa places the categories at
 * equally spaced positions in `categories` order (default: sorted values present).
 *
 * References: J. Cohen (1960; 1968); Fleiss, Cohen & Everitt (1969).
 *
 * Preconditions: `a` and `b` have equal length. Values are strings, finite
 * numbers or booleans. Undefined results are NaN: no complete pairs, or chance
 * agreement pe = 1 (both raters always use one and the same category).
 *
 * @throws {Error} "cohenKappa: ..." for a length mismatch or invalid values
 * @example
 * cohenKappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]).kappa; // => 0.5
 */
export function cohenKappa(a: readonly Rating[] | ArrayLike<Rating>, b: readonly Rating[] | ArrayLike<Rating>, options: CohenKappaOptions = {}): CohenKappaResult & { categories: Label[] } {
  const fn = "cohenKappa";
  if (a == null || b == null || typeof a.length !== "number" || typeof b.length !== "number") throw new Error(`${fn}: a and b must be arrays`);
  if (a.length !== b.length) throw new Error(`${fn}: a and b must have the same length (got ${a.length} and ${b.length})`);
  const { codes, categories } = encodeLabels(fn, [a, b], options.categories);
  const q = categories.length;
  const counts = new Float64Array(q * q);
  const ca = codes[0];
  const cb = codes[1];
  for (let i = 0; i < ca.length; i++) {
    const x = ca[i];
    const y = cb[i];
    if (x >= 0 && y >= 0) counts[x * q + y]++;
  }
  try {
    return { ...cohenKappaFromTable({ counts, q }, { weights: options.weights, level: options.level }), categories };
  } catch (e) {
    throw new Error(String((e as Error).message).replace(/^cohenKappaFromTable:/, `${fn}:`));
  }
}
