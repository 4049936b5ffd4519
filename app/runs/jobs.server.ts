/**
 * Persistence of a run's jobs: claiming them under a lease (an IMMEDIATE
 * transaction), renewing leases, and storing a job's outcome — responses,
 * verdicts, follow-up jobs and the "done" mark — atomically, guarded by the
 * lease. Lease times are epoch milliseconds.
 */
import { isBusyError, type Db } from "../../db/client";
import { payloadText, ringWebhookBell, type RunFinishedData } from "../webhooks/events.server";
import type { JobPayload, Outcome } from "./protocols/types";
import type { TurnJoin } from "./providers/shared-limits.server";
import type { CallRecord } from "./providers/types";

// ─── Claiming and completing ─────────────────────────────────────────────────
//
// The hot path talks to better-sqlite3 directly with statements prepared once
// per connection (drizzle's query building and per-call `prepare` were most of
// the worker's CPU in bench:runs). A worker stores the outcomes of every reply
// that arrived in one event-loop turn, and claims work for the slots they
// free, in ONE immediate transaction; each job's writes sit in a savepoint so
// one bad outcome fails that job only. Nothing is acknowledged before commit:
// a reply not yet committed when the process dies is a call in flight, and its
// lease expiry hands it to the next worker — exactly as before.

export type ClaimedJob = { id: number; runId: number; key: string; payload: JobPayload; protocol: string; attempts: number };

type Sqlite = Db["$client"];

function prepareStatements(s: Sqlite) {
  return {
    activeRuns: s.prepare(`SELECT id, protocol FROM runs WHERE status IN ('queued','running') ORDER BY id`),
    activeRun: s.prepare(`SELECT id, protocol FROM runs WHERE id = ? AND status IN ('queued','running')`),
    expired: s.prepare(
      `SELECT id, run_id AS runId, key, payload, attempts FROM jobs WHERE run_id = ? AND status = 'leased' AND lease_expires_at < ? ORDER BY id LIMIT ?`,
    ),
    queued: s.prepare(
      `SELECT id, run_id AS runId, key, payload, attempts FROM jobs WHERE run_id = ? AND status = 'queued' ORDER BY id DESC LIMIT ?`,
    ),
    lease: s.prepare(`UPDATE jobs SET status = 'leased', lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1 WHERE id = ?`),
    markRunning: s.prepare(`UPDATE runs SET status = 'running' WHERE id = ? AND status = 'queued'`),
    done: s.prepare(
      `UPDATE jobs SET status = 'done', result = ?, error = NULL, lease_owner = NULL, lease_expires_at = NULL, finished_at = unixepoch() WHERE id = ? AND status = 'leased' AND lease_owner = ?`,
    ),
    fail: s.prepare(
      `UPDATE jobs SET status = 'failed', error = ?, lease_owner = NULL, lease_expires_at = NULL, finished_at = unixepoch() WHERE id = ? AND status = 'leased' AND lease_owner = ?`,
    ),
    insertResponse: s.prepare(
      `INSERT INTO responses (item_id, model, turn, text, origin, run_id, source_key, metadata) VALUES (?, ?, ?, ?, 'run', ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    findResponse: s.prepare(`SELECT id FROM responses WHERE item_id = ? AND source_key = ?`).pluck(),
    // A verdict on a checklist item is kept once by the unique (judge, response, item) index; one on the whole
    // response (no item) by the NOT EXISTS, since the index lets NULLs repeat.
    insertItemVerdict: s.prepare(
      `INSERT INTO verdicts (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status, run_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    insertVerdict: s.prepare(
      `INSERT INTO verdicts (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status, run_id)
       SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM verdicts WHERE judge_id = ? AND response_id = ? AND checklist_item_id IS ?)`,
    ),
    insertJob: s.prepare(`INSERT INTO jobs (run_id, key, payload) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`),
    anyLeft: s.prepare(`SELECT 1 FROM jobs WHERE run_id = ? AND status IN ('queued','leased') LIMIT 1`).pluck(),
    finishRun: s.prepare(`UPDATE runs SET status = ?, finished_at = unixepoch() WHERE id = ? AND status IN ('queued','running')`),
    outcomeCounts: s.prepare(
      `SELECT COALESCE(SUM(status = 'done'), 0) AS done, COALESCE(SUM(status = 'failed'), 0) AS failed FROM jobs WHERE run_id = ?`,
    ),
    runStatus: s.prepare(`SELECT status FROM runs WHERE id = ?`).pluck(),
    insertCall: s.prepare(
      `INSERT INTO provider_calls (provider_id, job_id, request, reply, status, latency_ms, prompt_tokens, completion_tokens, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    runSettings: s.prepare(`SELECT protocol, config FROM runs WHERE id = ?`),
    release: s.prepare(
      `UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, attempts = attempts - 1 WHERE id = ? AND status = 'leased' AND lease_owner = ?`,
    ),
    activeRunIds: s.prepare(`SELECT id FROM runs WHERE status IN ('queued','running')`).pluck(),
    isActive: s.prepare(`SELECT 1 FROM runs WHERE id = ? AND status IN ('queued','running')`).pluck(),
  };
}
type Statements = ReturnType<typeof prepareStatements>;
const statementCache = new WeakMap<Sqlite, Statements>();
export function stmts(db: Db): Statements {
  let s = statementCache.get(db.$client);
  if (!s) statementCache.set(db.$client, (s = prepareStatements(db.$client)));
  return s;
}

type JobRow = { id: number; runId: number; key: string; payload: string; attempts: number };

/**
 * Leases up to `max` jobs: expired leases first (oldest first), then the
 * newest queued jobs (with `expired` false, only queued jobs: the expired
 * query reads every leased job's row, and the worker asks it a few times a
 * second rather than at every store). Newest first is depth-first: the follow-ups of the
 * replies just stored (a judge call and the next turn) are taken before the
 * untouched items. Oldest first is breadth-first and starves a provider:
 * every first-turn generation is queued ahead of the first judge call, so
 * the judge's provider sat idle while the model's worked through them (4.5 s
 * of a 21 s bench:runs with 3 workers; the run took 11.8 s newest first).
 * Call inside an immediate transaction.
 */
function claimWithin(db: Db, owner: string, max: number, leaseMs: number, now: number, runId?: number, expired = true): ClaimedJob[] {
  const st = stmts(db);
  const runs = (runId === undefined ? st.activeRuns.all() : st.activeRun.all(runId)) as { id: number; protocol: string }[];
  const out: ClaimedJob[] = [];
  const expires = now + leaseMs;
  for (const run of runs) {
    if (out.length >= max) break;
    const rows = expired ? (st.expired.all(run.id, now, max - out.length) as JobRow[]) : [];
    // Queued jobs newest first (depth-first), taken in the order they were created.
    if (rows.length < max - out.length) rows.push(...(st.queued.all(run.id, max - out.length - rows.length) as JobRow[]).reverse());
    if (rows.length === 0) continue;
    for (const r of rows) {
      st.lease.run(owner, expires, r.id);
      out.push({
        id: r.id,
        runId: r.runId,
        key: r.key,
        payload: JSON.parse(r.payload) as JobPayload,
        protocol: run.protocol,
        attempts: r.attempts + 1,
      });
    }
    st.markRunning.run(run.id);
  }
  return out;
}

export function claimJobs(db: Db, owner: string, max: number, leaseMs: number, now = Date.now(), runId?: number): ClaimedJob[] {
  if (max <= 0) return [];
  return db.$client.transaction(() => claimWithin(db, owner, max, leaseMs, now, runId)).immediate();
}

/** The status of each of these runs that still exists (pause and cancel reach a worker's executing jobs). */
export function runStatuses(db: Db, ids: number[]): { id: number; status: string }[] {
  if (ids.length === 0) return [];
  return db.$client.prepare(`SELECT id, status FROM runs WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as {
    id: number;
    status: string;
  }[];
}

/** Whether a job of an active run (of run `runId`, if given) is queued or leased. */
export function hasPendingJobs(db: Db, runId?: number): boolean {
  const row = db.$client
    .prepare(
      `SELECT COUNT(*) AS n FROM jobs j JOIN runs r ON r.id=j.run_id WHERE r.status IN ('queued','running') AND j.status IN ('queued','leased') ${runId !== undefined ? "AND j.run_id = ?" : ""}`,
    )
    .get(...(runId !== undefined ? [runId] : [])) as { n: number };
  return row.n > 0;
}

export function renewLeases(db: Db, owner: string, jobIds: number[], leaseMs: number): void {
  if (jobIds.length === 0) return;
  db.$client
    .prepare(`UPDATE jobs SET lease_expires_at=? WHERE status='leased' AND lease_owner=? AND id IN (${jobIds.map(() => "?").join(",")})`)
    .run(Date.now() + leaseMs, owner, ...jobIds);
}

/** A drained run ends "completed", "completed-with-errors" (some jobs failed) or "failed" (no job succeeded). */
function finishRunIfDrained(db: Db, runId: number): void {
  const st = stmts(db);
  if (st.anyLeft.get(runId) !== undefined) return;
  const c = st.outcomeCounts.get(runId) as { done: number; failed: number };
  const status = c.failed === 0 ? "completed" : c.done === 0 ? "failed" : "completed-with-errors";
  // The run's webhooks learn of its end in the transaction that ends it (app/webhooks/events.server.ts).
  if (st.finishRun.run(status, runId).changes > 0) emitRunFinishedSqlite(db, runId);
}

/**
 * run.finished for the webhooks of a run that just ended, inside the transaction that ended it: one delivery per
 * active webhook of the run's project listening to it (app/webhooks/events.server.ts emitWebhookEvent, written
 * here with statements of this synchronous engine).
 */
function emitRunFinishedSqlite(db: Db, runId: number): void {
  const s = db.$client;
  const run = s
    .prepare(
      "SELECT r.project_id AS projectId, p.slug, r.name, r.protocol, r.status FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.id = ?",
    )
    .get(runId) as { projectId: number; slug: string; name: string; protocol: string; status: string } | undefined;
  if (!run) return;
  const hooks = (
    s.prepare("SELECT id, events FROM webhooks WHERE project_id = ? AND disabled_at IS NULL").all(run.projectId) as {
      id: number;
      events: string;
    }[]
  ).filter((h) => (JSON.parse(h.events) as string[]).includes("run.finished"));
  if (hooks.length === 0) return;
  const c = stmts(db).outcomeCounts.get(runId) as { done: number; failed: number };
  const data: RunFinishedData = {
    id: runId,
    name: run.name,
    protocol: run.protocol,
    status: run.status,
    counts: { jobs_done: c.done, jobs_failed: c.failed },
  };
  const payload = payloadText("run.finished", { id: run.projectId, slug: run.slug }, data);
  const insert = s.prepare("INSERT INTO webhook_deliveries (webhook_id, event, payload, next_attempt_at) VALUES (?, 'run.finished', ?, ?)");
  const at = Math.floor(Date.now() / 1000);
  for (const h of hooks) insert.run(h.id, payload, at);
  ringWebhookBell();
}

/**
 * A job's outcome (or error) and the HTTP attempts it made, ready to store.
 * `stopped`: the job made no call because its run was paused or cancelled; it goes back to the queue.
 */
export type Finished = { job: ClaimedJob; outcome?: Outcome; error?: string; calls?: CallRecord[]; stopped?: boolean };

/** Request bodies in provider_calls: "full" stores the JSON body sent; "compact" stores its shape (the messages are in the job's payload). */
export type CallLogDetail = "full" | "compact";

function callRequest(c: CallRecord, detail: CallLogDetail): string {
  return requestJson(c.request, detail);
}

export function requestJson(request: unknown, detail: CallLogDetail): string {
  if (detail === "full") return JSON.stringify(request);
  const r = (request ?? {}) as Record<string, unknown>;
  const { messages, prompt, ...rest } = r;
  const m = Array.isArray(messages) ? (messages as { content?: unknown }[]) : null;
  const chars = m ? m.reduce((a, x) => a + String(x.content ?? "").length, 0) : typeof prompt === "string" ? prompt.length : 0;
  return JSON.stringify({ ...rest, ...(m ? { messages: m.length } : {}), chars, see: "jobs.payload" });
}

/**
 * Stores one finished job inside the caller's transaction. Returns false (and
 * writes nothing but the call log) when the lease was lost to another worker.
 * With `isolate`, the job's writes sit in a savepoint and a failure to store
 * them fails the job alone; without, the error propagates (the fast path: the
 * caller retries the batch isolated).
 */
function storeFinished(
  db: Db,
  owner: string,
  f: Finished,
  detail: CallLogDetail = "full",
  isolate = true,
  runStatus?: (runId: number) => string,
): boolean {
  const st = stmts(db);
  const { job } = f;
  if (f.calls)
    for (const c of f.calls)
      st.insertCall.run(
        job.payload.providerId,
        job.id,
        callRequest(c, detail),
        c.reply == null ? null : JSON.stringify(c.reply),
        c.status,
        c.latencyMs,
        c.promptTokens,
        c.completionTokens,
        c.error,
      );
  // Nothing is stored into a cancelled run, and a job stopped by a pause goes back to the queue.
  const status = runStatus ? runStatus(job.runId) : String(st.runStatus.get(job.runId) ?? "deleted");
  if (f.stopped || status === "cancelled" || status === "deleted") {
    st.release.run(job.id, owner);
    return false;
  }
  if (f.outcome) {
    const outcome = f.outcome;
    const write = () => {
      if (st.done.run(outcome.result === undefined ? null : JSON.stringify(outcome.result), job.id, owner).changes === 0) return false;
      for (const r of outcome.responses)
        st.insertResponse.run(r.itemId, r.model, r.turn, r.text, job.runId, r.sourceKey, JSON.stringify(r.metadata ?? {}));
      for (const v of outcome.verdicts) {
        const responseId = st.findResponse.get(v.itemId, v.responseSourceKey) as number | undefined;
        if (responseId === undefined) throw new Error(`job ${job.key}: verdict for unknown response ${v.responseSourceKey}`);
        if (v.checklistItemId != null)
          st.insertItemVerdict.run(v.judgeId, responseId, v.checklistItemId, v.value, v.score, v.rawOutput, v.parseStatus, job.runId);
        else
          st.insertVerdict.run(
            v.judgeId,
            responseId,
            v.checklistItemId,
            v.value,
            v.score,
            v.rawOutput,
            v.parseStatus,
            job.runId,
            v.judgeId,
            responseId,
            v.checklistItemId,
          );
      }
      for (const n of outcome.next) st.insertJob.run(job.runId, n.key, JSON.stringify(n.payload));
      return true;
    };
    if (!isolate) return write();
    try {
      return db.$client.transaction(write)();
    } catch (err) {
      f = { job, error: `storing the outcome failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  return st.fail.run(String(f.error ?? "unknown error").slice(0, 2000), job.id, owner).changes > 0;
}

/**
 * Stores a job's outcome atomically. Returns false (and writes nothing) when
 * the lease was lost to another worker, who will store it instead.
 */
export function completeJob(db: Db, owner: string, job: ClaimedJob, outcome: Outcome): boolean {
  return db.$client
    .transaction(() => {
      const ok = storeFinished(db, owner, { job, outcome });
      if (ok) finishRunIfDrained(db, job.runId);
      return ok;
    })
    .immediate();
}

export function failJob(db: Db, owner: string, job: ClaimedJob, error: string): boolean {
  return db.$client
    .transaction(() => {
      const ok = storeFinished(db, owner, { job, error });
      if (ok) finishRunIfDrained(db, job.runId);
      return ok;
    })
    .immediate();
}

type StoreArgs = {
  owner: string;
  finished: Finished[];
  claim: number;
  leaseMs: number;
  runId?: number;
  detail: CallLogDetail;
  isolate: boolean;
  /** Leased but not started: handed back if their run is no longer active (or all of them, with releaseAll). */
  held: ClaimedJob[];
  releaseAll: boolean;
  /** Also take expired leases (see claimWithin). */
  expired: boolean;
  /** Written first in the same transaction: the provider limits' answered calls and admissions. */
  join?: TurnJoin | null;
};
export type StoreResult = { claimed: ClaimedJob[]; released: number[] };
const storeTxCache = new WeakMap<Sqlite, (a: StoreArgs) => StoreResult>();

function storeTx(db: Db): (a: StoreArgs) => StoreResult {
  let fn = storeTxCache.get(db.$client);
  if (!fn) {
    const st = stmts(db);
    const tx = db.$client.transaction((a: StoreArgs): StoreResult => {
      a.join?.within();
      const runs = new Set<number>();
      const statuses = new Map<number, string>();
      const runStatus = (id: number) => {
        let s = statuses.get(id);
        if (s === undefined) statuses.set(id, (s = String(st.runStatus.get(id) ?? "deleted")));
        return s;
      };
      for (const f of a.finished) if (storeFinished(db, a.owner, f, a.detail, a.isolate, runStatus)) runs.add(f.job.runId);
      for (const r of runs) finishRunIfDrained(db, r);
      const released: number[] = [];
      if (a.held.length) {
        const active = a.releaseAll ? new Set<number>() : new Set(st.activeRunIds.all() as number[]);
        for (const j of a.held)
          if (!active.has(j.runId)) {
            st.release.run(j.id, a.owner);
            released.push(j.id);
          }
      }
      return { claimed: a.claim > 0 ? claimWithin(db, a.owner, a.claim, a.leaseMs, Date.now(), a.runId, a.expired) : [], released };
    });
    fn = (a) => tx.immediate(a);
    storeTxCache.set(db.$client, fn);
  }
  return fn;
}

/**
 * One transaction: the provider limits' share (`join`: answered calls and
 * admissions of waiting calls), then store every finished job, hand back
 * held (leased, not started) jobs whose run was paused or cancelled, then
 * lease up to `claim` new ones. If storing fails for a reason other than a
 * busy database, the batch is stored again with each job isolated, so one bad
 * outcome fails only its job.
 */
export function storeAndClaim(
  db: Db,
  owner: string,
  finished: Finished[],
  claim: number,
  leaseMs: number,
  opts: {
    runId?: number;
    detail?: CallLogDetail;
    held?: ClaimedJob[];
    releaseAll?: boolean;
    expired?: boolean;
    join?: TurnJoin | null;
  } = {},
): StoreResult {
  const args: StoreArgs = {
    owner,
    finished,
    claim,
    leaseMs,
    runId: opts.runId,
    detail: opts.detail ?? "full",
    isolate: false,
    held: opts.held ?? [],
    releaseAll: opts.releaseAll ?? false,
    expired: opts.expired ?? true,
    join: opts.join,
  };
  const join = opts.join;
  let r: StoreResult;
  try {
    r = storeTx(db)(args);
  } catch (err) {
    join?.rollback(err);
    if (isBusyError(err)) throw err;
    try {
      r = storeTx(db)({ ...args, isolate: true });
    } catch (again) {
      join?.rollback(again);
      throw again;
    }
  }
  join?.commit();
  return r;
}
