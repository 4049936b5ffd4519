/**
 * The estimator a protocol's calibration targets are built with: every
 * headline metric is a weighted sum θ = Σ a_u·g(Y_u) over the run's judged
 * units; the judge's f_u are known for all of them, and the correction
 * Σ a_u·(Y_u − f_u) is estimated from the human-labelled sample with
 * Horvitz–Thompson design weights — the prediction-powered rectifier of
 * Angelopoulos et al. (2023, §2, mean estimation), i.e. the difference
 * estimator of survey sampling (Särndal, Swensson & Wretman 1992, §6.3).
 * Pure: the server reads the labels and draws, a protocol says which sums its
 * metrics are.
 */
/** A population term: weight a, the judge's value f, and the key and stratum of the unit a human would label. */
/** The estimate of one metric: the judge's value and the corrected one. */
export type Estimate = ReturnType<typeof differenceEstimate>;

export type Term = { key: string; a: number; f: number; stratum: string };
/**
 * A drawn unit (or drawn whole response): inclusion probability, stratum, human value (null: none under the rule),
 * and the cluster it was sampled in — the sampled response under the whole-responses plan (its checklist pairs are
 * drawn together), else the unit itself.
 */
export type Draw = { pi: number; stratum: string; y: number | null; cluster: string };

/**
 * A corrected estimate: the point clipped to the metric's range (`clipped` says when, `unclipped` is the
 * difference estimate itself), the interval unclipped ± 1.96·SE clipped to the same range.
 */
export type Interval = { estimate: number; se: number; ci: [number, number]; n: number; clipped: boolean; unclipped: number };
export type Range = [number, number];
export const PERCENT: Range = [0, 100];
export const PROPORTION: Range = [0, 1];
export const BLIND_SPOT: Range = [-Infinity, 1];
/** C3EBench judge and human scores (RAVEL E.1–E.4). */
export const SCORE_1_10: Range = [1, 10];

export const clip = (x: number, r: Range) => Math.min(r[1], Math.max(r[0], x));
export const interval = (estimate: number, se: number, n: number, range: Range): Interval => ({
  estimate: clip(estimate, range),
  se,
  n,
  ci: [clip(estimate - 1.96 * se, range), clip(estimate + 1.96 * se, range)],
  clipped: clip(estimate, range) !== estimate,
  unclipped: estimate,
});

export const stratumOf = (c: { model: string; turn: number; condition: string | null }) =>
  `${c.model}\u0000${c.turn}\u0000${c.condition ?? ""}`;
export const unitKey = (responseId: number, checklistItemId: number | null) => `${responseId}/${checklistItemId ?? "-"}`;

/**
 * Difference (prediction-powered) estimate of Σ a·Y with HT design weights; null when fewer than 2 population
 * terms are labelled. The variance is design-based over the sampled clusters: the terms' a·(Y − f)/π are summed
 * within each cluster (Z_c, a Horvitz–Thompson cluster total) and Var = Σ_c (1 − π_c)·Z_c² — under the
 * whole-responses plan a response's checklist pairs are drawn together, so their errors count as one draw.
 */
export function differenceEstimate(
  pop: Term[],
  draws: Map<string, Draw>,
  range: Range,
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
  const clusters = new Map<string, { pi: number; z: number }>();
  const strata = new Set(pop.map((t) => t.stratum));
  for (const t of pop) {
    const d = draws.get(t.key);
    if (!d || d.y === null) continue;
    const pi = d.pi * ((labelled.get(d.stratum) ?? 0) / (sampled.get(d.stratum) ?? 1));
    const z = (t.a * (d.y - t.f)) / pi;
    corr += z;
    const c = clusters.get(d.cluster) ?? { pi, z: 0 };
    c.z += z;
    clusters.set(d.cluster, c);
    n++;
  }
  let variance = 0;
  for (const c of clusters.values()) variance += (1 - c.pi) * c.z * c.z;
  const unlabelledStrata = [...strata].filter((s) => !labelled.get(s)).length;
  return { raw, corrected: n >= 2 ? interval(raw + corr, Math.sqrt(Math.max(0, variance)), n, range) : null, unlabelledStrata };
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
