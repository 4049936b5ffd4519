import {
  commonNotes,
  correctedInterval,
  noLabels,
  resultBase,
  onScale,
  prepare,
  waldSE,
  type CorrectedOptions,
  type CorrectedResult,
  type CorrectedUnit,
} from "./correctedCore";

/**
 * Active statistical inference for a benchmark score (Zrnic & Candès 2024, "Active Statistical Inference",
 * arXiv 2403.03208, §3, eq. 4 and §3.1's power tuning): each unit i was labelled with its own known probability
 * π_i (chosen from the judge's uncertainty, say), and the estimate weights each label by 1/π_i:
 *
 *   θ̂_λ = (1/N) Σ_i [ λ f_i + (Y_i − λ f_i)·ξ_i/π_i ],   ξ_i = 1 when unit i was labelled.
 *
 * λ is power-tuned for this design: under Poisson sampling the variance of θ̂_λ is (1/N²) Σ_i (1 − π_i)/π_i ·
 * (Y_i − λ f_i)² (Särndal, Swensson & Wretman 1992, eq. 3.4.4 with π_ij = π_i π_j), smallest at
 * λ* = Σ w_i Y_i f_i / Σ w_i f_i², w_i = (1 − π_i)/π_i; both sums are estimated from the labelled units weighted by
 * 1/π_i, and λ̂ is clipped to [0, 1] (λ = 0: the classical Horvitz–Thompson mean; λ = 1: the PPI rectifier). On the
 * unit scale [0, 1] of the data's range.
 *
 * The interval is correctedInterval's (it needs no λ-specific algebra: it bounds the rectifier whatever λ is);
 * `se` is the Wald SE of waldSE with the given π. Every unit needs its π.
 */
export function activePpi(units: readonly CorrectedUnit[], options: CorrectedOptions & { lambda?: number } = {}): CorrectedResult {
  const fn = "activePpi";
  if (units.some((u) => u.pi === undefined)) throw new Error(`${fn}: every unit needs its inclusion probability π`);
  const p = prepare(fn, units, options);
  const raw = (v: number) => onScale(p, v);
  const lab = p.units.filter((u) => u.y !== null);
  const base = resultBase(p, "active");
  if (lab.length === 0) return noLabels(base);
  let lambda = options.lambda ?? NaN;
  if (!Number.isFinite(lambda)) {
    let num = 0;
    let den = 0;
    for (const u of lab) {
      const w = (1 - u.pi) / u.pi;
      num += (w * u.y! * u.f) / u.pi;
      den += (w * u.f * u.f) / u.pi;
    }
    lambda = den > 0 ? Math.min(1, Math.max(0, num / den)) : 1;
  }
  const r = correctedInterval(p, () => lambda);
  const se = waldSE(p, () => lambda);
  const notes = commonNotes(p, r);
  if (se === null && !r.exact) notes.push("the Wald standard error cannot be estimated from these labels (all with the same Y − λf)");
  return {
    ...base,
    estimate: raw(r.estimate),
    ci: r.ci && [raw(r.ci[0]), raw(r.ci[1])],
    se: se === null ? null : se * p.width,
    lambda,
    exact: r.exact,
    notes,
  };
}
