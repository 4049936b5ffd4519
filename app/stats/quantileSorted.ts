/**
 * The p-quantile of an ascending-sorted sample by linear interpolation between
 * order statistics (Hyndman & Fan 1996 definition 7; the default of R
 * `quantile()` and `numpy.percentile`).
 *
 * Definition: h = (n - 1)·p; Q = x[⌊h⌋] + (h - ⌊h⌋)·(x[⌊h⌋+1] - x[⌊h⌋]).
 *
 * Reference: R. J. Hyndman & Y. Fan (1996) "Sample quantiles in statistical
 * packages", The American Statistician 50(4).
 *
 * Preconditions: `sorted` is non-empty, ascending, without NaN; 0 ≤ p ≤ 1.
 *
 * @throws {Error} "quantileSorted: ..." for an empty sample or p outside [0, 1]
 * @example
 * quantileSorted([1, 2, 3, 4], 0.25); // => 1.75 (numpy.percentile([1,2,3,4], 25) = 1.75)
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) throw new Error("quantileSorted: the sample is empty");
  if (typeof p !== "number" || !(p >= 0 && p <= 1)) throw new Error(`quantileSorted: p must be in [0, 1], got ${String(p)}`);
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}
