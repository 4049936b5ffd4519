/**
 * The default small-sample interval of an agreement coefficient (issue 36, item 8) written
 * out from its definitions, to check the report pages and the command line against — not
 * from the code that computes it there (countsBootstrapCI over pattern counts or item
 * tables): here the rows themselves are resampled and the statistic recomputed by the
 * plain app/stats function.
 *
 * - Resamples: G draws of G clusters with replacement per resample by seededRandom(seed),
 *   clusters in order of first appearance (the draws app/stats bootstrapCI makes for rows
 *   clustered by item, and the reports and the command line make for small data).
 * - BCa (Efron & Tibshirani 1993, §14.3, eqs. 14.10–14.15): ẑ0 = Φ⁻¹(share of the finite
 *   resample values below the estimate, ties within 1e-12 counted half); â from the
 *   leave-one-cluster-out jackknife, Σ(θ̄ − θ_(i))³ / (6 [Σ(θ̄ − θ_(i))²]^{3/2}); limits the
 *   Hyndman-Fan type-6 quantiles at Φ(ẑ0 + (ẑ0 + z)/(1 − â(ẑ0 + z))) for z = Φ⁻¹ of the
 *   two tail levels of `level`.
 * - `level`: Hesterberg's expanded level for the units (app/stats expandedLevel, itself
 *   checked against scipy in tests/unit/stats/smallSampleIntervals.test.ts).
 */
import { expandedLevel, normalCDF, normalQuantile, seededRandom } from "../../app/stats";

function q6(x: number[], p: number): number {
  const h = Math.min(Math.max((x.length + 1) * p, 1), x.length);
  const f = Math.floor(h);
  return f >= x.length ? x[x.length - 1] : x[f - 1] + (h - f) * (x[f] - x[f - 1]);
}

export function bcaByHand<T>(
  rows: T[],
  stat: (rows: T[]) => number,
  opts: { seed: number; units: number; cluster?: (row: T, index: number) => number | string; resamples?: number },
): [number, number] {
  const key = opts.cluster ?? ((_r: T, i: number) => i);
  const groups = new Map<number | string, T[]>();
  rows.forEach((r, i) => {
    const k = key(r, i);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  });
  const clusters = [...groups.values()];
  const G = clusters.length;
  const B = opts.resamples ?? 2000;
  const random = seededRandom(opts.seed);
  const theta = stat(rows);
  const boot: number[] = [];
  for (let b = 0; b < B; b++) {
    const sample: T[] = [];
    for (let g = 0; g < G; g++) sample.push(...clusters[Math.floor(random() * G)]);
    const v = stat(sample);
    if (Number.isFinite(v)) boot.push(v);
  }
  boot.sort((x, y) => x - y);
  let below = 0;
  let ties = 0;
  for (const v of boot) {
    if (Math.abs(v - theta) <= 1e-12 * Math.max(1, Math.abs(theta))) ties++;
    else if (v < theta) below++;
  }
  const m = boot.length;
  const z0 = normalQuantile(Math.min(1 - 0.5 / m, Math.max(0.5 / m, (below + ties / 2) / m)));
  const jack = clusters.map((_, g) => stat(clusters.flatMap((c, h) => (h === g ? [] : c)))).filter(Number.isFinite);
  const mean = jack.reduce((s, v) => s + v, 0) / jack.length;
  const s2 = jack.reduce((s, v) => s + (mean - v) ** 2, 0);
  const s3 = jack.reduce((s, v) => s + (mean - v) ** 3, 0);
  const acc = s2 > 0 ? s3 / (6 * s2 ** 1.5) : 0;
  const level = expandedLevel(opts.units);
  const at = (p: number, lower: boolean) => {
    const z = normalQuantile(p);
    const d = 1 - acc * (z0 + z);
    return d > 0 ? normalCDF(z0 + (z0 + z) / d) : lower ? 0 : 1;
  };
  return [q6(boot, at((1 - level) / 2, true)), q6(boot, at(1 - (1 - level) / 2, false))];
}
