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
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v !== "number" || Number.isNaN(v)) throw new Error(`rankAverage: values[${i}] is not a number (${String(v)})`);
    order[i] = i;
  }
  order.sort((a, b) => values[a] - values[b] || a - b);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i + 1;
    while (j < n && values[order[j]] === values[order[i]]) j++;
    const r = (i + 1 + j) / 2; // average of ranks i+1..j
    for (let k = i; k < j; k++) ranks[order[k]] = r;
    i = j;
  }
  return ranks;
}
