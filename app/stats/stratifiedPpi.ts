import {
  commonNotes,
  correctedInterval,
  noLabels,
  resultBase,
  onScale,
  prepare,
  type CorrectedOptions,
  type CorrectedResult,
  type CorrectedUnit,
} from "./correctedCore";
import { ppiMean } from "./ppiMean";

/**
 * Stratified PPI++ (Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen 2024, "Stratified Prediction-Powered
 * Inference for Hybrid Language Model Evaluation", arXiv 2406.04291, §3, eq. 7–9): in each stratum h the PPI++
 * estimate with its own power-tuned λ̂_h (ppiMean within the stratum, as ppi_py), combined with the strata's
 * weights N_h/N:
 *
 *   θ̂ = Σ_h (N_h/N)·θ̂_h,   se² = Σ_h (N_h/N)²·se_h².
 *
 * A stratum without labels contributes its judge mean and no standard error (`se` null; the interval holds the
 * stratum's whole range); a stratum labelled whole contributes its labels' mean, exactly. The interval is
 * correctedInterval's with the strata's λ̂_h, moved to θ̂ as in ppiEstimate.
 */
export function stratifiedPpi(units: readonly CorrectedUnit[], options: CorrectedOptions = {}): CorrectedResult {
  const fn = "stratifiedPpi";
  const p = prepare(
    fn,
    units.map((u) => ({ f: u.f, y: u.y, stratum: u.stratum })),
    options,
  );
  const raw = (v: number) => onScale(p, v);
  const base = resultBase(p, "stratified");
  if (base.nLabeled === 0) return noLabels(base);
  const lambdas: Record<string, number> = {};
  let estimate = 0;
  let v = 0;
  let seKnown = true;
  for (const [h, s] of p.strata) {
    const inH = p.units.filter((u) => u.stratum === h);
    const lab = inH.filter((u) => u.y !== null);
    const unl = inH.filter((u) => u.y === null);
    const w = s.N / p.N;
    if (lab.length === 0) {
      lambdas[h] = 1;
      estimate += w * raw(unl.reduce((t, u) => t + u.f, 0) / unl.length);
      seKnown = false;
      continue;
    }
    if (unl.length === 0) {
      lambdas[h] = 0;
      estimate += w * raw(lab.reduce((t, u) => t + u.y!, 0) / lab.length);
      continue;
    }
    const r = ppiMean({
      labelledHuman: lab.map((u) => raw(u.y!)),
      labelledJudge: lab.map((u) => raw(u.f)),
      unlabelledJudge: unl.map((u) => raw(u.f)),
      lambda: "ppi++",
      level: p.level,
    });
    lambdas[h] = r.lambda;
    estimate += w * r.estimate;
    v += w * w * r.se * r.se;
  }
  const r = correctedInterval(p, (h) => lambdas[h]);
  const shift = estimate - raw(r.estimate);
  const notes = commonNotes(p, r);
  const se = seKnown && v > 0 ? Math.sqrt(v) : null;
  if (se === null && !r.exact)
    notes.push("the Wald standard error cannot be estimated (a stratum without labels, or no spread in the labels)");
  const all = Object.values(lambdas);
  return {
    ...base,
    estimate,
    ci: r.ci && [raw(r.ci[0]) + shift, raw(r.ci[1]) + shift],
    se,
    lambda: all.length === 1 ? all[0] : null,
    lambdas,
    exact: r.exact,
    notes,
  };
}
