import { encodeLabels } from "./encodeLabels";
import type { Label, Rating } from "./types";

/**
 * Prevalence-adjusted bias-adjusted kappa (PABAK) for two raters and two
 * categories.
 *
 * Definition: PABAK = 2·po - 1, where po is the share of complete pairs on
 * which the raters agree (Byrt, Bishop & Carlin 1993). It is kappa computed on
 * the table after equalising prevalence and bias, so it does not collapse when
 * one label dominates (the "kappa paradox").
 *
 * Reference: T. Byrt, J. Bishop & J. B. Carlin (1993) "Bias, prevalence and
 * kappa", J. Clin. Epidemiol. 46(5), 423-429.
 *
 * Preconditions: equal lengths; at most two distinct categories in use (or
 * `categories` of length 2). Pairs with a missing rating are dropped; NaN when
 * no complete pair remains.
 *
 * @throws {Error} "pabak: ..." for a length mismatch, more than two categories,
 *   or invalid values
 * @example
 * pabak(["y", "y", "y", "n"], ["y", "y", "y", "y"]); // => 0.5
 */
export function pabak(a: ArrayLike<Rating>, b: ArrayLike<Rating>, options: { categories?: readonly Label[] } = {}): number {
  const fn = "pabak";
  if (a == null || b == null || typeof a.length !== "number" || typeof b.length !== "number")
    throw new Error(`${fn}: a and b must be arrays`);
  if (a.length !== b.length) throw new Error(`${fn}: a and b must have the same length (got ${a.length} and ${b.length})`);
  const { codes, categories } = encodeLabels(fn, [a, b], options.categories);
  if (categories.length > 2) {
    throw new Error(
      `${fn}: PABAK is defined for two categories; found ${categories.length} (${categories.map((c) => JSON.stringify(c)).join(", ")})`,
    );
  }
  let n = 0;
  let agree = 0;
  const [ca, cb] = codes;
  for (let i = 0; i < ca.length; i++) {
    if (ca[i] < 0 || cb[i] < 0) continue;
    n++;
    if (ca[i] === cb[i]) agree++;
  }
  return n === 0 ? NaN : (2 * agree) / n - 1;
}
