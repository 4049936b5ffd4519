/** A run's stored responses and verdicts, turned into the protocol's tables (on either dialect, through the data-access layer). */
import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { schema } from "../../db/client";
import { PROTOCOLS } from "./protocols";
import type { OpenJob, ResultsInput, StoredChecklistItem, StoredItem } from "./protocols/types";
import type { StoredRunConfig } from "./runner.server";
import { dalOf, first, type Dal, type DalLike } from "../dal.server";

type RunRow = typeof schema.runs.$inferSelect;

/** The project's run, on either dialect (undefined when the run is another project's or does not exist). */
export async function runRow(db: DalLike, projectId: number, runId: number): Promise<typeof schema.runs.$inferSelect | undefined> {
  const d = dalOf(db);
  return first(
    await d.q
      .select()
      .from(d.t.runs)
      .where(and(eq(d.t.runs.id, runId), eq(d.t.runs.projectId, projectId))),
  );
}

/** Ascending text in byte order, as SQLite compares it, not in the PostgreSQL database's locale. */
export const byteOrder = (d: Dal, col: SQLiteColumn): SQL => (d.dialect === "postgres" ? sql`${col} collate "C"` : asc(col));

/** Ascending with NULL first, as SQLite sorts (PostgreSQL puts NULL last unless told). */
export const nullsFirst = (d: Dal, col: SQLiteColumn): SQL => (d.dialect === "postgres" ? sql`${col} asc nulls first` : asc(col));

/**
 * In an order fixed by the run's content, not by which worker stored first: (item, source key) is unique per
 * response, (judge, checklist item) per verdict of a response. Results computed from the same run on SQLite, on
 * PostgreSQL, or with any number of workers then agree to the last digit.
 */
async function load(d: Dal, runId: number) {
  const { responses: R, verdicts: V } = d.t;
  const [responses, verdicts] = await Promise.all([
    d.q.select().from(R).where(eq(R.runId, runId)).orderBy(asc(R.itemId), byteOrder(d, R.sourceKey)),
    d.q.select().from(V).where(eq(V.runId, runId)).orderBy(asc(V.judgeId), nullsFirst(d, V.checklistItemId), asc(V.id)),
  ]);
  return { responses, verdicts };
}

type Loaded = Awaited<ReturnType<typeof load>>;

type Base = { judge: string; judgeId: number; parse: ParseCounts };
/** One judge's results: what the run's protocol's results() returned (its metrics, null without one) and the parse counts. */
export type RunResults = { protocol: string; metrics: unknown } & Base;

type ParseCounts = { ok: number; partial: number; failed: number; unparsed: number };

async function openJobs(d: Dal, runId: number): Promise<OpenJob[]> {
  const { jobs } = d.t;
  const rows = await d.q
    .select({ status: jobs.status, payload: jobs.payload })
    .from(jobs)
    .where(and(eq(jobs.runId, runId), inArray(jobs.status, ["failed", "queued", "leased"])))
    .orderBy(byteOrder(d, jobs.key));
  return rows.map((r) => {
    const p = r.payload as { step: "generate" | "judge"; state: Record<string, unknown> };
    const st = p.state ?? {};
    return {
      status: r.status as OpenJob["status"],
      step: p.step,
      itemId: Number(st.itemId),
      model: String(st.model),
      turn: typeof st.turn === "number" ? st.turn : null,
      condition: typeof st.condition === "string" ? st.condition : null,
      judgeId: typeof st.judgeId === "number" ? st.judgeId : null,
    };
  });
}

/** The items and checklist items a protocol's results look up (every item with a response or a generation job), read once. */
type Lookups = { items: StoredItem[]; checklist: StoredChecklistItem[] };

/** Ids per IN list: well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const IN_CHUNK = 5000;

async function lookups(d: Dal, itemIds: number[]): Promise<Lookups> {
  const { items: I, checklistItems: C } = d.t;
  const out: Lookups = { items: [], checklist: [] };
  const ids = [...itemIds].sort((a, b) => a - b);
  for (let at = 0; at < ids.length; at += IN_CHUNK) {
    const chunk = ids.slice(at, at + IN_CHUNK);
    const [items, checklist] = await Promise.all([
      d.q
        .select({ id: I.id, taskType: I.taskType, domain: I.domain, metadata: I.metadata })
        .from(I)
        .where(inArray(I.id, chunk))
        .orderBy(asc(I.id)),
      d.q
        .select({ id: C.id, itemId: C.itemId, weight: C.weight, position: C.position, retiredAt: C.retiredAt })
        .from(C)
        .where(inArray(C.itemId, chunk))
        .orderBy(asc(C.itemId), asc(C.id)),
    ]);
    out.items.push(...items);
    out.checklist.push(...checklist);
  }
  return out;
}

/** Everything the results of any judge of the run are computed from, read once. */
async function readRun(d: Dal, run: RunRow) {
  const [loaded, jobs] = await Promise.all([load(d, run.id), openJobs(d, run.id)]);
  return { loaded, jobs, looked: await lookups(d, itemIdsOf(loaded, jobs)) };
}

type ReadRun = Awaited<ReturnType<typeof readRun>>;

/** Tables for the run, one per judge (every judge of the run, in the run's order). */
export async function runResultsAll(db: DalLike, run: RunRow): Promise<RunResults[]> {
  const cfg = run.config as unknown as StoredRunConfig;
  const r = await readRun(dalOf(db), run);
  return cfg.judges.map((j) => resultsFor(run, j.judgeId, r));
}

/** Tables for the run, scored by one judge (default: the run's first). */
export async function runResults(db: DalLike, run: RunRow, judgeId?: number): Promise<RunResults> {
  const cfg = run.config as unknown as StoredRunConfig;
  const judge = cfg.judges.find((j) => j.judgeId === judgeId) ?? cfg.judges[0];
  return resultsFor(run, judge.judgeId, await readRun(dalOf(db), run));
}

function resultsFor(run: RunRow, judgeId: number, r: ReadRun): RunResults {
  const cfg = run.config as unknown as StoredRunConfig;
  const judge = cfg.judges.find((j) => j.judgeId === judgeId) ?? cfg.judges[0];
  const verdicts = r.loaded.verdicts.filter((v) => v.judgeId === judge.judgeId);
  const parse: ParseCounts = { ok: 0, partial: 0, failed: 0, unparsed: 0 };
  for (const v of verdicts) parse[v.parseStatus]++;
  const base = { judge: judge.name, judgeId: judge.judgeId, parse };
  const protocol = PROTOCOLS[run.protocol];
  if (!protocol?.results) return { protocol: run.protocol, ...base, metrics: null };
  return { protocol: run.protocol, ...base, ...protocol.results(resultsInput(run, judge.judgeId, r)) } as RunResults;
}

/** Items with a response or a generation job, in first-seen order (responses first). */
function itemIdsOf(loaded: Loaded, jobs: OpenJob[]): number[] {
  return [...new Set([...loaded.responses.map((r) => r.itemId), ...jobs.filter((x) => x.step === "generate").map((x) => x.itemId)])];
}

/** What a protocol's results() reads: one judge's verdicts by response, the open jobs by what they produce, and item lookups. */
function resultsInput(run: RunRow, judgeId: number, { loaded, jobs, looked }: ReadRun): ResultsInput {
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
    items: (ids) => {
      const want = new Set(ids);
      return looked.items.filter((i) => want.has(i.id));
    },
    checklist: (ids) => {
      const want = new Set(ids);
      return looked.checklist.filter((c) => want.has(c.itemId));
    },
  };
}

/** This judge's open jobs and every generation job, keyed by what they produce. */
function jobMaps(run: RunRow, jobs: OpenJob[], judgeId: number) {
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
export async function resultsInputFor(db: DalLike, run: RunRow, judgeId: number): Promise<ResultsInput> {
  return resultsInput(run, judgeId, await readRun(dalOf(db), run));
}

/** Every response of one conversation (item × model) with every verdict on it (in the order they were stored). */
export async function conversation(db: DalLike, runId: number, itemId: number, model: string) {
  const d = dalOf(db);
  const { items: I, responses: R, verdicts: V, judges: J, checklistItems: C } = d.t;
  const [item, responses] = await Promise.all([
    d.q.select({ id: I.id, sourceId: I.sourceId, query: I.query }).from(I).where(eq(I.id, itemId)).then(first),
    d.q
      .select()
      .from(R)
      .where(and(eq(R.runId, runId), eq(R.itemId, itemId), eq(R.model, model)))
      .orderBy(asc(R.turn), asc(R.id)),
  ]);
  const ids = responses.map((r) => r.id);
  const verdicts = ids.length
    ? await d.q
        .select({ v: V, judge: J.name, checklist: C.text })
        .from(V)
        .innerJoin(J, eq(J.id, V.judgeId))
        .leftJoin(C, eq(C.id, V.checklistItemId))
        .where(inArray(V.responseId, ids))
        .orderBy(asc(V.responseId), asc(V.id))
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

export type ConversationRow = { itemId: number; sourceId: string; model: string; turns: number; failed: number };

/** Conversations of a run for the drill-down list (item × model). */
export async function conversationList(db: DalLike, runId: number, limit = 200): Promise<ConversationRow[]> {
  const d = dalOf(db);
  const model = d.dialect === "postgres" ? sql.raw(`r.model COLLATE "C"`) : sql.raw("r.model");
  const rows = await d.rows<{ itemId: number | string; sourceId: string; model: string; turns: number | string; failed: number | string }>(
    sql`SELECT r.item_id AS "itemId", i.source_id AS "sourceId", r.model, MAX(r.turn) AS turns,
              (SELECT COUNT(*) FROM verdicts v JOIN responses r2 ON r2.id = v.response_id
                WHERE r2.run_id = ${runId} AND r2.item_id = r.item_id AND r2.model = r.model AND v.parse_status = 'failed') AS failed
       FROM responses r JOIN items i ON i.id = r.item_id WHERE r.run_id = ${runId}
       GROUP BY r.item_id, i.source_id, r.model ORDER BY r.item_id, ${model} LIMIT ${limit}`,
  );
  return rows.map((r) => ({
    itemId: Number(r.itemId),
    sourceId: r.sourceId,
    model: r.model,
    turns: Number(r.turns),
    failed: Number(r.failed),
  }));
}
