/**
 * Published data sets used as references by the stats tests. Each is quoted
 * with its source; values computed from them are cited in the tests.
 */

const _ = null;

/**
 * Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", section
 * "C. Interval data with missing values" reliability data: 4 observers × 12
 * units, values 1-5, 7 missing. Transposed here to units × raters (A, B, C, D).
 * The same table is irrCAC's `cac.raw4raters` (Gwet 2014, Handbook p. 120).
 */
export const krippendorff2011: (number | null)[][] = (() => {
  const A = [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _];
  const B = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3];
  const C = [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _];
  const D = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _];
  return A.map((__, i) => [A[i], B[i], C[i], D[i]]);
})();

/**
 * Fleiss (1971) Table 1 raw data: 30 patients × 6 psychiatrists, 5 diagnoses
 * (1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other).
 * Fleiss printed only the counts table; this raw form is R irr's `diagnoses`
 * data set as transcribed in statsmodels/stats/tests/test_inter_rater.py.
 */
export const fleiss1971Diagnoses: number[][] = [
  [4, 4, 4, 4, 4, 4],
  [2, 2, 2, 5, 5, 5],
  [2, 3, 3, 3, 3, 5],
  [5, 5, 5, 5, 5, 5],
  [2, 2, 2, 4, 4, 4],
  [1, 1, 3, 3, 3, 3],
  [3, 3, 3, 3, 5, 5],
  [1, 1, 3, 3, 3, 4],
  [1, 1, 4, 4, 4, 4],
  [5, 5, 5, 5, 5, 5],
  [1, 4, 4, 4, 4, 4],
  [1, 2, 4, 4, 4, 4],
  [2, 2, 2, 3, 3, 3],
  [1, 4, 4, 4, 4, 4],
  [2, 2, 4, 4, 4, 5],
  [3, 3, 3, 3, 3, 5],
  [1, 1, 1, 4, 5, 5],
  [1, 1, 1, 1, 1, 2],
  [2, 2, 4, 4, 4, 4],
  [1, 3, 3, 5, 5, 5],
  [5, 5, 5, 5, 5, 5],
  [2, 4, 4, 4, 4, 4],
  [2, 2, 4, 5, 5, 5],
  [1, 1, 4, 4, 4, 4],
  [1, 4, 4, 4, 4, 5],
  [2, 2, 2, 2, 2, 4],
  [1, 1, 1, 1, 5, 5],
  [2, 2, 4, 4, 4, 4],
  [1, 3, 3, 3, 3, 3],
  [5, 5, 5, 5, 5, 5],
];

/** Expand a units × categories count table into raw ratings (unit rows, one column per rating). */
export function countsToRaw(counts: number[][]): number[][] {
  return counts.map((row) => row.flatMap((c, k) => Array.from({ length: c }, () => k + 1)));
}

/**
 * Wikipedia "Fleiss' kappa" worked example: 10 subjects × 14 raters × 5
 * categories, as counts (also statsmodels test_inter_rater.py `table1`).
 * Published P̄ = 0.378, P̄e = 0.213, κ = 0.210.
 */
export const wikipediaFleissCounts: number[][] = [
  [0, 0, 0, 0, 14],
  [0, 2, 6, 4, 2],
  [0, 0, 3, 5, 6],
  [0, 3, 9, 2, 0],
  [2, 2, 8, 1, 1],
  [7, 7, 0, 0, 0],
  [3, 2, 6, 3, 0],
  [2, 5, 3, 2, 2],
  [6, 5, 2, 1, 0],
  [0, 2, 2, 3, 7],
];

/**
 * irrCAC `distrib.6raters` (Gwet 2014, Handbook): 15 subjects × 6 raters, counts
 * over (Depression, Personality Disorder, Schizophrenia, Neurosis, Other).
 */
export const gwetDistrib6Raters: number[][] = [
  [0, 0, 0, 6, 0],
  [0, 3, 0, 0, 3],
  [0, 1, 4, 0, 1],
  [0, 0, 0, 0, 6],
  [0, 3, 0, 3, 0],
  [2, 0, 4, 0, 0],
  [0, 0, 4, 0, 2],
  [2, 0, 3, 1, 0],
  [2, 0, 0, 4, 0],
  [0, 0, 0, 0, 6],
  [1, 0, 0, 5, 0],
  [1, 1, 0, 4, 0],
  [0, 3, 3, 0, 0],
  [1, 0, 0, 5, 0],
  [0, 2, 0, 3, 1],
];

/** irrCAC `cont3x3abstractors` contingency table (Ectopic, AIU, NIU), n = 100. */
export const cont3x3abstractors: number[][] = [
  [13, 0, 0],
  [0, 20, 7],
  [0, 4, 56],
];

/** Expand a two-rater contingency table into paired label arrays (categories 1..q). */
export function tableToPairs(table: number[][]): { a: number[]; b: number[] } {
  const a: number[] = [];
  const b: number[] = [];
  table.forEach((row, i) =>
    row.forEach((c, j) => {
      for (let k = 0; k < c; k++) {
        a.push(i + 1);
        b.push(j + 1);
      }
    }),
  );
  return { a, b };
}

/**
 * R irr `anxiety` data, raters 2 and 3 (20 subjects, scores 1-6; nobody used 5),
 * as transcribed in statsmodels test_inter_rater.py.
 */
export const anxietyRater2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4];
export const anxietyRater3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2];
