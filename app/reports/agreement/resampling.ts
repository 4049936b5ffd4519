/** Intervals of agreement statistics: cluster (item) bootstraps over the reliability matrix, the analytic (linearised) SE, and the default between them. */
import {
  AGREEMENT_RESAMPLES,
  type AgreementSEResult,
  agreementInterval,
  coincidenceMatrix,
  countsBootstrapCI,
  countsBootstrapCIs,
  type CountsBootstrapResult,
  type Interval,
  krippendorffAlphaFromCoincidences,
  type MeasurementLevel,
  type UnitCategoryCounts,
} from "~/stats";
import type { Estimate } from "../types";
import { finite, honestEstimate, Z95 } from "./intervals";
import { type Matrix, perUnitAgreement } from "./matrix";

/**
 * A percentile bootstrap over item clusters of a statistic of an additive table (a
 * coincidence matrix, a contingency table): each cluster's table is computed once and
 * a resample's table is the sum over its drawn clusters. For small tasks the draws are
 * the ones bootstrapCI makes for rows clustered by item with the same seed (clusters in
 * order of first appearance, G draws of G), so the interval is the rows' interval; for
 * large ones the number of draws of each distinct cluster table is one multinomial draw
 * (the same resampling distribution), so a resample costs O(distinct tables), not O(G).
 */
export function clusterTableBootstrap(opts: {
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
export function clusterTables(opts: {
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
  // Distinct tables by a hash of their nonzero cells, confirmed cell by cell (a collision only costs a comparison).
  const buckets = new Map<number, number[]>();
  const patterns: ArrayLike<number>[] = [];
  const same = (x: ArrayLike<number>, y: ArrayLike<number>) => {
    for (let k = 0; k < L; k++) if (x[k] !== y[k]) return false;
    return true;
  };
  members.forEach((rows, g) => {
    const t = opts.table(rows);
    let h = 0x811c9dc5;
    for (let k = 0; k < L; k++) {
      const v = t[k];
      if (v !== 0) h = Math.imul(Math.imul(h ^ k, 0x01000193) ^ ((v * 1_000_003) | 0), 0x01000193);
    }
    let bucket = buckets.get(h);
    if (bucket === undefined) buckets.set(h, (bucket = []));
    let p = -1;
    for (const c of bucket)
      if (same(patterns[c], t)) {
        p = c;
        break;
      }
    if (p < 0) {
      p = patterns.length;
      bucket.push(p);
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
  /** The summed table of a resample's drawn clusters, into `sum`. */
  const sumOf = (drawn: Float64Array) => {
    sum.fill(0);
    for (let p = 0; p < P; p++) {
      const w = drawn[p];
      if (w === 0) continue;
      const base = p * L;
      for (let k = 0; k < L; k++) sum[k] += w * tables[base + k];
    }
    return sum;
  };
  return {
    clusters: members.length,
    // A resample counts how often it drew each distinct table. Up to 200,000 draws in all the clusters
    // are drawn one by one, exactly as bootstrapCI draws them for the same seed; beyond, the counts are
    // one multinomial draw per resample (app/stats countsBootstrapCI: the same distribution, O(tables)).
    bootstrap: (
      stat: (table: Float64Array) => number,
      seed: number,
      resamples: number,
      method: "percentile" | "bca" = "percentile",
      level = 0.95,
    ) =>
      countsBootstrapCI({
        counts: clustersPer,
        patternOfUnit: patternOf,
        rowDrawLimit: 200_000,
        statistic: (drawn) => stat(sumOf(drawn)),
        seed,
        resamples,
        method,
        level,
      }),
    /**
     * Several statistics of the same resamples (app/stats countsBootstrapCIs): result k is what
     * `bootstrap(stats[k], …)` gives with the same seed, at the cost of one set of draws and sums.
     */
    bootstrapMany: (
      stats: ((table: Float64Array) => number)[],
      seed: number,
      resamples: number,
      method: "percentile" | "bca" = "percentile",
      level = 0.95,
    ) =>
      countsBootstrapCIs({
        counts: clustersPer,
        patternOfUnit: patternOf,
        rowDrawLimit: 200_000,
        // Called in order on the same weights: the first sums the drawn tables, the others reuse the sum.
        statistics: stats.map((stat, k) => (k === 0 ? (drawn: Float64Array) => stat(sumOf(drawn)) : () => stat(sum))),
        seed,
        resamples,
        method,
        level,
      }),
  };
}

/**
 * The bootstraps of a set of statistics of the same cluster tables, run together and
 * only when first asked for: `boot(k)` is statistic k's bootstrap function for
 * {@link defaultEstimate} (the tables are built on the first call, and each method and
 * level is run once for all the statistics — the same draws for each, as separate runs
 * with the same seed would make).
 */
export function bootstrapGroup(build: () => ClusterTables, stats: ((t: Float64Array) => number)[], seed: number) {
  let tables: ClusterTables | null = null;
  const runs = new Map<string, CountsBootstrapResult[]>();
  return (k: number) =>
    (method: "percentile" | "bca", level: number): CountsBootstrapResult => {
      const key = `${method} ${level}`;
      let r = runs.get(key);
      if (r === undefined) {
        tables ??= build();
        r = tables.bootstrapMany(stats, seed, AGREEMENT_RESAMPLES, method, level);
        runs.set(key, r);
      }
      return r[k];
    };
}

export type ClusterTables = ReturnType<typeof clusterTables>;

/**
 * Pooled pairs as category codes: every unordered pair of ratings within a unit,
 * ordered by annotator id (as {@link pooledPairs}), with the row each pair comes from.
 */
export function pooledPairCodes(m: Matrix): { a: Int32Array; b: Int32Array; rowOf: Int32Array } {
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
 * The pairs' q × q tables per item cluster: pooled pairs (three labels make three
 * pairs) are not independent, so their bootstraps draw whole items — each resample's
 * pair table is the sum of its items' tables (Davison & Hinkley 1997, §3.8). Every
 * row is drawn, as the command line draws every unit: a unit with one label adds no
 * pair, so the number of pairs varies between resamples as it would between samples.
 * With two annotators on units that are each their own item, the clusters are the units.
 */
export function pairClusterTables(m: Matrix, pc: { a: Int32Array; b: Int32Array; rowOf: Int32Array }, q: number): ClusterTables {
  // The pairs come in row order (pooledPairCodes): the pairs of row u are start[u]..start[u + 1] − 1.
  const start = new Int32Array(m.rows.length + 1);
  for (let i = 0; i < pc.rowOf.length; i++) start[pc.rowOf[i] + 1]++;
  for (let u = 0; u < m.rows.length; u++) start[u + 1] += start[u];
  return clusterTables({
    rows: m.rows.length,
    clusterOf: (u) => m.clusterOf[u],
    size: q * q,
    table: (rows) => {
      const t = new Float64Array(q * q);
      for (const u of rows) for (let i = start[u]; i < start[u + 1]; i++) t[pc.a[i] * q + pc.b[i]]++;
      return t;
    },
  });
}

/**
 * Per item cluster, the additive summaries of its units' ratings from which the
 * multi-rater coefficients of any resample follow (Gwet 2014, ch. 2 and 5;
 * Krippendorff 2011): [n1, n2, Σ pa_i, Σ_i r_ik/r_i for k = 1..q, the q × q
 * coincidence matrix], over units with ≥ 1 rating (n1) and ≥ 2 (n2), pa_i the share of
 * a unit's agreeing rating pairs. Fleiss' kappa, Gwet's AC1, percent agreement and
 * Krippendorff's alpha of a resample are the functions below of its summed summary —
 * the figures fleissKappa, gwetAC1, percentAgreement and krippendorffAlpha give for
 * the resampled units.
 */
export function unitSummaryTables(m: Matrix, counted: UnitCategoryCounts) {
  const q = counted.q;
  const L = 3 + q + q * q;
  const pa = perUnitAgreement(counted);
  const build = () =>
    clusterTables({
      rows: counted.units,
      clusterOf: (u) => m.clusterOf[u],
      size: L,
      table: (units) => {
        const t = new Float64Array(L);
        for (const u of units) {
          const r = counted.ratingsPerUnit[u];
          if (r === 0) continue;
          t[0]++;
          for (let k = 0; k < q; k++) t[3 + k] += counted.counts[u * q + k] / r;
          if (r >= 2) {
            t[1]++;
            t[2] += pa[u];
          }
        }
        t.set(coincidenceMatrix(counted, units), 3 + q);
        return t;
      },
    });
  const pi = new Float64Array(q);
  /** pa and the category shares π_k of a summary (NaN pa when no unit has two ratings). */
  const shares = (t: Float64Array) => {
    for (let k = 0; k < q; k++) pi[k] = t[3 + k] / t[0];
    return t[1] > 0 ? t[2] / t[1] : NaN;
  };
  const chanceCorrected = (pa: number, pe: number) => (1 - pe <= 1e-15 ? NaN : (pa - pe) / (1 - pe));
  return {
    /** Builds the cluster tables (only when a bootstrap runs). */
    build,
    percentAgreement: (t: Float64Array) => (t[1] > 0 ? t[2] / t[1] : NaN),
    /** Fleiss (1971): pe = Σ π_k². */
    fleissKappa: (t: Float64Array) => {
      const pa = shares(t);
      let pe = 0;
      for (let k = 0; k < q; k++) pe += pi[k] * pi[k];
      return chanceCorrected(pa, pe);
    },
    /** Gwet (2008, eq. 20): pe = Σ π_k (1 − π_k) / (q − 1). */
    gwetAC1: (t: Float64Array) => {
      if (q < 2) return NaN;
      const pa = shares(t);
      let pe = 0;
      for (let k = 0; k < q; k++) pe += pi[k] * (1 - pi[k]);
      return chanceCorrected(pa, pe / (q - 1));
    },
    krippendorffAlpha: (t: Float64Array, level: MeasurementLevel) =>
      krippendorffAlphaFromCoincidences(t.subarray(3 + q), counted.categories, level),
  };
}

/** Method label of an analytic (Gwet 2014 / irrCAC linearised) SE, clustered by item. */
export const analyticMethod = (clusters: number) =>
  `analytic SE (Gwet 2014, irrCAC), clustered by item (${clusters} items); ±1.96·SE, clipped to [−1, 1]`;

/**
 * A multi-rater coefficient's analytic interval from its app/stats *SE function,
 * clustered by item: value ± 1.96·SE (null when the SE is undefined), with its label.
 */
export function analyticInterval(value: number, r: AgreementSEResult): { se: number; ci: Interval; method: string } {
  return {
    se: r.se,
    ci: [value - Z95 * r.se, value + Z95 * r.se],
    method: `analytic SE (Gwet 2014, irrCAC), clustered by item (${r.clusters} items); ±1.96·SE`,
  };
}

/**
 * A statistic with the default interval of app/stats agreementInterval — the rule
 * `npm run agreement` applies too: below SMALL_SAMPLE_UNITS units (with two or more
 * labels, counted as item clusters) the expanded BCa bootstrap over `tables`, else
 * `analytic` (value ± 1.96·SE), or the percentile bootstrap when there is no analytic
 * SE. B = AGREEMENT_RESAMPLES, seeded with the task's seed. Undefined values, and
 * fewer than two resampling units, have no interval; a zero-width one is not
 * estimable with `zeroReason` (honestEstimate).
 */
export function defaultEstimate(opts: {
  value: number;
  n: number;
  /** Item clusters that hold units with two or more labels. */
  units: number;
  analytic: { se: number; ci: Interval; method: string } | null;
  /** The statistic's seeded bootstrap over item clusters (or units) with a method and level (see bootstrapGroup). */
  boot: (method: "percentile" | "bca", level: number) => CountsBootstrapResult;
  seed: number;
  /** What the bootstrap draws: "item clusters" (items named in the label) or "units". */
  over?: "item clusters" | "units";
  note?: string;
  zeroReason?: string;
  range?: [number, number];
}): Estimate {
  const { value, n, seed } = opts;
  const over = opts.over ?? "item clusters";
  if (!finite(value)) return { value, ci: null, n, method: "not estimable: the statistic is undefined for these labels" };
  const r = agreementInterval({
    units: opts.units,
    analytic: opts.analytic,
    bootstrap: opts.boot,
  });
  const note = opts.note ? `: ${opts.note}` : "";
  let e: Estimate;
  if (r.method === "analytic")
    e = { value, ci: finite(r.ci[0]) ? r.ci : null, n, se: finite(r.se) ? r.se : null, method: opts.analytic!.method };
  else if (r.bootstrap === null) e = { value, ci: null, n, method: "not estimable: fewer than two units to resample" };
  else {
    const b = r.bootstrap;
    const drawn = over === "units" ? `${b.clusters} units` : `${b.clusters} items`;
    const how =
      r.method === "bca"
        ? `BCa bootstrap over ${over} (B=${b.resamples}, ${drawn}, seed ${seed}; expanded for ${opts.units} units: limits at the ${r.level.toFixed(4)} level)`
        : `percentile bootstrap over ${over} (B=${b.resamples}, ${drawn}, seed ${seed})`;
    e = { value, ci: finite(b.ci[0]) ? b.ci : null, n, se: b.se, method: how + note };
  }
  return honestEstimate(e, opts.range ?? [-1, 1], r.method === "analytic" ? undefined : (opts.zeroReason ?? RESAMPLES_SAME));
}

/** Why a bootstrap interval of zero width is not estimable. */
export const RESAMPLES_SAME = "every resample gave the same value (e.g. perfect agreement)";
