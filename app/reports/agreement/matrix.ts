/** The reliability matrix (subjects × annotators) and the tables built from it: pooled pairs, unit × category counts, pair tables, per-unit agreement. */
import type { Label, Rating, UnitCategoryCounts } from "~/stats";
import type { TaskData } from "../types";

/** Reliability matrix: rows = subjects with ≥ 1 rating, columns = annotators. */
export interface Matrix {
  rows: Rating[][];
  /** The categories (numbers for numeric labels), and each column's ratings as codes into them (-1: none). */
  categories: Label[];
  codes: Int32Array[];
  /** Subject index of each row. */
  subjectOf: number[];
  /** Item id of each row (bootstrap clusters). */
  clusterOf: number[];
  annotators: number[];
}

/**
 * The matrix is computed once per TaskData (keyed by its ratings array) and
 * shared by the phases that read it (agreement, breakdowns); callers never mutate it.
 */
const matrixCache = new WeakMap<TaskData["ratings"], Map<boolean, Matrix>>();

export function reliabilityMatrix(data: TaskData, numeric: boolean): Matrix {
  let byKind = matrixCache.get(data.ratings);
  const hit = byKind?.get(numeric);
  if (hit && hit.annotators.length === data.annotators.length) return hit;
  const m = buildMatrix(data, numeric);
  if (!byKind) matrixCache.set(data.ratings, (byKind = new Map()));
  byKind.set(numeric, m);
  return m;
}

function buildMatrix(data: TaskData, numeric: boolean): Matrix {
  const annotators = data.annotators.map((a) => a.id);
  const col = new Map(annotators.map((a, i) => [a, i]));
  const rowOf = new Int32Array(data.subjects.length).fill(-1);
  const rows: Rating[][] = [];
  const subjectOf: number[] = [];
  const clusterOf: number[] = [];
  const { s: subjectOfRating, annotator, value } = data.ratings;
  const rowOfRating = new Int32Array(data.ratings.length);
  for (let i = 0; i < data.ratings.length; i++) {
    const s = subjectOfRating[i];
    let row = rowOf[s];
    if (row < 0) {
      row = rowOf[s] = rows.length;
      rows.push(new Array<Rating>(annotators.length).fill(null));
      subjectOf.push(s);
      clusterOf.push(data.subjects[s].itemId);
    }
    rowOfRating[i] = row;
    rows[row][col.get(annotator[i])!] = numeric ? Number(value[i]) : value[i];
  }
  // The same ratings as category codes, column by column: what the counts and the
  // contingency tables below are made of, without encoding the rows again.
  const categories: Label[] = numeric ? data.categories.map(Number) : data.categories.slice();
  const code = new Map<Label, number>(categories.map((c, k) => [c, k]));
  const codes = annotators.map(() => new Int32Array(rows.length).fill(-1));
  for (let i = 0; i < data.ratings.length; i++) {
    const v = numeric ? Number(value[i]) : value[i];
    const k = code.get(v);
    if (k === undefined)
      throw new Error(`reliabilityMatrix: label ${JSON.stringify(v)} is not one of the task's categories ${JSON.stringify(categories)}`);
    codes[col.get(annotator[i])!][rowOfRating[i]] = k;
  }
  return { rows, categories, codes, subjectOf, clusterOf, annotators };
}

/** Equally spaced numeric categories (then quadratic weights give interval alpha). */
export function equallySpaced(categories: Label[]): boolean {
  if (categories.length < 2 || categories.some((c) => typeof c !== "number")) return false;
  const xs = categories as number[];
  const step = xs[1] - xs[0];
  return xs.every((x, i) => i === 0 || Math.abs(x - xs[i - 1] - step) < 1e-9 * Math.max(1, Math.abs(step)));
}

/** Every unordered pair of ratings within a subject, ordered by annotator id (pooled pairs). */
export function pooledPairs(m: Matrix): { a: Rating[]; b: Rating[]; rowOf: number[] } {
  const a: Rating[] = [];
  const b: Rating[] = [];
  const rowOf: number[] = [];
  const order = m.annotators.map((id, i) => [id, i] as const).sort((x, y) => x[0] - y[0]);
  const cols = order.map(([, c]) => c);
  const present: Rating[] = [];
  m.rows.forEach((row, ri) => {
    present.length = 0;
    for (const c of cols) if (row[c] != null) present.push(row[c]);
    for (let i = 0; i < present.length; i++)
      for (let j = i + 1; j < present.length; j++) {
        a.push(present[i]);
        b.push(present[j]);
        rowOf.push(ri);
      }
  });
  return { a, b, rowOf };
}

/**
 * The matrix counted by unit and category — exactly what app/stats unitCategoryCounts
 * makes of its rows and categories — once per matrix, from its codes: the multi-rater
 * coefficients and the breakdowns share it.
 */
const countedCache = new WeakMap<Matrix, UnitCategoryCounts>();
export function countedMatrix(m: Matrix): UnitCategoryCounts {
  const hit = countedCache.get(m);
  if (hit) return hit;
  const q = m.categories.length;
  const units = m.rows.length;
  const counts = new Int32Array(units * q);
  const ratingsPerUnit = new Int32Array(units);
  for (const column of m.codes) {
    for (let u = 0; u < units; u++) {
      const k = column[u];
      if (k >= 0) {
        counts[u * q + k]++;
        ratingsPerUnit[u]++;
      }
    }
  }
  const c: UnitCategoryCounts = { counts, ratingsPerUnit, units, raters: m.codes.length, q, categories: m.categories };
  countedCache.set(m, c);
  return c;
}

/**
 * Two annotators' ratings of the units both rated: their q × q contingency table
 * (rows: the first, columns: the second; for app/stats cohenKappaFromTable and
 * pabakFromTable) and the same units counted by category (for percentAgreement).
 */
export function pairTables(
  m: Matrix,
  i: number,
  j: number,
): { table: Float64Array; counted: UnitCategoryCounts; a: number[]; b: number[] } {
  const q = m.categories.length;
  const ci = m.codes[i];
  const cj = m.codes[j];
  const table = new Float64Array(q * q);
  const a: number[] = [];
  const b: number[] = [];
  for (let u = 0; u < ci.length; u++) {
    if (ci[u] < 0 || cj[u] < 0) continue;
    table[ci[u] * q + cj[u]]++;
    a.push(ci[u]);
    b.push(cj[u]);
  }
  const n = a.length;
  const counts = new Int32Array(n * q);
  for (let t = 0; t < n; t++) {
    counts[t * q + a[t]]++;
    counts[t * q + b[t]]++;
  }
  const counted: UnitCategoryCounts = {
    counts,
    ratingsPerUnit: new Int32Array(n).fill(2),
    units: n,
    raters: 2,
    q,
    categories: m.categories,
  };
  return { table, counted, a, b };
}

/**
 * The pooled-pairs contingency table: every unordered pair of ratings within a unit,
 * ordered by annotator id (as {@link pooledPairs}), counted by category.
 */
export function pooledTable(m: Matrix): Float64Array {
  const q = m.categories.length;
  const order = m.annotators.map((id, c) => [id, c] as const).sort((x, y) => x[0] - y[0]);
  const cols = order.map(([, c]) => m.codes[c]);
  const table = new Float64Array(q * q);
  const present: number[] = [];
  for (let u = 0; u < m.rows.length; u++) {
    present.length = 0;
    for (const col of cols) if (col[u] >= 0) present.push(col[u]);
    for (let x = 0; x < present.length; x++) for (let y = x + 1; y < present.length; y++) table[present[x] * q + present[y]]++;
  }
  return table;
}

/**
 * Per-row percent agreement Σ_k r_k (r_k − 1) / (r (r − 1)) (as percentAgreement
 * on one row); NaN for rows with fewer than two ratings.
 */
export function perUnitAgreement(counted: UnitCategoryCounts): Float64Array {
  const { counts, ratingsPerUnit, units, q } = counted;
  const out = new Float64Array(units);
  for (let u = 0; u < units; u++) {
    const r = ratingsPerUnit[u];
    if (r < 2) {
      out[u] = NaN;
      continue;
    }
    let s = 0;
    for (let k = 0; k < q; k++) s += counts[u * q + k] * (counts[u * q + k] - 1);
    out[u] = s / (r * (r - 1));
  }
  return out;
}
