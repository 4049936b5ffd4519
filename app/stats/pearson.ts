import { normalQuantile } from "./normalQuantile";
import { pairedNumbers } from "./pairedNumbers";
import type { Interval, NumericRating } from "./types";

/**
 * Pearson's product-moment correlation r with a Fisher-z confidence interval.
 *
 * Definition: r = Σ(x - x̄)(y - ȳ) / √(Σ(x - x̄)² Σ(y - ȳ)²).
 * CI: z = atanh(r), se = 1/√(n - 3), [tanh(z - z_{α/2}·se), tanh(z + z_{α/2}·se)]
 * — the same interval as `scipy.stats.pearsonr(x, y).confidence_interval(0.95)`.
 *
 * References: K. Pearson (1895); R. A. Fisher (1915, 1921) on the z transform.
 *
 * Preconditions: equal lengths; values finite numbers; pairs with a missing
 * value are dropped. r is NaN when n < 2 or either variable is constant; the CI
 * is [NaN, NaN] when n < 4 would make it undefined (n ≤ 2) — at n = 3 it is [-1, 1].
 *
 * @throws {Error} "pearson: ..." for a length mismatch or non-finite/non-numeric values
 * @example
 * pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]).r; // => 0.8
 */
export function pearson(
  x: ArrayLike<NumericRating>,
  y: ArrayLike<NumericRating>,
  options: { level?: number } = {},
): { r: number; ci: Interval; n: number } {
  const fn = "pearson";
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new Error(`${fn}: level must be in (0, 1), got ${String(level)}`);
  const p = pairedNumbers(fn, x, y);
  const n = p.x.length;
  const r = correlation(p.x, p.y);
  if (!Number.isFinite(r) || n < 3) return { r, ci: [NaN, NaN], n };
  const z = Math.atanh(r);
  const se = 1 / Math.sqrt(n - 3);
  const q = normalQuantile(1 - (1 - level) / 2);
  return { r, ci: [Math.tanh(z - q * se), Math.tanh(z + q * se)], n };
}

/** r of two complete Float64Arrays (two-pass, centred; clipped to [-1, 1]). */
function correlation(x: Float64Array, y: Float64Array): number {
  const n = x.length;
  if (n < 2) return NaN;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i] - mx;
    const dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return NaN;
  const r = sxy / Math.sqrt(sxx * syy);
  return Math.max(-1, Math.min(1, r));
}
