/**
 * The sum of `xs` in ascending order, so that the same values give the same
 * last digit whatever order the database returned them in (floating-point
 * addition is not associative: 1/3 + 2/3 + 1 and 1 + 2/3 + 1/3 can differ in
 * the last bit). Run figures are compared across SQLite and PostgreSQL and
 * across worker counts; a mean must not depend on which worker stored first.
 *
 * @example
 * orderFreeSum([0.1, 0.7, 0.2]) === orderFreeSum([0.7, 0.2, 0.1]); // true
 */
export function orderFreeSum(xs: readonly number[]): number {
  const sorted = Float64Array.from(xs).sort();
  let s = 0;
  for (const x of sorted) s += x;
  return s;
}

/** The mean of `xs` through {@link orderFreeSum}; NaN for no values. */
export function orderFreeMean(xs: readonly number[]): number {
  return xs.length ? orderFreeSum(xs) / xs.length : NaN;
}
