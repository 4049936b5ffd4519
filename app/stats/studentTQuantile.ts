import { normalQuantile } from "./normalQuantile";

/**
 * Quantile function of Student's t distribution with an integer number of degrees
 * of freedom: the t with P(T ≤ t) = p.
 *
 * Definition: for integer ν the two-sided probability A(t | ν) = P(|T| ≤ t) has a
 * finite series in θ = atan(t/√ν) (Abramowitz & Stegun 1964, 26.7.3-26.7.4):
 *   ν odd:  A = (2/π)[θ + sin θ (cos θ + (2/3) cos³θ + … + (2·4⋯(ν−3))/(1·3⋯(ν−2)) cos^{ν−2}θ)]  (ν = 1: 2θ/π),
 *   ν even: A = sin θ [1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + … + (1·3⋯(ν−3))/(2·4⋯(ν−2)) cos^{ν−2}θ],
 * and P(T ≤ t) = (1 + A)/2 for t ≥ 0. The quantile is found by bisection on θ ∈ [0, π/2)
 * (A is increasing in θ) to full double precision. Above 1,000 degrees of freedom the
 * Cornish-Fisher expansion (A&S 26.7.5) is used; its error there is below 1e-12.
 *
 * Reference: M. Abramowitz & I. A. Stegun (1964) Handbook of Mathematical Functions, §26.7.
 *
 * Preconditions: 0 < p < 1; df a positive integer.
 *
 * @throws {Error} "studentTQuantile: ..." for p outside (0, 1) or a df that is not a positive integer
 * @example
 * studentTQuantile(0.975, 29); // => 2.045229642132703 (scipy.stats.t.ppf(0.975, 29) = 2.045229642132703)
 */
export function studentTQuantile(p: number, df: number): number {
  if (typeof p !== "number" || !(p > 0 && p < 1)) throw new Error(`studentTQuantile: p must be in (0, 1), got ${String(p)}`);
  if (!Number.isInteger(df) || df < 1) throw new Error(`studentTQuantile: df must be a positive integer, got ${String(df)}`);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  if (p === 0.5) return 0;
  if (df > 1000) return cornishFisher(p, df);
  const target = 2 * p - 1; // A(t | ν)
  let lo = 0;
  let hi = Math.PI / 2;
  for (let i = 0; i < 200 && hi - lo > 1e-17; i++) {
    const mid = (lo + hi) / 2;
    if (twoSided(mid, df) < target) lo = mid;
    else hi = mid;
  }
  const theta = (lo + hi) / 2;
  return Math.sqrt(df) * Math.tan(theta);
}

/** A(t | ν) of A&S 26.7.3-26.7.4 at θ = atan(t/√ν). */
function twoSided(theta: number, df: number): number {
  const s = Math.sin(theta);
  const c = Math.cos(theta);
  const c2 = c * c;
  if (df % 2 === 1) {
    if (df === 1) return (2 * theta) / Math.PI;
    let term = c;
    let sum = c;
    for (let k = 3; k <= df - 2; k += 2) {
      term *= (c2 * (k - 1)) / k;
      sum += term;
    }
    return (2 / Math.PI) * (theta + s * sum);
  }
  let term = 1;
  let sum = 1;
  for (let k = 2; k <= df - 2; k += 2) {
    term *= (c2 * (k - 1)) / k;
    sum += term;
  }
  return s * sum;
}

/** A&S 26.7.5: t ≈ z + g1/ν + g2/ν² + g3/ν³ + g4/ν⁴. */
function cornishFisher(p: number, df: number): number {
  const z = normalQuantile(p);
  const z2 = z * z;
  const g1 = (z * (z2 + 1)) / 4;
  const g2 = (z * ((5 * z2 + 16) * z2 + 3)) / 96;
  const g3 = (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
  const g4 = (z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}
