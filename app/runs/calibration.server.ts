/**
 * Judge calibration from a run: a human "response satisfaction" task drawn by
 * a seeded probability sample of the verdicts the run's first judge gave
 * (unit.responseId + unit.checklistItemId; Self-Correction Bench: the whole
 * reply, checklistItemId null, "does it reach the golden answer?"; C3EBench:
 * a writing-quality task on the judge's 1–10 scale, see below), and — once
 * labels exist — every headline metric of the protocol raw (the judge's) and
 * bias-corrected with the human labels.
 *
 * The human value of a unit is the strict majority of its submitted Yes/No
 * labels (the latest revision of each annotator). A split (no strict
 * majority) is left out, or — when the researcher chooses adjudication — takes
 * the adjudicated label, and is left out while not adjudicated; the report
 * counts what each rule dropped.
 *
 * Estimator. Every headline metric is a weighted sum over the run's
 * population of judged units, θ = Σ a_u·g(Y_u) (Acc_t: a = 1/(I_t·N_i);
 * FB-Bench error correction: a = w_j/I; accuracies: a = 1/I; Pass_t and
 * response maintenance are sums over responses of a function of all their
 * checklist labels). The judge gives f_u for the whole population, so
 * Σ a_u·f_u is known exactly; the correction Σ a_u·(Y_u − f_u) is estimated
 * from the labelled sample with each unit weighted by its inclusion
 * probability π_u under the sampling plan (Horvitz–Thompson): the
 * prediction-powered rectifier of Angelopoulos et al. (2023, §2, mean
 * estimation) with design weights, i.e. the difference estimator of survey
 * sampling (Särndal, Swensson & Wretman 1992, §6.3). Units drawn but left
 * without a human value are treated as missing at random within their
 * stratum (model × turn × condition): π is scaled by the stratum's labelled
 * share. Variance: the Poisson-sampling form over the sampled clusters,
 * Σ_c (1 − π_c)·Z_c² with Z_c = Σ_{u ∈ c} a_u·(Y_u − f_u)/π_u (a cluster is a
 * sampled response under the whole-responses plan, else a unit), so errors of
 * one sampled response are not counted as independent draws; 95% interval
 * ± 1.96·SE, clipped to the metric's range, and the point estimate clipped to
 * the same range (flagged). Ratios (the blind spot, Self-Correction Bench
 * Eq. 2) use the delta method.
 *
 * Units are assigned at once by the annotation module's planner
 * (planAssignments), so the task is labelable as soon as it exists.
 */
import { and, eq, inArray } from "drizzle-orm";
import { schema, type Db } from "../../db/client";
import { DomainError } from "../errors";
import { planAssignments } from "../annotation/assignment";
import { readConfig } from "../annotation/config";
import { projectMembers } from "../annotation/tasks.server";
import { shownOrderFor } from "../annotation/random";
import { meanCI, seededRandom, wilsonCI, wilsonEffectiveCI } from "../stats";
import { TASK_TYPES, taskTypeOf } from "./protocols/c3ebench";
import { PROTOCOLS } from "./protocols";
import {
  clipNote,
  type CalibratedMetric,
  type Draw,
  differenceEstimate,
  type Interval,
  joinNotes,
  PERCENT,
  type ResponseDraws,
  SCORE_1_10,
  stratumOf,
  type Term,
  unitKey,
} from "./protocols/calibration";
import { resultsInputFor } from "./results.server";
import type { StoredRunConfig } from "./runner.server";

export type SamplingPlan =
  /** RefineBench E.4: for each problem one checklist item, then one response, at random. */
  | { kind: "e4" }
  /** Up to `perStratum` (response, checklist item) pairs per model × turn (× condition), simple random sampling within the stratum. */
  | { kind: "stratified"; perStratum: number }
  /** Up to `perStratum` whole responses per model × turn (× condition), with every checklist item: needed for Pass_t and response maintenance. */
  | { kind: "responses"; perStratum: number }
  /** A simple random sample of `size` units from the whole run. */
  | { kind: "uniform"; size: number };

export type SplitRule = "exclude" | "adjudicate";

type Candidate = {
  responseId: number;
  itemId: number;
  checklistItemId: number | null;
  model: string;
  turn: number;
  condition: string | null;
};
type Drawn = Candidate & { pi: number };

/**
 * A calibration task cannot be made as asked (400). Its message starts with the setting it is
 * about ("pool: choose at least one annotator"), which is then also its `field`.
 */
export class CalibrationError extends DomainError {
  constructor(message: string, field?: string) {
    super(message, { field });
  }
}

/** What a human labels when calibrating this run's protocol (see Protocol.calibration). */
function calibrationUnit(run: typeof schema.runs.$inferSelect) {
  return PROTOCOLS[run.protocol]?.calibration?.unit ?? "checklist-item";
}

function primaryJudge(run: typeof schema.runs.$inferSelect): number {
  return (run.config as unknown as StoredRunConfig).judges[0].judgeId;
}

/** The first judge's parsed verdicts of the run, as candidate units. */
function candidates(db: Db, run: typeof schema.runs.$inferSelect): Candidate[] {
  const checklist = calibrationUnit(run) === "response" ? "v.checklist_item_id IS NULL" : "v.checklist_item_id IS NOT NULL";
  const rows = db.$client
    .prepare(
      `SELECT v.response_id AS responseId, r.item_id AS itemId, v.checklist_item_id AS checklistItemId, r.model, r.turn, r.metadata
       FROM verdicts v JOIN responses r ON r.id = v.response_id
       WHERE v.run_id = ? AND v.judge_id = ? AND ${checklist} AND v.parse_status NOT IN ('failed','unparsed') AND v.value IN ('Yes','No')
       ORDER BY r.item_id, v.checklist_item_id, r.id`,
    )
    .all(run.id, primaryJudge(run)) as (Omit<Candidate, "condition"> & { metadata: string | null })[];
  return rows.map(({ metadata, ...c }) => {
    const md = metadata ? (JSON.parse(metadata) as Record<string, unknown>) : {};
    return { ...c, condition: typeof md.condition === "string" ? md.condition : null };
  });
}

/** Draws the units and gives each its inclusion probability under the plan. */
export function sampleUnits(all: Candidate[], plan: SamplingPlan, seed: number): Drawn[] {
  const rand = seededRandom(seed);
  const pickIndex = (n: number) => Math.floor(rand() * n);
  const srs = <T>(xs: T[], k: number): T[] => {
    const pool = [...xs];
    const out: T[] = [];
    for (let i = 0; i < k && pool.length; i++) out.push(pool.splice(pickIndex(pool.length), 1)[0]);
    return out;
  };
  const group = <K>(xs: Candidate[], key: (c: Candidate) => K) => {
    const m = new Map<K, Candidate[]>();
    for (const c of xs) m.set(key(c), [...(m.get(key(c)) ?? []), c]);
    return m;
  };
  if (plan.kind === "e4") {
    const out: Drawn[] = [];
    for (const [, cs] of [...group(all, (c) => c.itemId)].sort((a, b) => a[0] - b[0])) {
      const checklistIds = [...new Set(cs.map((c) => c.checklistItemId))].sort((a, b) => (a ?? 0) - (b ?? 0));
      const cid = checklistIds[pickIndex(checklistIds.length)];
      const options = cs.filter((c) => c.checklistItemId === cid).sort((a, b) => a.responseId - b.responseId);
      const chosen = options[pickIndex(options.length)];
      out.push({ ...chosen, pi: 1 / (checklistIds.length * options.length) });
    }
    return out;
  }
  if (plan.kind === "uniform") return srs(all, plan.size).map((c) => ({ ...c, pi: Math.min(1, plan.size / all.length) }));
  const out: Drawn[] = [];
  for (const [, cs] of [...group(all, stratumOf)].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (plan.kind === "stratified") {
      for (const c of srs(cs, plan.perStratum)) out.push({ ...c, pi: Math.min(1, plan.perStratum / cs.length) });
    } else {
      const responses = [...new Set(cs.map((c) => c.responseId))].sort((a, b) => a - b);
      const chosen = new Set(srs(responses, plan.perStratum));
      const pi = Math.min(1, plan.perStratum / responses.length);
      for (const c of cs) if (chosen.has(c.responseId)) out.push({ ...c, pi });
    }
  }
  return out;
}

function describePlan(plan: SamplingPlan): string {
  if (plan.kind === "e4") return "E.4 plan: one checklist item and one response per problem";
  if (plan.kind === "stratified") return `stratified: up to ${plan.perStratum} units per model × turn`;
  if (plan.kind === "responses") return `whole responses: up to ${plan.perStratum} per model × turn, every checklist item`;
  return `uniform: ${plan.size} units at random`;
}

/**
 * Creates the human task, its units and their assignments in one transaction.
 * `pool`: the annotators (project members); default: every member with the
 * annotator role. Each unit goes to `overlap` of them (default 2, at most the
 * pool size). `warnings` says which models the plan cannot give
 * `minLabelsPerModel` units (default 10).
 */
export function createCalibrationTask(
  db: Db,
  args: {
    runId: number;
    projectId: number;
    plan: SamplingPlan;
    seed: number;
    overlap?: number;
    pool?: number[];
    name?: string;
    createdBy?: number | null;
    minLabelsPerModel?: number;
    splits?: SplitRule;
  },
) {
  const run = db
    .select()
    .from(schema.runs)
    .where(and(eq(schema.runs.id, args.runId), eq(schema.runs.projectId, args.projectId)))
    .get();
  if (!run || run.datasetId == null) throw new CalibrationError(`run ${args.runId}: not found in this project`);
  const judgeId = primaryJudge(run);
  const members = projectMembers(args.projectId, db);
  const pool = [...new Set(args.pool ?? members.filter((m) => m.role === "annotator").map((m) => m.id))];
  const stranger = pool.find((id) => !members.some((m) => m.id === id));
  if (stranger !== undefined) throw new CalibrationError(`pool: user ${stranger} is not a member of this project`, "pool");
  const overlap = args.overlap ?? 2;
  if (pool.length === 0) throw new CalibrationError("pool: choose at least one annotator", "pool");
  if (overlap < 1 || overlap > pool.length)
    throw new CalibrationError(
      `overlap: ${overlap} annotators per unit needs a pool of at least ${overlap}; the pool has ${pool.length}`,
      "overlap",
    );
  if (calibrationUnit(run) === "score") return createC3eTask(db, run, judgeId, { ...args, pool, overlap });
  const all = candidates(db, run);
  const units = sampleUnits(all, args.plan, args.seed);
  if (units.length === 0) throw new CalibrationError("this run has no parsed verdicts to calibrate yet");
  const min = args.minLabelsPerModel ?? 10;
  const warnings: string[] = [];
  for (const model of [...new Set(all.map((c) => c.model))].sort()) {
    const n = units.filter((u) => u.model === model).length;
    if (n < min)
      warnings.push(`${model}: this plan draws ${n} unit${n === 1 ? "" : "s"}, fewer than the minimum of ${min} labelled units per model`);
  }
  const sc = calibrationUnit(run) === "response";
  return db.transaction(
    (tx) => {
      const task = tx
        .insert(schema.tasks)
        .values({
          projectId: args.projectId,
          datasetId: run.datasetId!,
          kind: "response-satisfaction",
          // Neutral: run names often carry model names, and annotators see task names.
          name: args.name ?? "Judge calibration",
          guidelines: sc
            ? "Does the response finally arrive at the correct answer (the reference shown)? Answer Yes or No."
            : "Does the response satisfy the checklist item? Answer Yes or No.",
          overlap,
          seed: args.seed,
          // `plan` names the plan as the annotation module's config expects (a string); the details sit in `samplingPlan`.
          config: {
            source: "run",
            runId: run.id,
            judgeId,
            plan: args.plan.kind === "e4" ? "paper" : args.plan.kind === "responses" ? "all-items-of-sampled-responses" : "stratified",
            samplingPlan: args.plan,
            /** Inclusion probability of each unit, by unit position. */
            inclusion: units.map((u) => u.pi),
            splitRule: args.splits ?? "exclude",
            minLabelsPerModel: min,
            ...(sc ? { showReference: true } : {}),
            pool,
            adjudicators: [],
          },
          createdBy: args.createdBy ?? null,
        })
        .returning()
        .get();
      const assignments = fillCalibrationTask(
        tx,
        task.id,
        !args.name,
        units.map((u) => ({ itemId: u.itemId, checklistItemId: u.checklistItemId, responseId: u.responseId })),
        { pool, overlap, seed: args.seed },
      );
      return { taskId: task.id, units: units.length, assignments, pool, warnings };
    },
    { behavior: "immediate" },
  );
}

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
type CalibrationUnit = { itemId: number; checklistItemId?: number | null; responseId?: number | null; responseIds?: number[] };

/**
 * Completes a calibration task inside its creating transaction: the neutral name
 * ("Judge calibration #id") unless one was given, the units in drawn order, and
 * k-overlap assignments from the pool, each with its seeded shown order of the
 * unit's responses. Returns the number of assignments.
 */
function fillCalibrationTask(
  tx: Tx,
  taskId: number,
  neutralName: boolean,
  units: CalibrationUnit[],
  a: { pool: number[]; overlap: number; seed: number },
): number {
  if (neutralName)
    tx.update(schema.tasks)
      .set({ name: `Judge calibration #${taskId}` })
      .where(eq(schema.tasks.id, taskId))
      .run();
  const unitIds = units.map(
    (u, position) =>
      tx
        .insert(schema.units)
        .values({ taskId, ...u, position })
        .returning({ id: schema.units.id })
        .get().id,
  );
  const plan = planAssignments(unitIds, a.pool, a.overlap, a.seed);
  let assignments = 0;
  unitIds.forEach((unitId, i) => {
    for (const annotatorId of plan.get(unitId)!) {
      tx.insert(schema.assignments)
        .values({ unitId, annotatorId, shownOrder: shownOrderFor(units[i].responseIds ?? null, a.seed, unitId, annotatorId) })
        .run();
      assignments++;
    }
  });
  return assignments;
}

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
function c3eCandidates(db: Db, run: typeof schema.runs.$inferSelect, judgeId: number): C3eCandidate[] {
  const rows = db.$client
    .prepare(
      `SELECT v.response_id AS responseId, r.item_id AS itemId, r.model, r.metadata, i.task_type AS itemTaskType
       FROM verdicts v JOIN responses r ON r.id = v.response_id JOIN items i ON i.id = r.item_id
       WHERE v.run_id = ? AND v.judge_id = ? AND v.checklist_item_id IS NULL AND v.parse_status NOT IN ('failed','unparsed') AND v.score IS NOT NULL
       ORDER BY r.item_id, r.id`,
    )
    .all(run.id, judgeId) as { responseId: number; itemId: number; model: string; metadata: string | null; itemTaskType: string | null }[];
  return rows.map((r) => {
    const md = r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : {};
    return {
      responseId: r.responseId,
      itemId: r.itemId,
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

function createC3eTask(
  db: Db,
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
  const all = c3eCandidates(db, run, judgeId);
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
  return db.transaction(
    (tx) => {
      const task = tx
        .insert(schema.tasks)
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
        .returning()
        .get();
      const assignments = fillCalibrationTask(
        tx,
        task.id,
        !args.name,
        drawn.map((d) => ({ itemId: d.itemId, responseIds: d.responseIds })),
        { pool: args.pool, overlap: args.overlap, seed: args.seed },
      );
      return { taskId: task.id, units: drawn.length, assignments, pool: args.pool, warnings };
    },
    { behavior: "immediate" },
  );
}

/**
 * The human 1–10 score of each writing of a C3EBench calibration task: the mean of its annotators' latest submitted
 * scores; with the "adjudicate" rule, a unit with an adjudicated label takes the adjudicated scores.
 */
export function humanScores(db: Db, taskId: number, rule: SplitRule): { values: Map<string, number>; counts: HumanCounts } {
  const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get();
  const units = db
    .select({ id: schema.units.id, responseIds: schema.units.responseIds })
    .from(schema.units)
    .where(eq(schema.units.taskId, taskId))
    .all();
  const ids = units.map((u) => u.id);
  const labels = ids.length
    ? (db.$client
        .prepare(
          `SELECT a.unit_id AS unitId, an.label FROM assignments a JOIN annotations an ON an.assignment_id = a.id
           WHERE a.unit_id IN (${ids.map(() => "?").join(",")}) AND an.status = 'submitted'
             AND an.revision = (SELECT MAX(revision) FROM annotations x WHERE x.assignment_id = a.id AND x.status = 'submitted')`,
        )
        .all(...ids) as { unitId: number; label: string }[])
    : [];
  const scoresOf = (raw: unknown): Record<string, number> => {
    let v = raw;
    if (typeof raw === "string") {
      try {
        v = JSON.parse(raw);
      } catch {
        return {};
      }
    }
    const sc = (v as { scores?: Record<string, unknown> } | null)?.scores ?? {};
    return Object.fromEntries(Object.entries(sc).filter((e): e is [string, number] => typeof e[1] === "number" && Number.isFinite(e[1])));
  };
  const byUnit = new Map<number, Record<string, number>[]>();
  for (const l of labels) byUnit.set(l.unitId, [...(byUnit.get(l.unitId) ?? []), scoresOf(l.label)]);
  const adjudications = readConfig(task?.config).adjudications ?? {};
  const values = new Map<string, number>();
  const counts: HumanCounts = { units: ids.length, valued: 0, unlabelled: 0, splitDropped: 0, adjudicated: 0 };
  for (const u of units) {
    const rids = (u.responseIds ?? []).filter((r): r is number => typeof r === "number");
    const adj = rule === "adjudicate" && adjudications[String(u.id)] ? scoresOf(adjudications[String(u.id)].label) : null;
    const ls = byUnit.get(u.id) ?? [];
    if (adj && rids.every((r) => adj[String(r)] !== undefined)) {
      for (const r of rids) values.set(unitKey(r, null), adj[String(r)]);
      counts.adjudicated++;
      counts.valued++;
      continue;
    }
    if (ls.length === 0) {
      counts.unlabelled++;
      continue;
    }
    let any = false;
    for (const r of rids) {
      const xs = ls.map((l) => l[String(r)]).filter((x): x is number => x !== undefined);
      if (xs.length) {
        values.set(unitKey(r, null), xs.reduce((a, b) => a + b, 0) / xs.length);
        any = true;
      }
    }
    if (any) counts.valued++;
    else counts.unlabelled++;
  }
  return { values, counts };
}

// ─── Human values ────────────────────────────────────────────────────────────

export type HumanCounts = {
  units: number;
  /** Units with a human value under the rule. */
  valued: number;
  /** Dropped: no submitted label yet. */
  unlabelled: number;
  /** Dropped: a split (no strict majority) without an adjudication under the rule. */
  splitDropped: number;
  /** Splits resolved by adjudication (rule "adjudicate"). */
  adjudicated: number;
};

/** The human value (1 = Yes) of each unit: strict majority of submitted labels; splits left out or adjudicated. */
export function humanValues(db: Db, taskId: number, rule: SplitRule): { values: Map<number, number>; counts: HumanCounts } {
  const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get();
  const units = db.select({ id: schema.units.id }).from(schema.units).where(eq(schema.units.taskId, taskId)).all();
  const ids = units.map((u) => u.id);
  const labels = ids.length
    ? (db.$client
        .prepare(
          `SELECT a.unit_id AS unitId, an.label FROM assignments a JOIN annotations an ON an.assignment_id = a.id
           WHERE a.unit_id IN (${ids.map(() => "?").join(",")}) AND an.status = 'submitted'
             AND an.revision = (SELECT MAX(revision) FROM annotations x WHERE x.assignment_id = a.id AND x.status = 'submitted')`,
        )
        .all(...ids) as { unitId: number; label: string }[])
    : [];
  const yesNo = (raw: unknown): number | null => {
    let v = raw;
    if (typeof raw === "string") {
      try {
        v = JSON.parse(raw);
      } catch {
        v = raw;
      }
    }
    return v === "Yes" ? 1 : v === "No" ? 0 : null;
  };
  const byUnit = new Map<number, number[]>();
  for (const l of labels) {
    const v = yesNo(l.label);
    if (v !== null) byUnit.set(l.unitId, [...(byUnit.get(l.unitId) ?? []), v]);
  }
  const adjudications = readConfig(task?.config).adjudications ?? {};
  const values = new Map<number, number>();
  const counts: HumanCounts = { units: ids.length, valued: 0, unlabelled: 0, splitDropped: 0, adjudicated: 0 };
  for (const id of ids) {
    const xs = byUnit.get(id);
    if (!xs || xs.length === 0) {
      counts.unlabelled++;
      continue;
    }
    const yes = xs.filter((x) => x === 1).length;
    if (2 * yes > xs.length) values.set(id, 1);
    else if (2 * yes < xs.length) values.set(id, 0);
    else {
      const adj = rule === "adjudicate" ? yesNo(adjudications[String(id)]?.label) : null;
      if (adj === null) {
        counts.splitDropped++;
        continue;
      }
      values.set(id, adj);
      counts.adjudicated++;
    }
  }
  counts.valued = values.size;
  return { values, counts };
}

// ─── Estimation ──────────────────────────────────────────────────────────────
// The estimator itself (differenceEstimate and its terms) is pure and lives in protocols/calibration.
export { differenceEstimate, type CalibratedMetric, type Draw, type Interval, type Term };

export type CalibrationReport = {
  taskId: number;
  protocol: string;
  plan: string;
  weighting: string;
  splitRule: SplitRule;
  human: HumanCounts;
  /** What each split rule would keep and drop (the rule in use is `human`). */
  humanByRule: Record<SplitRule, HumanCounts>;
  /** Score-scale tasks (C3EBench): the scale and the rule giving a writing's human score. */
  scale?: string;
  metrics: CalibratedMetric[];
};

type TaskRow = typeof schema.tasks.$inferSelect;

function drawsOf(db: Db, task: TaskRow, values: Map<number, number>) {
  const units = db.select().from(schema.units).where(eq(schema.units.taskId, task.id)).all();
  const cfg = task.config as { inclusion?: number[]; samplingPlan?: SamplingPlan };
  const rids = [...new Set(units.map((u) => u.responseId).filter((x): x is number => x != null))];
  const resp = rids.length
    ? db
        .select({
          id: schema.responses.id,
          model: schema.responses.model,
          turn: schema.responses.turn,
          metadata: schema.responses.metadata,
        })
        .from(schema.responses)
        .where(inArray(schema.responses.id, rids))
        .all()
    : [];
  const info = new Map(
    resp.map((r) => [
      r.id,
      {
        model: r.model,
        turn: r.turn,
        condition:
          typeof (r.metadata as Record<string, unknown>)?.condition === "string"
            ? ((r.metadata as Record<string, unknown>).condition as string)
            : null,
      },
    ]),
  );
  const pairs = new Map<string, Draw>();
  const byResponse: ResponseDraws = new Map();
  for (const u of units) {
    if (u.responseId == null) continue;
    const i = info.get(u.responseId);
    if (!i) continue;
    // Tasks created before inclusion probabilities were stored: not weighable.
    const pi = cfg.inclusion?.[u.position];
    if (pi === undefined) continue;
    const stratum = stratumOf(i);
    const y = values.has(u.id) ? values.get(u.id)! : null;
    pairs.set(unitKey(u.responseId, u.checklistItemId), {
      pi,
      stratum,
      y,
      cluster: cfg.samplingPlan?.kind === "responses" ? `r${u.responseId}` : `u${u.id}`,
    });
    const r = byResponse.get(u.responseId) ?? { pi, stratum, ys: [], checklist: [] };
    r.ys.push(y);
    r.checklist.push(u.checklistItemId);
    byResponse.set(u.responseId, r);
  }
  return { pairs, byResponse, plan: cfg.samplingPlan, weighable: cfg.inclusion !== undefined };
}

/** Every headline metric of the run's protocol, raw and corrected by the task's human labels. */
export function calibrationReport(db: Db, runId: number, taskId: number, opts: { splits?: SplitRule } = {}): CalibrationReport | null {
  const run = db.select().from(schema.runs).where(eq(schema.runs.id, runId)).get();
  const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get();
  if (!run || !task) return null;
  const splitRule: SplitRule =
    opts.splits ?? ((task.config as { splitRule?: SplitRule }).splitRule === "adjudicate" ? "adjudicate" : "exclude");
  if (calibrationUnit(run) === "score") return c3eReport(db, run, task, splitRule);
  const { values, counts } = humanValues(db, taskId, splitRule);
  const { pairs, byResponse, plan, weighable } = drawsOf(db, task, values);
  const metrics: CalibratedMetric[] = [];
  const wholeResponses = plan?.kind === "responses";
  const push = (
    metric: string,
    model: string,
    group: string | null,
    r: ReturnType<typeof differenceEstimate>,
    note: string | null = null,
  ) =>
    metrics.push({
      metric,
      model,
      group,
      raw: r.raw,
      corrected: weighable ? r.corrected : null,
      note: !weighable
        ? "this task predates sampling weights; create a new calibration task"
        : joinNotes(
            note ??
              (r.unlabelledStrata
                ? `${r.unlabelledStrata} stratum(s) without a human value: corrected only where labelled`
                : r.corrected
                  ? null
                  : "needs ≥ 2 labelled units"),
            clipNote(r.corrected),
          ),
    });
  PROTOCOLS[run.protocol]?.calibration?.targets?.({
    results: resultsInputFor(db, run, primaryJudge(run)),
    pairs,
    byResponse,
    wholeResponses,
    weighable,
    push,
    add: (m) => metrics.push(m),
  });
  return {
    taskId,
    protocol: run.protocol,
    plan: plan ? describePlan(plan) : "unknown",
    weighting: weighable
      ? "each labelled unit weighted by 1 / its inclusion probability under the plan (scaled by its stratum's labelled share)"
      : "no sampling weights stored with this task: no corrected values",
    splitRule,
    human: counts,
    humanByRule: { exclude: humanValues(db, taskId, "exclude").counts, adjudicate: humanValues(db, taskId, "adjudicate").counts },
    metrics,
  };
}

/**
 * C3EBench: each model's mean judge score per task type and overall (as in the results), raw and corrected by the
 * human 1–10 scores with the same design-weighted difference estimator (cluster = the sampled instruction).
 */
function c3eReport(db: Db, run: typeof schema.runs.$inferSelect, task: TaskRow, splitRule: SplitRule): CalibrationReport {
  const judgeId = primaryJudge(run);
  const { values, counts } = humanScores(db, task.id, splitRule);
  const cfg = task.config as { inclusion?: number[]; samplingPlan?: SamplingPlan };
  const weighable = cfg.inclusion !== undefined;
  const all = c3eCandidates(db, run, judgeId);
  const typeOf = new Map(all.map((c) => [c.responseId, c.taskType]));
  const draws = new Map<string, Draw>();
  for (const u of db.select().from(schema.units).where(eq(schema.units.taskId, task.id)).all()) {
    const pi = cfg.inclusion?.[u.position];
    if (pi === undefined) continue;
    for (const r of u.responseIds ?? []) {
      if (typeof r !== "number" || !typeOf.has(r)) continue;
      const k = unitKey(r, null);
      draws.set(k, { pi, stratum: typeOf.get(r)!, y: values.has(k) ? values.get(k)! : null, cluster: `u${u.id}` });
    }
  }
  const score = new Map(
    (
      db.$client
        .prepare(
          `SELECT response_id AS r, score FROM verdicts WHERE run_id = ? AND judge_id = ? AND checklist_item_id IS NULL AND score IS NOT NULL`,
        )
        .all(run.id, judgeId) as { r: number; score: number }[]
    ).map((v) => [v.r, v.score]),
  );
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
            clipNote(r.corrected),
          ),
    });
  for (const model of [...new Set(all.map((c) => c.model))].sort()) {
    const mine = all.filter((c) => c.model === model);
    const terms = (cs: C3eCandidate[]): Term[] =>
      cs.map((c) => ({ key: unitKey(c.responseId, null), a: 1 / cs.length, f: score.get(c.responseId) ?? NaN, stratum: c.taskType }));
    for (const t of TASK_TYPES) {
      const cs = mine.filter((c) => c.taskType === t);
      if (cs.length) push(`Mean score (${t})`, model, t, differenceEstimate(terms(cs), draws, SCORE_1_10));
    }
    push("Mean score (overall)", model, null, differenceEstimate(terms(mine), draws, SCORE_1_10));
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
    humanByRule: { exclude: humanScores(db, task.id, "exclude").counts, adjudicate: humanScores(db, task.id, "adjudicate").counts },
    scale: "1–10, the reference = 6 (the judge's scale); human score = mean of the annotators' scores",
    metrics,
  };
}

export type CalibratedScore = {
  model: string;
  raw: { mean: number; ci: [number, number]; n: number };
  /** `se`: the design-based standard error of the corrected share (in points), from which the effective n comes. */
  corrected: { estimate: number; se: number; ci: [number, number]; n: number; N: number } | null;
};

/**
 * Per model: the share of the first judge's verdicts that are Yes (raw, with the
 * Wilson score interval) and the same share corrected by the human labels (the
 * estimator above, split rule of the task; the Wilson interval at the effective
 * sample size of its design-based SE). Both intervals stay inside 0–100 by
 * construction, where mean ± 1.96·SE had to be clipped. The protocol's own headline metrics are in
 * calibrationReport.
 */
export function calibratedScores(db: Db, runId: number, taskId: number): CalibratedScore[] {
  const run = db.select().from(schema.runs).where(eq(schema.runs.id, runId)).get();
  const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get();
  if (!run || !task || calibrationUnit(run) === "score") return [];
  const all = candidates(db, run);
  const judged = new Map(
    (
      db.$client
        .prepare(
          `SELECT response_id AS r, checklist_item_id AS c, value FROM verdicts WHERE run_id = ? AND judge_id = ? AND value IN ('Yes','No')`,
        )
        .all(runId, primaryJudge(run)) as { r: number; c: number | null; value: string }[]
    ).map((v) => [unitKey(v.r, v.c), v.value === "Yes" ? 1 : 0]),
  );
  const splitRule: SplitRule = (task.config as { splitRule?: SplitRule }).splitRule === "adjudicate" ? "adjudicate" : "exclude";
  const { pairs, weighable } = drawsOf(db, task, humanValues(db, taskId, splitRule).values);
  return [...new Set(all.map((c) => c.model))].sort().map((model) => {
    const mine = all.filter((c) => c.model === model);
    const f = mine.map((c) => judged.get(unitKey(c.responseId, c.checklistItemId)) ?? 0);
    const raw = meanCI(f);
    const terms: Term[] = mine.map((c, i) => ({
      key: unitKey(c.responseId, c.checklistItemId),
      a: 100 / mine.length,
      f: f[i],
      stratum: stratumOf(c),
    }));
    const r = differenceEstimate(terms, pairs, PERCENT);
    const yes = f.reduce((s, v) => s + v, 0);
    const rawCi = f.length ? wilsonCI(yes, f.length) : [NaN, NaN];
    const c = r.corrected;
    const correctedCi = c ? wilsonEffectiveCI(c.estimate / 100, c.se / 100, c.n) : null;
    return {
      model,
      raw: { mean: 100 * raw.mean, ci: [100 * rawCi[0], 100 * rawCi[1]], n: raw.n },
      corrected:
        c && correctedCi && weighable
          ? { estimate: c.estimate, se: c.se, ci: [100 * correctedCi[0], 100 * correctedCi[1]], n: c.n, N: mine.length }
          : null,
    };
  });
}
