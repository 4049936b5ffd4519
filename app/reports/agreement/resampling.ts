/** Intervals of agreement statistics: cluster (item) bootstraps over the reliability matrix and the analytic (linearised) SE. */
import { type AgreementSEResult, bootstrapCI, countsBootstrapCI, type Rating } from "~/stats";
import type { Estimate } from "../types";
import { finite, honestEstimate, resamplesFor, Z95 } from "./intervals";
import type { Matrix } from "./matrix";

export function bootstrapEstimate(
  m: Matrix,
  seed: number,
  stat: (rows: Rating[][]) => number,
  clusters: "item" | "row" = "item",
): Estimate {
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
 * Pooled-pairs statistics resampled by item cluster: a unit's pairs (three labels
 * make three pairs) are not independent, so their intervals come from a percentile
 * bootstrap that draws whole items — each resample's q × q pair table is the sum of
 * its items' tables (Davison & Hinkley 1997, §3.8).
 */
export function pairClusterBootstrap(m: Matrix, pc: { a: Int32Array; b: Int32Array; rowOf: Int32Array }, q: number, seed: number) {
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
export function analyticEstimate(m: Matrix, value: number, se: (cluster: number[]) => AgreementSEResult): Estimate {
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
