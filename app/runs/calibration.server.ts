/**
 * Judge calibration from a run: a human "response satisfaction" task drawn by
 * a seeded probability sample of the verdicts the run's first judge gave
 * (unit.responseId + unit.checklistItemId; Self-Correction Bench: the whole
 * reply, checklistItemId null, "does it reach the golden answer?"; C3EBench:
 * a writing-quality task on the judge's 1–10 scale, see below), and — once
 * labels exist — every headline metric of the protocol raw (the judge's) and
 * bias-corrected with the human labels.
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
 * one sampled response are not counted as independent draws. The 95%
 * interval is rectifierCI's (app/stats): Wilson score intervals for the
 * shares of the judge's errors in each direction, per stratum, combined by
 * MOVER — ± 1.96·SE had zero width whenever the labelled units all agreed
 * with the judge and covered as little as 0.82 at 10 labelled units; a
 * stratum with fewer than 2 labelled units enters with its whole range; the
 * interval and the point estimate are clipped to the metric's range (the
 * point flagged). Means and ratios of corrected metrics (FB-Bench's overall,
 * the blind spot of Self-Correction Bench Eq. 2) combine the parts' intervals
 * by MOVER; their SE by the delta method.
 *
 * The pieces: sampling plans, inclusion probabilities and the task's units
 * (calibration-sampling.server); the human value of a unit
 * (calibration-human.server); C3EBench's 1–10 writing scores
 * (calibration-c3e.server); the estimator (protocols/calibration); each
 * protocol's headline metrics (Protocol.calibration.targets).
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { schema } from "../../db/client";
import { dalOf, first, type Dal, type DalLike } from "../dal.server";
import { projectMembers } from "../annotation/tasks.server";
import { meanCI, wilsonCI } from "../stats";
import { PROTOCOLS } from "./protocols";
import {
  boundNote,
  clipNote,
  type CalibratedMetric,
  type Draw,
  differenceEstimate,
  type Interval,
  joinNotes,
  PERCENT,
  type ResponseDraws,
  stratumOf,
  type Term,
  unitKey,
} from "./protocols/calibration";
import { resultsInputFor } from "./results.server";
import { c3eReport, createC3eTask } from "./calibration-c3e.server";
import { humanValues, type HumanCounts } from "./calibration-human.server";
import {
  CalibrationError,
  calibrationUnit,
  candidates,
  type Candidate,
  clustersPerStratum,
  describePlan,
  fillCalibrationTask,
  primaryJudge,
  sampleUnits,
  type SamplingPlan,
  type SplitRule,
  thinStrataWarnings,
} from "./calibration-sampling.server";

export { CalibrationError, MIN_PER_STRATUM, sampleUnits, type SamplingPlan, type SplitRule } from "./calibration-sampling.server";
export { humanScores, humanValues, type HumanCounts } from "./calibration-human.server";
export { C3E_GUIDELINES, sampleC3eItems } from "./calibration-c3e.server";

/**
 * Creates the human task, its units and their assignments in one transaction.
 * `pool`: the annotators (project members); default: every member with the
 * annotator role. Each unit goes to `overlap` of them (default 2, at most the
 * pool size). `warnings` says which models the plan cannot give
 * `minLabelsPerModel` units (default 10).
 */
export async function createCalibrationTask(
  db: DalLike,
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
  const d = dalOf(db);
  const { runs, tasks } = d.t;
  const run = first(
    await d.q
      .select()
      .from(runs)
      .where(and(eq(runs.id, args.runId), eq(runs.projectId, args.projectId))),
  );
  if (!run || run.datasetId == null) throw new CalibrationError(`run ${args.runId}: not found in this project`);
  const judgeId = primaryJudge(run);
  const members = await projectMembers(args.projectId, d);
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
  if (calibrationUnit(run) === "score") return createC3eTask(d, run, judgeId, { ...args, pool, overlap });
  const all = await candidates(d, run);
  const units = sampleUnits(all, args.plan, args.seed);
  if (units.length === 0) throw new CalibrationError("this run has no parsed verdicts to calibrate yet");
  const min = args.minLabelsPerModel ?? 10;
  const warnings: string[] = [];
  for (const model of [...new Set(all.map((c) => c.model))].sort()) {
    const n = units.filter((u) => u.model === model).length;
    if (n < min)
      warnings.push(`${model}: this plan draws ${n} unit${n === 1 ? "" : "s"}, fewer than the minimum of ${min} labelled units per model`);
  }
  warnings.push(...planStrataWarnings(all, null, units, args.plan));
  const sc = calibrationUnit(run) === "response";
  return d.tx(async (tx) => {
    const [task] = await tx
      .insert(tasks)
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
      .returning({ id: tasks.id });
    const assignments = await fillCalibrationTask(
      d,
      tx,
      task.id,
      !args.name,
      units.map((u) => ({ itemId: u.itemId, checklistItemId: u.checklistItemId, responseId: u.responseId })),
      { pool, overlap, seed: args.seed },
    );
    return { taskId: task.id, units: units.length, assignments, pool, warnings };
  });
}

/**
 * The strata (model × turn × condition) where the plan draws fewer than MIN_PER_STRATUM clusters (units, or
 * whole responses under the whole-responses plan): their intervals can only be bounds.
 */
function planStrataWarnings(all: Candidate[], draws: Iterable<Draw> | null, drawn: Candidate[], plan: SamplingPlan | undefined) {
  const whole = plan?.kind === "responses";
  const clusters = (cs: Candidate[]) =>
    clustersPerStratum(
      cs.map((c) => ({ stratum: stratumOf(c), cluster: whole ? c.responseId : unitKey(c.responseId, c.checklistItemId) })),
    );
  return thinStrataWarnings(
    clusters(all),
    draws ? clustersPerStratum(draws) : clusters(drawn),
    whole ? ["response", "responses"] : ["unit", "units"],
  );
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
  /** Strata where the plan draws too few units for an interval from the data (thinStrataWarnings). */
  warnings: string[];
};

type TaskRow = typeof schema.tasks.$inferSelect;

/** A run and a task by id (either undefined when it does not exist). */
async function runAndTask(d: Dal, runId: number, taskId: number) {
  const { runs, tasks } = d.t;
  const [run, task] = await Promise.all([
    d.q.select().from(runs).where(eq(runs.id, runId)).then(first),
    d.q.select().from(tasks).where(eq(tasks.id, taskId)).then(first),
  ]);
  return { run, task };
}

async function drawsOf(d: Dal, task: TaskRow, values: Map<number, number>) {
  const { units: U, responses: R } = d.t;
  const units = await d.q.select().from(U).where(eq(U.taskId, task.id)).orderBy(asc(U.position), asc(U.id));
  const cfg = task.config as { inclusion?: number[]; samplingPlan?: SamplingPlan };
  const rids = [...new Set(units.map((u) => u.responseId).filter((x): x is number => x != null))];
  const resp = rids.length
    ? await d.q.select({ id: R.id, model: R.model, turn: R.turn, metadata: R.metadata }).from(R).where(inArray(R.id, rids))
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
export async function calibrationReport(
  db: DalLike,
  runId: number,
  taskId: number,
  opts: { splits?: SplitRule } = {},
): Promise<CalibrationReport | null> {
  const d = dalOf(db);
  const { run, task } = await runAndTask(d, runId, taskId);
  if (!run || !task) return null;
  const splitRule: SplitRule =
    opts.splits ?? ((task.config as { splitRule?: SplitRule }).splitRule === "adjudicate" ? "adjudicate" : "exclude");
  if (calibrationUnit(run) === "score") return c3eReport(d, run, task, splitRule);
  const [{ values, counts }, exclude, adjudicate, results, all] = await Promise.all([
    humanValues(d, taskId, splitRule),
    humanValues(d, taskId, "exclude"),
    humanValues(d, taskId, "adjudicate"),
    resultsInputFor(d, run, primaryJudge(run)),
    candidates(d, run),
  ]);
  const { pairs, byResponse, plan, weighable } = await drawsOf(d, task, values);
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
            boundNote(r.corrected),
            clipNote(r.corrected),
          ),
    });
  PROTOCOLS[run.protocol]?.calibration?.targets?.({
    results,
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
    humanByRule: { exclude: exclude.counts, adjudicate: adjudicate.counts },
    metrics,
    warnings: weighable ? planStrataWarnings(all, pairs.values(), [], plan) : [],
  };
}

export type CalibratedScore = {
  model: string;
  raw: { mean: number; ci: [number, number]; n: number };
  /**
   * `se`: the design-based standard error of the corrected share (in points); `ci`: its interval (rectifierCI, as
   * every corrected metric); `exact`: every unit labelled, the share is known; `bounded`: strata with fewer than 2
   * labelled units, whose whole range is inside `ci`.
   */
  corrected: { estimate: number; se: number; ci: [number, number]; n: number; N: number; exact: boolean; bounded: number } | null;
};

/**
 * Per model: the share of the first judge's verdicts that are Yes (raw, with the
 * Wilson score interval) and the same share corrected by the human labels (the
 * estimator above, split rule of the task, with its interval: Wilson score
 * intervals for the judge's errors in each direction, combined by MOVER —
 * rectifierCI). Both intervals stay inside 0–100. The protocol's own headline
 * metrics are in calibrationReport.
 */
export async function calibratedScores(db: DalLike, runId: number, taskId: number): Promise<CalibratedScore[]> {
  const d = dalOf(db);
  const { run, task } = await runAndTask(d, runId, taskId);
  if (!run || !task || calibrationUnit(run) === "score") return [];
  const splitRule: SplitRule = (task.config as { splitRule?: SplitRule }).splitRule === "adjudicate" ? "adjudicate" : "exclude";
  const [all, verdicts, human] = await Promise.all([
    candidates(d, run),
    d.rows<{ r: number; c: number | null; value: string }>(
      sql`SELECT response_id AS r, checklist_item_id AS c, value FROM verdicts
          WHERE run_id = ${runId} AND judge_id = ${primaryJudge(run)} AND value IN ('Yes','No') ORDER BY id`,
    ),
    humanValues(d, taskId, splitRule),
  ]);
  const judged = new Map(verdicts.map((v) => [unitKey(Number(v.r), v.c == null ? null : Number(v.c)), v.value === "Yes" ? 1 : 0]));
  const { pairs, weighable } = await drawsOf(d, task, human.values);
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
    return {
      model,
      raw: { mean: 100 * raw.mean, ci: [100 * rawCi[0], 100 * rawCi[1]], n: raw.n },
      corrected:
        c && weighable ? { estimate: c.estimate, se: c.se, ci: c.ci, n: c.n, N: mine.length, exact: c.exact, bounded: c.bounded } : null,
    };
  });
}

/**
 * The warnings of a calibration task's plan, for the run page: the strata (model × turn × condition; C3EBench: task
 * type) where it draws fewer than MIN_PER_STRATUM units, whose intervals can only be bounds.
 */
export async function calibrationWarnings(db: DalLike, runId: number, taskId: number): Promise<string[]> {
  const d = dalOf(db);
  const { run, task } = await runAndTask(d, runId, taskId);
  if (!run || !task) return [];
  if (calibrationUnit(run) === "score") return (await calibrationReport(d, runId, taskId))?.warnings ?? [];
  const [all, { pairs, plan, weighable }] = await Promise.all([candidates(d, run), drawsOf(d, task, new Map())]);
  return weighable ? planStrataWarnings(all, pairs.values(), [], plan) : [];
}
