import { multinomialSample } from "./binomialSample";
import { normalCDF } from "./normalCDF";
import { normalQuantile } from "./normalQuantile";
import { quantileSorted } from "./quantileSorted";
import { seededRandom } from "./seededRandom";
import type { Interval } from "./types";
import type { BootstrapResult } from "./bootstrapCI";

/** Options of {@link countsBootstrapCI}. */
export interface CountsBootstrapOptions {
  /**
   * Units per distinct pattern (a distinct rating pattern, a distinct value, an
   * item cluster's table…): non-negative integers.
   */
  counts: ArrayLike<number>;
  /** The statistic of a resample, from its units per pattern (the same length as `counts`). */
  statistic: (weights: Float64Array) => number;
  /**
   * Pattern of each unit, in the units' order. When given and the resamples are
   * small (units × resamples ≤ `rowDrawLimit`), each resample draws units exactly
   * as {@link bootstrapCI} draws rows with the same seed, so the interval is the
   * row bootstrap's; otherwise each resample is one multinomial draw over the
   * patterns (the same distribution, O(patterns) per resample).
   */
  patternOfUnit?: Int32Array;
  rowDrawLimit?: number;
  resamples?: number;
  random?: () => number;
  seed?: number;
  level?: number;
  /**
   * "percentile" (default): the α/2 and 1 − α/2 quantiles of the resample statistics.
   * "bca": the bias-corrected and accelerated interval of Efron (1987), its acceleration
   * from the leave-one-unit-out jackknife (see {@link countsBootstrapCI}).
   */
  method?: "percentile" | "bca";
}

/** Result of {@link countsBootstrapCI}: as bootstrapCI's, and how the units were drawn. */
export interface CountsBootstrapResult extends BootstrapResult {
  draws: "units" | "multinomial";
  method: "percentile" | "bca";
  /** BCa only: the bias correction ẑ0 and the acceleration â (NaN for the percentile method). */
  z0: number;
  acceleration: number;
  /** The percentile interval of the same resamples (= `ci` for the percentile method). */
  percentileCI: Interval;
}

/**
 * Seeded percentile (or BCa) bootstrap over units whose statistic depends only on
 * how many units show each distinct pattern.
 *
 * Resampling N units with replacement gives each pattern a count that is
 * Multinomial(N; c_1/N, …, c_P/N) (Davison & Hinkley 1997, §2.3: the bootstrap
 * distribution of a statistic of the empirical distribution): drawing these P
 * counts directly is the same resampling as drawing N unit indices, in
 * O(P) instead of O(N) per resample — for nominal ratings of r raters on q
 * categories there are at most (q + 1)^r patterns whatever N is. The interval is
 * the percentile interval of {@link bootstrapCI} (type-6 quantiles; undefined
 * resample statistics excluded and counted).
 *
 * `method: "bca"` gives the bias-corrected and accelerated interval instead
 * (Efron & Tibshirani 1993, §14.3, eqs. 14.10-14.15): with θ̂ the statistic, θ*_b
 * the m finite resample statistics and Φ the standard normal CDF,
 *   ẑ0 = Φ⁻¹(p0),  p0 = (#{θ*_b < θ̂} + ½·#{θ*_b = θ̂}) / m
 * (ties — equal up to 1e-12 — counted half, as scipy.stats.bootstrap does; p0 kept inside
 * [½/m, 1 − ½/m]),
 *   â = Σ_i (θ̄ − θ_(i))³ / (6 [Σ_i (θ̄ − θ_(i))²]^{3/2})
 * from the jackknife values θ_(i) (the statistic with unit i left out; here
 * one unit of pattern p left out, counted c_p times; undefined ones left out),
 * θ̄ their mean, and the limits are the type-6 quantiles at
 *   α_1 = Φ(ẑ0 + (ẑ0 + z_{α/2}) / (1 − â(ẑ0 + z_{α/2}))),  α_2 likewise with z_{1−α/2}.
 * BCa is second-order accurate (its coverage error is O(1/n), the percentile
 * interval's O(1/√n); Efron & Tibshirani 1993, §14.3; DiCiccio & Efron 1996),
 * which is what small samples need; it wants B ≥ 1,000 or so for stable limits
 * (Efron & Tibshirani 1993, ch. 14).
 *
 * References: B. Efron & R. J. Tibshirani (1993) An Introduction to the Bootstrap,
 * ch. 13-14; B. Efron (1987) "Better bootstrap confidence intervals", JASA 82(397),
 * 171-185; T. J. DiCiccio & B. Efron (1996) "Bootstrap confidence intervals",
 * Statist. Sci. 11(3), 189-228; A. C. Davison & D. V. Hinkley (1997) Bootstrap
 * Methods and their Application, §2.3, §5.2-5.3.
 *
 * Preconditions: counts non-negative integers with a positive sum; `random` or
 * `seed` given; resamples a positive integer; 0 < level < 1.
 *
 * @throws {Error} "countsBootstrapCI: ..." for bad counts or options
 * @example
 * countsBootstrapCI({ counts: [30, 70], statistic: (w) => w[1] / (w[0] + w[1]), seed: 1 }).ci; // => about [0.61, 0.79]
 */
export function countsBootstrapCI(options: CountsBootstrapOptions): CountsBootstrapResult {
  return countsBootstrapCIs({ ...options, statistics: [options.statistic] })[0];
}

/**
 * {@link countsBootstrapCI} of several statistics on the same resamples (one set of draws):
 * result k is exactly what countsBootstrapCI gives for `statistics[k]` with the same seed.
 * On the full data and on each resample the statistics are called in order, 0 first, on
 * the same weights (so a later one may reuse what the first computed from them).
 *
 * @throws {Error} "countsBootstrapCI: ..." for bad counts or options
 */
export function countsBootstrapCIs(
  options: Omit<CountsBootstrapOptions, "statistic"> & { statistics: ((weights: Float64Array) => number)[] },
): CountsBootstrapResult[] {
  const fn = "countsBootstrapCI";
  const { counts, statistics, patternOfUnit } = options;
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  const limit = options.rowDrawLimit ?? 20_000_000;
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new Error(`${fn}: resamples must be a positive integer, got ${String(resamples)}`);
  if (!(level > 0 && level < 1)) throw new Error(`${fn}: level must be in (0, 1), got ${String(level)}`);
  const P = counts.length;
  let N = 0;
  for (let i = 0; i < P; i++) {
    const c = counts[i];
    if (!Number.isInteger(c) || c < 0) throw new Error(`${fn}: counts must be non-negative integers (entry ${i} is ${String(c)})`);
    N += c;
  }
  if (N === 0) throw new Error(`${fn}: there are no units`);
  let random = options.random;
  if (random === undefined) {
    if (typeof options.seed !== "number" || !Number.isFinite(options.seed))
      throw new Error(`${fn}: pass a seeded generator (random) or a finite seed`);
    random = seededRandom(options.seed);
  }
  const base = Float64Array.from(counts);
  const S = statistics.length;
  const estimates = statistics.map((f) => f(base));
  const rowDraws = patternOfUnit !== undefined && N * resamples <= limit;
  if (patternOfUnit !== undefined && patternOfUnit.length !== N)
    throw new Error(`${fn}: patternOfUnit has ${patternOfUnit.length} units, counts sum to ${N}`);
  const w = new Float64Array(P);
  const values = statistics.map(() => new Float64Array(resamples));
  const finite = new Array<number>(S).fill(0);
  for (let b = 0; b < resamples; b++) {
    if (rowDraws) {
      w.fill(0);
      for (let i = 0; i < N; i++) w[patternOfUnit![Math.floor(random() * N)]]++;
    } else multinomialSample(N, base, random, w);
    for (let k = 0; k < S; k++) {
      const v = statistics[k](w);
      if (Number.isFinite(v)) values[k][finite[k]++] = v;
    }
  }
  const draws: CountsBootstrapResult["draws"] = rowDraws ? "units" : "multinomial";
  const method = options.method ?? "percentile";
  if (method !== "percentile" && method !== "bca") throw new Error(`${fn}: method must be "percentile" or "bca", got ${String(method)}`);
  const accel = method === "bca" ? jackknifeAcceleration(base, statistics) : null;
  return statistics.map((_, k): CountsBootstrapResult => {
    const estimate = estimates[k];
    const m = finite[k];
    const undefinedResamples = resamples - m;
    const none = {
      estimate,
      ci: [NaN, NaN] as Interval,
      se: NaN,
      resamples,
      undefinedResamples,
      clusters: N,
      draws,
      method,
      z0: NaN,
      acceleration: NaN,
      percentileCI: [NaN, NaN] as Interval,
    };
    if (m === 0) return none;
    const sorted = values[k].subarray(0, m).sort();
    const alpha = 1 - level;
    let mean = 0;
    for (let i = 0; i < m; i++) mean += sorted[i];
    mean /= m;
    let ss = 0;
    for (let i = 0; i < m; i++) ss += (sorted[i] - mean) ** 2;
    const se = m > 1 ? Math.sqrt(ss / (m - 1)) : NaN;
    const percentileCI: Interval = [quantileSorted(sorted, alpha / 2, 6), quantileSorted(sorted, 1 - alpha / 2, 6)];
    if (accel === null) return { ...none, ci: percentileCI, se, percentileCI };
    if (!Number.isFinite(estimate)) return { ...none, se, percentileCI };
    // ẑ0 from the share of resamples below the estimate, ties counted half.
    // A resample that equals the estimate up to rounding (the same value reached through other counts) is a tie.
    const tol = 1e-12 * Math.max(1, Math.abs(estimate));
    let below = 0;
    let ties = 0;
    for (let i = 0; i < m; i++) {
      if (sorted[i] < estimate - tol) below++;
      else if (sorted[i] <= estimate + tol) ties++;
    }
    const p0 = Math.min(1 - 0.5 / m, Math.max(0.5 / m, (below + ties / 2) / m));
    const z0 = normalQuantile(p0);
    const a = accel[k];
    const adjusted = (p: number, lower: boolean) => {
      const zq = normalQuantile(p);
      const d = 1 - a * (z0 + zq);
      // â·(ẑ0 + z) ≥ 1 would fold the limit to the wrong side: take the extreme order statistic.
      if (!(d > 0)) return lower ? 0 : 1;
      return normalCDF(z0 + (z0 + zq) / d);
    };
    const ci: Interval = [quantileSorted(sorted, adjusted(alpha / 2, true), 6), quantileSorted(sorted, adjusted(1 - alpha / 2, false), 6)];
    return { ...none, ci, se, z0, acceleration: a, percentileCI };
  });
}

/**
 * The jackknife acceleration â of each statistic (Efron & Tibshirani 1993, eq. 14.15)
 * from the units per pattern: leaving out one unit of pattern p gives the same θ_(p)
 * for each of its c_p units. 0 when the jackknife values do not vary (or fewer than two are defined).
 */
function jackknifeAcceleration(base: Float64Array, statistics: ((weights: Float64Array) => number)[]): number[] {
  const P = base.length;
  const S = statistics.length;
  const jack = new Float64Array(P * S);
  for (let p = 0; p < P; p++) {
    if (base[p] < 1) continue;
    base[p] -= 1;
    for (let k = 0; k < S; k++) jack[p * S + k] = statistics[k](base);
    base[p] += 1;
  }
  return statistics.map((_, k) => {
    let n = 0;
    let sum = 0;
    for (let p = 0; p < P; p++) {
      const v = jack[p * S + k];
      if (base[p] < 1 || !Number.isFinite(v)) continue;
      n += base[p];
      sum += base[p] * v;
    }
    if (n < 2) return 0;
    const mean = sum / n;
    let s2 = 0;
    let s3 = 0;
    for (let p = 0; p < P; p++) {
      const v = jack[p * S + k];
      if (base[p] < 1 || !Number.isFinite(v)) continue;
      const d = mean - v;
      s2 += base[p] * d * d;
      s3 += base[p] * d * d * d;
    }
    return s2 > 0 ? s3 / (6 * s2 ** 1.5) : 0;
  });
}
