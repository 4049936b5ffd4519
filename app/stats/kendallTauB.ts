import { pairedNumbers } from "./pairedNumbers";
import type { NumericRating } from "./types";

/**
 * Kendall's tau-b rank correlation, adjusted for ties, in O(n log n).
 *
 * Definition: with n0 = n(n-1)/2 pairs, n1 = Σ t_i(t_i-1)/2 over tie groups in
 * x, n2 the same for y, and nc/nd the concordant/discordant pairs,
 *   tau_b = (nc - nd) / √((n0 - n1)(n0 - n2)).
 * Computed with Knight's algorithm (sort by x then y, count joint ties, count
 * discordances by merge-sort exchanges). Equals
 * `scipy.stats.kendalltau(x, y, variant="b").statistic`.
 *
 * References: M. G. Kendall (1945) "The treatment of ties in ranking
 * problems", Biometrika 33(3); W. R. Knight (1966) JASA 61(314), 436-439.
 *
 * Preconditions: equal lengths; finite numbers; pairs with a missing value are
 * dropped. NaN when n < 2 or either variable is constant.
 *
 * @throws {Error} "kendallTauB: ..." for a length mismatch or non-finite/non-numeric values
 * @example
 * kendallTauB([1, 2, 3, 4, 5], [3, 1, 2, 5, 4]).tau; // => 0.4
 */
export function kendallTauB(x: ArrayLike<NumericRating>, y: ArrayLike<NumericRating>): { tau: number; n: number } {
  const p = pairedNumbers("kendallTauB", x, y);
  const n = p.x.length;
  if (n < 2) return { tau: NaN, n };
  const xs = p.x;
  const ys = p.y;
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort((a, b) => xs[a] - xs[b] || ys[a] - ys[b]);
  // Ties in x (n1) and joint ties in (x, y) (n3).
  let n1 = 0;
  let n3 = 0;
  let runX = 1;
  let runXY = 1;
  for (let i = 1; i < n; i++) {
    const a = idx[i - 1];
    const b = idx[i];
    if (xs[a] === xs[b]) {
      runX++;
      if (ys[a] === ys[b]) runXY++;
      else {
        n3 += (runXY * (runXY - 1)) / 2;
        runXY = 1;
      }
    } else {
      n1 += (runX * (runX - 1)) / 2;
      n3 += (runXY * (runXY - 1)) / 2;
      runX = 1;
      runXY = 1;
    }
  }
  n1 += (runX * (runX - 1)) / 2;
  n3 += (runXY * (runXY - 1)) / 2;
  // Merge sort on y counting exchanges (discordant pairs, ties in x excluded by the secondary key).
  let arr = new Float64Array(n);
  for (let i = 0; i < n; i++) arr[i] = ys[idx[i]];
  let buf = new Float64Array(n);
  let swaps = 0;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        if (arr[j] < arr[i]) {
          buf[k++] = arr[j++];
          swaps += mid - i;
        } else buf[k++] = arr[i++];
      }
      while (i < mid) buf[k++] = arr[i++];
      while (j < hi) buf[k++] = arr[j++];
    }
    const t = arr;
    arr = buf;
    buf = t;
  }
  // Ties in y (n2), from the sorted y values.
  let n2 = 0;
  let runY = 1;
  for (let i = 1; i < n; i++) {
    if (arr[i] === arr[i - 1]) runY++;
    else {
      n2 += (runY * (runY - 1)) / 2;
      runY = 1;
    }
  }
  n2 += (runY * (runY - 1)) / 2;
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - n1) * (n0 - n2));
  if (!(denom > 0)) return { tau: NaN, n };
  const tau = (n0 - n1 - n2 + n3 - 2 * swaps) / denom;
  return { tau: Math.max(-1, Math.min(1, tau)), n };
}
