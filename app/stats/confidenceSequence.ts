import type { Interval } from "./types";

/**
 * An anytime-valid confidence sequence for a corrected benchmark score, so that a researcher may look at the
 * interval after every wave of labels and stop when it is narrow enough, and the interval still holds: with
 * probability at least 1 − α it contains the truth at every look at once (a fixed-n interval looked at after every
 * wave does not: stopping when it first excludes a value inflates the error well beyond α).
 *
 * The sequence is the predictable plug-in empirical-Bernstein confidence sequence for the mean of observations in
 * [0, 1] (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting", JRSS-B 86, 1–27,
 * §3.1, Theorem 2, "PrPl-EB"):
 *
 *   μ̂_t = (½ + Σ_{i≤t} x_i)/(t + 1),  σ̂²_t = (¼ + Σ_{i≤t} (x_i − μ̂_i)²)/(t + 1),
 *   λ_t = min(√(2 log(2/α) / (σ̂²_{t−1}·t·log(1 + t))), c),  c = ½,
 *   v_i = 4(x_i − μ̂_{i−1})²,  ψ_E(λ) = (−log(1 − λ) − λ)/4,
 *   C_t = Σ λ_i x_i / Σ λ_i  ±  (log(2/α) + Σ v_i ψ_E(λ_i)) / Σ λ_i,
 *
 * intersected with the previous looks' (the running intersection keeps the guarantee: §3, Remark 1). It holds in
 * finite samples for independent draws with a common mean; it has no zero width (log(2/α) > 0).
 *
 * For a corrected score (prediction-powered inference, Angelopoulos et al. 2023) under uniform sampling the
 * observations are the labelled units' rectifier terms Y − λf, rescaled from [−λ, 1] to [0, 1], and the score is
 * λ·(the judge's mean over all units) + their mean; λ must be fixed before the labels (λ = 1, PPI, by default):
 * a λ tuned on the same labels would break the martingale. The draws are taken as independent (sampling with
 * replacement); sampling without replacement from the population only concentrates them more (Waudby-Smith &
 * Ramdas 2020, "Confidence sequences for sampling without replacement", NeurIPS, §2), and the simulation in
 * tests/unit/stats/confidenceSequence.test.ts measures it.
 */

/** The confidence sequence after each observation (index t − 1 for t observations), in [0, 1]. */
export function bettingConfidenceSequence(xs: readonly number[], options: { alpha?: number; c?: number } = {}): Interval[] {
  const alpha = options.alpha ?? 0.05;
  const c = options.c ?? 0.5;
  if (!(alpha > 0 && alpha < 1)) throw new Error("bettingConfidenceSequence: alpha must be in (0, 1)");
  if (!(c > 0 && c < 1)) throw new Error("bettingConfidenceSequence: c must be in (0, 1)");
  const logTerm = Math.log(2 / alpha);
  let sumX = 0;
  let sumSq = 0;
  let muPrev = 0.5;
  let varPrev = 0.25;
  let sumL = 0;
  let sumLX = 0;
  let sumVPsi = 0;
  let lo = 0;
  let hi = 1;
  const out: Interval[] = [];
  xs.forEach((x, k) => {
    if (!(x >= 0 && x <= 1)) throw new Error(`bettingConfidenceSequence: observation ${k} is not in [0, 1]`);
    const t = k + 1;
    const lambda = Math.min(Math.sqrt((2 * logTerm) / (varPrev * t * Math.log(1 + t))), c);
    const v = 4 * (x - muPrev) ** 2;
    const psi = (-Math.log(1 - lambda) - lambda) / 4;
    sumL += lambda;
    sumLX += lambda * x;
    sumVPsi += v * psi;
    const centre = sumLX / sumL;
    const margin = (logTerm + sumVPsi) / sumL;
    lo = Math.max(lo, centre - margin);
    hi = Math.min(hi, centre + margin);
    // The running intersection can only be empty by a miss; keep a point at its nearest edge then.
    if (lo > hi) lo = hi = (lo + hi) / 2;
    out.push([lo, hi]);
    sumX += x;
    const mu = (0.5 + sumX) / (t + 1);
    sumSq += (x - mu) ** 2;
    muPrev = mu;
    varPrev = (0.25 + sumSq) / (t + 1);
  });
  return out;
}

/**
 * The confidence sequence of a corrected score (PPI with a fixed λ) after each label, labels in the order they came:
 * `labelled` the (Y, f) pairs on [0, 1], `judgeMean` the judge's mean over all N units.
 */
export function ppiConfidenceSequence(
  labelled: readonly { y: number; f: number }[],
  judgeMean: number,
  options: { lambda?: number; alpha?: number } = {},
): Interval[] {
  const lambda = options.lambda ?? 1;
  if (!(lambda >= 0 && lambda <= 1)) throw new Error("ppiConfidenceSequence: λ must be in [0, 1]");
  const span = 1 + lambda;
  const cs = bettingConfidenceSequence(
    labelled.map((u) => (u.y - lambda * u.f + lambda) / span),
    { alpha: options.alpha },
  );
  return cs.map(([l, h]) => [lambda * judgeMean + l * span - lambda, lambda * judgeMean + h * span - lambda]);
}

/**
 * About how many labels the sequence needs for a half-width of `halfWidth` (on the observations' [0, 1] scale)
 * when they vary with variance `variance`: the t where the PrPl-EB margin with σ̂² = variance first falls to
 * halfWidth, searched up to `max` (null beyond). A forecast, not a promise: it assumes the spread seen so far.
 */
export function labelsForHalfWidth(variance: number, halfWidth: number, options: { alpha?: number; max?: number } = {}): number | null {
  const alpha = options.alpha ?? 0.05;
  const max = options.max ?? 1_000_000;
  const logTerm = Math.log(2 / alpha);
  const s2 = Math.max(variance, 1e-6);
  let sumL = 0;
  let sumVPsi = 0;
  for (let t = 1; t <= max; t++) {
    const lambda = Math.min(Math.sqrt((2 * logTerm) / (s2 * t * Math.log(1 + t))), 0.5);
    sumL += lambda;
    sumVPsi += 4 * s2 * ((-Math.log(1 - lambda) - lambda) / 4);
    if ((logTerm + sumVPsi) / sumL <= halfWidth) return t;
  }
  return null;
}
