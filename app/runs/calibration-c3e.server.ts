import { asc, eq, sql } from "drizzle-orm";
import type { schema } from "../../db/client";
import { dalOf, type DalLike } from "../dal.server";
import { seededRandom } from "../stats";
import { TASK_TYPES, taskTypeOf } from "./protocols/c3ebench";
import {
  boundNote,
  clipNote,
  type CalibratedMetric,
  type Draw,
  differenceEstimate,
  joinNotes,
  SCORE_1_10,
  type Term,
  unitKey,
} from "./protocols/calibration";
import type { CalibrationReport } from "./calibration.server";
import { humanScores } from "./calibration-human.server";
import {
  CalibrationError,
  clustersPerStratum,
  describePlan,
  fillCalibrationTask,
  jsonObject,
  primaryJudge,
  type SamplingPlan,
  type SplitRule,
  thinStrataWarnings,
} from "./calibration-sampling.server";

// ─── C3EBench (RAVEL): 1–10 writing scores ───────────────────────────────────
//
// The judge scores each writing 1–10 with the reference as the 6-point
// baseline (RAVEL E.1–E.4). The human task asks for the same quantity: a
// writing-quality task on the judge's 1–10 scale (scoreMax 10), the reference
// shown as the 6-point anchor, a penalty reason below 4 (the rubric's 1–3
// band, "significant errors"). As in the paper's human rating (F), a unit is
// one instruction with every model's writing, scored by one annotator each
// (overlap annotators per unit); the human score of a writing is the mean of
// its annotators' scores (F: "the final human score is the mean of the two").
// Sampling unit = instruction, strata = task type (Cloze, Edit, Expand,
// End2End); π = k/N_t within a stratum (stratified) or k/N (uniform).

export const C3E_GUIDELINES = [
  "Score each writing from 1 to 10 against the reference text shown, which stands for 6 points.",
  "9–10: clearly better than the reference; the language carries the reader.",
  "7–8: a little better than the reference; follows the instruction and any outline or draft closely.",
  "6: as good as the reference.",
  "4–5: follows the instruction but is weaker than the reference: stiff, shallow or missing minor details.",
  "1–3: serious problems — breaks the instruction, wrong genre or format, logical breaks; pick a penalty reason (a safety problem forces 1).",
  "Score each writing on its own; the order of the writings means nothing.",
].join("\n");

type C3eCandidate = { responseId: number; itemId: number; model: string; taskType: string };

/** The first judge's parsed 1–10 scores of a C3EBench run. */
async function c3eCandidates(db: DalLike, run: typeof schema.runs.$inferSelect, judgeId: number): Promise<C3eCandidate[]> {
  const rows = await dalOf(db).rows<{ responseId: number; itemId: number; model: string; metadata: unknown; itemTaskType: string | null }>(
    sql`SELECT v.response_id AS "responseId", r.item_id AS "itemId", r.model, r.metadata, i.task_type AS "itemTaskType"
        FROM verdicts v JOIN responses r ON r.id = v.response_id JOIN items i ON i.id = r.item_id
        WHERE v.run_id = ${run.id} AND v.judge_id = ${judgeId} AND v.checklist_item_id IS NULL
          AND v.parse_status NOT IN ('failed','unparsed') AND v.score IS NOT NULL
        ORDER BY r.item_id, r.id`,
  );
  return rows.map((r) => {
    const md = jsonObject(r.metadata);
    return {
      responseId: Number(r.responseId),
      itemId: Number(r.itemId),
      model: r.model,
      taskType: taskTypeOf(String(md.taskType ?? r.itemTaskType ?? "")) ?? "End2End",
    };
  });
}

/** Draws instructions (each with every model's scored writing) and gives each its inclusion probability. */
export function sampleC3eItems(
  all: C3eCandidate[],
  plan: SamplingPlan,
  seed: number,
): { itemId: number; taskType: string; responseIds: number[]; pi: number }[] {
  if (plan.kind !== "stratified" && plan.kind !== "uniform")
    throw new CalibrationError(
      `plan: C3EBench runs are calibrated by "stratified" (up to N instructions per task type, every model's writing) or "uniform" (N instructions at random); "${plan.kind}" is a checklist plan`,
      "plan",
    );
  const rand = seededRandom(seed);
  const byItem = new Map<number, { itemId: number; taskType: string; responseIds: number[] }>();
  for (const c of all) {
    const it = byItem.get(c.itemId) ?? { itemId: c.itemId, taskType: c.taskType, responseIds: [] };
    it.responseIds.push(c.responseId);
    byItem.set(c.itemId, it);
  }
  const srs = <T>(xs: T[], k: number): T[] => {
    const pool = [...xs];
    const out: T[] = [];
    for (let i = 0; i < k && pool.length; i++) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
    return out;
  };
  const items = [...byItem.values()].sort((a, b) => a.itemId - b.itemId);
  if (plan.kind === "uniform") return srs(items, plan.size).map((x) => ({ ...x, pi: Math.min(1, plan.size / items.length) }));
  const out: { itemId: number; taskType: string; responseIds: number[]; pi: number }[] = [];
  for (const t of [...new Set(items.map((x) => x.taskType))].sort()) {
    const xs = items.filter((x) => x.taskType === t);
    for (const x of srs(xs, plan.perStratum)) out.push({ ...x, pi: Math.min(1, plan.perStratum / xs.length) });
  }
  return out;
}

export async function createC3eTask(
  db: DalLike,
  run: typeof schema.runs.$inferSelect,
  judgeId: number,
  args: {
    projectId: number;
    plan: SamplingPlan;
    seed: number;
    overlap: number;
    pool: number[];
    name?: string;
    createdBy?: number | null;
    minLabelsPerModel?: number;
    splits?: SplitRule;
  },
) {
  const d = dalOf(db);
  const all = await c3eCandidates(d, run, judgeId);
  const drawn = sampleC3eItems(all, args.plan, args.seed);
  if (drawn.length === 0) throw new CalibrationError("this run has no parsed judge scores to calibrate yet");
  const min = args.minLabelsPerModel ?? 10;
  const modelOf = new Map(all.map((c) => [c.responseId, c.model]));
  const warnings: string[] = [];
  for (const model of [...new Set(all.map((c) => c.model))].sort()) {
    const n = drawn.reduce((k, d) => k + d.responseIds.filter((r) => modelOf.get(r) === model).length, 0);
    if (n < min)
      warnings.push(
        `${model}: this plan draws ${n} writing${n === 1 ? "" : "s"}, fewer than the minimum of ${min} labelled units per model`,
      );
  }
  warnings.push(
    ...thinStrataWarnings(
      clustersPerStratum(all.map((c) => ({ stratum: c.taskType, cluster: c.itemId }))),
      clustersPerStratum(drawn.map((x) => ({ stratum: x.taskType, cluster: x.itemId }))),
      ["instruction", "instructions"],
    ),
  );
  return d.tx(async (tx) => {
    const [task] = await tx
      .insert(d.t.tasks)
      .values({
        projectId: args.projectId,
        datasetId: run.datasetId!,
        kind: "writing-quality",
        name: args.name ?? "Judge calibration",
        guidelines: C3E_GUIDELINES,
        overlap: args.overlap,
        seed: args.seed,
        config: {
          source: "run",
          runId: run.id,
          judgeId,
          plan: "all-responses",
          samplingPlan: args.plan,
          inclusion: drawn.map((d) => d.pi),
          splitRule: args.splits ?? "exclude",
          minLabelsPerModel: min,
          // The judge's scale (RAVEL E.1–E.4): 1–10, the reference = 6; a penalty reason for the 1–3 band.
          scoreMax: 10,
          referenceScore: 6,
          penaltyBelow: 4,
          pool: args.pool,
          adjudicators: [],
        },
        createdBy: args.createdBy ?? null,
      })
      .returning({ id: d.t.tasks.id });
    const assignments = await fillCalibrationTask(
      d,
      tx,
      task.id,
      !args.name,
      drawn.map((x) => ({ itemId: x.itemId, responseIds: x.responseIds })),
      { pool: args.pool, overlap: args.overlap, seed: args.seed },
    );
    return { taskId: task.id, units: drawn.length, assignments, pool: args.pool, warnings };
  });
}

type TaskRow = typeof schema.tasks.$inferSelect;

/**
 * C3EBench: each model's mean judge score per task type and overall (as in the results), raw and corrected by the
 * human 1–10 scores with the same design-weighted difference estimator (cluster = the sampled instruction).
 */
export async function c3eReport(
  db: DalLike,
  run: typeof schema.runs.$inferSelect,
  task: TaskRow,
  splitRule: SplitRule,
): Promise<CalibrationReport> {
  const d = dalOf(db);
  const judgeId = primaryJudge(run);
  const { units: U } = d.t;
  const [{ values, counts }, all, units, scored, exclude, adjudicate] = await Promise.all([
    humanScores(d, task.id, splitRule),
    c3eCandidates(d, run, judgeId),
    d.q.select().from(U).where(eq(U.taskId, task.id)).orderBy(asc(U.position), asc(U.id)),
    d.rows<{ r: number; score: number }>(
      sql`SELECT response_id AS r, score FROM verdicts
          WHERE run_id = ${run.id} AND judge_id = ${judgeId} AND checklist_item_id IS NULL AND score IS NOT NULL ORDER BY id`,
    ),
    humanScores(d, task.id, "exclude"),
    humanScores(d, task.id, "adjudicate"),
  ]);
  const cfg = task.config as { inclusion?: number[]; samplingPlan?: SamplingPlan };
  const weighable = cfg.inclusion !== undefined;
  const typeOf = new Map(all.map((c) => [c.responseId, c.taskType]));
  const draws = new Map<string, Draw>();
  for (const u of units) {
    const pi = cfg.inclusion?.[u.position];
    if (pi === undefined) continue;
    for (const r of u.responseIds ?? []) {
      if (typeof r !== "number" || !typeOf.has(r)) continue;
      const k = unitKey(r, null);
      draws.set(k, { pi, stratum: typeOf.get(r)!, y: values.has(k) ? values.get(k)! : null, cluster: `u${u.id}` });
    }
  }
  const score = new Map(scored.map((v) => [Number(v.r), Number(v.score)]));
  const metrics: CalibratedMetric[] = [];
  const push = (metric: string, model: string, group: string | null, r: ReturnType<typeof differenceEstimate>) =>
    metrics.push({
      metric,
      model,
      group,
      raw: r.raw,
      corrected: weighable ? r.corrected : null,
      note: !weighable
        ? "this task predates sampling weights; create a new calibration task"
        : joinNotes(
            r.corrected ? null : "needs ≥ 2 labelled writings",
            r.unlabelledStrata ? `${r.unlabelledStrata} task type(s) without a human score: corrected only where labelled` : null,
            boundNote(r.corrected),
            clipNote(r.corrected),
          ),
    });
  for (const model of [...new Set(all.map((c) => c.model))].sort()) {
    const mine = all.filter((c) => c.model === model);
    const terms = (cs: C3eCandidate[]): Term[] =>
      cs.map((c) => ({ key: unitKey(c.responseId, null), a: 1 / cs.length, f: score.get(c.responseId) ?? NaN, stratum: c.taskType }));
    for (const t of TASK_TYPES) {
      const cs = mine.filter((c) => c.taskType === t);
      if (cs.length) push(`Mean score (${t})`, model, t, differenceEstimate(terms(cs), draws, SCORE_1_10, SCORE_1_10));
    }
    push("Mean score (overall)", model, null, differenceEstimate(terms(mine), draws, SCORE_1_10, SCORE_1_10));
  }
  return {
    taskId: task.id,
    protocol: run.protocol,
    plan: cfg.samplingPlan
      ? cfg.samplingPlan.kind === "stratified"
        ? `stratified: up to ${cfg.samplingPlan.perStratum} instructions per task type, every model's writing`
        : cfg.samplingPlan.kind === "uniform"
          ? `uniform: ${cfg.samplingPlan.size} instructions at random, every model's writing`
          : describePlan(cfg.samplingPlan)
      : "unknown",
    weighting: weighable
      ? "each labelled writing weighted by 1 / its instruction's inclusion probability under the plan (scaled by its task type's labelled share); the variance sums each instruction's writings (cluster)"
      : "no sampling weights stored with this task: no corrected values",
    splitRule,
    human: counts,
    humanByRule: { exclude: exclude.counts, adjudicate: adjudicate.counts },
    scale: "1–10, the reference = 6 (the judge's scale); human score = mean of the annotators' scores",
    metrics,
    warnings: weighable
      ? thinStrataWarnings(
          clustersPerStratum(all.map((c) => ({ stratum: c.taskType, cluster: c.itemId }))),
          clustersPerStratum(draws.values()),
          ["instruction", "instructions"],
        )
      : [],
  };
}
