import { multinomialSample } from "./binomialSample";
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
}

/** Result of {@link countsBootstrapCI}: as bootstrapCI's, and how the units were drawn. */
export interface CountsBootstrapResult extends BootstrapResult {
  draws: "units" | "multinomial";
}

/**
 * Seeded percentile bootstrap over units whose statistic depends only on how many
 * units show each distinct pattern.
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
 * References: B. Efron & R. J. Tibshirani (1993) An Introduction to the Bootstrap,
 * ch. 13; A. C. Davison & D. V. Hinkley (1997) Bootstrap Methods and their
 * Application, §2.3, §5.2.
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
  const draws = rowDraws ? "units" : "multinomial";
  return statistics.map((_, k): CountsBootstrapResult => {
    const estimate = estimates[k];
    const m = finite[k];
    const undefinedResamples = resamples - m;
    if (m === 0) return { estimate, ci: [NaN, NaN], se: NaN, resamples, undefinedResamples, clusters: N, draws };
    const sorted = values[k].subarray(0, m).sort();
    const alpha = 1 - level;
    let mean = 0;
    for (let i = 0; i < m; i++) mean += sorted[i];
    mean /= m;
    let ss = 0;
    for (let i = 0; i < m; i++) ss += (sorted[i] - mean) ** 2;
    const ci: Interval = [quantileSorted(sorted, alpha / 2, 6), quantileSorted(sorted, 1 - alpha / 2, 6)];
    return { estimate, ci, se: m > 1 ? Math.sqrt(ss / (m - 1)) : NaN, resamples, undefinedResamples, clusters: N, draws };
  });
}
