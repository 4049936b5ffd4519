import type { CountsBootstrapResult } from "./countsBootstrapCI";
import { expandedLevel } from "./expandedLevel";
import type { Interval } from "./types";

/**
 * Units (with two or more ratings) below which an agreement coefficient's default
 * interval is the expanded BCa bootstrap rather than its large-sample interval.
 * Measured by `npm run bench:coverage` (designs A–D of issue 36, 1,000 replicates):
 * the analytic intervals (value ± 1.96·SE) of Cohen's, weighted, Fleiss' and pooled
 * kappa and Krippendorff's alpha cover 0.89–0.92 at 30–60 units and still 0.92–0.93 at
 * 100–150 units when one category has 93% prevalence (design C); from 200 units 0.94,
 * and from 300 units at least 0.936 in every design. Below 300 units the expanded BCa
 * covers at least 0.936 in every design from 60 units (scan at 60–250 units).
 */
export const SMALL_SAMPLE_UNITS = 300;

/**
 * Units (with two or more ratings) below which even the default interval is rough,
 * and the command line and the report pages say so. Measured by the coverage
 * benchmark's scan by size (`npm run bench:coverage -- --scan`, 1,000 replicates):
 * with a category of 7% prevalence and four raters (design C) the default intervals of
 * Fleiss' and pooled kappa and Krippendorff's alpha cover 0.85 at 30 units, 0.92–0.93
 * at 45–50 and 0.94 at 55, 0.95 from 60; with 10% prevalence and two raters (design A)
 * 0.92 at 30 units, 0.95 from 40; designs B and D cover at least 0.93 from 10 units.
 */
export const ROUGH_INTERVAL_UNITS = 60;

/** Bootstrap resamples of the default intervals (BCa wants B ≥ 1,000 for stable limits; Efron & Tibshirani 1993, ch. 14). */
export const AGREEMENT_RESAMPLES = 2000;

/** How an agreement coefficient's default interval is computed. */
export type AgreementIntervalMethod = "analytic" | "percentile" | "bca";

/** Result of {@link agreementInterval}. */
export interface AgreementInterval {
  /** The interval; [NaN, NaN] when none could be computed. */
  ci: Interval;
  /** The analytic SE, or the bootstrap SD of the resample statistics. */
  se: number;
  method: AgreementIntervalMethod;
  /** The confidence level the bootstrap's limits were read at (the expanded level for BCa; 0.95 otherwise). */
  level: number;
  /** The bootstrap that gave the interval (percentile or BCa), or null for the analytic one. */
  bootstrap: CountsBootstrapResult | null;
}

/**
 * Which interval an agreement coefficient gets by default: below
 * {@link SMALL_SAMPLE_UNITS} units the BCa bootstrap with the small-sample
 * expansion of {@link expandedLevel}, else the large-sample interval — value ± z·SE
 * when the coefficient has an analytic SE, the percentile bootstrap when it has none.
 *
 * Why: value ± 1.96·SE assumes a symmetric, normal sampling distribution and a known
 * SE; with few units (or one category dominating) kappa-type coefficients are skewed
 * and their linearised SE is itself noisy, so the interval misses more than 5% of the
 * time, mostly on one side. BCa corrects the median bias (ẑ0) and the skewness (â)
 * and is second-order accurate (Efron & Tibshirani 1993, §14.3; DiCiccio &
 * Efron 1996); the expansion makes up for the bootstrap's narrowness in small samples
 * (Hesterberg 2015).
 *
 * @example
 * defaultIntervalMethod(50, true); // => "bca"
 * defaultIntervalMethod(500, true); // => "analytic"
 * defaultIntervalMethod(500, false); // => "percentile"
 */
export function defaultIntervalMethod(units: number, hasAnalyticSE: boolean): AgreementIntervalMethod {
  if (units < SMALL_SAMPLE_UNITS) return "bca";
  return hasAnalyticSE ? "analytic" : "percentile";
}

/**
 * The default interval of an agreement coefficient — the one rule the command line
 * (`npm run agreement`) and the report pages share (see {@link defaultIntervalMethod}).
 *
 * `analytic` is the coefficient's large-sample interval from its analytic SE (value ±
 * z·SE as the caller computes it; omit it, or give a NaN SE, when there is none).
 * `bootstrap(method, level)` runs the caller's seeded bootstrap over its resampling
 * units (units, or item clusters) with that method and confidence level; it is called
 * only when a bootstrap is the interval. Intervals are returned unclipped: callers
 * clip to the coefficient's range and say so. Fewer than two units: no interval.
 *
 * Preconditions: `units` counts the resampling units that carry pairs of ratings
 * (units with two or more ratings, or their item clusters when items are resampled).
 *
 * @example
 * agreementInterval({ units: 400, analytic: { se: 0.1, ci: [0.304, 0.696] }, bootstrap: () => { throw new Error("not run"); } }).method;
 * // => "analytic"
 */
export function agreementInterval(opts: {
  units: number;
  analytic?: { se: number; ci: Interval } | null;
  bootstrap: (method: "percentile" | "bca", level: number) => CountsBootstrapResult;
}): AgreementInterval {
  const a = opts.analytic ?? null;
  const method = defaultIntervalMethod(opts.units, a !== null && Number.isFinite(a.se));
  if (method === "analytic") return { ci: a!.ci, se: a!.se, method, level: 0.95, bootstrap: null };
  if (!(opts.units >= 2)) return { ci: [NaN, NaN], se: NaN, method, level: 0.95, bootstrap: null };
  const level = method === "bca" ? expandedLevel(Math.round(opts.units)) : 0.95;
  const b = opts.bootstrap(method, level);
  return { ci: b.ci, se: b.se, method, level, bootstrap: b };
}
