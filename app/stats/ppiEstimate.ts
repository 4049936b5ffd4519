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
 * Prediction-powered inference for a benchmark score under simple random sampling of the labelled units: PPI
 * (λ = 1; Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, eq. 3 for the mean) or PPI++ (power-tuned λ̂ clipped
 * to [0, 1]; Angelopoulos, Duchi & Zrnic 2023, eq. 6 and Example 6.1), exactly as ppi_py's `ppi_mean_pointestimate`
 * computes the point and λ̂ (app/stats/ppiMean.ts): θ̂_λ = λ·mean(f over the unlabelled units) + mean(Y − λf over
 * the labelled ones). `se` is ppi_py's `ppi_mean_ci` standard error.
 *
 * The interval is not ppi_py's θ̂ ± z·se, which covers 82–83% of the time with 10 labelled units and has zero width
 * whenever they all agree with the judge, but correctedInterval's for the same λ, moved by θ̂_λ − θ̂_HT (the two
 * points differ by λ·(n/N)·(mean f over the unlabelled − mean f over all), which is small), so it is around θ̂_λ.
 * Strata are ignored (see stratifiedPpi); inclusion probabilities, if given, must be equal (see activePpi).
 */
export function ppiEstimate(units: readonly CorrectedUnit[], options: CorrectedOptions & { tuned?: boolean } = {}): CorrectedResult {
  const fn = "ppiEstimate";
  const tuned = options.tuned ?? true;
  const estimator = tuned ? "ppi++" : "ppi";
  const pis = new Set(units.map((u) => u.pi));
  if (pis.size > 1)
    throw new Error(`${fn}: PPI assumes every unit was equally likely to be labelled; use activePpi for unequal inclusion probabilities`);
  const p = prepare(
    fn,
    units.map((u) => ({ f: u.f, y: u.y })),
    options,
  );
  const lab = p.units.filter((u) => u.y !== null);
  const unl = p.units.filter((u) => u.y === null);
  const base = resultBase(p, estimator);
  if (lab.length === 0) return noLabels(base);
  if (unl.length === 0) {
    const r = correctedInterval(p, () => 0);
    return {
      ...base,
      estimate: onScale(p, r.estimate),
      ci: r.ci && [onScale(p, r.ci[0]), onScale(p, r.ci[1])],
      se: 0,
      lambda: 0,
      exact: true,
      notes: commonNotes(p, r),
    };
  }
  // On the data's own scale, so that the point and λ̂ are ppi_py's to the last digit.
  const raw = (v: number) => onScale(p, v);
  const ppi = ppiMean({
    labelledHuman: lab.map((u) => raw(u.y!)),
    labelledJudge: lab.map((u) => raw(u.f)),
    unlabelledJudge: unl.map((u) => raw(u.f)),
    lambda: tuned ? "ppi++" : "ppi",
    level: p.level,
  });
  const r = correctedInterval(p, () => ppi.lambda);
  const shift = ppi.estimate - raw(r.estimate);
  const notes = commonNotes(p, r);
  const d0 = lab[0].y! - ppi.lambda * lab[0].f;
  if (lab.every((u) => Math.abs(u.y! - ppi.lambda * u.f - d0) < 1e-12))
    notes.push(
      "every labelled unit has the same Y − λf: the Wald standard error holds only the judge's spread and cannot measure the correction's (the interval is a score interval that does)",
    );
  return {
    ...base,
    estimate: ppi.estimate,
    ci: r.ci && [raw(r.ci[0]) + shift, raw(r.ci[1]) + shift],
    se: ppi.se > 0 ? ppi.se : null,
    lambda: ppi.lambda,
    exact: r.exact,
    notes,
  };
}
