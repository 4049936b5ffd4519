import type { WeightScheme } from "./types";

/**
 * Agreement weights for q ordered categories, as a row-major q×q Float64Array.
 *
 * Definition (Cohen 1968; Fleiss & Cohen 1973), with categories at equally
 * spaced positions i = 0..q-1:
 * - "none":      w_ij = 1 if i = j else 0
 * - "linear":    w_ij = 1 - |i - j| / (q - 1)
 * - "quadratic": w_ij = 1 - (i - j)^2 / (q - 1)^2
 * Agreement weights w are 1 - (disagreement weights / max); kappa is the same
 * either way. Positions, not the numeric values of the categories, are used
 * (as in R irr::kappa2 and scikit-learn's cohen_kappa_score).
 *
 * Reference: J. Cohen (1968) "Weighted kappa", Psychological Bulletin 70(4).
 *
 * Preconditions: q is a positive integer; with q = 1 every scheme gives [[1]].
 *
 * @throws {Error} "agreementWeights: ..." for a bad q or an unknown scheme
 * @example
 * Array.from(agreementWeights(3, "linear")); // => [1, 0.5, 0, 0.5, 1, 0.5, 0, 0.5, 1]
 */
export function agreementWeights(q: number, scheme: WeightScheme): Float64Array {
  if (!Number.isInteger(q) || q < 1) throw new Error(`agreementWeights: q must be a positive integer, got ${String(q)}`);
  if (scheme !== "none" && scheme !== "linear" && scheme !== "quadratic") {
    throw new Error(`agreementWeights: unknown weights "${String(scheme)}" (use "none", "linear" or "quadratic")`);
  }
  const w = new Float64Array(q * q);
  const span = q - 1;
  for (let i = 0; i < q; i++) {
    for (let j = 0; j < q; j++) {
      if (i === j) w[i * q + j] = 1;
      else if (scheme === "linear") w[i * q + j] = 1 - Math.abs(i - j) / span;
      else if (scheme === "quadratic") w[i * q + j] = 1 - ((i - j) * (i - j)) / (span * span);
    }
  }
  return w;
}
