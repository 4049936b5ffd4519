/**
 * The estimator a protocol's calibration targets are built with: every
 * headline metric is a weighted sum θ = Σ a_u·g(Y_u) over the run's judged
 * units; the judge's f_u are known for all of them, and the correction
 * Σ a_u·(Y_u − f_u) is estimated from the human-labelled sample with
 * Horvitz–Thompson design weights — the prediction-powered rectifier of
 * Angelopoulos et al. (2023, §2, mean estimation), i.e. the difference
 * estimator of survey sampling (Särndal, Swensson & Wretman 1992, §6.3).
 * Its interval is rectifierCI's (Wilson score intervals for the shares of
 * the judge's errors in each direction, combined by MOVER): ± 1.96·SE had
 * zero width whenever the labelled sample agreed with the judge everywhere,
 * and covered 0.82–0.94 with 10–40 labelled units (scripts/coverage/run-scores.ts).
 * Pure: the server reads the labels and draws, a protocol says which sums its
 * metrics are.
 */
import { moverRatio, moverSum, rectifierCI, type RectifierStratum } from "../../stats";

/** The estimate of one metric: the judge's value and the corrected one. */
export type Estimate = ReturnType<typeof differenceEstimate>;

/** A population term: weight a, the judge's value f, and the key and stratum of the unit a human would label. */
export type Term = { key: string; a: number; f: number; stratum: string };
/**
 * A drawn unit (or drawn whole response): inclusion probability, stratum, human value (null: none under the rule),
 * and the cluster it was sampled in — the sampled response under the whole-responses plan (its checklist pairs are
 * drawn together), else the unit itself.
 */
export type Draw = { pi: number; stratum: string; y: number | null; cluster: string };

/**
 * A corrected estimate: the point clipped to the metric's range (`clipped` says when, `unclipped` is the
 * difference estimate itself); `se` the design-based standard error of the difference estimate (Σ_c (1 − π_c)·Z_c²);
 * `ci` the 95% interval (rectifierCI, or MOVER for metrics combined from corrected ones) clipped to the same range.
 * `exact`: every unit behind the metric is labelled (a census), so the zero-width interval is the value itself.
 * `bounded`: strata with fewer than 2 labelled units, whose whole range is inside the interval (no spread to estimate).
 */
export type Interval = {
  estimate: number;
  se: number;
  ci: [number, number];
  n: number;
  clipped: boolean;
  unclipped: number;
  exact: boolean;
  bounded: number;
};
export type Range = [number, number];
export const PERCENT: Range = [0, 100];
export const PROPORTION: Range = [0, 1];
export const BLIND_SPOT: Range = [-Infinity, 1];
/** C3EBench judge and human scores (RAVEL E.1–E.4). */
export const SCORE_1_10: Range = [1, 10];
/** The value of one binary unit (a Yes/No label), the default unit range of differenceEstimate. */
export const BINARY: Range = [0, 1];

export const clip = (x: number, r: Range) => Math.min(r[1], Math.max(r[0], x));

/** A corrected Interval from its unclipped estimate, SE and interval (point and interval clipped to `range`). */
export function corrected(
  estimate: number,
  se: number,
  n: number,
  ci: [number, number],
  range: Range,
  extra: { exact: boolean; bounded: number },
): Interval {
  return {
    estimate: clip(estimate, range),
    se,
    n,
    ci: [clip(ci[0], range), clip(ci[1], range)],
    clipped: clip(estimate, range) !== estimate,
    unclipped: estimate,
    exact: extra.exact,
    bounded: extra.bounded,
  };
}

/** The mean of corrected metrics (their clipped points and intervals) from independent strata, e.g. FB-Bench's overall score: MOVER for the sum. */
export function meanOfCorrected(parts: Interval[], range: Range): Interval {
  const w = 1 / parts.length;
  const m = moverSum(parts.map((p) => ({ estimate: p.estimate, ci: p.ci, weight: w })));
  return corrected(
    m.estimate,
    Math.sqrt(parts.reduce((s, p) => s + p.se ** 2, 0)) * w,
    parts.reduce((s, p) => s + p.n, 0),
    m.ci,
    range,
    { exact: parts.every((p) => p.exact), bounded: parts.reduce((s, p) => s + p.bounded, 0) },
  );
}

/**
 * 1 − θ₁/θ₂ of two corrected proportions from independent strata (Self-Correction Bench's blind spot, Eq. 2):
 * MOVER-R for the ratio (Newcombe 2016); `se` by the delta method. Null when θ₂'s interval reaches 0 (the ratio is
 * unbounded) or its estimate is 0.
 */
export function oneMinusRatio(num: Interval, den: Interval, range: Range): Interval | null {
  const p1 = num.estimate;
  const p2 = den.estimate;
  if (!(p2 > 0)) return null;
  const r = moverRatio(p1, num.ci, p2, den.ci);
  if (!r) return null;
  const se = Math.sqrt(num.se ** 2 / p2 ** 2 + (p1 ** 2 * den.se ** 2) / p2 ** 4);
  return corrected(1 - p1 / p2, se, num.n + den.n, [1 - r[1], 1 - r[0]], range, {
    exact: num.exact && den.exact,
    bounded: num.bounded + den.bounded,
  });
}

export const stratumOf = (c: { model: string; turn: number; condition: string | null }) =>
  `${c.model}\u0000${c.turn}\u0000${c.condition ?? ""}`;
export const unitKey = (responseId: number, checklistItemId: number | null) => `${responseId}/${checklistItemId ?? "-"}`;

/**
 * Difference (prediction-powered) estimate of Σ a·Y with HT design weights; null when fewer than 2 population
 * terms are labelled. The SE is design-based over the sampled clusters: the terms' a·(Y − f)/π are summed
 * within each cluster (Z_c, a Horvitz–Thompson cluster total) and Var = Σ_c (1 − π_c)·Z_c² — under the
 * whole-responses plan a response's checklist pairs are drawn together, so their errors count as one draw.
 * The interval is rectifierCI's over the strata of `pop` (a stratum without 2 labelled clusters enters with its
 * whole range), each unit's value in `unitRange` (Yes/No: [0, 1]; C3EBench scores: [1, 10]).
 */
export function differenceEstimate(
  pop: Term[],
  draws: Map<string, Draw>,
  range: Range,
  unitRange: Range = BINARY,
): { raw: number; corrected: Interval | null; unlabelledStrata: number } {
  const raw = pop.reduce((s, t) => s + t.a * t.f, 0);
  const sampled = new Map<string, number>();
  const labelled = new Map<string, number>();
  for (const d of draws.values()) {
    sampled.set(d.stratum, (sampled.get(d.stratum) ?? 0) + 1);
    if (d.y !== null) labelled.set(d.stratum, (labelled.get(d.stratum) ?? 0) + 1);
  }
  let corr = 0;
  let n = 0;
  const clusters = new Map<string, { pi: number; z: number; stratum: string }>();
  const strata = new Map<string, RectifierStratum & { bounds: [number, number]; clusters: { z: number; pi: number }[] }>();
  const [lo, hi] = unitRange;
  for (const t of pop) {
    const s = strata.get(t.stratum) ?? { bounds: [0, 0], clusters: [] };
    // The correction a·(Y − f) of the term when Y is at either end of its range (f unknown: the whole range).
    const f = Number.isFinite(t.f) ? t.f : null;
    const ends = f === null ? [t.a * (lo - hi), t.a * (hi - lo)] : [t.a * (lo - f), t.a * (hi - f)];
    s.bounds[0] += Math.min(...ends);
    s.bounds[1] += Math.max(...ends);
    strata.set(t.stratum, s);
    const d = draws.get(t.key);
    if (!d || d.y === null) continue;
    const pi = d.pi * ((labelled.get(d.stratum) ?? 0) / (sampled.get(d.stratum) ?? 1));
    const z = (t.a * (d.y - t.f)) / pi;
    corr += z;
    const key = `${t.stratum}\u0000${d.cluster}`;
    const c = clusters.get(key) ?? { pi, z: 0, stratum: t.stratum };
    c.z += z;
    clusters.set(key, c);
    n++;
  }
  let variance = 0;
  for (const c of clusters.values()) {
    variance += (1 - c.pi) * c.z * c.z;
    strata.get(c.stratum)!.clusters.push({ z: c.z, pi: Math.min(1, c.pi) });
  }
  const unlabelledStrata = [...strata.keys()].filter((s) => !labelled.get(s)).length;
  if (n < 2) return { raw, corrected: null, unlabelledStrata };
  const r = rectifierCI([...strata.values()]);
  return {
    raw,
    corrected: corrected(raw + corr, Math.sqrt(Math.max(0, variance)), n, [raw + r.ci[0], raw + r.ci[1]], range, {
      exact: r.exact,
      bounded: r.bounded,
    }),
    unlabelledStrata,
  };
}

export type CalibratedMetric = {
  /** e.g. "Acc_2", "Pass_2", "Error correction", "Blind spot". */
  metric: string;
  model: string;
  /** Dataset × condition etc. where the metric has one. */
  group: string | null;
  raw: number;
  corrected: Interval | null;
  /** Why there is no corrected value, or what to keep in mind. */
  note: string | null;
};

/** The drawn whole responses: inclusion probability, stratum, and the human values of their drawn checklist pairs. */
export type ResponseDraws = Map<number, { pi: number; stratum: string; ys: (number | null)[]; checklist: (number | null)[] }>;

/** Says when the corrected point was clipped to the metric's range (the difference estimate itself lies outside). */
export function clipNote(iv: Interval | null): string | null {
  if (!iv?.clipped) return null;
  const v = Math.abs(iv.unclipped) >= 10 ? iv.unclipped.toFixed(1) : iv.unclipped.toFixed(3);
  return `corrected estimate clipped to the metric's range (the difference estimate is ${v})`;
}
/** Says when strata with fewer than 2 labelled units put their whole range inside the interval. */
export function boundNote(iv: Interval | null): string | null {
  if (!iv?.bounded) return null;
  return `${iv.bounded} stratum(s) with fewer than 2 labelled units: the interval holds their whole range (a bound, not an estimate)`;
}
export const joinNotes = (...xs: (string | null)[]) => xs.filter(Boolean).join("; ") || null;

/** Whole-response draws for metrics of all of a response's labels (`g` of its human values), only under the whole-response plan. */
export function responseDraws(byResponse: ResponseDraws, checklistCount: (rid: number) => number, g: (ys: number[]) => number) {
  const out = new Map<string, Draw>();
  for (const [rid, r] of byResponse) {
    const complete = r.ys.length === checklistCount(rid) && r.ys.every((y) => y !== null);
    out.set(String(rid), { pi: r.pi, stratum: r.stratum, y: complete ? g(r.ys as number[]) : null, cluster: `r${rid}` });
  }
  return out;
}

export const NO_WHOLE = "needs whole-response labels (the whole-responses plan): this metric depends on every checklist item of a response";
