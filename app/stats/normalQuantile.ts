import { normalCDF } from "./normalCDF";

/**
 * Quantile function (inverse CDF) of the standard normal distribution.
 *
 * Definition: the z with Φ(z) = p. Computed with Acklam's rational
 * approximation (relative error < 1.15e-9) followed by one Halley refinement
 * step using `erfc`, giving ~1e-15 accuracy — the same value as
 * `scipy.stats.norm.ppf(p)` to double precision for the p used here.
 *
 * Reference: P. J. Acklam, "An algorithm for computing the inverse normal
 * cumulative distribution function" (2003); W. J. Cody (1969) for erfc.
 *
 * Preconditions: 0 < p < 1 (p = 0 gives -Infinity, p = 1 gives Infinity).
 *
 * @throws {Error} "normalQuantile: ..." when p is not in [0, 1]
 * @example
 * normalQuantile(0.975); // => 1.9599639845400538 (scipy.stats.norm.ppf: 1.959963984540054)
 */
export function normalQuantile(p: number): number {
  if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
    throw new Error(`normalQuantile: p must be a probability in [0, 1], got ${String(p)}`);
  }
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const pLow = 0.02425;
  let x: number;
  if (p < pLow) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - pLow) {
    const q = p - 0.5;
    const r = q * q;
    x =
      ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
      (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step: e = Φ(x) - p.
  const e = normalCDF(x) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}
