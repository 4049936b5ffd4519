/**
 * Inter-annotator agreement, per-annotator figures, breakdowns, checklist
 * appropriateness, annotator bias checks and the sample-size planner.
 * Pure: every statistic comes from app/stats.
 */
import {
  bootstrapCI,
  cohenKappa,
  cohenKappaFromTable,
  coincidenceMatrix,
  fleissKappaSE,
  gwetSE,
  holmAdjust,
  krippendorffAlpha,
  krippendorffAlphaFromCoincidences,
  krippendorffAlphaSE,
  countsBootstrapCI,
  linearizedSE,
  meanCI,
  wilsonCI,
  pabakFromTable,
  pearson,
  pearsonFromTable,
  percentAgreement,
  quantileSorted,
  spearman,
  spearmanFromTable,
  type AgreementSEResult,
  type Interval,
  type Label,
  type Rating,
  type UnitCategoryCounts,
} from "~/stats";
import { finalLabels, majority, ratingsBySubject } from "./finalLabels";
import { honestInterval, ZERO_SE } from "./honest";
import { normalTwoSidedP } from "./pvalue";
import type { Estimate, FinalLabels, FinalRule, TaskData } from "./types";

export const Z95 = 1.96;
/** Label strings that usually mean "missing" when they arrive as labels (warned about). */
const MISSING_LIKE = new Set(["", "NA", "N/A", "n/a", "na", "null", "NULL", "None", "none", "-", "NaN", "nan", "?"]);
/** Groups smaller than this are flagged as small n. */
export const SMALL_N = 30;

/**
 * Bootstrap resamples: 1000 up to 2,000 resampled rows, then fewer (never
 * below 100) so large tasks stay responsive; the B used is named beside every
 * CI. With thousands of units the interval is narrow and its Monte Carlo error
 * small relative to its width.
 */
export function resamplesFor(rows: number): number {
  if (rows <= 2000) return 1000;
  return Math.max(100, Math.floor(2_000_000 / rows));
}

const finite = (x: number) => Number.isFinite(x);

/** meanCI as an Estimate (NaN when empty). */
export function meanEstimate(values: ArrayLike<number>): Estimate {
  if (values.length === 0) return { value: NaN, ci: null, n: 0, method: "mean ± 1.96·SEM" };
  const m = meanCI(values);
  return { value: m.mean, ci: values.length > 1 ? m.ci : null, n: values.length, method: "mean ± 1.96·SEM", se: m.sem };
}

export const WILSON = "Wilson score interval";

/**
 * A proportion (mean of 0/1 flags, or of per-unit shares in [0, 1]) with its
 * Wilson score interval, which never leaves [0, 1] (unlike mean ± 1.96·SEM).
 */
export function proportionEstimate(values: ArrayLike<number>): Estimate {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return proportionOf(sum, values.length);
}

/** {@link proportionEstimate} from the sum of the values (hits, for 0/1 flags) and their number. */
export function proportionOf(sum: number, n: number): Estimate {
  if (n === 0) return { value: NaN, ci: null, n: 0, method: WILSON };
  return { value: sum / n, ci: wilsonCI(Math.min(sum, n), n), n, method: WILSON };
}

/**
 * An interval as the page shows it: inside the statistic's range (clipped, and the
 * method says so), and never zero-width — a degenerate sample (perfect agreement,
 * one value everywhere) reports "not estimable" with the reason instead.
 */
export function honestEstimate(e: Estimate, range: [number, number] = [-1, 1], zeroReason = ZERO_SE): Estimate {
  if (!e.ci) return e;
  const h = honestInterval(e.value, e.ci, range, zeroReason);
  if (h.note === null) return e;
  if (h.ci === null) return { ...e, ci: null, method: h.note };
  return { ...e, ci: h.ci, method: `${e.method}; ${h.note}` };
}

/**
 * The mean of scores on a bounded scale [lo, hi] (1–5, say) with an interval that
 * stays on the scale: a seeded percentile bootstrap over the scores (resampled as
 * counts of the distinct values), inside [min, max] of the data by construction.
 * When every score is the same the bootstrap has zero width, so the interval is the
 * Wilson score interval of the mean rescaled to [0, 1] (a bound for any variable
 * on the scale, since its variance is at most p(1 − p)(hi − lo)²); one score: not estimable.
 */
export function scaleMeanEstimate(values: ArrayLike<number>, lo: number, hi: number, seed: number, resamples = 500): Estimate {
  const n = values.length;
  if (n === 0) return { value: NaN, ci: null, n: 0, method: "no labels" };
  const counts = new Map<number, number>();
  let sum = 0;
  for (let i = 0; i < n; i++) {
    counts.set(values[i], (counts.get(values[i]) ?? 0) + 1);
    sum += values[i];
  }
  const mean = sum / n;
  if (n < 2) return { value: mean, ci: null, n, method: "not estimable: one label" };
  const xs = [...counts.keys()];
  if (xs.length === 1 || !(hi > lo)) {
    const p = Math.min(1, Math.max(0, (mean - lo) / (hi - lo)));
    const w = wilsonCI(p * n, n);
    return {
      value: mean,
      ci: [lo + w[0] * (hi - lo), lo + w[1] * (hi - lo)],
      n,
      method: `all ${n} scores equal: ${WILSON} of the mean rescaled to [0, 1]`,
    };
  }
  const c = Float64Array.from(xs, (x) => counts.get(x)!);
  const r = countsBootstrapCI({
    counts: c,
    statistic: (w) => {
      let s = 0;
      let m = 0;
      for (let k = 0; k < w.length; k++) {
        s += w[k] * xs[k];
        m += w[k];
      }
      return s / m;
    },
    seed,
    resamples,
  });
  return { value: mean, ci: r.ci, n, se: r.se, method: `percentile bootstrap (B=${resamples}, seed ${seed})` };
}

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

function bootstrapEstimate(m: Matrix, seed: number, stat: (rows: Rating[][]) => number, clusters: "item" | "row" = "item"): Estimate {
  const value = stat(m.rows);
  if (!finite(value) || m.rows.length < 2) return { value, ci: null, n: m.rows.length, method: "bootstrap" };
  const B = resamplesFor(m.rows.length);
  const res = bootstrapCI({
    data: m.rows,
    statistic: (sample) => stat(sample),
    seed,
    resamples: B,
    cluster: clusters === "item" ? (_row, i) => m.clusterOf[i] : undefined,
  });
  return {
    value,
    ci: finite(res.ci[0]) ? res.ci : null,
    n: m.rows.length,
    se: res.se,
    method: `percentile bootstrap (B=${B}${clusters === "item" ? `, ${res.clusters} item clusters` : ""}, seed ${seed})`,
  };
}

/**
 * A percentile bootstrap over item clusters of a statistic of an additive table (a
 * coincidence matrix, a contingency table): each cluster's table is computed once and
 * a resample's table is the sum over its drawn clusters. For small tasks the draws are
 * the ones bootstrapCI makes for rows clustered by item with the same seed (clusters in
 * order of first appearance, G draws of G), so the interval is the rows' interval; for
 * large ones the number of draws of each distinct cluster table is one multinomial draw
 * (the same resampling distribution), so a resample costs O(distinct tables), not O(G).
 */
function clusterTableBootstrap(opts: {
  rows: number;
  clusterOf: (row: number) => number | string;
  size: number;
  table: (rows: number[]) => ArrayLike<number>;
  stat: (table: Float64Array) => number;
  seed: number;
  resamples: number;
}) {
  return clusterTables(opts).bootstrap(opts.stat, opts.seed, opts.resamples);
}

/** The per-cluster tables of {@link clusterTableBootstrap}, built once for several statistics (each run draws the same clusters for the same seed). */
function clusterTables(opts: {
  rows: number;
  clusterOf: (row: number) => number | string;
  size: number;
  table: (rows: number[]) => ArrayLike<number>;
}) {
  const keyIndex = new Map<number | string, number>();
  const members: number[][] = [];
  for (let r = 0; r < opts.rows; r++) {
    const key = opts.clusterOf(r);
    let g = keyIndex.get(key);
    if (g === undefined) {
      g = members.length;
      keyIndex.set(key, g);
      members.push([]);
    }
    members[g].push(r);
  }
  // Clusters with the same table (common: a few score patterns repeat across thousands of
  // items) are stored once; a resample counts how often it drew each distinct table.
  const L = opts.size;
  const patternOf = new Int32Array(members.length);
  const patternIndex = new Map<string, number>();
  const patterns: ArrayLike<number>[] = [];
  members.forEach((rows, g) => {
    const t = opts.table(rows);
    const key = Array.prototype.join.call(t, ",");
    let p = patternIndex.get(key);
    if (p === undefined) {
      p = patterns.length;
      patternIndex.set(key, p);
      patterns.push(t);
    }
    patternOf[g] = p;
  });
  const P = patterns.length;
  const tables = new Float64Array(P * L);
  patterns.forEach((t, p) => tables.set(t, p * L));
  const sum = new Float64Array(L);
  const clustersPer = new Float64Array(P);
  for (let g = 0; g < patternOf.length; g++) clustersPer[patternOf[g]]++;
  return {
    clusters: members.length,
    // A resample counts how often it drew each distinct table. Up to 200,000 draws in all the clusters
    // are drawn one by one, exactly as bootstrapCI draws them for the same seed; beyond, the counts are
    // one multinomial draw per resample (app/stats countsBootstrapCI: the same distribution, O(tables)).
    bootstrap: (stat: (table: Float64Array) => number, seed: number, resamples: number) =>
      countsBootstrapCI({
        counts: clustersPer,
        patternOfUnit: patternOf,
        rowDrawLimit: 200_000,
        statistic: (drawn) => {
          sum.fill(0);
          for (let p = 0; p < P; p++) {
            const w = drawn[p];
            if (w === 0) continue;
            const base = p * L;
            for (let k = 0; k < L; k++) sum[k] += w * tables[base + k];
          }
          return stat(sum);
        },
        seed,
        resamples,
      }),
  };
}

/**
 * Pooled pairs as category codes: every unordered pair of ratings within a unit,
 * ordered by annotator id (as {@link pooledPairs}), with the row each pair comes from.
 */
function pooledPairCodes(m: Matrix): { a: Int32Array; b: Int32Array; rowOf: Int32Array } {
  const order = m.annotators.map((id, c) => [id, c] as const).sort((x, y) => x[0] - y[0]);
  const cols = order.map(([, c]) => m.codes[c]);
  const a: number[] = [];
  const b: number[] = [];
  const rowOf: number[] = [];
  const present: number[] = [];
  for (let u = 0; u < m.rows.length; u++) {
    present.length = 0;
    for (const col of cols) if (col[u] >= 0) present.push(col[u]);
    for (let x = 0; x < present.length; x++)
      for (let y = x + 1; y < present.length; y++) {
        a.push(present[x]);
        b.push(present[y]);
        rowOf.push(u);
      }
  }
  return { a: Int32Array.from(a), b: Int32Array.from(b), rowOf: Int32Array.from(rowOf) };
}

/**
 * Pooled-pairs statistics resampled by item cluster: a unit's pairs (three labels
 * make three pairs) are not independent, so their intervals come from a percentile
 * bootstrap that draws whole items — each resample's q × q pair table is the sum of
 * its items' tables (Davison & Hinkley 1997, §3.8).
 */
function pairClusterBootstrap(m: Matrix, pc: { a: Int32Array; b: Int32Array; rowOf: Int32Array }, q: number, seed: number) {
  const tables = clusterTables({
    rows: pc.a.length,
    clusterOf: (i) => m.clusterOf[pc.rowOf[i]],
    size: q * q,
    table: (pairs) => {
      const t = new Float64Array(q * q);
      for (const i of pairs) t[pc.a[i] * q + pc.b[i]]++;
      return t;
    },
  });
  const B = resamplesFor(pc.a.length);
  return (value: number, n: number, stat: (t: Float64Array) => number): Estimate => {
    if (!finite(value) || pc.a.length < 2)
      return { value, ci: null, n, method: "not estimable: the statistic is undefined for these labels" };
    const r = tables.bootstrap(stat, seed, B);
    return honestEstimate(
      {
        value,
        ci: finite(r.ci[0]) ? r.ci : null,
        n,
        se: r.se,
        method: `percentile bootstrap over item clusters (B=${B}, ${r.clusters} items, seed ${seed}): a unit's pairs move together`,
      },
      [-1, 1],
      "every resample gave the same value (e.g. perfect agreement)",
    );
  };
}

/** Method label of an analytic (Gwet 2014 / irrCAC linearised) SE, clustered by item. */
export const analyticMethod = (clusters: number) =>
  `analytic SE (Gwet 2014, irrCAC), clustered by item (${clusters} items); ±1.96·SE, clipped to [−1, 1]`;

/**
 * A multi-rater coefficient with the analytic SE of its app/stats *SE function,
 * clustered by item. The value is the plain statistic's (bit-identical); the CI
 * is value ± 1.96·SE clipped to [−1, 1].
 */
function analyticEstimate(m: Matrix, value: number, se: (cluster: number[]) => AgreementSEResult): Estimate {
  if (!finite(value) || m.rows.length < 2) return { value, ci: null, n: m.rows.length, method: "analytic SE (Gwet 2014, irrCAC)" };
  const r = se(m.clusterOf);
  const ok = finite(r.se);
  return honestEstimate({
    value,
    ci: ok ? [value - Z95 * r.se, value + Z95 * r.se] : null,
    n: r.n,
    se: ok ? r.se : null,
    method: `analytic SE (Gwet 2014, irrCAC), clustered by item (${r.clusters} items); ±1.96·SE`,
  });
}

/** Equally spaced numeric categories (then quadratic weights give interval alpha). */
function equallySpaced(categories: Label[]): boolean {
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
function pairTables(m: Matrix, i: number, j: number): { table: Float64Array; counted: UnitCategoryCounts; a: number[]; b: number[] } {
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
function pooledTable(m: Matrix): Float64Array {
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

export interface PairRow {
  a: number;
  b: number;
  aName: string;
  bName: string;
  n: number;
  percentAgreement: number;
  kappa: Estimate;
  pabak: number | null;
  pearson: Estimate | null;
  /** Pearson r with a percentile bootstrap interval over the shared units (beside Fisher's z). */
  pearsonBootstrap: Estimate | null;
}

export interface IaaReport {
  labelKind: TaskData["labelKind"];
  subjectsRated: number;
  subjectsMultiplyRated: number;
  ratings: number;
  annotators: number;
  /** The main table: statistic name → estimate. */
  statistics: { key: string; label: string; estimate: Estimate; note?: string }[];
  pairs: PairRow[];
  /** "pooled" when there are more than two annotators (k-of-pool rotation), "two" otherwise. */
  design: "two" | "pooled";
  designNote: string;
  /** The kappa paradox warning, when raw agreement is high but kappa low because one label dominates. */
  paradox: string | null;
  dominantShare: number;
  dominantLabel: Label | null;
  /** Kappa's standard error (for the planner): [estimate, se, n]. */
  kappaForPlanner: { label: string; value: number; se: number; n: number } | null;
  /**
   * Every statistic the sample-size planner can extrapolate: its SE (analytic, or a
   * bootstrap's — clustered where the labels are), and n in units (not pairs), the
   * quantity that grows when more units are labelled.
   */
  planner: { label: string; value: number; se: number; n: number }[];
  /**
   * What a methods reviewer would want flagged: fewer than 30 units with two labels, an
   * annotator who gave one label to every unit, two annotators identical on every shared
   * unit, and labels such as "NA" or "null" that usually mean "no label".
   */
  warnings: string[];
}

function kappaEstimate(
  k: { kappa: number; se: number; ci: Interval; n: number },
  label = "asymptotic SE (Fleiss, Cohen & Everitt 1969)",
): Estimate {
  return { value: k.kappa, ci: finite(k.kappa) && finite(k.se) ? k.ci : null, n: k.n, se: k.se, method: label };
}

export function interAnnotatorAgreement(data: TaskData): IaaReport {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const m = reliabilityMatrix(data, numeric);
  const seed = data.task.seed;
  const categories = m.categories;
  const q = categories.length;
  const names = new Map(data.annotators.map((a) => [a.id, a.name]));
  const stats: IaaReport["statistics"] = [];

  // The rows counted by unit and category once, shared by the multi-rater coefficients below.
  const counted = countedMatrix(m);
  const design: IaaReport["design"] = m.annotators.length > 2 ? "pooled" : "two";
  // Units are independent draws only when two annotators label units that are each their own item;
  // otherwise (a pool's pairs within a unit, several units of one item) intervals account for the clusters.
  const clusterCount = new Set(m.clusterOf).size;
  const independent = design === "two" && clusterCount === m.rows.length;

  // Percent agreement is the mean of per-unit agreement (a share in [0, 1]). Two annotators on independent
  // units: the Wilson score interval over the units. Otherwise Gwet's (2014, eq. 5.7) SE of the mean
  // per-unit agreement, clustered by item — a Wilson interval over per-unit shares treats each share as a
  // 0/1 outcome, which overstates its variance with three or more annotators (1.3–1.7× too wide on real data).
  const perUnitPA = perUnitAgreement(counted);
  const perRowPA = perUnitPA.filter(finite);
  const pa = percentAgreement(counted);
  {
    let estimate: Estimate = { ...proportionEstimate(perRowPA), value: pa, method: `${WILSON} (n = units with 2+ labels)` };
    if (!independent && perRowPA.length >= 2) {
      const keys: number[] = [];
      for (let u = 0; u < perUnitPA.length; u++) if (finite(perUnitPA[u])) keys.push(m.clusterOf[u]);
      const se = linearizedSE(perRowPA, pa, { cluster: keys });
      if (finite(se) && se > 0)
        estimate = honestEstimate(
          {
            value: pa,
            ci: [pa - Z95 * se, pa + Z95 * se],
            n: perRowPA.length,
            se,
            method: `analytic SE of the mean per-unit agreement (Gwet 2014), clustered by item (${new Set(keys).size} items); ±1.96·SE`,
          },
          [0, 1],
        );
      else estimate = { ...estimate, method: `${WILSON} (n = units with 2+ labels; every unit agrees to the same degree, so the SE is 0)` };
    }
    stats.push({ key: "percentAgreement", label: "Percent agreement", estimate });
  }

  const designNote =
    design === "pooled"
      ? `${m.annotators.length} annotators share the units (k = ${data.task.overlap} per unit, rotating across the pool), so Cohen's kappa is reported per annotator pair below; the pooled-pairs kappa treats every two labels of a unit as one pair, ordered by annotator id. Fleiss' kappa, Krippendorff's alpha and Gwet's AC1 handle the pool directly.`
      : "Two annotators labelled the units; Cohen's kappa compares them directly.";
  let kappaForPlanner: IaaReport["kappaForPlanner"] = null;

  // Pairs of labels within a unit, as codes, resampled by item cluster unless units are independent.
  const pc = pooledPairCodes(m);
  const pairBoot = independent ? null : pairClusterBootstrap(m, pc, q, seed);
  const unitsWithPairs = perRowPA.length;
  if (!numeric) {
    // Pooled pairs as one contingency table: the table cohenKappa and pabak would build from the pairs.
    const pooled = pooledTable(m);
    const ck = cohenKappaFromTable({ counts: pooled, q });
    const kappaEst = pairBoot
      ? pairBoot(ck.kappa, ck.n, (t) => cohenKappaFromTable({ counts: t, q }).kappa)
      : honestEstimate(kappaEstimate(ck));
    stats.push({ key: "cohenKappa", label: design === "pooled" ? "Cohen's kappa (pooled pairs)" : "Cohen's kappa", estimate: kappaEst });
    // The planner scales the SE with the number of units (items resampled), not of pairs.
    if (finite(ck.kappa) && kappaEst.se != null && finite(kappaEst.se))
      kappaForPlanner = { label: stats[stats.length - 1].label, value: ck.kappa, se: kappaEst.se, n: unitsWithPairs };
    // fleissKappaSE and gwetSE compute the coefficient with the same arithmetic as fleissKappa and gwetAC1
    // (bit-identical values, checked in tests), so each is computed once.
    const fkr = fleissKappaSE(counted, { cluster: m.clusterOf });
    stats.push({ key: "fleissKappa", label: "Fleiss' kappa", estimate: analyticEstimate(m, fkr.value, () => fkr) });
    const ka = krippendorffAlpha(counted, { level: "nominal" }).alpha;
    stats.push({
      key: "krippendorffAlpha",
      label: "Krippendorff's alpha (nominal)",
      estimate: analyticEstimate(m, ka, (cluster) => krippendorffAlphaSE(counted, { cluster })),
    });
    const ac1r = gwetSE(counted, { cluster: m.clusterOf });
    stats.push({ key: "gwetAC1", label: "Gwet's AC1", estimate: analyticEstimate(m, ac1r.value, () => ac1r) });
    const pairsN = ck.n;
    if (q <= 2 && pairsN > 0) {
      // PABAK = 2·po − 1 on the pooled pairs; its CI follows from the Wilson interval of po (agreeing pairs of all pairs).
      const value = pabakFromTable({ counts: pooled, q });
      let agree = 0;
      for (let k = 0; k < q; k++) agree += pooled[k * q + k];
      const po = wilsonCI(agree, pairsN);
      stats.push({
        key: "pabak",
        label: design === "pooled" ? "PABAK (pooled pairs)" : "PABAK",
        estimate: pairBoot
          ? pairBoot(value, pairsN, (t) => pabakFromTable({ counts: t, q }))
          : { value, ci: [2 * po[0] - 1, 2 * po[1] - 1], n: pairsN, method: `2·po − 1, po by ${WILSON}` },
      });
    }
  } else {
    const pp = pooledPairs(m);
    const quad = cohenKappa(pp.a, pp.b, { categories, weights: "quadratic" });
    const lin = cohenKappa(pp.a, pp.b, { categories, weights: "linear" });
    const pre = design === "pooled" ? " (pooled pairs)" : "";
    const weighted = (k: typeof quad, weights: "quadratic" | "linear") =>
      pairBoot ? pairBoot(k.kappa, k.n, (t) => cohenKappaFromTable({ counts: t, q }, { weights }).kappa) : honestEstimate(kappaEstimate(k));
    const quadEst = weighted(quad, "quadratic");
    stats.push({ key: "weightedKappaQuadratic", label: `Weighted kappa, quadratic${pre}`, estimate: quadEst });
    stats.push({ key: "weightedKappaLinear", label: `Weighted kappa, linear${pre}`, estimate: weighted(lin, "linear") });
    if (finite(quad.kappa) && quadEst.se != null && finite(quadEst.se))
      kappaForPlanner = { label: stats[stats.length - 2].label, value: quad.kappa, se: quadEst.se, n: unitsWithPairs };
    {
      // Ordinal alpha's CI: resamples of item clusters, each resample's alpha from the sum of its
      // clusters' coincidence matrices (app/stats coincidenceMatrix, krippendorffAlphaFromCoincidences).
      const value = krippendorffAlpha(counted, { level: "ordinal" }).alpha;
      let estimate: Estimate = { value, ci: null, n: m.rows.length, method: "bootstrap" };
      if (finite(value) && m.rows.length >= 2) {
        const B = resamplesFor(m.rows.length);
        const res = clusterTableBootstrap({
          rows: m.rows.length,
          clusterOf: (r) => m.clusterOf[r],
          size: q * q,
          table: (rows) => coincidenceMatrix(counted, rows),
          stat: (o) => krippendorffAlphaFromCoincidences(o, categories, "ordinal"),
          seed,
          resamples: B,
        });
        estimate = {
          value,
          ci: finite(res.ci[0]) ? res.ci : null,
          n: m.rows.length,
          se: res.se,
          method: `percentile bootstrap (B=${B}, ${res.clusters} item clusters, seed ${seed})`,
        };
      }
      stats.push({ key: "krippendorffAlphaOrdinal", label: "Krippendorff's alpha (ordinal)", estimate });
    }
    const kiv = krippendorffAlpha(m.rows, { level: "interval" }).alpha;
    stats.push({
      key: "krippendorffAlphaInterval",
      label: "Krippendorff's alpha (interval)",
      // On an equally spaced scale (1–5 scores) interval alpha is irrCAC's quadratic-weighted alpha, which has an analytic SE.
      estimate: equallySpaced(categories)
        ? analyticEstimate(m, kiv, (cluster) => krippendorffAlphaSE(counted, { weights: "quadratic", cluster }))
        : bootstrapEstimate(m, seed, (rows) => krippendorffAlpha(rows, { level: "interval" }).alpha),
    });
    const xa = pp.a as number[];
    const xb = pp.b as number[];
    if (xa.length >= 3) {
      const r = pearson(xa, xb);
      // Fisher's z assumes independent bivariate-normal pairs; pooled pairs (and skewed Likert scores) get the cluster bootstrap.
      const values = categories as number[];
      // Two annotators on independent units: the pairs' q × q tables per item cluster, built once for the
      // bootstraps below (each run draws the same clusters for the same seed).
      let tables: ReturnType<typeof clusterTables> | null = null;
      const B = resamplesFor(xa.length);
      if (!pairBoot) {
        const codeOf = new Map(categories.map((v, k) => [v, k]));
        const ca = Int32Array.from(xa, (v) => codeOf.get(v)!);
        const cb = Int32Array.from(xb, (v) => codeOf.get(v)!);
        tables = clusterTables({
          rows: xa.length,
          clusterOf: (i) => m.clusterOf[pp.rowOf[i]],
          size: q * q,
          table: (pairs) => {
            const t = new Float64Array(q * q);
            for (const i of pairs) t[ca[i] * q + cb[i]]++;
            return t;
          },
        });
      }
      stats.push({
        key: "pearson",
        label: `Pearson r${pre}`,
        estimate: pairBoot
          ? pairBoot(r.r, r.n, (t) => pearsonFromTable({ counts: t, q }, values).r)
          : honestEstimate({ value: r.r, ci: finite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" }),
      });
      if (tables && finite(r.r)) {
        // Beside Fisher's z, the unit-cluster bootstrap (Fisher's z is too narrow on skewed Likert scores).
        const res = tables.bootstrap((t) => pearsonFromTable({ counts: t, q }, values).r, seed, B);
        stats.push({
          key: "pearsonBootstrap",
          label: "Pearson r (unit bootstrap)",
          estimate: {
            value: r.r,
            ci: finite(res.ci[0]) ? res.ci : null,
            n: r.n,
            se: res.se,
            method: `percentile bootstrap over units (B=${B}, clustered by item, seed ${seed})`,
          },
        });
      }
      const rho = spearman(xa, xb).rho;
      // Each resample's rho from the sum of its item clusters' q × q tables of score pairs
      // (app/stats spearmanFromTable: spearman's figure for the pairs the table counts).
      const spearmanStat = (t: Float64Array) => spearmanFromTable({ counts: t, q }).rho;
      const boot = tables && finite(rho) ? { ...tables.bootstrap(spearmanStat, seed, B), resamples: B } : null;
      stats.push({
        key: "spearman",
        label: `Spearman rho${pre}`,
        estimate: pairBoot
          ? pairBoot(rho, xa.length, spearmanStat)
          : {
              value: rho,
              ci: boot && finite(boot.ci[0]) ? boot.ci : null,
              n: xa.length,
              method: boot ? `percentile bootstrap (B=${boot.resamples}, clustered by item)` : "",
            },
      });
    }
  }

  // No interval leaves its statistic's range, and none is zero-width.
  for (const st of stats) st.estimate = honestEstimate(st.estimate, st.key === "percentAgreement" ? [0, 1] : [-1, 1]);

  // Pairwise table: per pair of annotators, the units both rated, as a contingency table.
  const pairs: PairRow[] = [];
  for (let i = 0; i < m.annotators.length; i++)
    for (let j = i + 1; j < m.annotators.length; j++) {
      const t = pairTables(m, i, j);
      if (t.a.length === 0) continue;
      const k = cohenKappaFromTable({ counts: t.table, q }, { weights: numeric ? "quadratic" : "none" });
      const value = (codes: number[]) => codes.map((c) => categories[c] as number);
      const r = numeric && t.a.length >= 3 ? pearson(value(t.a), value(t.b)) : null;
      // Beside Fisher's z, a percentile bootstrap over the shared units (their q × q tables of score pairs).
      let pearsonBootstrap: Estimate | null = null;
      if (r && finite(r.r)) {
        const B = resamplesFor(t.a.length);
        const res = clusterTableBootstrap({
          rows: t.a.length,
          clusterOf: (i) => i,
          size: q * q,
          table: (units) => {
            const tt = new Float64Array(q * q);
            for (const i of units) tt[t.a[i] * q + t.b[i]]++;
            return tt;
          },
          stat: (tt) => pearsonFromTable({ counts: tt, q }, categories as number[]).r,
          seed,
          resamples: B,
        });
        pearsonBootstrap = honestEstimate({
          value: r.r,
          ci: finite(res.ci[0]) ? res.ci : null,
          n: r.n,
          se: res.se,
          method: `percentile bootstrap over units (B=${B}, seed ${seed})`,
        });
      }
      pairs.push({
        a: m.annotators[i],
        b: m.annotators[j],
        aName: names.get(m.annotators[i]) ?? String(m.annotators[i]),
        bName: names.get(m.annotators[j]) ?? String(m.annotators[j]),
        n: t.a.length,
        percentAgreement: percentAgreement(t.counted),
        kappa: honestEstimate(kappaEstimate(k)),
        pabak: !numeric && q <= 2 ? pabakFromTable({ counts: t.table, q }) : null,
        pearson: r ? honestEstimate({ value: r.r, ci: finite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" }) : null,
        pearsonBootstrap,
      });
    }

  // Kappa paradox: one label dominates, raw agreement high, kappa low.
  const counts = new Map<Label, number>();
  for (const v of data.ratings.value) counts.set(v, (counts.get(v) ?? 0) + 1);
  let dominantLabel: Label | null = null;
  let dominantN = 0;
  for (const [v, n] of counts)
    if (n > dominantN) {
      dominantLabel = v;
      dominantN = n;
    }
  const dominantShare = data.ratings.length ? dominantN / data.ratings.length : NaN;
  const kappaStat = stats.find((s) => s.key === "fleissKappa" || s.key === "weightedKappaQuadratic");
  let paradox: string | null = null;
  if (!numeric && kappaStat && pa >= 0.8 && dominantShare >= 0.8 && finite(kappaStat.estimate.value) && kappaStat.estimate.value < 0.6) {
    const ac1 = stats.find((s) => s.key === "gwetAC1")?.estimate.value;
    const pb = stats.find((s) => s.key === "pabak")?.estimate.value;
    paradox =
      `Raw agreement is high (${(pa * 100).toFixed(1)}%) but kappa is low (${kappaStat.estimate.value.toFixed(3)}) because one label dominates ` +
      `("${String(dominantLabel)}" is ${(dominantShare * 100).toFixed(1)}% of all labels), so chance agreement is high — the kappa paradox. ` +
      `Gwet's AC1 (${ac1 !== undefined ? ac1.toFixed(3) : "n/a"})${pb !== undefined ? ` and PABAK (${pb.toFixed(3)})` : ""} do not collapse under skewed prevalence; report them beside kappa.`;
  }

  const warnings: string[] = [];
  if (perRowPA.length < 30)
    warnings.push(
      `Only ${perRowPA.length} unit${perRowPA.length === 1 ? " has" : "s have"} two or more labels (fewer than 30): every interval is rough.`,
    );
  m.codes.forEach((column, g) => {
    let only = -2;
    let rated = 0;
    for (let u = 0; u < column.length; u++) {
      const k = column[u];
      if (k < 0) continue;
      rated++;
      only = only === -2 || only === k ? k : -1;
    }
    if (rated > 1 && only >= 0)
      warnings.push(
        `${names.get(m.annotators[g]) ?? m.annotators[g]} gave the same label (${String(categories[only])}) to all ${rated} units they labelled.`,
      );
  });
  for (const p of pairs)
    if (p.n > 1 && p.percentAgreement === 1)
      warnings.push(`${p.aName} and ${p.bName} gave identical labels on all ${p.n} units both labelled.`);
  for (const c of categories) {
    if (typeof c === "string" && MISSING_LIKE.has(c.trim()))
      warnings.push(`The label "${c}" is counted as a category; if it means "no label", remove those labels before computing agreement.`);
  }

  const planner: IaaReport["planner"] = [];
  for (const st of stats) {
    const e = st.estimate;
    if (e.se == null || !finite(e.se) || !finite(e.value) || !e.ci) continue;
    if (!e.method.startsWith("analytic SE") && !e.method.startsWith("percentile bootstrap") && !e.method.startsWith("asymptotic SE"))
      continue;
    if (st.key === "pearsonBootstrap") continue; // Pearson r is planned once (from its first interval)
    const pooledPairsStat = ["cohenKappa", "weightedKappaQuadratic", "weightedKappaLinear", "pabak", "pearson", "spearman"].includes(
      st.key,
    );
    planner.push({ label: st.label, value: e.value, se: e.se, n: pooledPairsStat ? unitsWithPairs : e.n });
  }

  return {
    planner,
    warnings,
    labelKind: data.labelKind,
    subjectsRated: m.rows.length,
    subjectsMultiplyRated: perRowPA.length,
    ratings: data.ratings.length,
    annotators: m.annotators.length,
    statistics: stats,
    pairs,
    design,
    designNote,
    paradox,
    dominantShare,
    dominantLabel,
    kappaForPlanner,
  };
}

// ─── Per annotator ───────────────────────────────────────────────────────────

export interface AnnotatorRow {
  id: number;
  name: string;
  ratings: number;
  annotations: number;
  /** Agreement with the majority of the other annotators (leave-one-out); ties among the others excluded. */
  looAgreement: Estimate;
  gold: Estimate;
  medianMs: number | null;
  meanMs: Estimate;
  distribution: Record<string, number>;
}

export function perAnnotator(data: TaskData): AnnotatorRow[] {
  const m = reliabilityMatrix(data, data.labelKind === "ordinal" || data.labelKind === "interval");
  const { counts, ratingsPerUnit, q } = countedMatrix(m);
  // Per annotator (matrix column): ratings, label distribution, and leave-one-out agreement —
  // the unique most frequent label among the unit's other ratings (its counts less this
  // rating), as `majority` of the others; units where the others tie are left out.
  const byAnnotator = new Map<number, { looHits: number; looN: number; ratings: number; dist: Record<string, number> }>();
  m.annotators.forEach((id, g) => {
    const e = { looHits: 0, looN: 0, ratings: 0, dist: Object.fromEntries(data.categories.map((c) => [String(c), 0])) };
    byAnnotator.set(id, e);
    const column = m.codes[g];
    for (let u = 0; u < column.length; u++) {
      const c = column[u];
      if (c < 0) continue;
      e.ratings++;
      e.dist[String(m.categories[c])]++;
      if (ratingsPerUnit[u] < 2) continue;
      let best = -1;
      let bestN = 0;
      let tie = false;
      for (let k = 0; k < q; k++) {
        const n = counts[u * q + k] - (k === c ? 1 : 0);
        if (n > bestN) {
          best = k;
          bestN = n;
          tie = false;
        } else if (n > 0 && n === bestN) tie = true;
      }
      if (best < 0 || tie) continue;
      e.looN++;
      if (best === c) e.looHits++;
    }
  });
  const durations = new Map<number, number[]>();
  const gold = new Map<number, number[]>();
  const annCount = new Map<number, number>();
  const an = data.annotations;
  for (let i = 0; i < an.length; i++) {
    const who = an.annotator[i];
    annCount.set(who, (annCount.get(who) ?? 0) + 1);
    if (!Number.isNaN(an.durationMs[i])) (durations.get(who) ?? durations.set(who, []).get(who)!).push(an.durationMs[i]);
    if (an.goldCorrect[i] >= 0) (gold.get(who) ?? gold.set(who, []).get(who)!).push(an.goldCorrect[i]);
  }
  return data.annotators.map((a) => {
    const e = byAnnotator.get(a.id)!;
    const d = Float64Array.from(durations.get(a.id) ?? []).sort(); // numeric sort of a typed array: no comparator
    return {
      id: a.id,
      name: a.name,
      ratings: e.ratings,
      annotations: annCount.get(a.id) ?? 0,
      looAgreement: proportionOf(e.looHits, e.looN),
      gold: proportionEstimate(gold.get(a.id) ?? []),
      medianMs: d.length ? quantileSorted(d, 0.5) : null,
      meanMs: meanEstimate(d),
      distribution: e.dist,
    };
  });
}

// ─── Breakdowns ──────────────────────────────────────────────────────────────

export const DIMENSIONS = ["domain", "subject", "taskType", "model", "turn"] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export const DIMENSION_LABELS: Record<Dimension, string> = {
  domain: "Domain",
  subject: "Subject",
  taskType: "Task type",
  model: "Model",
  turn: "Turn",
};

export interface BreakdownRow {
  dimension: Dimension;
  value: string;
  n: number;
  /** Binary: share of the positive label; numeric: mean final score; nominal: share of the modal label. */
  summary: Estimate;
  agreement: Estimate;
  small: boolean;
}

export function breakdowns(data: TaskData, final: FinalLabels): BreakdownRow[] {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const m = reliabilityMatrix(data, numeric);
  // Per-subject agreement (NaN: fewer than two ratings), indexed by subject.
  const rowAgreement = new Float64Array(data.subjects.length).fill(NaN);
  const perRow = perUnitAgreement(countedMatrix(m));
  for (let i = 0; i < m.rows.length; i++) if (finite(perRow[i])) rowAgreement[m.subjectOf[i]] = perRow[i];
  const out: BreakdownRow[] = [];
  const finalOf = final.values;
  // Means of final scores stay on the task's scale (e.g. 1–5).
  const scale = numeric ? data.categories.map(Number).filter(finite) : [];
  const scaleLo = scale.length ? Math.min(...scale) : NaN;
  const scaleHi = scale.length ? Math.max(...scale) : NaN;
  for (const dim of DIMENSIONS) {
    // Grouped by the raw value (strings are shared by every subject of an item), named at the end.
    const groups = new Map<string | number, number[]>();
    for (let i = 0; i < data.subjects.length; i++) {
      const v = data.subjects[i][dim];
      if (v == null || finalOf[i] == null) continue;
      const members = groups.get(v);
      if (members) members.push(i);
      else groups.set(v, [i]);
    }
    if (groups.size === 0) continue;
    for (const [value, members] of [...groups].map(([k, v]) => [String(k), v] as const).sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
      let summary: Estimate;
      if (numeric) {
        const xs = members.map((i) => Number(finalOf[i]));
        // Final scores can be averages (e.g. 3.5) between the scale's points: the scale's ends still bound them.
        let lo = scaleLo;
        let hi = scaleHi;
        for (const x of xs) {
          lo = Math.min(lo, x);
          hi = Math.max(hi, x);
        }
        summary = finite(scaleLo) ? scaleMeanEstimate(xs, lo, hi, data.task.seed) : meanEstimate(xs);
      } else if (data.positive !== null) {
        let hits = 0;
        for (const i of members) if (finalOf[i] === data.positive) hits++;
        summary = proportionOf(hits, members.length);
      } else {
        const finals = members.map((i) => finalOf[i]!);
        const target = majority(finals) ?? finals[0];
        summary = proportionEstimate(finals.map((f) => (f === target ? 1 : 0)));
      }
      let agSum = 0;
      let agN = 0;
      for (const i of members) {
        if (Number.isNaN(rowAgreement[i])) continue;
        agSum += rowAgreement[i];
        agN++;
      }
      out.push({ dimension: dim, value, n: members.length, summary, agreement: proportionOf(agSum, agN), small: members.length < SMALL_N });
    }
  }
  return out;
}

// ─── Checklist appropriateness ───────────────────────────────────────────────

export interface ChecklistReport {
  overall: { yes: number; n: number; share: Estimate };
  perDomain: { domain: string; yes: number; n: number; share: Estimate; small: boolean }[];
  /** Subjects judged inappropriate (final label "No"). */
  inappropriate: { s: number; itemId: number; checklistItemId: number; domain: string | null; yesVotes: number; noVotes: number }[];
  undecided: number;
}

export function checklistAppropriateness(data: TaskData, final: FinalLabels): ChecklistReport {
  const { start, idx } = ratingsBySubject(data);
  const yesFlags: number[] = [];
  const byDomain = new Map<string, number[]>();
  const inappropriate: ChecklistReport["inappropriate"] = [];
  let undecided = 0;
  data.subjects.forEach((s, i) => {
    const f = final.values[i];
    if (start[i + 1] === start[i] && f == null) return;
    if (f == null) {
      undecided++;
      return;
    }
    const y = f === "Yes" ? 1 : 0;
    yesFlags.push(y);
    const d = s.domain ?? "(none)";
    (byDomain.get(d) ?? byDomain.set(d, []).get(d)!).push(y);
    if (!y && s.checklistItemId != null) {
      let yesVotes = 0;
      let noVotes = 0;
      for (let k = start[i]; k < start[i + 1]; k++) data.ratings.value[idx[k]] === "Yes" ? yesVotes++ : noVotes++;
      inappropriate.push({ s: i, itemId: s.itemId, checklistItemId: s.checklistItemId, domain: s.domain, yesVotes, noVotes });
    }
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    overall: { yes: sum(yesFlags), n: yesFlags.length, share: proportionEstimate(yesFlags) },
    perDomain: [...byDomain]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([domain, ys]) => ({ domain, yes: sum(ys), n: ys.length, share: proportionEstimate(ys), small: ys.length < SMALL_N })),
    inappropriate,
    undecided,
  };
}

/** "821 of 854 (96.1%)" */
export function paperShare(yes: number, n: number): string {
  return n === 0 ? "0 of 0 (n/a)" : `${yes} of ${n} (${((100 * yes) / n).toFixed(1)}%)`;
}

// ─── Annotator bias ──────────────────────────────────────────────────────────

export interface BiasRow {
  annotator: number;
  name: string;
  check: "position" | "length";
  description: string;
  n: number;
  /** The effect: Spearman rho, or the observed share of picks. */
  effect: number;
  /** The expected value under no bias (0 for rho, 1/m for picks). */
  expected: number;
  statistic: number;
  statisticName: string;
  p: number;
  /** p adjusted by Holm's step-down method over every check in the table (the family of tests). */
  pHolm: number;
}

/**
 * Position and length bias per annotator.
 * - Scores (writing quality, numeric labels with shown order): Spearman rho
 *   between the shown position (or response length) and the annotator's score
 *   minus the mean of the other annotators' scores for the same response, so
 *   response quality cancels out; z = rho·√(n − 1), two-sided normal p.
 * - Best-of-N picks: share of picks at the first shown position (and of picks
 *   that were the longest response) against 1/m; binomial z-test.
 * - Yes/No on one response: Spearman rho between response length and Yes (1/0)
 *   minus the others' mean.
 */
export function biasChecks(data: TaskData): BiasRow[] {
  // One family of tests per task: every annotator × check. Holm's adjustment keeps the
  // chance of any false alarm at the nominal level however many annotators there are.
  const rows = rawBiasChecks(data);
  const adjusted = holmAdjust(rows.map((r) => (Number.isFinite(r.p) ? r.p : NaN)));
  return rows.map((r, i) => ({ ...r, pHolm: adjusted[i] }));
}

function rawBiasChecks(data: TaskData): Omit<BiasRow, "pHolm">[] {
  const names = new Map(data.annotators.map((a) => [a.id, a.name]));
  const out: Omit<BiasRow, "pHolm">[] = [];
  const zRho = (rho: number, n: number) => rho * Math.sqrt(n - 1);
  if (data.task.kind === "best-of-n") {
    const an = data.annotations;
    for (const a of data.annotators) {
      // This annotator's picks with a known shown order (ties and unknown orders are left out).
      const mine: number[] = [];
      for (let i = 0; i < an.length; i++) if (an.annotator[i] === a.id && an.pickPosition[i] >= 0 && an.shownCount[i] > 0) mine.push(i);
      for (const check of ["position", "length"] as const) {
        const rows = check === "position" ? mine : mine.filter((i) => an.pickedLongest[i] >= 0);
        const n = rows.length;
        if (n < 3) continue;
        const hits = rows.filter((i) => (check === "position" ? an.pickPosition[i] === 0 : an.pickedLongest[i] === 1)).length;
        const p0 = rows.reduce((s, i) => s + 1 / an.shownCount[i], 0) / n;
        const z = (hits - n * p0) / Math.sqrt(n * p0 * (1 - p0));
        out.push({
          annotator: a.id,
          name: names.get(a.id)!,
          check,
          description: check === "position" ? "Picks the first shown response" : "Picks the longest response",
          n,
          effect: hits / n,
          expected: p0,
          statistic: z,
          statisticName: "z (binomial)",
          p: normalTwoSidedP(z),
        });
      }
    }
    return out;
  }
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const binary = data.labelKind === "binary";
  if (!numeric && !binary) return out;
  const { start, idx } = ratingsBySubject(data);
  const toNum = (v: Label) => (binary ? (v === data.positive ? 1 : 0) : Number(v));
  const { annotator, value, position } = data.ratings;
  const rel = new Map<number, { pos: number[]; posY: number[]; len: number[]; lenY: number[] }>();
  for (const a of data.annotators) rel.set(a.id, { pos: [], posY: [], len: [], lenY: [] });
  for (let s = 0; s < data.subjects.length; s++) {
    const n = start[s + 1] - start[s];
    if (n < 2) continue;
    let total = 0;
    for (let k = start[s]; k < start[s + 1]; k++) total += toNum(value[idx[k]]);
    for (let k = start[s]; k < start[s + 1]; k++) {
      const i = idx[k];
      const own = toNum(value[i]);
      const centred = own - (total - own) / (n - 1);
      const e = rel.get(annotator[i])!;
      if (position[i] >= 0) {
        e.pos.push(position[i]);
        e.posY.push(centred);
      }
      const len = data.subjects[s].length;
      if (len != null) {
        e.len.push(len);
        e.lenY.push(centred);
      }
    }
  }
  for (const a of data.annotators) {
    const e = rel.get(a.id)!;
    for (const check of ["position", "length"] as const) {
      const x = check === "position" ? e.pos : e.len;
      const y = check === "position" ? e.posY : e.lenY;
      if (x.length < 3) continue;
      const rho = spearman(x, y).rho;
      if (!finite(rho)) continue;
      const z = zRho(rho, x.length);
      out.push({
        annotator: a.id,
        name: names.get(a.id)!,
        check,
        description:
          check === "position"
            ? "Scores later-shown responses higher (rho > 0) or earlier ones (rho < 0), relative to the other annotators"
            : `${binary ? "Says Yes more" : "Scores higher"} for longer responses (rho > 0), relative to the other annotators`,
        n: x.length,
        effect: rho,
        expected: 0,
        statistic: z,
        statisticName: "z = rho·√(n−1)",
        p: normalTwoSidedP(z),
      });
    }
  }
  return out;
}

// ─── Sample-size planner ─────────────────────────────────────────────────────

export interface PlanRow {
  target: string;
  current: number;
  n: number;
  halfWidth: number;
  delta: number;
  needed: number;
  more: number;
  basis: string;
}

/** Units needed so that the 95% CI half-width of kappa is at most δ, scaling its SE as 1/√n. */
export function planKappa(label: string, value: number, se: number, n: number, delta: number): PlanRow {
  const needed = Math.ceil(n * ((Z95 * se) / delta) ** 2);
  return {
    target: label,
    current: value,
    n,
    halfWidth: Z95 * se,
    delta,
    needed,
    more: Math.max(0, needed - n),
    basis: "SE scales as 1/√n from the current estimate",
  };
}

/** Units needed so that the 95% CI half-width of an accuracy p is at most δ: 1.96²·p(1−p)/δ². */
export function planAccuracy(label: string, p: number, n: number, delta: number): PlanRow {
  const needed = Math.ceil((Z95 ** 2 * p * (1 - p)) / delta ** 2);
  const halfWidth = n > 0 ? Z95 * Math.sqrt((p * (1 - p)) / n) : NaN;
  return {
    target: label,
    current: p,
    n,
    halfWidth,
    delta,
    needed,
    more: Math.max(0, needed - n),
    basis: "binomial variance p(1−p) at the current accuracy",
  };
}

export function computeFinal(data: TaskData, rule: FinalRule): FinalLabels {
  return finalLabels(data, rule);
}
