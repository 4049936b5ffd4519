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
 */
import { and, asc, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import type { PgDb } from "../../../db/client-pg";
import { jobs, providerCalls, providers, responses, runs, verdicts } from "../../../db/schema.pg";
import type { ClaimedJob } from "../jobs.server";
import type { JobPayload, Outcome } from "../protocols/types";
import { RPM_MARGIN_MS, RPM_WINDOW_MS, RunStopped, type CallOutcome } from "../providers/shared-limits.server";

type Tx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];
type Conn = PgDb | Tx;

/** The database server's clock in epoch milliseconds (clock_timestamp: the time of the statement, not of the transaction's start). */
const NOW_MS = sql`(floor(extract(epoch from clock_timestamp()) * 1000)::bigint)`;
/** SQLite's `unixepoch()`: whole seconds. */
const UNIXEPOCH = sql`(floor(extract(epoch from now()))::bigint)`;

const ACTIVE = ["queued", "running"] as const;
const isActive = (status: string | undefined) => status === "queued" || status === "running";

// ─── Claiming ────────────────────────────────────────────────────────────────

/**
 * Leases up to `max` jobs of the active (queued or running) runs, or of
 * `runId` alone, in one transaction: per run, expired leases first (oldest
 * first), then the newest queued jobs, taken in the order they were created
 * (depth-first, as claimWithin on SQLite: the follow-ups of the replies just
 * stored go before untouched items). Rows locked by another claim are
 * skipped. Each leased job gets `lease_owner`, `lease_expires_at` = now +
 * leaseMs and attempts + 1; its run is marked running.
 */
export async function claimJobsPg(
  db: PgDb,
  owner: string,
  max: number,
  leaseMs: number,
  opts: { runId?: number } = {},
): Promise<ClaimedJob[]> {
  if (max <= 0) return [];
  return db.transaction(async (tx) => {
    const active = await tx
      .select({ id: runs.id, protocol: runs.protocol })
      .from(runs)
      .where(and(inArray(runs.status, [...ACTIVE]), opts.runId === undefined ? undefined : eq(runs.id, opts.runId)))
      .orderBy(asc(runs.id));
    const out: ClaimedJob[] = [];
    for (const run of active) {
      const room = max - out.length;
      if (room <= 0) break;
      const expired = await tx
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.runId, run.id), eq(jobs.status, "leased"), lt(jobs.leaseExpiresAt, NOW_MS)))
        .orderBy(asc(jobs.id))
        .limit(room)
        .for("update", { skipLocked: true });
      const ids = expired.map((r) => r.id);
      if (ids.length < room) {
        const queued = await tx
          .select({ id: jobs.id })
          .from(jobs)
          .where(and(eq(jobs.runId, run.id), eq(jobs.status, "queued")))
          .orderBy(desc(jobs.id))
          .limit(room - ids.length)
          .for("update", { skipLocked: true });
        ids.push(...queued.map((r) => r.id).reverse());
      }
      if (ids.length === 0) continue;
      const leased = await tx
        .update(jobs)
        .set({
          status: "leased",
          leaseOwner: owner,
          leaseExpiresAt: sql`${NOW_MS} + ${leaseMs}::bigint`,
          attempts: sql`${jobs.attempts} + 1`,
        })
        .where(inArray(jobs.id, ids))
        .returning({ id: jobs.id, key: jobs.key, payload: jobs.payload, attempts: jobs.attempts });
      const byId = new Map(leased.map((r) => [r.id, r]));
      for (const id of ids) {
        const r = byId.get(id)!;
        out.push({ id, runId: run.id, key: r.key, payload: r.payload as JobPayload, protocol: run.protocol, attempts: r.attempts });
      }
      await tx
        .update(runs)
        .set({ status: "running" })
        .where(and(eq(runs.id, run.id), eq(runs.status, "queued")));
    }
    return out;
  });
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

/** Thrown inside the store's transaction to undo its writes when the run stopped meanwhile. */
class RunNotActive extends Error {}

const heldBy = (jobId: number, owner: string) => and(eq(jobs.id, jobId), eq(jobs.status, "leased"), eq(jobs.leaseOwner, owner));

/** Hands a leased job back to the queue (the attempt did not count). */
async function release(c: Conn, owner: string, jobId: number): Promise<void> {
  await c
    .update(jobs)
    .set({ status: "queued", leaseOwner: null, leaseExpiresAt: null, attempts: sql`${jobs.attempts} - 1` })
    .where(heldBy(jobId, owner));
}

async function markFailed(c: Conn, owner: string, jobId: number, error: string): Promise<boolean> {
  const rows = await c
    .update(jobs)
    .set({ status: "failed", error: error.slice(0, 2000), leaseOwner: null, leaseExpiresAt: null, finishedAt: UNIXEPOCH })
    .where(heldBy(jobId, owner))
    .returning({ id: jobs.id });
  return rows.length > 0;
}

/**
 * Why a write failed, in PostgreSQL's words: drizzle wraps a refused statement in an error whose message is the
 * statement and its parameters (a job's whole reply), with the database's own error as its cause.
 */
function reason(err: unknown): string {
  const e = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return e instanceof Error ? e.message : String(e);
}

/** The done mark, then the responses, verdicts and follow-up jobs; false (nothing written) when the lease is not `owner`'s. */
async function writeOutcome(c: Conn, owner: string, job: ClaimedJob, outcome: Outcome): Promise<boolean> {
  const done = await c
    .update(jobs)
    .set({
      status: "done",
      result: outcome.result === undefined ? null : outcome.result,
      error: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      finishedAt: UNIXEPOCH,
    })
    .where(heldBy(job.id, owner))
    .returning({ id: jobs.id });
  if (done.length === 0) return false;
  if (outcome.responses.length)
    await c
      .insert(responses)
      .values(
        outcome.responses.map((r) => ({
          itemId: r.itemId,
          model: r.model,
          turn: r.turn,
          text: r.text,
          origin: "run" as const,
          runId: job.runId,
          sourceKey: r.sourceKey,
          metadata: r.metadata ?? {},
        })),
      )
      .onConflictDoNothing();
  if (outcome.verdicts.length) {
    const found = await c
      .select({ id: responses.id, itemId: responses.itemId, sourceKey: responses.sourceKey })
      .from(responses)
      .where(
        or(
          ...[...new Set(outcome.verdicts.map((v) => `${v.itemId}\u0000${v.responseSourceKey}`))].map((k) => {
            const [itemId, sourceKey] = k.split("\u0000");
            return and(eq(responses.itemId, Number(itemId)), eq(responses.sourceKey, sourceKey));
          }),
        ),
      );
    const ids = new Map(found.map((r) => [`${r.itemId}\u0000${r.sourceKey}`, r.id]));
    const rows = outcome.verdicts.map((v) => {
      const responseId = ids.get(`${v.itemId}\u0000${v.responseSourceKey}`);
      if (responseId === undefined) throw new Error(`job ${job.key}: verdict for unknown response ${v.responseSourceKey}`);
      return {
        judgeId: v.judgeId,
        responseId,
        checklistItemId: v.checklistItemId,
        value: v.value,
        score: v.score,
        rawOutput: v.rawOutput,
        parseStatus: v.parseStatus,
        runId: job.runId,
      };
    });
    // A verdict on a checklist item is kept once by the unique (judge, response, item) index.
    const onItems = rows.filter((r) => r.checklistItemId != null);
    if (onItems.length) await c.insert(verdicts).values(onItems).onConflictDoNothing();
    // One on the whole response (no item) by NOT EXISTS, since the index lets NULLs repeat; the transaction-scoped
    // advisory lock on (judge, response) keeps two transactions from both passing the NOT EXISTS before either commits.
    for (const r of rows.filter((x) => x.checklistItemId == null)) {
      await c.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`verdict:${r.judgeId}:${r.responseId}`}::text, 0))`);
      await c.execute(sql`
        INSERT INTO ${verdicts} (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status, run_id)
        SELECT ${r.judgeId}::bigint, ${r.responseId}::bigint, NULL, ${r.value}::text, ${r.score}::double precision,
               ${r.rawOutput}::text, ${r.parseStatus}::text, ${r.runId}::bigint
        WHERE NOT EXISTS (SELECT 1 FROM ${verdicts} WHERE judge_id = ${r.judgeId}::bigint AND response_id = ${r.responseId}::bigint
                          AND checklist_item_id IS NULL)`);
    }
  }
  if (outcome.next.length)
    await c
      .insert(jobs)
      .values(outcome.next.map((n) => ({ runId: job.runId, key: n.key, payload: n.payload as unknown as Record<string, unknown> })))
      .onConflictDoNothing();
  return true;
}

/**
 * A drained run (no job queued or leased) ends "completed", "completed-with-errors" (some jobs failed) or "failed"
 * (no job succeeded). The caller holds the run's row lock (see the file header).
 */
async function finishRunIfDrained(c: Conn, runId: number): Promise<void> {
  const open = await c
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.runId, runId), inArray(jobs.status, ["queued", "leased"])))
    .limit(1);
  if (open.length) return;
  const [n] = await c
    .select({
      done: sql<number>`count(*) FILTER (WHERE ${jobs.status} = 'done')`.mapWith(Number),
      failed: sql<number>`count(*) FILTER (WHERE ${jobs.status} = 'failed')`.mapWith(Number),
    })
    .from(jobs)
    .where(eq(jobs.runId, runId));
  const status = n.failed === 0 ? "completed" : n.done === 0 ? "failed" : "completed-with-errors";
  await c
    .update(runs)
    .set({ status, finishedAt: UNIXEPOCH })
    .where(and(eq(runs.id, runId), inArray(runs.status, [...ACTIVE])));
}

/**
 * Stores how a job ended, in one transaction: its outcome (responses — an
 * existing one is kept —, verdicts, follow-up jobs and the done mark) or its
 * error (the failed mark with the reason), guarded by the lease; then ends the
 * run if it is drained. An outcome that cannot be stored (a verdict for a
 * response that does not exist, say) fails the job alone, with the reason.
 * Returns false, writing nothing, when the lease is no longer `owner`'s (an
 * expired lease taken by another worker, who stores the job instead). Nothing
 * is stored into a run that is cancelled (or paused, or deleted): the job
 * goes back to the queue, as does a `stopped` one.
 */
export async function storeOutcomePg(db: PgDb, owner: string, job: ClaimedJob, end: JobEnd): Promise<boolean> {
  if ("stopped" in end) {
    await release(db, owner, job.id);
    return false;
  }
  try {
    return await db.transaction(async (tx) => {
      let stored: boolean;
      if ("outcome" in end) {
        try {
          // A savepoint: if the outcome's writes fail, they are undone and the job is failed with the reason.
          stored = await tx.transaction((sp) => writeOutcome(sp, owner, job, end.outcome));
        } catch (err) {
          stored = await markFailed(tx, owner, job.id, `storing the outcome failed: ${reason(err)}`);
        }
      } else stored = await markFailed(tx, owner, job.id, String(end.error || "unknown error"));
      if (!stored) return false;
      // The run's row, locked last (see the file header); a cancel that committed before is seen here.
      const [run] = await tx.select({ status: runs.status }).from(runs).where(eq(runs.id, job.runId)).for("no key update");
      if (!isActive(run?.status)) throw new RunNotActive();
      await finishRunIfDrained(tx, job.runId);
      return true;
    });
  } catch (err) {
    if (!(err instanceof RunNotActive)) throw err;
    await release(db, owner, job.id);
    return false;
  }
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
  /** Stored in provider_calls.request. */
  request: unknown;
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
  return db.transaction(async (tx) => {
    const locked = await tx.select({ id: providers.id }).from(providers).where(eq(providers.id, a.providerId)).for("no key update");
    if (locked.length === 0) throw new Error(`provider ${a.providerId} does not exist`);
    if (a.runId != null) {
      const [run] = await tx.select({ status: runs.status }).from(runs).where(eq(runs.id, a.runId));
      if (!isActive(run?.status)) throw new RunStopped(run?.status ?? "deleted");
    }
    // Read after the lock, so the clock and the counts follow every admission committed before it.
    const [state] = await tx
      .select({ now: NOW_MS.mapWith(Number), inFlight: sql<number>`count(*)`.mapWith(Number) })
      .from(providerCalls)
      .where(and(eq(providerCalls.providerId, a.providerId), eq(providerCalls.state, "sent")));
    if (state.inFlight >= a.concurrency) return { waitMs: FULL_POLL_MS };
    const rpm = a.requestsPerMinute;
    if (rpm) {
      // The newest `rpm` admissions in the window: when there are `rpm` of them, the oldest of those must leave it first.
      const starts = await tx
        .select({ startedAt: providerCalls.startedAt })
        .from(providerCalls)
        .where(and(eq(providerCalls.providerId, a.providerId), sql`${providerCalls.startedAt} > ${state.now - windowMs}::bigint`))
        .orderBy(desc(providerCalls.startedAt))
        .limit(rpm);
      if (starts.length >= rpm) return { waitMs: Math.max(1, starts[rpm - 1].startedAt! + windowMs - state.now + 1) };
    }
    const [row] = await tx
      .insert(providerCalls)
      .values({
        providerId: a.providerId,
        jobId: a.jobId,
        request: a.request ?? {},
        promptTokens: a.estimatedPromptTokens ?? null,
        state: "sent",
        owner: a.owner,
        startedAt: state.now,
      })
      .returning({ id: providerCalls.id });
    return { id: row.id };
  });
}

/** Completes an admitted call's row with its reply or error, which frees its slot. */
export async function endCallPg(db: PgDb, id: number, o: CallOutcome): Promise<void> {
  await db
    .update(providerCalls)
    .set({
      state: "done",
      reply: o.reply == null ? null : o.reply,
      status: o.status,
      latencyMs: o.latencyMs,
      promptTokens: sql`COALESCE(${o.promptTokens}::bigint, ${providerCalls.promptTokens})`,
      completionTokens: o.completionTokens,
      error: o.error,
    })
    .where(eq(providerCalls.id, id));
}
