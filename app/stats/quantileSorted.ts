/**
 * The p-quantile of an ascending-sorted sample by linear interpolation between
 * order statistics, Hyndman & Fan (1996) definition 7 (default; R `quantile()`
 * and `numpy.percentile` default) or definition 6.
 *
 * Definition (1-based order statistics x_(1) ≤ … ≤ x_(n)):
 * - type 7: h = (n - 1)·p + 1;
 * - type 6: h = (n + 1)·p (numpy `method="weibull"`; the (B+1)α-th order
 *   statistic that Davison & Hinkley (1997, §5.2) use for bootstrap percentile
 *   limits: E[F(x_(k))] = k/(n+1), so the limits are not biased inwards when
 *   the number of resamples is modest);
 * Q = x_(⌊h⌋) + (h - ⌊h⌋)·(x_(⌊h⌋+1) - x_(⌊h⌋)), with h clamped to [1, n].
 *
 * Reference: R. J. Hyndman & Y. Fan (1996) "Sample quantiles in statistical
 * packages", The American Statistician 50(4), 361-365.
 *
 * Preconditions: `sorted` is non-empty, ascending, without NaN; 0 ≤ p ≤ 1.
 *
 * @throws {Error} "quantileSorted: ..." for an empty sample, p outside [0, 1] or an unknown type
 * @example
 * quantileSorted([1, 2, 3, 4], 0.25); // => 1.75 (numpy.percentile([1,2,3,4], 25) = 1.75)
 * quantileSorted([1, 2, 3, 4], 0.25, 6); // => 1.25 (numpy.percentile([1,2,3,4], 25, method="weibull") = 1.25)
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number, type: 6 | 7 = 7): number {
  const n = sorted.length;
  if (n === 0) throw new Error("quantileSorted: the sample is empty");
  if (typeof p !== "number" || !(p >= 0 && p <= 1)) throw new Error(`quantileSorted: p must be in [0, 1], got ${String(p)}`);
  if (type !== 6 && type !== 7) throw new Error(`quantileSorted: type must be 6 or 7, got ${String(type)}`);
  let h = type === 7 ? (n - 1) * p + 1 : (n + 1) * p;
  if (h < 1) h = 1;
  if (h > n) h = n;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n);
  return sorted[lo - 1] + (h - lo) * (sorted[hi - 1] - sorted[lo - 1]);
}
