import type { Interval, NumericRating } from "./types";

/** Result of {@link meanCI}. */
export interface MeanCIResult {
  mean: number;
  /** Sample standard deviation s (denominator n - 1); NaN when n = 1. */
  sd: number;
  /** Standard error of the mean, s / √n; NaN when n = 1. */
  sem: number;
  /** mean ± z·SEM (z = 1.96 by default). */
  ci: Interval;
  n: number;
}

/**
 * Mean with a normal-approximation confidence interval, mean ± 1.96·SEM, where
 * SEM = s/√N and s is the sample standard deviation — the interval Self-Correction
 * Bench reports for mean accuracy.
 *
 * Definition: x̄ = Σx/N; s = √(Σ(x - x̄)²/(N - 1)); CI = x̄ ± z·s/√N.
 *
 * Reference: K. Tsui (2025) "Self-Correction Bench", §5 (mean accuracy with a
 * 95% CI of mean ± 1.96·SEM); any statistics text for the SEM.
 *
 * Preconditions: at least one present value; values finite numbers; missing
 * values (null/undefined) are skipped. With N = 1, sd, sem and ci are NaN.
 *
 * @param options.z the multiplier (default 1.96, as published; use
 *   normalQuantile(0.975) = 1.95996… for the exact normal quantile)
 * @throws {Error} "meanCI: ..." when empty or for non-finite/non-numeric values
 * @example
 * meanCI([1, 0, 1, 1]); // => { mean: 0.75, sd: 0.5, sem: 0.25, ci: [0.26, 1.24], n: 4 }
 */
export function meanCI(values: ArrayLike<NumericRating>, options: { z?: number } = {}): MeanCIResult {
  const fn = "meanCI";
  if (values == null || typeof values.length !== "number") throw new Error(`${fn}: values must be an array`);
  const z = options.z ?? 1.96;
  if (typeof z !== "number" || !(z > 0) || !Number.isFinite(z)) throw new Error(`${fn}: z must be a positive finite number`);
  let n = 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${fn}: values[${i}] is not a finite number (${String(v)})`);
    n++;
    sum += v;
  }
  if (n === 0) throw new Error(`${fn}: needs at least one value`);
  const mean = sum / n;
  let ss = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    ss += (v - mean) * (v - mean);
  }
  const sd = n > 1 ? Math.sqrt(ss / (n - 1)) : NaN;
  const sem = sd / Math.sqrt(n);
  return { mean, sd, sem, ci: [mean - z * sem, mean + z * sem], n };
}
