/**
 * Ranks 1..n with ties given their average rank ("fractional ranking").
 *
 * Definition: rank(x_i) = 1 + #{j : x_j < x_i} + (#{j : x_j = x_i} - 1)/2.
 * Equals `scipy.stats.rankdata(x, method="average")` and R `rank(x)`.
 *
 * Reference: M. G. Kendall (1948) Rank Correlation Methods, ch. 3 (tied ranks).
 *
 * Preconditions: values are finite numbers (NaN would have no order).
 *
 * @throws {Error} "rankAverage: ..." for NaN or non-numeric values
 * @example
 * Array.from(rankAverage([10, 20, 10, 30])); // => [1.5, 3, 1.5, 4]
 */
export function rankAverage(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  // Sort a copy of the values (a numeric typed-array sort, no comparator), then give each
  // value the average of the ranks its tie group occupies: with lo = #{x_j < x} and
  // hi = #{x_j <= x}, found by binary search, rank = (lo + 1 + hi) / 2.
  const sorted = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v !== "number" || Number.isNaN(v)) throw new Error(`rankAverage: values[${i}] is not a number (${String(v)})`);
    sorted[i] = v;
  }
  sorted.sort();
  const ranks = new Float64Array(n);
  let lastValue = NaN;
  let lastRank = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === lastValue) {
      ranks[i] = lastRank;
      continue;
    }
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    let end = lo;
    hi = n;
    while (end < hi) {
      const mid = (end + hi) >>> 1;
      if (sorted[mid] <= v) end = mid + 1;
      else hi = mid;
    }
    lastValue = v;
    lastRank = ranks[i] = (lo + 1 + end) / 2;
  }
  return ranks;
}
