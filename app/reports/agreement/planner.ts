/**
 * The sample-size planner: units needed for a target 95% CI half-width δ of kappa, an accuracy, a
 * Pearson r or a pairwise consistency. "n needed" gives an interval of about ±δ on average (wider
 * about half the time); "n for 80% assurance" gives ±δ or narrower with probability 0.8
 * (app/stats/planAssurance).
 */
import { planAssurance } from "~/stats/planAssurance";
import type { ScoreJudgeRow } from "../scoreJudgeAgreement";

/** The 95% quantile of the planners (as Z95 in ./intervals; kept here so the command line loads this file alone). */
const Z95 = 1.96;

export interface PlanRow {
  target: string;
  current: number;
  n: number;
  halfWidth: number;
  delta: number;
  /** n at which the expected half-width is δ: about ±δ on average. */
  needed: number;
  more: number;
  /** n at which the half-width is ≤ δ with probability 0.8. */
  neededAssured: number;
  moreAssured: number;
  basis: string;
}

/** The probability the assurance column is planned for. */
export const ASSURANCE = 0.8;

/** Units (or groups) needed so that the 95% CI half-width of a figure is about δ, scaling its SE as 1/√n. */
export function planKappa(label: string, value: number, se: number, n: number, delta: number, unit = "units"): PlanRow {
  const a = planAssurance({ kind: "se", sd1: se * Math.sqrt(n) }, delta, ASSURANCE);
  return {
    target: label,
    current: value,
    n,
    halfWidth: Z95 * se,
    delta,
    needed: a.n,
    more: Math.max(0, a.n - n),
    neededAssured: a.nAssured,
    moreAssured: Math.max(0, a.nAssured - n),
    basis: `${unit}; SE scales as 1/√n from the current estimate; assurance: the estimated SE's spread as a χ² (approximate)`,
  };
}

/** Units needed so that the 95% CI (Wilson) half-width of an accuracy p is about δ: 1.96²·p(1−p)/δ². */
export function planAccuracy(label: string, p: number, n: number, delta: number): PlanRow {
  const a = planAssurance({ kind: "proportion", p }, delta, ASSURANCE);
  const halfWidth = n > 0 ? Z95 * Math.sqrt((p * (1 - p)) / n) : NaN;
  return {
    target: label,
    current: p,
    n,
    halfWidth,
    delta,
    needed: a.n,
    more: Math.max(0, a.n - n),
    neededAssured: a.nAssured,
    moreAssured: Math.max(0, a.nAssured - n),
    basis: "units; binomial variance p(1−p) at the current accuracy; assurance: exact over Binomial(n, p), Wilson half-width",
  };
}

/** Pairs needed so that the 95% CI (Fisher z) half-width of Pearson's r is about δ at the current r. */
export function planPearson(label: string, r: number, n: number, delta: number): PlanRow {
  const a = planAssurance({ kind: "pearson", r: Math.max(-0.999999, Math.min(0.999999, r)) }, delta, ASSURANCE);
  const c = Z95 / Math.sqrt(n - 3);
  const halfWidth = n > 3 ? (Math.tanh(Math.atanh(r) + c) - Math.tanh(Math.atanh(r) - c)) / 2 : NaN;
  return {
    target: label,
    current: r,
    n,
    halfWidth,
    delta,
    needed: a.n,
    more: Math.max(0, a.n - n),
    neededAssured: a.nAssured,
    moreAssured: Math.max(0, a.nAssured - n),
    basis: "scored units; Fisher z half-width at the current r; assurance: atanh(r̂) ~ N(atanh r, 1/(n−3))",
  };
}

/**
 * The planner rows of a score judge (the judges page and `npm run judge-agreement --delta` both):
 * Pearson r (scored units), and each pairwise consistency (groups: its SE from the bootstrap
 * interval's width, (high − low)/(2·1.96), scaled as 1/√groups).
 */
export function scorePlanRows(s: ScoreJudgeRow, delta: number): PlanRow[] {
  const out: PlanRow[] = [];
  if (s.pearson !== null && s.n > 3) out.push(planPearson(`${s.judge} Pearson r`, s.pearson, s.n, delta));
  for (const [name, value, ci] of [
    ["consistency (ties counted)", s.consistencyTiesCounted, s.consistencyTiesCountedCI],
    ["consistency (ties excluded)", s.consistencyTiesExcluded, s.consistencyTiesExcludedCI],
    ["consistency (humans differ)", s.consistencyHumanDiffering, s.consistencyHumanDifferingCI],
  ] as const) {
    if (value === null || !ci || s.clusters < 2) continue;
    const se = (ci[1] - ci[0]) / (2 * Z95);
    if (se > 0) out.push(planKappa(`${s.judge} ${name}`, value, se, s.clusters, delta, "groups"));
  }
  return out;
}
