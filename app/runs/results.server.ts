/** A run's stored responses and verdicts, turned into the protocol's tables. */
import { and, asc, eq, inArray } from "drizzle-orm";
import { schema, type Db } from "../../db/client";
import { PROTOCOLS } from "./protocols";
import type { OpenJob, ResultsInput } from "./protocols/types";
import type { StoredRunConfig } from "./runner.server";

export function runRow(db: Db, projectId: number, runId: number) {
  return db
    .select()
    .from(schema.runs)
    .where(and(eq(schema.runs.id, runId), eq(schema.runs.projectId, projectId)))
    .get();
}

/**
 * In an order fixed by the run's content, not by which worker stored first: (item, source key) is unique per
 * response, (judge, checklist item) per verdict of a response. Results computed from the same run on SQLite, on
 * PostgreSQL, or with any number of workers then agree to the last digit.
 */
function load(db: Db, runId: number) {
  const responses = db
    .select()
    .from(schema.responses)
    .where(eq(schema.responses.runId, runId))
    .orderBy(asc(schema.responses.itemId), asc(schema.responses.sourceKey))
    .all();
  const verdicts = db
    .select()
    .from(schema.verdicts)
    .where(eq(schema.verdicts.runId, runId))
    .orderBy(asc(schema.verdicts.judgeId), asc(schema.verdicts.checklistItemId), asc(schema.verdicts.id))
    .all();
  return { responses, verdicts };
}

type Base = { judge: string; judgeId: number; parse: ParseCounts };
/** One judge's results: what the run's protocol's results() returned (its metrics, null without one) and the parse counts. */
export type RunResults = { protocol: string; metrics: unknown } & Base;

type ParseCounts = { ok: number; partial: number; failed: number; unparsed: number };

function openJobs(db: Db, runId: number): OpenJob[] {
  const rows = db.$client
    .prepare(`SELECT status, payload FROM jobs WHERE run_id = ? AND status IN ('failed','queued','leased') ORDER BY key`)
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
  const verdicts = loaded.verdicts.filter((v) => v.judgeId === judge.judgeId);
  const parse: ParseCounts = { ok: 0, partial: 0, failed: 0, unparsed: 0 };
  for (const v of verdicts) parse[v.parseStatus]++;
  const base = { judge: judge.name, judgeId: judge.judgeId, parse };
  const protocol = PROTOCOLS[run.protocol];
  if (!protocol?.results) return { protocol: run.protocol, ...base, metrics: null };
  return { protocol: run.protocol, ...base, ...protocol.results(resultsInput(db, run, judge.judgeId, loaded, jobs)) } as RunResults;
}

/** What a protocol's results() reads: one judge's verdicts by response, the open jobs by what they produce, and item lookups. */
function resultsInput(
  db: Db,
  run: typeof schema.runs.$inferSelect,
  judgeId: number,
  loaded: ReturnType<typeof load>,
  jobs: OpenJob[],
): ResultsInput {
  const cfg = run.config as unknown as StoredRunConfig;
  const { responses, verdicts } = loaded;
  const byResponse = new Map<number, typeof verdicts>();
  for (const v of verdicts) if (v.judgeId === judgeId) byResponse.set(v.responseId, [...(byResponse.get(v.responseId) ?? []), v]);
  const { genJobs, judgeJobs, jobKey } = jobMaps(run, jobs, judgeId);
  const itemIds = [...new Set([...responses.map((r) => r.itemId), ...[...genJobs.values()].map((x) => x.itemId)])];
  // One response per (item, model[, step]): a failed judge job marks it failed; unfinished ones are left out.
  const outcome = (r: { itemId: number; model: string }, extra: string | null, hasVerdicts: boolean): "ok" | "failed" | "pending" => {
    if (hasVerdicts) return "ok";
    const jj = judgeJobs.get(jobKey(r.itemId, r.model, extra));
    if (jj?.status === "failed") return "failed";
    if (jj) return "pending";
    return run.status === "completed" || run.status === "failed" || run.status === "cancelled" ? "ok" : "pending";
  };
  return {
    settings: cfg.settings,
    judgeId,
    primaryJudgeId: cfg.judges[0]?.judgeId,
    responses,
    byResponse,
    jobs,
    genJobs,
    judgeJobs,
    jobKey,
    itemIds,
    outcome,
    items: (ids) => (ids.length ? db.select().from(schema.items).where(inArray(schema.items.id, ids)).all() : []),
    checklist: (ids) => (ids.length ? db.select().from(schema.checklistItems).where(inArray(schema.checklistItems.itemId, ids)).all() : []),
  };
}

/** This judge's open jobs and every generation job, keyed by what they produce. */
function jobMaps(run: typeof schema.runs.$inferSelect, jobs: OpenJob[], judgeId: number) {
  const step = PROTOCOLS[run.protocol]?.jobStep;
  const mine = jobs.filter((x) => x.step === "generate" || x.judgeId === judgeId);
  const jobKey = (itemId: number, model: string, extra: string | number | null) => `${itemId}\u0000${model}\u0000${extra ?? ""}`;
  const genJobs = new Map<string, OpenJob>();
  const judgeJobs = new Map<string, OpenJob>();
  for (const x of mine) {
    const k = jobKey(x.itemId, x.model, step ? step(x) : null);
    const target = x.step === "generate" ? genJobs : judgeJobs;
    // A failed attempt and a queued re-ask of the same job: the open one wins.
    if (!target.has(k) || x.status !== "failed") target.set(k, x);
  }
  return { genJobs, judgeJobs, jobKey };
}

/** What a protocol's results (or calibration targets) read for one judge of the run. */
export function resultsInputFor(db: Db, run: typeof schema.runs.$inferSelect, judgeId: number): ResultsInput {
  return resultsInput(db, run, judgeId, load(db, run.id), openJobs(db, run.id));
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
