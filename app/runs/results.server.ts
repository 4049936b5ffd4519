/** A run's stored responses and verdicts, turned into the protocol's tables. */
import { and, asc, eq, inArray } from "drizzle-orm";
import { schema, type Db } from "../../db/client";
import { c3eScores, taskTypeOf, type C3eObservation } from "./protocols/c3ebench";
import { FbBenchConfig, fbBenchScores, fbItemFacts, fbScore, type FbObservation, type FbScenario } from "./protocols/fb-bench";
import { knownItemIds, refineBenchMetrics, RefineBenchConfig, type RbObservation } from "./protocols/refinebench";
import { scItemFacts, selfCorrectionMetrics, type Condition, type ScObservation } from "./protocols/self-correction";
import type { StoredRunConfig } from "./runner.server";

export function runRow(db: Db, projectId: number, runId: number) {
  return db
    .select()
    .from(schema.runs)
    .where(and(eq(schema.runs.id, runId), eq(schema.runs.projectId, projectId)))
    .get();
}

function load(db: Db, runId: number) {
  const responses = db.select().from(schema.responses).where(eq(schema.responses.runId, runId)).orderBy(asc(schema.responses.id)).all();
  const verdicts = db.select().from(schema.verdicts).where(eq(schema.verdicts.runId, runId)).all();
  return { responses, verdicts };
}

export type RunResults =
  | {
      protocol: "refinebench";
      judge: string;
      judgeId: number;
      setting: string;
      maxTurns: number;
      metrics: ReturnType<typeof refineBenchMetrics>;
      parse: ParseCounts;
    }
  | { protocol: "self-correction"; judge: string; judgeId: number; metrics: ReturnType<typeof selfCorrectionMetrics>; parse: ParseCounts }
  | {
      protocol: "fb-bench";
      judge: string;
      judgeId: number;
      rule: "any" | "all";
      metrics: ReturnType<typeof fbBenchScores>;
      parse: ParseCounts;
    }
  | { protocol: "c3ebench"; judge: string; judgeId: number; metrics: ReturnType<typeof c3eScores>; parse: ParseCounts }
  | { protocol: string; judge: string; judgeId: number; metrics: null; parse: ParseCounts };

type ParseCounts = { ok: number; partial: number; failed: number; unparsed: number };

/** A job that has not finished well: failed (with the provider's error) or still queued/leased. */
type OpenJob = {
  status: "failed" | "queued" | "leased";
  step: "generate" | "judge";
  itemId: number;
  model: string;
  turn: number | null;
  condition: string | null;
  judgeId: number | null;
};

function openJobs(db: Db, runId: number): OpenJob[] {
  const rows = db.$client
    .prepare(`SELECT status, payload FROM jobs WHERE run_id = ? AND status IN ('failed','queued','leased')`)
    .all(runId) as { status: OpenJob["status"]; payload: string }[];
  return rows.map((r) => {
    const p = JSON.parse(r.payload) as { step: "generate" | "judge"; state: Record<string, unknown> };
    const st = p.state ?? {};
    return {
      status: r.status,
      step: p.step,
      itemId: Number(st.itemId),
      model: String(st.model),
      turn: typeof st.turn === "number" ? st.turn : null,
      condition: typeof st.condition === "string" ? st.condition : null,
      judgeId: typeof st.judgeId === "number" ? st.judgeId : null,
    };
  });
}

/** Tables for the run, one per judge (every judge of the run, in the run's order). */
export function runResultsAll(db: Db, run: typeof schema.runs.$inferSelect): RunResults[] {
  const cfg = run.config as unknown as StoredRunConfig;
  const loaded = load(db, run.id);
  const jobs = openJobs(db, run.id);
  return cfg.judges.map((j) => resultsFor(db, run, j.judgeId, loaded, jobs));
}

/** Tables for the run, scored by one judge (default: the run's first). */
export function runResults(db: Db, run: typeof schema.runs.$inferSelect, judgeId?: number): RunResults {
  const cfg = run.config as unknown as StoredRunConfig;
  const judge = cfg.judges.find((j) => j.judgeId === judgeId) ?? cfg.judges[0];
  return resultsFor(db, run, judge.judgeId, load(db, run.id), openJobs(db, run.id));
}

function resultsFor(
  db: Db,
  run: typeof schema.runs.$inferSelect,
  judgeId: number,
  loaded: ReturnType<typeof load>,
  jobs: OpenJob[],
): RunResults {
  const cfg = run.config as unknown as StoredRunConfig;
  const judge = cfg.judges.find((j) => j.judgeId === judgeId) ?? cfg.judges[0];
  const { responses, verdicts: all } = loaded;
  const verdicts = all.filter((v) => v.judgeId === judge.judgeId);
  const parse: ParseCounts = { ok: 0, partial: 0, failed: 0, unparsed: 0 };
  for (const v of verdicts) parse[v.parseStatus]++;
  const byResponse = new Map<number, typeof verdicts>();
  for (const v of verdicts) byResponse.set(v.responseId, [...(byResponse.get(v.responseId) ?? []), v]);
  const { genJobs, judgeJobs, jobKey } = jobMaps(run, jobs, judge.judgeId);
  const base = { judge: judge.name, judgeId: judge.judgeId, parse };
  const itemIds = [...new Set([...responses.map((r) => r.itemId), ...[...genJobs.values()].map((x) => x.itemId)])];

  if (run.protocol === "refinebench") {
    const { settings, obs, knownIds } = refineBenchInputs(db, run, judge.judgeId, {
      responses,
      byResponse,
      jobs,
      judgeJobs,
      genJobs,
      jobKey,
      itemIds,
    });
    return {
      protocol: "refinebench",
      ...base,
      setting: settings.setting,
      maxTurns: settings.maxTurns,
      metrics: refineBenchMetrics(obs, { maxTurns: settings.maxTurns, knownIds }),
    };
  }

  // One response per (item, model[, condition]): a failed generation or judge job is an observation marked failed; unfinished ones are left out.
  const state = (r: { itemId: number; model: string }, extra: string | null, hasVerdicts: boolean): "ok" | "failed" | "pending" => {
    if (hasVerdicts) return "ok";
    const jj = judgeJobs.get(jobKey(r.itemId, r.model, extra));
    if (jj?.status === "failed") return "failed";
    if (jj) return "pending";
    return run.status === "completed" || run.status === "failed" || run.status === "cancelled" ? "ok" : "pending";
  };

  if (run.protocol === "self-correction") {
    const obs: ScObservation[] = [];
    for (const r of responses) {
      const md = r.metadata as Record<string, unknown>;
      const v = byResponse.get(r.id)?.[0];
      const st = state(r, String(md.condition), v !== undefined);
      if (st === "pending") continue;
      obs.push({
        model: r.model,
        dataset: String(md.dataset ?? ""),
        condition: md.condition as Condition,
        correct: v?.value == null ? null : v.value === "Yes",
        reply: r.text,
        failed: st === "failed",
      });
    }
    const datasets = datasetsOf(
      db,
      itemIds,
      (it) => scItemFacts({ metadata: (it.metadata ?? {}) as Record<string, unknown>, domain: it.domain, reference: null }).dataset,
    );
    for (const g of genJobs.values())
      if (g.status === "failed")
        obs.push({
          model: g.model,
          dataset: datasets.get(g.itemId) ?? "",
          condition: g.condition as Condition,
          correct: null,
          reply: "",
          failed: true,
        });
    return { protocol: "self-correction", ...base, metrics: selfCorrectionMetrics(obs) };
  }
  if (run.protocol === "fb-bench") {
    const rule = FbBenchConfig.parse(cfg.settings).maintenanceRule;
    const items = itemIds.length ? db.select().from(schema.items).where(inArray(schema.items.id, itemIds)).all() : [];
    const facts = new Map(
      items.map((i) => [
        i.id,
        fbItemFacts({ taskType: i.taskType, domain: i.domain, metadata: (i.metadata ?? {}) as Record<string, unknown> }),
      ]),
    );
    const cl = itemIds.length ? db.select().from(schema.checklistItems).where(inArray(schema.checklistItems.itemId, itemIds)).all() : [];
    const weight = new Map(cl.map((c) => [c.id, c.weight]));
    const obs: FbObservation[] = [];
    const observe = (itemId: number, model: string, vs: typeof verdicts, failed: boolean) => {
      const f = facts.get(itemId);
      const scenario: FbScenario = f?.scenario ?? "error_correction";
      obs.push({
        model,
        scenario,
        task: f?.task ?? null,
        feedbackTypes: f?.feedbackTypes ?? [],
        deficiencyTypes: f?.deficiencyTypes ?? [],
        score: vs.length
          ? fbScore(
              scenario,
              vs.map((v) => ({ weight: weight.get(v.checklistItemId!) ?? null, met: v.value == null ? null : v.value === "Yes" })),
              rule,
            )
          : null,
        failed,
      });
    };
    for (const r of responses) {
      const vs = byResponse.get(r.id) ?? [];
      const st = state(r, null, vs.length > 0);
      if (st !== "pending") observe(r.itemId, r.model, vs, st === "failed");
    }
    for (const g of genJobs.values()) if (g.status === "failed") observe(g.itemId, g.model, [], true);
    return { protocol: "fb-bench", ...base, rule, metrics: fbBenchScores(obs, rule) };
  }
  if (run.protocol === "c3ebench") {
    const obs: C3eObservation[] = [];
    for (const r of responses) {
      const v = byResponse.get(r.id)?.[0];
      const st = state(r, null, v !== undefined);
      if (st === "pending") continue;
      obs.push({
        model: r.model,
        taskType: taskTypeOf(String((r.metadata as Record<string, unknown>).taskType ?? "")) ?? "End2End",
        score: v?.score ?? null,
        failed: st === "failed",
      });
    }
    const types = datasetsOf(db, itemIds, (it) => taskTypeOf(it.taskType) ?? "End2End");
    for (const g of genJobs.values())
      if (g.status === "failed") obs.push({ model: g.model, taskType: types.get(g.itemId) ?? "End2End", score: null, failed: true });
    return { protocol: "c3ebench", ...base, metrics: c3eScores(obs) };
  }
  return { protocol: run.protocol, ...base, metrics: null };
}

/** This judge's open jobs and every generation job, keyed by what they produce. */
function jobMaps(run: typeof schema.runs.$inferSelect, jobs: OpenJob[], judgeId: number) {
  const judge = { judgeId };
  const mine = jobs.filter((x) => x.step === "generate" || x.judgeId === judge.judgeId);
  const jobKey = (itemId: number, model: string, extra: string | number | null) => `${itemId}\u0000${model}\u0000${extra ?? ""}`;
  const genJobs = new Map<string, OpenJob>();
  const judgeJobs = new Map<string, OpenJob>();
  for (const x of mine) {
    const k = jobKey(x.itemId, x.model, run.protocol === "refinebench" ? x.turn : run.protocol === "self-correction" ? x.condition : null);
    const target = x.step === "generate" ? genJobs : judgeJobs;
    // A failed attempt and a queued re-ask of the same job: the open one wins.
    if (!target.has(k) || x.status !== "failed") target.set(k, x);
  }
  return { genJobs, judgeJobs, jobKey };
}

/** RefineBench observations of one judge (with failures and unfinished jobs), for the results and for calibration. */
export function refineBenchInputsFor(db: Db, run: typeof schema.runs.$inferSelect, judgeId: number) {
  const { responses, verdicts } = load(db, run.id);
  const jobs = openJobs(db, run.id);
  const byResponse = new Map<number, typeof verdicts>();
  for (const v of verdicts) if (v.judgeId === judgeId) byResponse.set(v.responseId, [...(byResponse.get(v.responseId) ?? []), v]);
  const { genJobs, judgeJobs, jobKey } = jobMaps(run, jobs, judgeId);
  const itemIds = [...new Set([...responses.map((r) => r.itemId), ...[...genJobs.values()].map((x) => x.itemId)])];
  return refineBenchInputs(db, run, judgeId, { responses, byResponse, jobs, judgeJobs, genJobs, jobKey, itemIds });
}

type RbContext = {
  responses: ReturnType<typeof load>["responses"];
  byResponse: Map<number, ReturnType<typeof load>["verdicts"]>;
  jobs: OpenJob[];
  judgeJobs: Map<string, OpenJob>;
  genJobs: Map<string, OpenJob>;
  jobKey: (itemId: number, model: string, extra: string | number | null) => string;
  itemIds: number[];
};

function refineBenchInputs(db: Db, run: typeof schema.runs.$inferSelect, judgeId: number, x: RbContext) {
  const cfg = run.config as unknown as StoredRunConfig;
  const { responses, byResponse, jobs, judgeJobs, genJobs, jobKey, itemIds } = x;
  const judge = { judgeId };
  const settings = RefineBenchConfig.parse(cfg.settings);
  const guided = settings.setting === "guided" || settings.setting === "partially-guided";
  const primary = cfg.judges[0]?.judgeId === judge.judgeId;
  const obs: RbObservation[] = responses.map((r) => {
    const vs = byResponse.get(r.id) ?? [];
    const terminated = Boolean((r.metadata as Record<string, unknown>).terminated);
    const jj = judgeJobs.get(jobKey(r.itemId, r.model, r.turn));
    // The primary judge drives guided feedback: when ITS call failed, no later turn could be asked.
    const failedJudge = !terminated && vs.length === 0 && jj?.status === "failed";
    const breaksChain =
      failedJudge && guided && !primary
        ? jobs.some(
            (x) =>
              x.step === "judge" &&
              x.status === "failed" &&
              x.judgeId === cfg.judges[0]?.judgeId &&
              x.itemId === r.itemId &&
              x.model === r.model &&
              x.turn === r.turn,
          )
        : failedJudge && guided;
    return {
      model: r.model,
      itemId: r.itemId,
      turn: r.turn,
      terminated,
      verdicts: vs.map((v) => ({ checklistItemId: v.checklistItemId!, value: v.value as "Yes" | "No" | null })),
      ...(failedJudge ? { failed: "judge" as const, breaksChain } : {}),
      ...(!terminated && vs.length === 0 && jj && jj.status !== "failed" ? { pending: true } : {}),
    };
  });
  for (const g of genJobs.values())
    if (g.turn !== null)
      obs.push({
        model: g.model,
        itemId: g.itemId,
        turn: g.turn,
        terminated: false,
        verdicts: [],
        ...(g.status === "failed" ? { failed: "generate" as const } : { pending: true }),
      });
  // In guided settings, a non-primary judge's conversation also stops where the primary judge's call failed.
  if (guided && !primary)
    for (const x of jobs)
      if (x.step === "judge" && x.status === "failed" && x.judgeId === cfg.judges[0]?.judgeId && x.turn !== null) {
        const o = obs.find((y) => y.itemId === x.itemId && y.model === x.model && y.turn === x.turn);
        if (o) o.breaksChain = true;
      }
  let knownIds: Map<number, Set<number>> | undefined;
  if (settings.setting === "partially-guided") {
    knownIds = new Map();
    const cl = itemIds.length ? db.select().from(schema.checklistItems).where(inArray(schema.checklistItems.itemId, itemIds)).all() : [];
    for (const id of itemIds)
      knownIds.set(
        id,
        new Set(
          knownItemIds(
            cl.filter((c) => c.itemId === id && c.retiredAt == null).sort((a, b) => a.position - b.position || a.id - b.id),
            settings.knownRatio,
            settings.seed,
            id,
          ),
        ),
      );
  }
  return { settings, obs, knownIds };
}

function datasetsOf(db: Db, itemIds: number[], f: (it: typeof schema.items.$inferSelect) => string): Map<number, string> {
  const items = itemIds.length ? db.select().from(schema.items).where(inArray(schema.items.id, itemIds)).all() : [];
  return new Map(items.map((i) => [i.id, f(i)]));
}

/** Every response of one conversation (item × model) with every verdict on it. */
export function conversation(db: Db, runId: number, itemId: number, model: string) {
  const item = db
    .select({ id: schema.items.id, sourceId: schema.items.sourceId, query: schema.items.query })
    .from(schema.items)
    .where(eq(schema.items.id, itemId))
    .get();
  const responses = db
    .select()
    .from(schema.responses)
    .where(and(eq(schema.responses.runId, runId), eq(schema.responses.itemId, itemId), eq(schema.responses.model, model)))
    .orderBy(asc(schema.responses.turn), asc(schema.responses.id))
    .all();
  const ids = responses.map((r) => r.id);
  const verdicts = ids.length
    ? db
        .select({ v: schema.verdicts, judge: schema.judges.name, checklist: schema.checklistItems.text })
        .from(schema.verdicts)
        .innerJoin(schema.judges, eq(schema.judges.id, schema.verdicts.judgeId))
        .leftJoin(schema.checklistItems, eq(schema.checklistItems.id, schema.verdicts.checklistItemId))
        .where(inArray(schema.verdicts.responseId, ids))
        .all()
    : [];
  return {
    item,
    turns: responses.map((r) => ({
      id: r.id,
      turn: r.turn,
      text: r.text,
      metadata: r.metadata,
      verdicts: verdicts
        .filter((x) => x.v.responseId === r.id)
        .map((x) => ({
          id: x.v.id,
          judge: x.judge,
          checklist: x.checklist,
          value: x.v.value,
          score: x.v.score,
          parseStatus: x.v.parseStatus,
          rawOutput: x.v.rawOutput,
        })),
    })),
  };
}

/** Conversations of a run for the drill-down list (item × model). */
export function conversationList(db: Db, runId: number, limit = 200) {
  return db.$client
    .prepare(
      `SELECT r.item_id AS itemId, i.source_id AS sourceId, r.model, MAX(r.turn) AS turns,
              (SELECT COUNT(*) FROM verdicts v JOIN responses r2 ON r2.id = v.response_id WHERE r2.run_id = r.run_id AND r2.item_id = r.item_id AND r2.model = r.model AND v.parse_status = 'failed') AS failed
       FROM responses r JOIN items i ON i.id = r.item_id WHERE r.run_id = ? GROUP BY r.item_id, r.model ORDER BY r.item_id, r.model LIMIT ?`,
    )
    .all(runId, limit) as { itemId: number; sourceId: string; model: string; turns: number; failed: number }[];
}
