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
export function cohenKappa(
  a: readonly Rating[] | ArrayLike<Rating>,
  b: readonly Rating[] | ArrayLike<Rating>,
  options: CohenKappaOptions = {},
): CohenKappaResult & { categories: Label[] } {
  const fn = "cohenKappa";
  if (a == null || b == null || typeof a.length !== "number" || typeof b.length !== "number")
    throw new Error(`${fn}: a and b must be arrays`);
  if (a.length !== b.length) throw new Error(`${fn}: a and b must have the same length (got ${a.length} and ${b.length})`);
  let categories: Label[];
  let counts: Float64Array;
  const fused = countPairs(a, b, options.categories);
  if (fused) {
    ({ categories, counts } = fused);
  } else {
    const enc = encodeLabels(fn, [a, b], options.categories);
    categories = enc.categories;
    const q0 = categories.length;
    counts = new Float64Array(q0 * q0);
    const ca = enc.codes[0];
    const cb = enc.codes[1];
    for (let i = 0; i < ca.length; i++) {
      const x = ca[i];
      const y = cb[i];
      if (x >= 0 && y >= 0) counts[x * q0 + y]++;
    }
  }
  const q = categories.length;
  try {
    return { ...cohenKappaFromTable({ counts, q }, { weights: options.weights, level: options.level }), categories };
  } catch (e) {
    throw new Error(String((e as Error).message).replace(/^cohenKappaFromTable:/, `${fn}:`));
  }
}

/**
 * Fast path: one pass that looks labels up by a linear scan over the few
 * categories seen so far and counts the pairs straight into a contingency
 * table, then reorders the table into sorted category order. Returns null
 * (use encodeLabels) when a value is invalid or there are many categories.
 */
function countPairs(
  a: ArrayLike<Rating>,
  b: ArrayLike<Rating>,
  fixed?: readonly Label[],
): { categories: Label[]; counts: Float64Array } | null {
  const MAX = 32;
  if (
    fixed !== undefined &&
    (fixed.length > MAX || new Set(fixed).size !== fixed.length || fixed.some((c) => c === null || c === undefined))
  )
    return null;
  const known: Label[] = fixed ? fixed.slice() : [];
  const raw = new Float64Array(MAX * MAX);
  const code = (v: Rating): number => {
    if (v === null || v === undefined) return -1;
    for (let c = 0; c < known.length; c++) if (known[c] === v) return c;
    if (known.length === MAX || fixed) return -2;
    if (typeof v === "number" ? !Number.isFinite(v) : typeof v !== "string" && typeof v !== "boolean") return -2;
    known.push(v);
    return known.length - 1;
  };
  let lastA: Rating = undefined;
  let lastCodeA = -1;
  for (let i = 0; i < a.length; i++) {
    const va = a[i];
    let x: number;
    if (va === lastA && va !== undefined) x = lastCodeA;
    else {
      x = code(va);
      if (x === -2) return null;
      lastA = va;
      lastCodeA = x;
    }
    const y = code(b[i]);
    if (y === -2) return null;
    if (x >= 0 && y >= 0) raw[x * MAX + y]++;
  }
  // Validate fixed categories (throws the usual errors) or sort the ones seen.
  const categories = fixed ? encodeLabels("cohenKappa", [], fixed).categories : encodeLabels("cohenKappa", [known]).categories;
  const q = categories.length;
  const pos = categories.map((c) => known.indexOf(c));
  const counts = new Float64Array(q * q);
  for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) counts[i * q + j] = raw[pos[i] * MAX + pos[j]];
  return { categories, counts };
}
