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
 * The classical estimate of a benchmark score from the human labels alone, the judge ignored: the
 * Horvitz–Thompson mean θ̂ = (1/N) Σ_{i labelled} Y_i/π_i (Horvitz & Thompson 1952; Särndal, Swensson & Wretman
 * 1992, §2.8). Without inclusion probabilities the plan is simple random sampling within strata, π = n_h/N_h, and
 * θ̂ is the stratified mean Σ_h (N_h/N)·Ȳ_h (Cochran 1977, eq. 5.1); with one stratum, the labels' mean.
 *
 * The interval is correctedInterval's with λ = 0 (a Wilson score interval at the design's effective sample size,
 * Korn & Graubard 1998), never of zero width when every label is the same; `se` is the Wald SE (waldSE).
 * It is the baseline the prediction-powered estimators are measured against (PPI, Angelopoulos et al. 2023, §1).
 *
 * @example
 * classicalMean([{ f: 1, y: 1 }, { f: 0, y: 0 }, { f: 1, y: 1 }, { f: 1 }]).estimate; // => 2/3
 */
export function classicalMean(units: readonly CorrectedUnit[], options: CorrectedOptions = {}): CorrectedResult {
  const p = prepare("classicalMean", units, options);
  const zero = () => 0;
  const r = correctedInterval(p, zero);
  const base = resultBase(p, "classical");
  if (base.nLabeled === 0) return { ...noLabels(base), notes: ["no unit is labelled: the classical estimate needs human labels"] };
  const se = waldSE(p, zero);
  const notes = commonNotes(p, r);
  if (se === null && !r.exact)
    notes.push("the Wald standard error cannot be estimated from these labels (fewer than 2 in a stratum, or all equal)");
  return {
    ...base,
    estimate: onScale(p, r.estimate),
    ci: r.ci && [onScale(p, r.ci[0]), onScale(p, r.ci[1])],
    se: se === null ? null : se * p.width,
    lambda: null,
    exact: r.exact,
    notes,
  };
}
