import { normalCDF } from "./normalCDF";

/** What {@link planAssurance} plans for. */
export type AssurancePlan =
  /** An accuracy (a proportion p) with the Wilson score interval: n units. */
  | { kind: "proportion"; p: number }
  /** Pearson's r with the Fisher-z interval: n pairs. */
  | { kind: "pearson"; r: number }
  /**
   * A statistic whose SE scales as 1/√n (kappa; a consistency over groups): `sd1` = SE·√n now,
   * `df` = the degrees of freedom of the SE's estimate at n (n − 1 units, or G − 1 groups).
   */
  | { kind: "se"; sd1: number; df?: (n: number) => number };

/** Result of {@link planAssurance}. */
export interface AssuranceResult {
  /** Smallest n whose expected half-width is at most δ ("about ±δ on average": the interval is wider about half the time). */
  n: number;
  /** Smallest n with P(half-width ≤ δ) ≥ assurance. */
  nAssured: number;
  /** P(half-width ≤ δ) at `n`, and at `nAssured`. */
  probabilityAtN: number;
  probabilityAtAssured: number;
}

/** The 95% quantile the planners use (Z95 in app/reports/agreement/intervals.ts). */
const Z = 1.96;

/** Wilson score half-width at k successes of n (E. B. Wilson 1927). */
function wilsonHalf(k: number, n: number, z = Z): number {
  const p = k / n;
  return (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
}

/** P(Wilson half-width ≤ δ) when k ~ Binomial(n, p): the exact sum of the binomial probabilities. */
function proportionProbability(p: number, n: number, delta: number): number {
  if (p <= 0 || p >= 1) return wilsonHalf(p <= 0 ? 0 : n, n) <= delta ? 1 : 0;
  let logPmf = n * Math.log1p(-p);
  const odds = Math.log(p) - Math.log1p(-p);
  let total = 0;
  for (let k = 0; k <= n; k++) {
    if (wilsonHalf(k, n) <= delta) total += Math.exp(logPmf);
    logPmf += Math.log((n - k) / (k + 1)) + odds;
  }
  return Math.min(1, total);
}

/** Fisher-z half-width at r̂ with n pairs: (tanh(z + c) − tanh(z − c))/2, c = 1.96/√(n − 3). */
function fisherHalf(r: number, n: number): number {
  const z = Math.atanh(r);
  const c = Z / Math.sqrt(n - 3);
  return (Math.tanh(z + c) - Math.tanh(z - c)) / 2;
}

/**
 * P(Fisher-z half-width ≤ δ) at n pairs when atanh(r̂) ~ N(atanh r, 1/(n − 3)) (Fisher 1921): the
 * half-width falls as |r̂| grows, so it is ≤ δ exactly when |r̂| ≥ r*, the r̂ at which it equals δ.
 */
function pearsonProbability(r: number, n: number, delta: number): number {
  if (n <= 3) return 0;
  if (fisherHalf(0, n) <= delta) return 1;
  let lo = 0;
  let hi = 1 - 1e-15;
  if (fisherHalf(hi, n) > delta) return 0;
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (fisherHalf(mid, n) > delta) lo = mid;
    else hi = mid;
  }
  const a = Math.atanh(hi);
  const mu = Math.atanh(Math.max(-1 + 1e-15, Math.min(1 - 1e-15, r)));
  const s = Math.sqrt(n - 3);
  return 1 - normalCDF((a - mu) * s) + normalCDF((-a - mu) * s);
}

/**
 * P(1.96·ŝ ≤ δ) at n when ŝ² = s²·χ²_df/df, s = sd1/√n: the sampling distribution of an estimated
 * variance (exact for a mean of normal data; an approximation for kappa and for a consistency's
 * bootstrap SE), the χ² CDF by the Wilson–Hilferty cube-root normal approximation.
 */
function seProbability(sd1: number, n: number, delta: number, df: number): number {
  if (df < 1) return 0;
  const x = (df * (delta * delta * n)) / (Z * Z * sd1 * sd1);
  const t = Math.cbrt(x / df);
  const v = 2 / (9 * df);
  return normalCDF((t - (1 - v)) / Math.sqrt(v));
}

/**
 * Sample size for a 95% interval of half-width δ: the n at which the expected half-width is δ
 * (the usual plan: its interval is about ±δ on average, and wider about half the time), and the
 * n at which the half-width is ≤ δ with probability `assurance` (default 0.8) — Kupper & Hafner
 * (1989) and Beal (1989) on planning a CI's width with a tolerance probability.
 *
 * - proportion (Wilson score interval): n = ⌈1.96²·p(1−p)/δ²⌉; P exact, summed over Binomial(n, p).
 * - pearson (Fisher z): n = smallest n with half-width ≤ δ at r̂ = r; P from atanh(r̂) ~ N(atanh r, 1/(n−3)).
 * - se (kappa, consistency): n = ⌈(1.96·sd1/δ)²⌉; P from ŝ² ~ s²·χ²_df/df (Wilson & Hilferty 1931),
 *   df(n) = n − 1 by default.
 *
 * References: E. B. Wilson (1927); R. A. Fisher (1921); L. L. Kupper & K. B. Hafner (1989) "How
 * appropriate are popular sample size formulas?", Am. Stat. 43(2), 101–105; S. L. Beal (1989)
 * "Sample size determination for confidence intervals on the population mean and on the difference
 * between two population means", Biometrics 45(3), 969–977; E. B. Wilson & M. M. Hilferty (1931).
 *
 * Preconditions: 0 < δ < 1; 0 < assurance < 1; p in [0, 1]; r in (−1, 1); sd1 > 0.
 *
 * @throws {Error} "planAssurance: ..." for a bad δ, assurance or plan
 * @example
 * planAssurance({ kind: "proportion", p: 0.8 }, 0.05); // => { n: 246, nAssured: 263, probabilityAtN: 0.525…, … }
 */
export function planAssurance(plan: AssurancePlan, delta: number, assurance = 0.8): AssuranceResult {
  const fn = "planAssurance";
  if (!(delta > 0 && delta < 1)) throw new Error(`${fn}: delta must be in (0, 1), got ${String(delta)}`);
  if (!(assurance > 0 && assurance < 1)) throw new Error(`${fn}: assurance must be in (0, 1), got ${String(assurance)}`);
  let n: number;
  let prob: (n: number) => number;
  if (plan.kind === "proportion") {
    if (!(plan.p >= 0 && plan.p <= 1)) throw new Error(`${fn}: p must be in [0, 1], got ${String(plan.p)}`);
    n = Math.max(1, Math.ceil((Z * Z * plan.p * (1 - plan.p)) / (delta * delta)));
    prob = (m) => proportionProbability(plan.p, m, delta);
  } else if (plan.kind === "pearson") {
    if (!(plan.r > -1 && plan.r < 1)) throw new Error(`${fn}: r must be in (-1, 1), got ${String(plan.r)}`);
    n = 4;
    while (fisherHalf(plan.r, n) > delta) n = n < 64 ? n + 1 : Math.ceil(n * 1.01);
    // Back off the geometric steps to the smallest n.
    while (n > 4 && fisherHalf(plan.r, n - 1) <= delta) n--;
    prob = (m) => pearsonProbability(plan.r, m, delta);
  } else {
    if (!(plan.sd1 > 0)) throw new Error(`${fn}: sd1 must be positive, got ${String(plan.sd1)}`);
    n = Math.max(2, Math.ceil(((Z * plan.sd1) / delta) ** 2));
    const df = plan.df ?? ((m: number) => m - 1);
    prob = (m) => seProbability(plan.sd1, m, delta, df(m));
  }
  // The smallest n from the planned one up with P ≥ assurance (a proportion's P saw-tooths with n: the first such n).
  let m = n;
  let p = prob(m);
  const probabilityAtN = p;
  let step = 1;
  while (p < assurance) {
    m += step;
    p = prob(m);
    if (m > 4 * n + 1000) step = Math.ceil(m / 200);
  }
  return { n, nAssured: m, probabilityAtN, probabilityAtAssured: p };
}
