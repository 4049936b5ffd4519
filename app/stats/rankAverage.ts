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
  // value the average of the ranks its tie group occupies.
  const sorted = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v !== "number" || Number.isNaN(v)) throw new Error(`rankAverage: values[${i}] is not a number (${String(v)})`);
    sorted[i] = v;
  }
  sorted.sort();
  // The distinct values and the average rank of each: a value's tie group runs from
  // lo = #{x_j < x} to hi = #{x_j <= x}, so its rank is (lo + 1 + hi) / 2.
  const distinct = new Float64Array(n);
  const rankOf = new Float64Array(n);
  let d = 0;
  for (let i = 0; i < n;) {
    let j = i + 1;
    while (j < n && sorted[j] === sorted[i]) j++;
    distinct[d] = sorted[i];
    rankOf[d++] = (i + 1 + j) / 2;
    i = j;
  }
  // Each value's rank by binary search over the distinct values (few of them for labels and scores).
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
    let hi = d - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    lastValue = v;
    lastRank = ranks[i] = rankOf[lo];
  }
  return ranks;
}
