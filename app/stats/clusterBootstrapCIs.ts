import { quantileSorted } from "./quantileSorted";
import { seededRandom } from "./seededRandom";
import type { Interval } from "./types";

/** Options of {@link clusterBootstrapCIs}. */
export interface ClusterBootstrapOptions {
  /** Number of clusters G (e.g. instructions, prompts): the resampling units. */
  clusters: number;
  /**
   * The statistics of a resample. Each receives the resample as multiplicities: w[c] = how many
   * times cluster c was drawn (Σ w = G). All share the same draws, and are called in order.
   */
  statistics: ((w: Int32Array) => number)[];
  /** Number of resamples (default 1000). */
  resamples?: number;
  /** Seed of seededRandom (mulberry32). */
  seed: number;
  /** Confidence level (default 0.95). */
  level?: number;
}

/** One statistic's result of {@link clusterBootstrapCIs}. */
export interface ClusterBootstrapResult {
  /** The statistic on the data (every cluster once). */
  estimate: number;
  /** Percentile interval (type-6 quantiles of the finite resample values); [NaN, NaN] if none is finite. */
  ci: Interval;
  /** Standard deviation (B − 1) of the finite resample values. */
  se: number;
  /** Resamples whose statistic was not finite (e.g. no pair in the resample); left out of ci and se. */
  undefinedResamples: number;
}

/**
 * Seeded percentile cluster bootstrap of several statistics at once: clusters are drawn with
 * replacement, G draws per resample, and every statistic is recomputed on the resampled clusters
 * (a cluster drawn twice counts twice). Observations of one cluster move together, which keeps
 * their dependence (two responses to one instruction share it; pairs formed within an
 * instruction share their responses): Davison & Hinkley (1997) §3.8; Field & Welsh (2007).
 *
 * Draws: for each resample b = 1..B, for i = 1..G, cluster ⌊U·G⌋ with U the next value of
 * seededRandom(seed) — the draw order of bootstrapCI with `cluster`, so a bootstrap written
 * out by hand with the same generator draws the same clusters. The interval's limits are the
 * (B+1)α/2-th and (B+1)(1−α/2)-th order statistics (Hyndman & Fan type 6), as bootstrapCI.
 *
 * References: B. Efron & R. J. Tibshirani (1993) An Introduction to the Bootstrap, ch. 13;
 * A. C. Davison & D. V. Hinkley (1997) Bootstrap Methods and their Application, §3.8 and §5.2;
 * C. A. Field & A. H. Welsh (2007) "Bootstrapping clustered data", JRSS B 69(3), 369–390.
 *
 * Preconditions: clusters a positive integer; at least one statistic; resamples a positive
 * integer; 0 < level < 1; seed a finite number.
 *
 * @throws {Error} "clusterBootstrapCIs: ..." for a bad option
 * @example
 * // The mean of three clusters' values 1, 2, 6, weighted by their draws:
 * const v = [1, 2, 6];
 * clusterBootstrapCIs({ clusters: 3, seed: 1, statistics: [(w) => (w[0] * v[0] + w[1] * v[1] + w[2] * v[2]) / 3] })[0].estimate; // => 3
 */
export function clusterBootstrapCIs(options: ClusterBootstrapOptions): ClusterBootstrapResult[] {
  const fn = "clusterBootstrapCIs";
  if (options == null || typeof options !== "object") throw new Error(`${fn}: options object required`);
  const G = options.clusters;
  const B = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  if (!Number.isInteger(G) || G < 1) throw new Error(`${fn}: clusters must be a positive integer, got ${String(G)}`);
  if (!Array.isArray(options.statistics) || options.statistics.length === 0) throw new Error(`${fn}: give at least one statistic`);
  if (!Number.isInteger(B) || B < 1) throw new Error(`${fn}: resamples must be a positive integer, got ${String(B)}`);
  if (!(level > 0 && level < 1)) throw new Error(`${fn}: level must be in (0, 1), got ${String(level)}`);
  if (typeof options.seed !== "number" || !Number.isFinite(options.seed)) throw new Error(`${fn}: seed must be a finite number`);
  const random = seededRandom(options.seed);
  const stats = options.statistics;
  const ones = new Int32Array(G).fill(1);
  const estimates = stats.map((s) => s(ones));
  const values = stats.map(() => new Float64Array(B));
  const finite = new Int32Array(stats.length);
  const w = new Int32Array(G);
  for (let b = 0; b < B; b++) {
    w.fill(0);
    for (let i = 0; i < G; i++) w[Math.floor(random() * G)]++;
    for (let k = 0; k < stats.length; k++) {
      const v = stats[k](w);
      if (Number.isFinite(v)) values[k][finite[k]++] = v;
    }
  }
  const alpha = 1 - level;
  return stats.map((_, k) => {
    const m = finite[k];
    if (m === 0) return { estimate: estimates[k], ci: [NaN, NaN], se: NaN, undefinedResamples: B };
    const sorted = values[k].subarray(0, m).sort();
    let mean = 0;
    for (let i = 0; i < m; i++) mean += sorted[i];
    mean /= m;
    let ss = 0;
    for (let i = 0; i < m; i++) ss += (sorted[i] - mean) ** 2;
    return {
      estimate: estimates[k],
      ci: [quantileSorted(sorted, alpha / 2, 6), quantileSorted(sorted, 1 - alpha / 2, 6)],
      se: m > 1 ? Math.sqrt(ss / (m - 1)) : NaN,
      undefinedResamples: B - m,
    };
  });
}
