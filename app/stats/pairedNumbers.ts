import type { NumericRating } from "./types";

/**
 * The complete numeric pairs of two equal-length columns, as Float64Arrays:
 * pairs where either value is missing (null/undefined) are dropped.
 *
 * Definition: {(x_i, y_i) : x_i and y_i both present}, order preserved.
 * Reference: pairwise deletion ("complete observations"), as in R
 * `cor(x, y, use = "complete.obs")`.
 *
 * Preconditions: equal lengths; present values are finite numbers.
 *
 * @param fn name of the calling function, used to start error messages
 * @throws {Error} "<fn>: ..." for a length mismatch, a non-number, NaN or ±Infinity
 * @example
 * pairedNumbers("demo", [1, null, 3], [4, 5, 6]); // => { x: Float64Array [1, 3], y: Float64Array [4, 6] }
 */
export function pairedNumbers(fn: string, x: ArrayLike<NumericRating>, y: ArrayLike<NumericRating>): { x: Float64Array; y: Float64Array } {
  if (x == null || y == null || typeof x.length !== "number" || typeof y.length !== "number")
    throw new Error(`${fn}: x and y must be arrays`);
  if (x.length !== y.length) throw new Error(`${fn}: x and y must have the same length (got ${x.length} and ${y.length})`);
  const xs = new Float64Array(x.length);
  const ys = new Float64Array(x.length);
  let n = 0;
  for (let i = 0; i < x.length; i++) {
    const a = x[i];
    const b = y[i];
    check(fn, a, "x", i);
    check(fn, b, "y", i);
    if (a === null || a === undefined || b === null || b === undefined) continue;
    xs[n] = a;
    ys[n] = b;
    n++;
  }
  return { x: xs.subarray(0, n), y: ys.subarray(0, n) };
}

function check(fn: string, v: unknown, name: string, i: number): void {
  if (v === null || v === undefined) return;
  if (typeof v !== "number") throw new Error(`${fn}: ${name}[${i}] is not a number (${JSON.stringify(v)})`);
  if (!Number.isFinite(v)) throw new Error(`${fn}: ${name}[${i}] is not finite (${String(v)})`);
}
