import { deltaSquared, type MeasurementLevel } from "./krippendorffAlpha";
import type { Label, UnitCategoryCounts } from "./types";

/**
 * Krippendorff's coincidence matrix of counted reliability data, over all units
 * or only those listed (a unit listed twice counts twice, as in a bootstrap
 * resample). Coincidence matrices add up over units, so a resample's matrix is
 * the sum of its units' (or clusters') matrices.
 *
 * Definition (Krippendorff 2011): over the pairable units (m_u ≥ 2 ratings),
 *   o_ck = Σ_u n_uc (n_uk − [c = k]) / (m_u − 1),
 * row-major q × q in category order.
 *
 * Reference: K. Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability".
 *
 * @example
 * coincidenceMatrix(unitCategoryCounts("demo", [["a", "a"], ["a", "b"]])); // => Float64Array [2, 1, 1, 0]
 */
export function coincidenceMatrix(counted: UnitCategoryCounts, units?: ArrayLike<number>): Float64Array {
  const { counts, ratingsPerUnit, q } = counted;
  const o = new Float64Array(q * q);
  const len = units ? units.length : counted.units;
  for (let t = 0; t < len; t++) {
    const u = units ? units[t] : t;
    const m = ratingsPerUnit[u];
    if (m < 2) continue;
    for (let c = 0; c < q; c++) {
      const a = counts[u * q + c];
      if (a === 0) continue;
      o[c * q + c] += (a * (a - 1)) / (m - 1);
      for (let k = c + 1; k < q; k++) {
        const b = counts[u * q + k];
        if (b === 0) continue;
        const x = (a * b) / (m - 1);
        o[c * q + k] += x;
        o[k * q + c] += x;
      }
    }
  }
  return o;
}

/**
 * Krippendorff's alpha from a coincidence matrix (see {@link coincidenceMatrix}):
 * the figure krippendorffAlpha gives for the units the matrix sums, computed in
 * O(q²) — what makes a bootstrap over thousands of units cheap.
 *
 * Definition: n_c = Σ_k o_ck, n = Σ_c n_c,
 *   Do = (1/n) Σ_{c≠k} o_ck δ²_ck,  De = (1/(n(n − 1))) Σ_{c≠k} n_c n_k δ²_ck,  α = 1 − Do/De,
 * with δ² of the level (ordinal from the n_c), as in krippendorffAlpha.
 *
 * Preconditions: `o` is q × q with q = categories.length (numbers for interval
 * and ratio). NaN when n < 2 or De = 0.
 *
 * @throws {Error} "krippendorffAlphaFromCoincidences: ..." for a matrix of the wrong size
 * @example
 * krippendorffAlphaFromCoincidences([2, 1, 1, 0], ["a", "b"], "nominal"); // => 0 (Do = 2/4 = De = 2·3·1/(4·3))
 */
export function krippendorffAlphaFromCoincidences(o: ArrayLike<number>, categories: readonly Label[], level: MeasurementLevel): number {
  const q = categories.length;
  if (o.length !== q * q) throw new Error(`krippendorffAlphaFromCoincidences: the matrix has ${o.length} cells, not ${q}×${q}`);
  const nc = new Float64Array(q);
  let n = 0;
  for (let c = 0; c < q; c++) for (let k = 0; k < q; k++) nc[c] += o[c * q + k];
  for (let c = 0; c < q; c++) n += nc[c];
  if (n < 2) return NaN;
  const d2 = deltaSquared(level, categories, nc);
  let observed = 0;
  let expected = 0;
  for (let c = 0; c < q; c++) {
    for (let k = c + 1; k < q; k++) {
      observed += 2 * o[c * q + k] * d2[c * q + k];
      expected += 2 * nc[c] * nc[k] * d2[c * q + k];
    }
  }
  const De = expected / (n * (n - 1));
  return De > 0 ? 1 - observed / n / De : NaN;
}
