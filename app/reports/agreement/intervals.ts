/** Interval helpers: estimates with their intervals (mean, Wilson proportion, bounded scale mean), the small-n threshold and the resample count. */
import { AGREEMENT_RESAMPLES, countsBootstrapCI, meanCI, wilsonCI } from "~/stats";
import { honestInterval, ZERO_SE } from "../honest";
import type { Estimate } from "../types";

export const Z95 = 1.96;
/** Label strings that usually mean "missing" when they arrive as labels (warned about). */
export const MISSING_LIKE = new Set(["", "NA", "N/A", "n/a", "na", "null", "NULL", "None", "none", "-", "NaN", "nan", "?"]);
/** Groups smaller than this are flagged as small n. */
export const SMALL_N = 30;

/**
 * Bootstrap resamples of the report pages: AGREEMENT_RESAMPLES (2,000) whatever the
 * size of the task, named beside every CI. Every report bootstrap draws item clusters
 * as counts of their distinct tables once the draws pass 200,000 (a multinomial draw
 * per resample, app/stats countsBootstrapCI), so 2,000 resamples cost little even for
 * thousands of units; fewer resamples made the limits of large tasks jitter (issue 36, item 10).
 */
export function resamplesFor(_rows: number): number {
  return AGREEMENT_RESAMPLES;
}

export const finite = (x: number) => Number.isFinite(x);

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
export function scaleMeanEstimate(
  values: ArrayLike<number>,
  lo: number,
  hi: number,
  seed: number,
  resamples = AGREEMENT_RESAMPLES,
): Estimate {
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
