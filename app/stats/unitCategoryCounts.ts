import { encodeLabels } from "./encodeLabels";
import type { Label, ReliabilityData } from "./types";

/** Result of {@link unitCategoryCounts}. */
export interface UnitCategoryCounts {
  /** Row-major units×q counts: counts[u*q + k] = raters who put unit u in category k. */
  counts: Int32Array;
  /** Number of ratings of each unit (r_u). */
  ratingsPerUnit: Int32Array;
  /** Number of units (rows of the input, including units nobody rated). */
  units: number;
  /** Number of raters (columns). */
  raters: number;
  /** Number of categories q. */
  q: number;
  /** The categories, in code order. */
  categories: Label[];
}

/**
 * The distribution of raters by unit and category ("agreement matrix" r_ik of
 * Fleiss 1971 and Gwet 2014) computed from raw reliability data.
 *
 * Definition: r_uk = #{raters g : x_ug = category k}; r_u = Σ_k r_uk.
 *
 * Reference: K. L. Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.,
 * ch. 2 (the n×q "agreement matrix" of irrCAC's *.raw functions).
 *
 * Preconditions: `data` is units × raters with rows of equal length; missing
 * ratings are null/undefined; other values as in {@link encodeLabels}.
 *
 * @param fn name of the calling function, used to start error messages
 * @throws {Error} "<fn>: ..." for ragged rows or invalid values
 * @example
 * unitCategoryCounts("demo", [["a", "a"], ["a", "b"]]).counts; // => Int32Array [2, 0, 1, 1]
 */
export function unitCategoryCounts(fn: string, data: ReliabilityData, categories?: readonly Label[]): UnitCategoryCounts {
  if (!Array.isArray(data)) throw new Error(`${fn}: data must be an array of rows (units × raters)`);
  const units = data.length;
  const raters = units > 0 ? (data[0]?.length ?? 0) : 0;
  const columns: (Label | null | undefined)[][] = [];
  for (let g = 0; g < raters; g++) columns.push(new Array(units));
  for (let u = 0; u < units; u++) {
    const row = data[u];
    if (!Array.isArray(row)) throw new Error(`${fn}: row ${u} is not an array`);
    if (row.length !== raters) {
      throw new Error(`${fn}: row ${u} has ${row.length} ratings but row 0 has ${raters}; every row needs one entry per rater (use null for missing)`);
    }
    for (let g = 0; g < raters; g++) columns[g][u] = row[g];
  }
  const { codes, categories: cats } = encodeLabels(fn, columns, categories);
  const q = cats.length;
  const counts = new Int32Array(units * q);
  const ratingsPerUnit = new Int32Array(units);
  for (let g = 0; g < raters; g++) {
    const c = codes[g];
    for (let u = 0; u < units; u++) {
      const k = c[u];
      if (k >= 0) {
        counts[u * q + k]++;
        ratingsPerUnit[u]++;
      }
    }
  }
  return { counts, ratingsPerUnit, units, raters, q, categories: cats };
}
