/**
 * Judge calibration from a run: human "response satisfaction" tasks drawn by
 * a seeded sampling plan, each unit pointing at the verdict it checks
 * (unit.responseId + unit.checklistItemId), and — once labels exist — each
 * model's score raw (the judge's) and bias-corrected by prediction-powered
 * inference (app/stats ppiMean), with CIs.
 *
 * Units are assigned at once, by the annotation module's own planner
 * (planAssignments: each unit to `overlap` distinct annotators of the pool,
 * balanced, deterministic for the seed), so the task is labelable as soon as it
 * exists; the pool is stored in the task's config like any other task, so the
 * annotation pages can add annotators and rebalance (addToPool) later.
 */
import { and, eq, inArray } from "drizzle-orm";
import { schema, type Db } from "../../db/client";
import { planAssignments } from "../annotation/assignment";
import { projectMembers } from "../annotation/tasks.server";
import { shownOrderFor } from "../annotation/random";
import { meanCI, ppiMean, seededRandom } from "../stats";
import type { StoredRunConfig } from "./runner.server";

export type SamplingPlan = { kind: "e4" } | { kind: "stratified"; perStratum: number };

type Candidate = { responseId: number; itemId: number; checklistItemId: number; model: string; turn: number };

function candidates(db: Db, runId: number, judgeId: number): Candidate[] {
  return db.$client
    .prepare(
      `SELECT v.response_id AS responseId, r.item_id AS itemId, v.checklist_item_id AS checklistItemId, r.model, r.turn
       FROM verdicts v JOIN responses r ON r.id = v.response_id
       WHERE v.run_id = ? AND v.judge_id = ? AND v.checklist_item_id IS NOT NULL AND v.parse_status != 'failed'
       ORDER BY r.item_id, v.checklist_item_id, r.id`,
    )
    .all(runId, judgeId) as Candidate[];
}

/**
 * E.4: for each problem, one checklist item and one response drawn at random.
 * Stratified: up to `perStratum` (response, checklist item) pairs per model × turn.
 */
export function sampleUnits(all: Candidate[], plan: SamplingPlan, seed: number): Candidate[] {
  const rand = seededRandom(seed);
  const pick = <T,>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  if (plan.kind === "e4") {
    const byItem = new Map<number, Candidate[]>();
    for (const c of all) byItem.set(c.itemId, [...(byItem.get(c.itemId) ?? []), c]);
    const out: Candidate[] = [];
    for (const [, cs] of [...byItem].sort((a, b) => a[0] - b[0])) {
      const checklistIds = [...new Set(cs.map((c) => c.checklistItemId))].sort((a, b) => a - b);
      const cid = pick(checklistIds);
      const responses = [...new Set(cs.filter((c) => c.checklistItemId === cid).map((c) => c.responseId))].sort((a, b) => a - b);
      const rid = pick(responses);
      out.push(cs.find((c) => c.checklistItemId === cid && c.responseId === rid)!);
    }
    return out;
  }
  const strata = new Map<string, Candidate[]>();
  for (const c of all) strata.set(`${c.model}\u0000${c.turn}`, [...(strata.get(`${c.model}\u0000${c.turn}`) ?? []), c]);
  const out: Candidate[] = [];
  for (const [, cs] of [...strata].sort((a, b) => a[0].localeCompare(b[0]))) {
    const pool = [...cs];
    for (let i = 0; i < plan.perStratum && pool.length; i++) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  }
  return out;
}

export class CalibrationError extends Error {}

/**
 * Creates the human task, its units and their assignments in one transaction.
 * `pool`: the annotators (project members); default: every member with the
 * annotator role. Each unit goes to `overlap` of them (default 2, at most the pool size).
 */
export function createCalibrationTask(
  db: Db,
  args: { runId: number; projectId: number; plan: SamplingPlan; seed: number; overlap?: number; pool?: number[]; name?: string; createdBy?: number | null },
) {
  const run = db.select().from(schema.runs).where(and(eq(schema.runs.id, args.runId), eq(schema.runs.projectId, args.projectId))).get();
  if (!run || run.datasetId == null) throw new CalibrationError(`run ${args.runId}: not found in this project`);
  const cfg = run.config as unknown as StoredRunConfig;
  const judgeId = cfg.judges[0].judgeId;
  const members = projectMembers(args.projectId, db);
  const pool = [...new Set(args.pool ?? members.filter((m) => m.role === "annotator").map((m) => m.id))];
  const stranger = pool.find((id) => !members.some((m) => m.id === id));
  if (stranger !== undefined) throw new CalibrationError(`pool: user ${stranger} is not a member of this project`);
  const overlap = args.overlap ?? 2;
  if (pool.length === 0) throw new CalibrationError("pool: choose at least one annotator");
  if (overlap < 1 || overlap > pool.length) throw new CalibrationError(`overlap: ${overlap} annotators per unit needs a pool of at least ${overlap}; the pool has ${pool.length}`);
  const units = sampleUnits(candidates(db, run.id, judgeId), args.plan, args.seed);
  if (units.length === 0) throw new CalibrationError("this run has no parsed checklist verdicts to calibrate yet");
  return db.transaction(
    (tx) => {
      const task = tx
        .insert(schema.tasks)
        .values({
          projectId: args.projectId,
          datasetId: run.datasetId!,
          kind: "response-satisfaction",
          name: args.name ?? `Calibrate ${run.name} (${args.plan.kind === "e4" ? "E.4 plan" : "stratified by model × turn"})`,
          guidelines: "Does the response satisfy the checklist item? Answer Yes or No.",
          overlap,
          seed: args.seed,
          // `plan` names the plan as the annotation module's config expects (a string); the details sit in `samplingPlan`.
          config: { source: "run", runId: run.id, judgeId, plan: args.plan.kind === "e4" ? "paper" : "stratified", samplingPlan: args.plan, pool, adjudicators: [] },
          createdBy: args.createdBy ?? null,
        })
        .returning()
        .get();
      const unitIds = units.map(
        (u, i) =>
          tx
            .insert(schema.units)
            .values({ taskId: task.id, itemId: u.itemId, checklistItemId: u.checklistItemId, responseId: u.responseId, position: i })
            .returning({ id: schema.units.id })
            .get().id,
      );
      const plan = planAssignments(unitIds, pool, overlap, args.seed);
      let assignments = 0;
      for (const unitId of unitIds)
        for (const annotatorId of plan.get(unitId)!) {
          tx.insert(schema.assignments).values({ unitId, annotatorId, shownOrder: shownOrderFor(null, args.seed, unitId, annotatorId) }).run();
          assignments++;
        }
      return { taskId: task.id, units: units.length, assignments, pool };
    },
    { behavior: "immediate" },
  );
}

export type CalibratedScore = {
  model: string;
  raw: { mean: number; ci: [number, number]; n: number };
  corrected: { estimate: number; ci: [number, number]; n: number; N: number } | null;
};

/**
 * Per model: the judge's checklist satisfaction rate (raw, mean ± 1.96·SEM) and
 * the PPI estimate using human labels (majority of submitted Yes/No labels per unit).
 */
export function calibratedScores(db: Db, runId: number, taskId: number): CalibratedScore[] {
  const run = db.select().from(schema.runs).where(eq(schema.runs.id, runId)).get();
  if (!run) return [];
  const judgeId = (run.config as unknown as StoredRunConfig).judges[0].judgeId;
  const all = candidates(db, runId, judgeId);
  const verdictValue = new Map(
    (db.$client.prepare(`SELECT response_id AS r, checklist_item_id AS c, value FROM verdicts WHERE run_id=? AND judge_id=? AND parse_status != 'failed'`).all(runId, judgeId) as { r: number; c: number; value: string }[]).map((v) => [
      `${v.r}/${v.c}`,
      v.value === "Yes" ? 1 : 0,
    ]),
  );
  const units = db.select().from(schema.units).where(eq(schema.units.taskId, taskId)).all();
  const unitIds = units.map((u) => u.id);
  const labels = unitIds.length
    ? (db.$client
        .prepare(
          `SELECT a.unit_id AS unitId, an.label FROM assignments a JOIN annotations an ON an.assignment_id = a.id
           WHERE a.unit_id IN (${unitIds.map(() => "?").join(",")}) AND an.status = 'submitted'
             AND an.revision = (SELECT MAX(revision) FROM annotations x WHERE x.assignment_id = a.id)`,
        )
        .all(...unitIds) as { unitId: number; label: string }[])
    : [];
  const human = new Map<number, number[]>();
  for (const l of labels) {
    let v: unknown = l.label;
    try {
      v = JSON.parse(l.label);
    } catch {
      /* plain text */
    }
    if (v === "Yes" || v === "No") human.set(l.unitId, [...(human.get(l.unitId) ?? []), v === "Yes" ? 1 : 0]);
  }
  const models = [...new Set(all.map((c) => c.model))].sort();
  const modelOfResponse = new Map(all.map((c) => [c.responseId, c.model]));
  return models.map((model) => {
    const judged = all.filter((c) => c.model === model).map((c) => verdictValue.get(`${c.responseId}/${c.checklistItemId}`) ?? 0);
    const raw = meanCI(judged);
    const labelled = units.filter((u) => u.responseId != null && modelOfResponse.get(u.responseId) === model && human.has(u.id));
    let corrected: CalibratedScore["corrected"] = null;
    if (labelled.length >= 2) {
      const Y = labelled.map((u) => {
        const xs = human.get(u.id)!;
        return xs.reduce((a, b) => a + b, 0) / xs.length >= 0.5 ? 1 : 0;
      });
      const F = labelled.map((u) => verdictValue.get(`${u.responseId}/${u.checklistItemId}`) ?? 0);
      const r = ppiMean({ labelledHuman: Y, labelledJudge: F, unlabelledJudge: judged });
      corrected = { estimate: 100 * r.estimate, ci: [100 * r.ci[0], 100 * r.ci[1]], n: r.n, N: r.N };
    }
    return { model, raw: { mean: 100 * raw.mean, ci: [100 * raw.ci[0], 100 * raw.ci[1]], n: raw.n }, corrected };
  });
}
