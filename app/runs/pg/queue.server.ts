/**
 * The run queue and the provider limits on PostgreSQL (DATABASE_URL=postgres://…),
 * for many workers on many machines: the same rows and semantics as the SQLite
 * side (app/runs/jobs.server.ts, app/runs/providers/shared-limits.server.ts),
 * with row locks where SQLite has its single writer.
 *
 * Jobs are claimed with `SELECT … FOR UPDATE SKIP LOCKED` (the pattern of
 * pg-boss and graphile-worker): a claimer locks the rows it will lease and
 * passes over the rows another claimer has locked, so concurrent claims never
 * wait for each other and never take the same job. After the lock PostgreSQL
 * re-reads the newest version of a row and checks the WHERE again (READ
 * COMMITTED's re-check of updated rows), so a job leased by a claim that
 * committed meanwhile is not taken twice either.
 *
 * Why not pg-boss or graphile-worker themselves: Concord's jobs table is also
 * its durable result store (a job's row keeps its payload, attempts, result
 * and error; reports and the run pages read it, and a job's outcome is stored
 * in the same transaction as its "done" mark, guarded by its lease). A second
 * queue would hold a copy of every job that must be kept in step with this one.
 *
 * Provider limits: an admission locks the provider's row
 * (`SELECT … FROM providers WHERE id = $1 FOR NO KEY UPDATE`) and holds it to
 * commit. That lock serialises the admissions of one provider across every
 * connection, process and machine; the next admitter gets it only after the
 * previous one committed its 'sent' row, and (READ COMMITTED: each statement
 * reads what was committed before it started) its count then includes that
 * row, so two admitters can never both take the last slot. NO KEY UPDATE
 * rather than UPDATE: it conflicts with itself just the same, but not with the
 * KEY SHARE lock that a foreign-key check on the provider takes, so inserting
 * rows that reference the provider does not wait behind admissions. Different
 * providers do not wait for each other.
 *
 * Times: lease expiries and admission times are epoch milliseconds (as on
 * SQLite) read from the database server's clock, so workers on machines whose
 * clocks differ still agree on when a lease has expired and what falls in a
 * requests-per-minute window. `finished_at` columns are whole seconds, as
 * SQLite's `unixepoch()`.
 *
 * Ending a run: the stores of one run lock the run's row last, just before the
 * drained check. Two workers storing a run's last two jobs at the same time
 * would otherwise each see the other's job still leased (its transaction not
 * yet committed) and neither would end the run; with the lock, the second one
 * reads after the first committed.
 *
 * One statement each: a claim, an admission and a store are PL/pgSQL
 * functions (db/migrations-pg/0003_queue_functions.sql) called as prepared
 * statements, each its own transaction. Sent as separate statements they took
 * 6–10 round trips each, ~23 statements per call in all, and a lock (the
 * provider's row, the run's row) was held across the round trips after it; in
 * a function the lock is held only while the function runs. The functions are
 * VOLATILE, so each statement inside reads a new snapshot, as the separate
 * statements did: the reasoning above holds unchanged.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { PgDb } from "../../../db/client-pg";
import { jobs } from "../../../db/schema.pg";
import type { ClaimedJob } from "../jobs.server";
import type { JobPayload, Outcome } from "../protocols/types";
import { RPM_MARGIN_MS, RPM_WINDOW_MS, RunStopped, type CallOutcome } from "../providers/shared-limits.server";
import { pgDal } from "../../dal.server";
import { emitRunFinished } from "../../webhooks/events.server";

/** The database server's clock in epoch milliseconds (clock_timestamp: the time of the statement, not of the transaction's start). */
const NOW_MS = sql`(floor(extract(epoch from clock_timestamp()) * 1000)::bigint)`;

// ─── Claiming ────────────────────────────────────────────────────────────────

/**
 * Leases up to `max` jobs of the active (queued or running) runs, or of
 * `runId` alone, in one transaction: per run, expired leases first (oldest
 * first), then the newest queued jobs, taken in the order they were created
 * (depth-first, as claimWithin on SQLite: the follow-ups of the replies just
 * stored go before untouched items). Rows locked by another claim are
 * skipped. Each leased job gets `lease_owner`, `lease_expires_at` = now +
 * leaseMs and attempts + 1; its run is marked running. One statement: the
 * function concord_claim_jobs (db/migrations-pg/0003_queue_functions.sql).
 */
export async function claimJobsPg(
  db: PgDb,
  owner: string,
  max: number,
  leaseMs: number,
  opts: { runId?: number } = {},
): Promise<ClaimedJob[]> {
  if (max <= 0) return [];
  const { rows } = await db.$client.query<{
    job_id: number;
    job_run_id: number;
    job_key: string;
    job_payload: JobPayload;
    job_protocol: string;
    job_attempts: number;
    job_ord: number;
  }>({
    name: "concord_claim_jobs",
    text: "SELECT * FROM concord_claim_jobs($1, $2, $3, $4)",
    values: [owner, max, leaseMs, opts.runId ?? null],
  });
  return rows
    .sort((a, b) => a.job_ord - b.job_ord)
    .map((r) => ({
      id: r.job_id,
      runId: r.job_run_id,
      key: r.job_key,
      payload: r.job_payload,
      protocol: r.job_protocol,
      attempts: r.job_attempts,
    }));
}

/** Extends the leases `owner` still holds on `jobIds` to now + leaseMs; returns the ids renewed (a missing id: the lease was lost). */
export async function renewLeasesPg(db: PgDb, owner: string, jobIds: number[], leaseMs: number): Promise<number[]> {
  if (jobIds.length === 0) return [];
  const rows = await db
    .update(jobs)
    .set({ leaseExpiresAt: sql`${NOW_MS} + ${leaseMs}::bigint` })
    .where(and(inArray(jobs.id, jobIds), eq(jobs.status, "leased"), eq(jobs.leaseOwner, owner)))
    .returning({ id: jobs.id });
  return rows.map((r) => r.id);
}

// ─── Storing an outcome ──────────────────────────────────────────────────────

/** What a job ended with: its outcome, an error, or `stopped` (it made no call because its run was paused; it goes back to the queue). */
export type JobEnd = { outcome: Outcome } | { error: string } | { stopped: true };

const heldBy = (jobId: number, owner: string) => and(eq(jobs.id, jobId), eq(jobs.status, "leased"), eq(jobs.leaseOwner, owner));

/**
 * Stores how a job ended, in one transaction: its outcome (responses — an
 * existing one is kept —, verdicts, follow-up jobs and the done mark) or its
 * error (the failed mark with the reason), guarded by the lease; then ends the
 * run if it is drained. An outcome that cannot be stored (a verdict for a
 * response that does not exist, say) fails the job alone, with the reason.
 * Returns false, writing nothing, when the lease is no longer `owner`'s (an
 * expired lease taken by another worker, who stores the job instead). Nothing
 * is stored into a run that is cancelled (or paused, or deleted): the job
 * goes back to the queue, as does a `stopped` one. One statement: the
 * function concord_store_job (db/migrations-pg/0003_queue_functions.sql).
 */
export async function storeOutcomePg(
  db: PgDb,
  owner: string,
  job: ClaimedJob,
  end: JobEnd,
  /** The job's answered call, completed in the same statement (see PgCallGate). */
  call: { id: number; o: CallOutcome } | null = null,
): Promise<boolean> {
  if ("stopped" in end) {
    if (call) await endCallPg(db, call.id, call.o);
    await db
      .update(jobs)
      .set({ status: "queued", leaseOwner: null, leaseExpiresAt: null, attempts: sql`${jobs.attempts} - 1` })
      .where(heldBy(job.id, owner));
    return false;
  }
  const o = "outcome" in end ? end.outcome : null;
  const { rows } = await db.$client.query<{ s: "stored" | "finished" | "lost" | "stopped" }>({
    name: "concord_store_job",
    text: "SELECT concord_store_job($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) AS s",
    values: [
      job.id,
      job.runId,
      owner,
      job.key,
      o ? null : String(("error" in end && end.error) || "unknown error"),
      o?.result == null ? null : JSON.stringify(o.result),
      o ? JSON.stringify(o.responses.map((r) => ({ ...r, metadata: r.metadata ?? {} }))) : "[]",
      o ? JSON.stringify(o.verdicts) : "[]",
      o ? JSON.stringify(o.next) : "[]",
      call?.id ?? null,
      call?.o.reply == null ? null : JSON.stringify(call.o.reply),
      call?.o.status ?? null,
      call?.o.latencyMs ?? null,
      call?.o.promptTokens ?? null,
      call?.o.completionTokens ?? null,
    ],
  });
  if (rows[0].s === "finished") {
    // This store ended the run (db/migrations-pg/0007): only one store can, so the event is emitted once. After the
    // store's commit: a worker killed between the two leaves the run finished without its webhook event.
    try {
      await emitRunFinished(pgDal(db), job.runId);
    } catch (err) {
      console.error(`Concord worker: the run.finished webhook event of run ${job.runId} was not recorded: ${(err as Error).message}`);
    }
  }
  return rows[0].s === "stored" || rows[0].s === "finished";
}

// ─── Provider limits ─────────────────────────────────────────────────────────

export type AdmitArgs = {
  providerId: number;
  concurrency: number;
  requestsPerMinute: number | null;
  owner: string;
  /** The run the call serves (checked in the admitting transaction); null for a one-off call. */
  runId: number | null;
  jobId: number | null;
  /** Stored in provider_calls.request: the request as JSON text, as the call log keeps it (requestJson). */
  requestJson: string;
  estimatedPromptTokens?: number | null;
  /**
   * The requests-per-minute window: 60 s plus a margin by default (the time
   * from admission to the request reaching the server is not zero, so
   * admissions are spaced a little more than a minute apart and the server
   * never counts more than the limit in any 60 s of arrivals). Shorter only in
   * tests.
   */
  windowMs?: number;
};

/** Admitted: the provider_calls row (state 'sent') to complete with endCallPg. Otherwise how long to wait before asking again. */
export type Admission = { id: number; waitMs?: undefined } | { id?: undefined; waitMs: number };

/** How soon to ask again when every slot is taken (a slot frees when a call of any worker ends, which cannot be known here). */
export const FULL_POLL_MS = 10;

/**
 * Admits one HTTP attempt against the provider's limits, shared by every
 * worker through the database: in one transaction that holds the provider's
 * row lock, checks the run is still active (throws RunStopped if not), counts
 * the provider's calls in flight (state 'sent') and its admissions in the
 * window, and — when both are under the limits — logs the call as sent and
 * returns its id.
 */
export async function admitCallPg(db: PgDb, a: AdmitArgs): Promise<Admission> {
  const windowMs = a.windowMs ?? RPM_WINDOW_MS + RPM_MARGIN_MS;
  const { rows } = await db.$client.query<{ call_id: number | null; wait_ms: number | null; run_status: string | null }>({
    name: "concord_admit_call",
    text: "SELECT * FROM concord_admit_call($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    values: [
      a.providerId,
      a.runId,
      a.concurrency,
      a.requestsPerMinute || null,
      windowMs,
      a.owner,
      a.jobId,
      a.requestJson,
      a.estimatedPromptTokens ?? null,
    ],
  });
  const r = rows[0];
  if (r.run_status != null) throw new RunStopped(r.run_status);
  // No wait from the function: every slot is taken, ask again after FULL_POLL_MS.
  return r.call_id != null ? { id: r.call_id } : { waitMs: r.wait_ms ?? FULL_POLL_MS };
}

/** Completes an admitted call's row with its reply or error, which frees its slot. */
export async function endCallPg(db: PgDb, id: number, o: CallOutcome): Promise<void> {
  await db.$client.query({
    name: "concord_end_call",
    text: `UPDATE provider_calls SET state = 'done', reply = $2::jsonb, status = $3, latency_ms = $4,
             prompt_tokens = COALESCE($5::bigint, prompt_tokens), completion_tokens = $6, error = $7 WHERE id = $1`,
    values: [id, o.reply == null ? null : JSON.stringify(o.reply), o.status, o.latencyMs, o.promptTokens, o.completionTokens, o.error],
  });
}
