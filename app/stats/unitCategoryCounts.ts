import { encodeLabels } from "./encodeLabels";
import type { Label, ReliabilityInput, UnitCategoryCounts } from "./types";

export type { UnitCategoryCounts };

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
 * ratings are null/undefined; other values as in {@link encodeLabels}. Data
 * that is already counted (a previous result) is returned as it is, after
 * checking that `categories`, when given, are its categories in the same order.
 *
 * @param fn name of the calling function, used to start error messages
 * @throws {Error} "<fn>: ..." for ragged rows or invalid values, or counted data with other categories
 * @example
 * unitCategoryCounts("demo", [["a", "a"], ["a", "b"]]).counts; // => Int32Array [2, 0, 1, 1]
 */
export function unitCategoryCounts(fn: string, data: ReliabilityInput, categories?: readonly Label[]): UnitCategoryCounts {
  if (isUnitCategoryCounts(data)) {
    if (categories !== undefined && (categories.length !== data.q || categories.some((c, k) => c !== data.categories[k]))) {
      throw new Error(`${fn}: the counted data has categories ${JSON.stringify(data.categories)}, not ${JSON.stringify(categories)}`);
    }
    return data;
  }
  if (!Array.isArray(data)) throw new Error(`${fn}: data must be an array of rows (units × raters)`);
  const units = data.length;
  const raters = units > 0 ? (data[0]?.length ?? 0) : 0;
  const columns: (Label | null | undefined)[][] = [];
  for (let g = 0; g < raters; g++) columns.push(new Array(units));
  for (let u = 0; u < units; u++) {
    const row = data[u];
    if (!Array.isArray(row)) throw new Error(`${fn}: row ${u} is not an array`);
    if (row.length !== raters) {
      throw new Error(
        `${fn}: row ${u} has ${row.length} ratings but row 0 has ${raters}; every row needs one entry per rater (use null for missing)`,
      );
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

/** Whether `data` is already counted by unit and category (a {@link unitCategoryCounts} result). */
export function isUnitCategoryCounts(data: unknown): data is UnitCategoryCounts {
  return typeof data === "object" && data !== null && !Array.isArray(data) && (data as UnitCategoryCounts).counts instanceof Int32Array;
}
