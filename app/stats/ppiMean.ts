import { normalQuantile } from "./normalQuantile";
import type { Interval } from "./types";

/** Input of {@link ppiMean}. */
export interface PpiMeanInput {
  /** Human labels Y on the small labelled set (e.g. 1 = correct, 0 = wrong). */
  labelledHuman: ArrayLike<number>;
  /** Judge predictions f(X) on the same labelled items, same order. */
  labelledJudge: ArrayLike<number>;
  /** Judge predictions f(X̃) on the large unlabelled set. */
  unlabelledJudge: ArrayLike<number>;
  /** "ppi++" (default: power-tuned λ̂), "ppi" (λ = 1, the original PPI), or a fixed λ (0 = humans only). */
  lambda?: "ppi" | "ppi++" | number;
  /** Confidence level (default 0.95). */
  level?: number;
}

/** Result of {@link ppiMean}. */
export interface PpiMeanResult {
  /** Bias-corrected estimate λ·mean(f(X̃)) + mean(Y - λ·f(X)). */
  estimate: number;
  /** Standard error √(λ² σ²_f̃/N + σ²_{Y-λf}/n) (population variances, as ppi_py). */
  se: number;
  /** estimate ± z·se (normal interval). */
  ci: Interval;
  /** The λ used. */
  lambda: number;
  /** Mean of the human labels alone (the classical estimate). */
  naiveHuman: number;
  /** Classical CI of the human mean, mean(Y) ± z·sd₀(Y)/√n (ppi_py with λ = 0). */
  naiveHumanCI: Interval;
  /** Mean of the judge on the unlabelled set (uncorrected, biased if the judge is). */
  naiveJudge: number;
  /** n (labelled) and N (unlabelled). */
  n: number;
  N: number;
}

/**
 * Prediction-powered inference (PPI) for a mean: combines many judge labels
 * with a few human labels into a bias-corrected estimate with a valid CI.
 *
 * Definition (Angelopoulos et al. 2023; PPI++, Angelopoulos, Duchi & Zrnic 2023):
 *   θ̂_λ = λ·(1/N) Σ f(X̃_i) + (1/n) Σ (Y_i - λ f(X_i)),
 *   se² = λ²·Var(f(X̃))/N + Var(Y - λ f(X))/n   (variances with denominator N, n),
 *   CI = θ̂_λ ± z_{1-α/2}·se.
 * λ = 1 is the original PPI ("ppi"). PPI++ ("ppi++") uses the power-tuned
 *   λ̂ = Cov(Y, f(X)) / ((1 + n/N)·Var([f(X); f(X̃)])),  clipped to [0, 1],
 * with Cov over the labelled set (denominator n) and Var over all n + N
 * predictions (denominator n + N - 1) — exactly `ppi_py.ppi_mean_ci` and
 * `ppi_mean_pointestimate` (lam=None, lam_optim_mode="overall") for 1-D data.
 * If every prediction is equal (Var = 0), λ̂ is set to 0 (ppi_py would give NaN):
 * the judge carries no information and the human-only interval is returned.
 *
 * References: A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan & T. Zrnic
 * (2023) "Prediction-powered inference", Science 382, 669-674; A. N. Angelopoulos,
 * J. C. Duchi & T. Zrnic (2023) "PPI++: Efficient prediction-powered inference",
 * arXiv:2311.01453.
 *
 * Preconditions: labelledHuman and labelledJudge have equal length n ≥ 1;
 * unlabelledJudge has N ≥ 1; all values finite numbers; a numeric λ is finite.
 *
 * @throws {Error} "ppiMean: ..." for empty sets, a length mismatch,
 *   non-finite values or a bad λ
 * @example
 * ppiMean({ labelledHuman: [1, 0, 1, 1], labelledJudge: [1, 0, 1, 0], unlabelledJudge: [1, 1, 0, 1, 0, 1], lambda: "ppi" }).estimate;
 * // => 0.9166666666666666 (= 4/6 + 1/4)
 */
export function ppiMean(input: PpiMeanInput): PpiMeanResult {
  const fn = "ppiMean";
  if (input == null || typeof input !== "object") throw new Error(`${fn}: input object required`);
  const Y = toArray(fn, input.labelledHuman, "labelledHuman");
  const F = toArray(fn, input.labelledJudge, "labelledJudge");
  const U = toArray(fn, input.unlabelledJudge, "unlabelledJudge");
  if (Y.length !== F.length)
    throw new Error(`${fn}: labelledHuman and labelledJudge must have the same length (got ${Y.length} and ${F.length})`);
  const n = Y.length;
  const N = U.length;
  if (n === 0) throw new Error(`${fn}: labelledHuman must not be empty`);
  if (N === 0) throw new Error(`${fn}: unlabelledJudge must not be empty`);
  const level = input.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new Error(`${fn}: level must be in (0, 1), got ${String(level)}`);
  const mode = input.lambda ?? "ppi++";
  const meanY = mean(Y);
  const meanF = mean(F);
  const meanU = mean(U);
  let lambda: number;
  if (mode === "ppi") lambda = 1;
  else if (mode === "ppi++") {
    let cov = 0;
    for (let i = 0; i < n; i++) cov += (Y[i] - meanY) * (F[i] - meanF);
    cov /= n;
    const all = (meanF * n + meanU * N) / (n + N);
    let ss = 0;
    for (let i = 0; i < n; i++) ss += (F[i] - all) ** 2;
    for (let i = 0; i < N; i++) ss += (U[i] - all) ** 2;
    const varAll = n + N > 1 ? ss / (n + N - 1) : 0;
    lambda = varAll > 0 ? cov / ((1 + n / N) * varAll) : 0;
    lambda = Math.min(1, Math.max(0, lambda));
  } else if (typeof mode === "number" && Number.isFinite(mode)) lambda = mode;
  else throw new Error(`${fn}: lambda must be "ppi", "ppi++" or a finite number, got ${String(mode)}`);

  const estimate = lambda * meanU + (meanY - lambda * meanF);
  // Population variances (numpy .std() with ddof=0), as ppi_py.
  let varU = 0;
  for (let i = 0; i < N; i++) varU += (U[i] - meanU) ** 2;
  varU /= N;
  const meanR = meanY - lambda * meanF;
  let varR = 0;
  for (let i = 0; i < n; i++) varR += (Y[i] - lambda * F[i] - meanR) ** 2;
  varR /= n;
  let varY = 0;
  for (let i = 0; i < n; i++) varY += (Y[i] - meanY) ** 2;
  varY /= n;
  const se = Math.sqrt((lambda * lambda * varU) / N + varR / n);
  const z = normalQuantile(1 - (1 - level) / 2);
  const seY = Math.sqrt(varY / n);
  return {
    estimate,
    se,
    ci: [estimate - z * se, estimate + z * se],
    lambda,
    naiveHuman: meanY,
    naiveHumanCI: [meanY - z * seY, meanY + z * seY],
    naiveJudge: meanU,
    n,
    N,
  };
}

function toArray(fn: string, a: ArrayLike<number>, name: string): Float64Array {
  if (a == null || typeof a.length !== "number") throw new Error(`${fn}: ${name} must be an array of numbers`);
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${fn}: ${name}[${i}] is not a finite number (${String(v)})`);
    out[i] = v;
  }
  return out;
}

function mean(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return a.length ? s / a.length : NaN;
}
