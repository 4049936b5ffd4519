/**
 * Judge–human agreement (RefineBench Table 9, RAVEL Table 3, MT-Bench §4.2).
 * Pure: every statistic comes from app/stats.
 *
 * A subject's verdict is the judge's verdict with the same responseId and
 * checklistItemId. Verdicts with parseStatus "failed" or "unparsed", no value, or a value
 * outside the task's categories are counted as unparsed and left out of every figure here —
 * never treated as "No" (the any-label-set table of ./judgeAgreement offers the other policies).
 */
import {
  accuracy,
  cohenKappa,
  confusionMatrix,
  gwetAC1,
  gwetSE,
  kendallTauB,
  pairwiseOrderingConsistency,
  pearson,
  perLabelMetrics,
  rates,
  spearman,
  yesRateDifference,
  type ConfusionMatrixResult,
  type LabelMetrics,
  type Label,
  type PairwiseOrderingResult,
} from "~/stats";
import { DIMENSIONS, SMALL_N, Z95, analyticMethod, honestEstimate, proportionEstimate, type Dimension } from "./agreement";
import { labelText } from "./judgeAgreement";
import { constantRaterReason } from "./honest";
import { scoreJudgeFigures, type ScoreJudgeRow } from "./scoreJudgeAgreement";
import type { Estimate, FinalLabels, TaskData } from "./types";

export interface JudgeInfo {
  id: number;
  name: string;
  model: string;
  promptVersion: string;
  settings: Record<string, unknown>;
}

/** The verdicts on a task's responses as parallel arrays (index i = one verdict): no object per verdict. */
export interface Verdicts {
  readonly length: number;
  readonly judgeId: Int32Array;
  readonly responseId: Int32Array;
  /** -1 when the verdict is not about a checklist item. */
  readonly checklistItemId: Int32Array;
  readonly value: readonly (string | null)[];
  /** NaN when there is no numeric score. */
  readonly score: Float64Array;
  /**
   * Not a parsed verdict: 2 when the judge's reply could not be parsed (parse_status "failed"); 3
   * when an imported verdict has no value and no raw output (written as missing: a CSV cell empty,
   * NA or N/A, a JSON null); 1 when an imported verdict is otherwise outside the task's labels
   * (parse_status "unparsed": an empty answer, "Unsure"); else 0.
   */
  readonly failed: Uint8Array;
}

export const verdictKey = (responseId: number | null, checklistItemId: number | null) => `${responseId ?? ""}:${checklistItemId ?? ""}`;

/** Per judge: the verdict of each subject (undefined = none, null = unparsed). */
export function verdictsBySubject(data: TaskData, verdicts: Verdicts, numeric: boolean): Map<number, (Label | null | undefined)[]> {
  // Subjects by response id, then checklist item id (-1 for none): the pair verdictKey names, without a string per row.
  const subjectOf = new Map<number, Map<number, number[]>>();
  data.subjects.forEach((s, i) => {
    if (s.responseId == null) return;
    let byCk = subjectOf.get(s.responseId);
    if (!byCk) subjectOf.set(s.responseId, (byCk = new Map()));
    const ck = s.checklistItemId ?? -1;
    const list = byCk.get(ck);
    if (list) list.push(i);
    else byCk.set(ck, [i]);
  });
  const out = new Map<number, (Label | null | undefined)[]>();
  // Categorical verdicts are matched to the task's categories as text (a judge's "1" is the human label 1);
  // a verdict outside them ("Unsure", an unparseable reply) counts as unparsed, never as a new category.
  const category = new Map<string, Label>();
  if (!numeric) for (const c of data.categories) category.set(labelText(c) ?? String(c), c);
  for (let i = 0; i < verdicts.length; i++) {
    const subs = subjectOf.get(verdicts.responseId[i])?.get(verdicts.checklistItemId[i]);
    if (!subs) continue;
    const judgeId = verdicts.judgeId[i];
    let arr = out.get(judgeId);
    if (!arr) out.set(judgeId, (arr = new Array(data.subjects.length).fill(undefined)));
    let value: Label | null = null;
    if (!verdicts.failed[i]) {
      const text = verdicts.value[i];
      if (numeric) {
        const score = verdicts.score[i];
        const x = !Number.isNaN(score) ? score : text != null && text.trim() !== "" ? Number(text) : NaN;
        value = Number.isFinite(x) ? x : null;
      } else value = text != null && text !== "" ? (category.get(labelText(text) ?? "") ?? null) : null;
    }
    for (const s of subs) arr[s] = value;
  }
  return out;
}

export interface JudgeBreakdownRow {
  judgeId: number;
  dimension: Dimension;
  value: string;
  n: number;
  accuracy: Estimate | null;
  /** Judge Yes rate − human Yes rate (binary). */
  yesRateDiff: number | null;
  pearson: Estimate | null;
  small: boolean;
  /** The judged model shares the judge's model family (first word of the model name). */
  ownFamily: boolean;
}

export interface JudgeRow {
  judge: JudgeInfo;
  /** Subjects with a final human label and a parsed verdict. */
  n: number;
  unparsed: number;
  missing: number;
  // Categorical
  accuracy: Estimate | null;
  kappa: Estimate | null;
  ac1: Estimate | null;
  tpr: Estimate | null;
  tnr: Estimate | null;
  yesRateDiff: number | null;
  confusion: ConfusionMatrixResult | null;
  /** Per label (one-vs-rest, the final human label as truth): precision, recall and F1 of the judge. */
  perLabel: LabelMetrics[] | null;
  // Scores
  pearson: Estimate | null;
  spearman: number | null;
  kendall: number | null;
  ordering: PairwiseOrderingResult | null;
  /**
   * Scores (ordinal, interval): the figures of app/reports/scoreJudgeAgreement against the final
   * human score — Pearson, Spearman, Kendall, the three pairwise consistencies (pairs of responses
   * to one item) with their pair counts, each with a seeded bootstrap interval over items.
   */
  scores: ScoreJudgeRow | null;
  orderingByTaskType: { taskType: string; result: PairwiseOrderingResult }[];
  breakdowns: JudgeBreakdownRow[];
  /** Paired arrays used for every figure (for CSV of the rows behind the figure). */
  human: Label[];
  verdict: Label[];
  subjects: number[];
  /** Subjects with a final human label whose verdict could not be parsed (for the disagreement browser). */
  unparsedSubjects: number[];
}

/** The human scale's range: the task's numeric categories (its declared or observed scale), else the final scores'. */
function scaleRange(categories: readonly Label[], human: number[]): [number, number] | undefined {
  const xs = categories.map(Number).filter(Number.isFinite);
  const use = xs.length ? xs : human;
  return use.length ? [Math.min(...use), Math.max(...use)] : undefined;
}

export const family = (model: string | null | undefined) =>
  (model ?? "")
    .trim()
    .split(/[\s\-_/:.]+/)[0]
    ?.toLowerCase() ?? "";

export function judgeReport(data: TaskData, final: FinalLabels, judges: JudgeInfo[], verdicts: Verdicts): JudgeRow[] {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const by = verdictsBySubject(data, verdicts, numeric);
  const out: JudgeRow[] = [];
  for (const judge of judges) {
    const arr = by.get(judge.id);
    if (!arr) continue;
    const human: Label[] = [];
    const verdict: Label[] = [];
    const subjects: number[] = [];
    let unparsed = 0;
    let missing = 0;
    const unparsedSubjects: number[] = [];
    data.subjects.forEach((_, i) => {
      const f = final.values[i];
      if (f == null) return;
      const v = arr[i];
      if (v === undefined) return void missing++;
      if (v === null) return void (unparsed++, unparsedSubjects.push(i));
      human.push(f);
      verdict.push(v);
      subjects.push(i);
    });
    if (human.length + unparsed === 0) continue;
    const row: JudgeRow = {
      judge,
      n: human.length,
      unparsed,
      missing,
      accuracy: null,
      kappa: null,
      ac1: null,
      tpr: null,
      tnr: null,
      yesRateDiff: null,
      confusion: null,
      perLabel: null,
      pearson: null,
      spearman: null,
      kendall: null,
      ordering: null,
      scores: null,
      orderingByTaskType: [],
      breakdowns: [],
      human,
      verdict,
      subjects,
      unparsedSubjects,
    };
    if (human.length > 0 && !numeric) {
      const labels = data.categories;
      const acc = accuracy(human, verdict);
      row.accuracy = { ...proportionEstimate(human.map((h, i) => (h === verdict[i] ? 1 : 0))), value: acc };
      const k = cohenKappa(human, verdict, { categories: labels });
      // Clipped to [−1, 1] and never zero-width (a perfect judge: not estimable, with the reason). A judge
      // (or final label) with one category: kappa is 0 by construction (p_e = p_o), not estimable either.
      row.kappa =
        k.constantRater !== null && Number.isFinite(k.kappa)
          ? {
              value: k.kappa,
              ci: null,
              n: k.n,
              se: null,
              method: `not estimable: ${constantRaterReason(k.constantRater === "a" ? "the final label" : k.constantRater === "b" ? "the judge" : "the judge and the final label each")}`,
            }
          : honestEstimate(
              {
                value: k.kappa,
                ci: Number.isFinite(k.kappa) && Number.isFinite(k.se) ? k.ci : null,
                n: k.n,
                se: k.se,
                method: "asymptotic SE",
              },
              [-1, 1],
              "the asymptotic SE is 0 (e.g. the judge agrees with the final label on every unit)",
            );
      const pairs = human.map((h, i) => [h, verdict[i]]);
      const ac1v = gwetAC1(pairs, { categories: labels }).value;
      if (Number.isFinite(ac1v) && pairs.length > 1) {
        // Analytic SE (Gwet 2008; irrCAC gwet.ac1.raw), cluster-robust over items.
        const g = gwetSE(pairs, { categories: labels, cluster: subjects.map((s) => data.subjects[s].itemId) });
        const ok = Number.isFinite(g.se);
        row.ac1 = honestEstimate(
          {
            value: ac1v,
            ci: ok ? [ac1v - Z95 * g.se, ac1v + Z95 * g.se] : null,
            n: pairs.length,
            se: ok ? g.se : null,
            method: analyticMethod(g.clusters),
          },
          [-1, 1],
          "the analytic SE is 0 (e.g. the judge agrees with the final label on every unit)",
        );
      } else row.ac1 = { value: ac1v, ci: null, n: pairs.length, method: "" };
      row.confusion = confusionMatrix(human, verdict, labels.some((l) => !verdict.includes(l) && !human.includes(l)) ? undefined : labels);
      row.perLabel = perLabelMetrics(human, verdict, row.confusion.labels);
      if (data.positive != null) {
        const rt = rates(human, verdict, data.positive);
        const pos = human.map((h, i) => (h === data.positive ? (verdict[i] === data.positive ? 1 : 0) : -1)).filter((x) => x >= 0);
        const neg = human.map((h, i) => (h !== data.positive ? (verdict[i] !== data.positive ? 1 : 0) : -1)).filter((x) => x >= 0);
        row.tpr = { ...proportionEstimate(pos), value: rt.tpr };
        row.tnr = { ...proportionEstimate(neg), value: rt.tnr };
        row.yesRateDiff = yesRateDifference(human, verdict, data.positive).difference;
      }
    }
    if (human.length > 0 && numeric) {
      const h = human.map(Number);
      const v = verdict.map(Number);
      if (h.length >= 3) {
        const r = pearson(v, h);
        row.pearson = { value: r.r, ci: Number.isFinite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" };
        row.spearman = spearman(v, h).rho;
        row.kendall = kendallTauB(v, h).tau;
      }
      const scored = subjects.map((s, i) => ({
        itemId: data.subjects[s].itemId,
        human: h[i],
        judge: v[i],
        taskType: data.subjects[s].taskType ?? "(none)",
      }));
      row.ordering = pairwiseOrderingConsistency(scored);
      // The one code path of every score-judge figure (the command reads the same from files).
      row.scores = scoreJudgeFigures(
        judge.name,
        scored.map((x) => ({ cluster: String(x.itemId), pairKey: String(x.itemId), human: x.human, judge: x.judge })),
        { unparsed, missing },
        { seed: data.task.seed, scale: scaleRange(data.categories, h) },
      );
      const types = [...new Set(scored.map((x) => x.taskType))].sort();
      row.orderingByTaskType = types.map((t) => ({
        taskType: t,
        result: pairwiseOrderingConsistency(scored.filter((x) => x.taskType === t)),
      }));
    }
    // Breakdowns per domain and judged model (and the other dimensions).
    const fam = family(judge.model);
    for (const dim of DIMENSIONS) {
      const groups = new Map<string, number[]>();
      subjects.forEach((s, i) => {
        const val = data.subjects[s][dim];
        if (val == null) return;
        const key = String(val);
        (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
      });
      for (const [value, idx] of [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
        const hh = idx.map((i) => human[i]);
        const vv = idx.map((i) => verdict[i]);
        let acc: Estimate | null = null;
        let yrd: number | null = null;
        let pr: Estimate | null = null;
        if (!numeric) {
          acc = { ...proportionEstimate(hh.map((x, i) => (x === vv[i] ? 1 : 0))), value: accuracy(hh, vv) };
          if (data.positive != null) yrd = yesRateDifference(hh, vv, data.positive).difference;
        } else if (idx.length >= 3) {
          const r = pearson(vv.map(Number), hh.map(Number));
          pr = { value: r.r, ci: Number.isFinite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" };
        }
        row.breakdowns.push({
          judgeId: judge.id,
          dimension: dim,
          value,
          n: idx.length,
          accuracy: acc,
          yesRateDiff: yrd,
          pearson: pr,
          small: idx.length < SMALL_N,
          ownFamily: dim === "model" && fam !== "" && family(value) === fam,
        });
      }
    }
    out.push(row);
  }
  // Rank: accuracy (categorical) or Pearson (scores), best first.
  const key = (r: JudgeRow) => (numeric ? r.pearson?.value : r.accuracy?.value) ?? -Infinity;
  return out.sort((a, b) => key(b) - key(a) || a.judge.name.localeCompare(b.judge.name));
}

/** Base judge name and variant label of a judge, from settings.variantOf / settings.variant (else promptVersion). */
export function variantOf(j: JudgeInfo): { base: string; variant: string } {
  const s = j.settings ?? {};
  const base = typeof s.variantOf === "string" ? s.variantOf : typeof s.baseJudge === "string" ? s.baseJudge : j.name;
  const variant =
    typeof s.variant === "string"
      ? s.variant
      : typeof s.ablation === "string"
        ? s.ablation
        : base === j.name
          ? "full (base)"
          : `prompt ${j.promptVersion}`;
  return { base, variant };
}

/** Judges grouped by base judge, only groups with at least one variant. */
export function ablationGroups(rows: JudgeRow[]): { base: string; rows: { variant: string; row: JudgeRow }[] }[] {
  const groups = new Map<string, { variant: string; row: JudgeRow }[]>();
  for (const row of rows) {
    const { base, variant } = variantOf(row.judge);
    (groups.get(base) ?? groups.set(base, []).get(base)!).push({ variant, row });
  }
  return [...groups]
    .filter(([, rs]) => rs.length > 1)
    .map(([base, rs]) => ({
      base,
      rows: rs.sort((a, b) => (a.row.judge.name === base ? -1 : b.row.judge.name === base ? 1 : a.variant.localeCompare(b.variant))),
    }));
}

/** Disagreement of a judge with the humans on one subject. Scores: |judge·scale − human| ≥ threshold. */
export function disagrees(human: Label, verdict: Label, numeric: boolean, scale: number, threshold: number): boolean {
  if (!numeric) return human !== verdict;
  return Math.abs(Number(verdict) * scale - Number(human)) >= threshold;
}
