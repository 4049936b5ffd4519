/**
 * The durable runner. A run's jobs live in the `jobs` table; a worker claims
 * them under a lease (an IMMEDIATE transaction), calls the provider, and
 * stores the protocol's outcome — responses, verdicts, follow-up jobs and the
 * job's "done" mark — atomically, guarded by its lease. So a worker killed at
 * any moment loses only the calls whose results were not yet committed: their
 * leases expire, another worker (or the restarted one) repeats exactly those,
 * and results are never duplicated (unique keys on jobs, responses and
 * verdicts, plus the guard).
 *
 * Throughput (bench:runs): the outcomes of all replies that arrive in one
 * event-loop turn are stored, and the freed slots claimed, in ONE transaction
 * with statements prepared once per connection; a few jobs are leased ahead
 * (prefetch) so a reply's slot is refilled at once; providers and run
 * settings are built once per worker; HTTP goes through a shared keep-alive
 * agent (providers/node-fetch.server.ts).
 *
 * Lease times are epoch milliseconds (sub-second leases keep tests fast).
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { schema, type Db } from "../../db/client";
import { getProtocol, PROTOCOL_IDS, validateDataset } from "./protocols";
import type { ItemData, JobPayload, JudgeRef, ModelRef, Outcome } from "./protocols/types";
import { providerFromRow, type ProviderRow } from "./providers/index.server";
import { encryptPlaintextKeys } from "./providers/secrets.server";
import { heartbeat, RunStopped, sharedLimits, sweepDeadWorkers, unregisterWorker } from "./providers/shared-limits.server";
import { ProviderError, type CallRecord, type LlmProvider } from "./providers/types";

export { providerFromRow, type ProviderRow };

/** Run statuses after which nothing more happens (retry-failed can reopen the last two). */
export const TERMINAL_RUN_STATUSES = ["completed", "cancelled", "failed", "completed-with-errors"];

// ─── Run definition ──────────────────────────────────────────────────────────

export const RunDefinition = z.object({
  name: z.string().trim().min(1).max(200),
  protocol: z.enum(PROTOCOL_IDS as [string, ...string[]]),
  datasetId: z.number().int().positive(),
  /** A subset: explicit item ids, or the first `limit` items. */
  itemIds: z.array(z.number().int().positive()).optional(),
  limit: z.number().int().positive().optional(),
  /** Target models, by provider name (the provider's model is used; `as` renames it in results). */
  models: z.array(z.object({ provider: z.string().min(1), as: z.string().optional() })).min(1),
  /** Judges, by provider name. The first drives guided feedback. */
  judges: z.array(z.object({ provider: z.string().min(1), name: z.string().optional() })).min(1),
  /** Protocol settings (see each protocol's config schema). */
  settings: z.record(z.string(), z.unknown()).default({}),
});
export type RunDefinition = z.input<typeof RunDefinition>;

export type StoredRunConfig = {
  settings: Record<string, unknown>;
  models: ModelRef[];
  judges: JudgeRef[];
  itemCount: number;
  estimatedJobs: number;
  /** The definition the run was created from (the runs page offers it again). */
  definition?: RunDefinition;
};

export class RunInputError extends Error {}

export function loadItems(db: Db, datasetId: number, opts: { itemIds?: number[]; limit?: number } = {}): ItemData[] {
  const where = opts.itemIds?.length ? and(eq(schema.items.datasetId, datasetId), inArray(schema.items.id, opts.itemIds)) : eq(schema.items.datasetId, datasetId);
  let q = db.select().from(schema.items).where(where).orderBy(asc(schema.items.id)).$dynamic();
  if (opts.limit) q = q.limit(opts.limit);
  const rows = q.all();
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const checklist = db
    .select()
    .from(schema.checklistItems)
    .where(and(inArray(schema.checklistItems.itemId, ids), isNull(schema.checklistItems.retiredAt)))
    .orderBy(asc(schema.checklistItems.position), asc(schema.checklistItems.id))
    .all();
  const refs = db
    .select()
    .from(schema.references)
    .where(and(inArray(schema.references.itemId, ids), eq(schema.references.isCurrent, true)))
    .orderBy(asc(schema.references.version))
    .all();
  const byItem = new Map<number, ItemData>();
  for (const r of rows)
    byItem.set(r.id, { id: r.id, sourceId: r.sourceId, query: r.query, passage: r.passage, domain: r.domain, subject: r.subject, taskType: r.taskType, metadata: r.metadata ?? {}, checklist: [], reference: null });
  for (const c of checklist) byItem.get(c.itemId)?.checklist.push({ id: c.id, text: c.text, weight: c.weight, position: c.position });
  for (const r of refs) {
    const it = byItem.get(r.itemId);
    if (it) it.reference = r.text; // highest current version wins
  }
  return [...byItem.values()];
}

function estimateJobs(protocol: string, convs: number, judges: number, settings: Record<string, unknown>): number {
  if (protocol === "refinebench") return convs * Number(settings.maxTurns ?? 5) * (1 + judges);
  return convs * (1 + judges);
}

/** Creates a run and its first jobs in one transaction. Status "queued": a worker picks it up. */
export function createRun(db: Db, projectId: number, input: RunDefinition, createdBy: number | null = null) {
  const def = RunDefinition.parse(input);
  const protocol = getProtocol(def.protocol);
  const settingsParsed = protocol.configSchema.safeParse(def.settings);
  if (!settingsParsed.success) {
    const i = settingsParsed.error.issues[0];
    throw new RunInputError(`settings.${i.path.join(".")}: ${i.message}`);
  }
  const settings = settingsParsed.data as Record<string, unknown>;
  const dataset = db.select().from(schema.datasets).where(and(eq(schema.datasets.id, def.datasetId), eq(schema.datasets.projectId, projectId))).get();
  if (!dataset) throw new RunInputError(`datasetId ${def.datasetId}: no such dataset in this project`);
  const providerByName = (name: string, field: string) => {
    const p = db.select().from(schema.providers).where(and(eq(schema.providers.projectId, projectId), eq(schema.providers.name, name))).get();
    if (!p) throw new RunInputError(`${field}: no provider named "${name}" in this project`);
    return p;
  };
  const models: ModelRef[] = def.models.map((m, i) => {
    const p = providerByName(m.provider, `models[${i}].provider`);
    return { providerId: p.id, name: m.as ?? p.model };
  });
  if (new Set(models.map((m) => m.name)).size !== models.length) throw new RunInputError("models: two targets share a name; give one an `as`");
  const items = loadItems(db, def.datasetId, { itemIds: def.itemIds, limit: def.limit });
  if (items.length === 0) throw new RunInputError("the dataset (or the chosen subset) has no items");
  const problems = validateDataset(protocol.id, items, def.models.map((m, i) => { const p = providerByName(m.provider, `models[${i}].provider`); return { name: models[i].name, kind: p.kind, settings: p.settings ?? {} }; }), settings);
  if (problems.length) throw new RunInputError(`${protocol.title} cannot run on this data: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ""}`);

  return db.transaction(
    (tx) => {
      const judges: JudgeRef[] = def.judges.map((j, i) => {
        const p = providerByName(j.provider, `judges[${i}].provider`);
        const name = j.name ?? `${p.name} · ${protocol.id} v${protocol.version}`;
        let row = tx.select().from(schema.judges).where(and(eq(schema.judges.projectId, projectId), eq(schema.judges.name, name))).get();
        if (!row)
          row = tx
            .insert(schema.judges)
            .values({ projectId, name, provider: p.name, model: p.model, promptVersion: `${protocol.id}@${protocol.version}`, settings: { providerId: p.id, recorded: p.kind === "replay" } })
            .returning()
            .get();
        return { providerId: p.id, judgeId: row.id, name };
      });
      const run = tx
        .insert(schema.runs)
        .values({ projectId, datasetId: def.datasetId, name: def.name, protocol: protocol.id, protocolVersion: protocol.version, status: "queued", createdBy, config: {} })
        .returning()
        .get();
      const jobs = protocol.plan({ runId: run.id, items, models, judges, config: settings });
      const stored: StoredRunConfig = { settings, models, judges, itemCount: items.length, estimatedJobs: estimateJobs(protocol.id, jobs.length, judges.length, settings), definition: { ...input, settings } };
      tx.update(schema.runs).set({ config: stored as unknown as Record<string, unknown> }).where(eq(schema.runs.id, run.id)).run();
      for (let i = 0; i < jobs.length; i += 500)
        tx.insert(schema.jobs)
          .values(jobs.slice(i, i + 500).map((j) => ({ runId: run.id, key: j.key, payload: j.payload as unknown as Record<string, unknown> })))
          .run();
      return { ...run, config: stored, jobs: jobs.length };
    },
    { behavior: "immediate" },
  );
}

export type RunControl = "pause" | "resume" | "cancel" | "retry-failed";

/** Pause (in-flight calls finish), resume, cancel, or requeue failed jobs. Returns the new status. */
export function controlRun(db: Db, runId: number, action: RunControl): string {
  return db.transaction(
    (tx) => {
      const run = tx.select({ status: schema.runs.status }).from(schema.runs).where(eq(schema.runs.id, runId)).get();
      if (!run) throw new RunInputError(`run ${runId} not found`);
      let status = run.status;
      if (action === "pause" && (status === "queued" || status === "running")) status = "paused";
      else if (action === "resume" && status === "paused") status = "queued";
      else if (action === "cancel" && !TERMINAL_RUN_STATUSES.includes(status)) status = "cancelled";
      else if (action === "retry-failed" && status !== "cancelled" && status !== "completed") {
        const n = tx.update(schema.jobs).set({ status: "queued", error: null, leaseOwner: null, leaseExpiresAt: null }).where(and(eq(schema.jobs.runId, runId), eq(schema.jobs.status, "failed"))).run().changes;
        if (n > 0) status = status === "paused" ? "paused" : "queued";
        else throw new RunInputError("no failed jobs to retry");
      } else throw new RunInputError(`cannot ${action} a ${status} run`);
      tx.update(schema.runs).set({ status, finishedAt: status === "cancelled" ? sql`(unixepoch())` : status === "queued" ? null : undefined }).where(eq(schema.runs.id, runId)).run();
      return status;
    },
    { behavior: "immediate" },
  );
}

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
    expired: s.prepare(`SELECT id, run_id AS runId, key, payload, attempts FROM jobs WHERE run_id = ? AND status = 'leased' AND lease_expires_at < ? ORDER BY id LIMIT ?`),
    queued: s.prepare(`SELECT id, run_id AS runId, key, payload, attempts FROM jobs WHERE run_id = ? AND status = 'queued' ORDER BY id LIMIT ?`),
    lease: s.prepare(`UPDATE jobs SET status = 'leased', lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1 WHERE id = ?`),
    markRunning: s.prepare(`UPDATE runs SET status = 'running' WHERE id = ? AND status = 'queued'`),
    done: s.prepare(
      `UPDATE jobs SET status = 'done', result = ?, error = NULL, lease_owner = NULL, lease_expires_at = NULL, finished_at = unixepoch() WHERE id = ? AND status = 'leased' AND lease_owner = ?`,
    ),
    fail: s.prepare(
      `UPDATE jobs SET status = 'failed', error = ?, lease_owner = NULL, lease_expires_at = NULL, finished_at = unixepoch() WHERE id = ? AND status = 'leased' AND lease_owner = ?`,
    ),
    insertResponse: s.prepare(`INSERT INTO responses (item_id, model, turn, text, origin, run_id, source_key, metadata) VALUES (?, ?, ?, ?, 'run', ?, ?, ?) ON CONFLICT DO NOTHING`),
    findResponse: s.prepare(`SELECT id FROM responses WHERE item_id = ? AND source_key = ?`).pluck(),
    insertVerdict: s.prepare(
      `INSERT INTO verdicts (judge_id, response_id, checklist_item_id, value, score, raw_output, parse_status, run_id)
       SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM verdicts WHERE judge_id = ? AND response_id = ? AND checklist_item_id IS ?)`,
    ),
    insertJob: s.prepare(`INSERT INTO jobs (run_id, key, payload) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`),
    anyLeft: s.prepare(`SELECT 1 FROM jobs WHERE run_id = ? AND status IN ('queued','leased') LIMIT 1`).pluck(),
    finishRun: s.prepare(`UPDATE runs SET status = ?, finished_at = unixepoch() WHERE id = ? AND status IN ('queued','running')`),
    outcomeCounts: s.prepare(`SELECT COALESCE(SUM(status = 'done'), 0) AS done, COALESCE(SUM(status = 'failed'), 0) AS failed FROM jobs WHERE run_id = ?`),
    runStatus: s.prepare(`SELECT status FROM runs WHERE id = ?`).pluck(),
    insertCall: s.prepare(
      `INSERT INTO provider_calls (provider_id, job_id, request, reply, status, latency_ms, prompt_tokens, completion_tokens, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    runSettings: s.prepare(`SELECT protocol, config FROM runs WHERE id = ?`),
    release: s.prepare(`UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, attempts = attempts - 1 WHERE id = ? AND status = 'leased' AND lease_owner = ?`),
    activeRunIds: s.prepare(`SELECT id FROM runs WHERE status IN ('queued','running')`).pluck(),
    isActive: s.prepare(`SELECT 1 FROM runs WHERE id = ? AND status IN ('queued','running')`).pluck(),
  };
}
type Statements = ReturnType<typeof prepareStatements>;
const statementCache = new WeakMap<Sqlite, Statements>();
function stmts(db: Db): Statements {
  let s = statementCache.get(db.$client);
  if (!s) statementCache.set(db.$client, (s = prepareStatements(db.$client)));
  return s;
}

type JobRow = { id: number; runId: number; key: string; payload: string; attempts: number };

/** Leases up to `max` jobs (expired leases first, then queued, oldest first). Call inside an immediate transaction. */
function claimWithin(db: Db, owner: string, max: number, leaseMs: number, now: number, runId?: number): ClaimedJob[] {
  const st = stmts(db);
  const runs = (runId === undefined ? st.activeRuns.all() : st.activeRun.all(runId)) as { id: number; protocol: string }[];
  const out: ClaimedJob[] = [];
  const expires = now + leaseMs;
  for (const run of runs) {
    if (out.length >= max) break;
    const rows = st.expired.all(run.id, now, max - out.length) as JobRow[];
    if (rows.length < max - out.length) rows.push(...(st.queued.all(run.id, max - out.length - rows.length) as JobRow[]));
    if (rows.length === 0) continue;
    for (const r of rows) {
      st.lease.run(owner, expires, r.id);
      out.push({ id: r.id, runId: r.runId, key: r.key, payload: JSON.parse(r.payload) as JobPayload, protocol: run.protocol, attempts: r.attempts + 1 });
    }
    st.markRunning.run(run.id);
  }
  return out;
}

export function claimJobs(db: Db, owner: string, max: number, leaseMs: number, now = Date.now(), runId?: number): ClaimedJob[] {
  if (max <= 0) return [];
  return db.$client.transaction(() => claimWithin(db, owner, max, leaseMs, now, runId)).immediate();
}

export function renewLeases(db: Db, owner: string, jobIds: number[], leaseMs: number): void {
  if (jobIds.length === 0) return;
  db.$client.prepare(`UPDATE jobs SET lease_expires_at=? WHERE status='leased' AND lease_owner=? AND id IN (${jobIds.map(() => "?").join(",")})`).run(Date.now() + leaseMs, owner, ...jobIds);
}

/** A drained run ends "completed", "completed-with-errors" (some jobs failed) or "failed" (no job succeeded). */
function finishRunIfDrained(db: Db, runId: number): void {
  const st = stmts(db);
  if (st.anyLeft.get(runId) !== undefined) return;
  const c = st.outcomeCounts.get(runId) as { done: number; failed: number };
  st.finishRun.run(c.failed === 0 ? "completed" : c.done === 0 ? "failed" : "completed-with-errors", runId);
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
function storeFinished(db: Db, owner: string, f: Finished, detail: CallLogDetail = "full", isolate = true, runStatus?: (runId: number) => string): boolean {
  const st = stmts(db);
  const { job } = f;
  if (f.calls)
    for (const c of f.calls)
      st.insertCall.run(job.payload.providerId, job.id, callRequest(c, detail), c.reply == null ? null : JSON.stringify(c.reply), c.status, c.latencyMs, c.promptTokens, c.completionTokens, c.error);
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
      for (const r of outcome.responses) st.insertResponse.run(r.itemId, r.model, r.turn, r.text, job.runId, r.sourceKey, JSON.stringify(r.metadata ?? {}));
      for (const v of outcome.verdicts) {
        const responseId = st.findResponse.get(v.itemId, v.responseSourceKey) as number | undefined;
        if (responseId === undefined) throw new Error(`job ${job.key}: verdict for unknown response ${v.responseSourceKey}`);
        st.insertVerdict.run(v.judgeId, responseId, v.checklistItemId, v.value, v.score, v.rawOutput, v.parseStatus, job.runId, v.judgeId, responseId, v.checklistItemId);
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
};
export type StoreResult = { claimed: ClaimedJob[]; released: number[] };
const storeTxCache = new WeakMap<Sqlite, (a: StoreArgs) => StoreResult>();

function storeTx(db: Db): (a: StoreArgs) => StoreResult {
  let fn = storeTxCache.get(db.$client);
  if (!fn) {
    const st = stmts(db);
    const tx = db.$client.transaction((a: StoreArgs): StoreResult => {
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
      return { claimed: a.claim > 0 ? claimWithin(db, a.owner, a.claim, a.leaseMs, Date.now(), a.runId) : [], released };
    });
    fn = (a) => tx.immediate(a);
    storeTxCache.set(db.$client, fn);
  }
  return fn;
}

const isBusy = (err: unknown) => /SQLITE_BUSY|database is locked/i.test(String(err));

/**
 * One transaction: store every finished job, hand back held (leased, not
 * started) jobs whose run was paused or cancelled, then lease up to `claim`
 * new ones. If storing fails for a reason other than a busy database, the
 * batch is stored again with each job isolated, so one bad outcome fails only
 * its job.
 */
export function storeAndClaim(
  db: Db,
  owner: string,
  finished: Finished[],
  claim: number,
  leaseMs: number,
  opts: { runId?: number; detail?: CallLogDetail; held?: ClaimedJob[]; releaseAll?: boolean } = {},
): StoreResult {
  const args: StoreArgs = { owner, finished, claim, leaseMs, runId: opts.runId, detail: opts.detail ?? "full", isolate: false, held: opts.held ?? [], releaseAll: opts.releaseAll ?? false };
  try {
    return storeTx(db)(args);
  } catch (err) {
    if (isBusy(err)) throw err;
    return storeTx(db)({ ...args, isolate: true });
  }
}

// ─── Worker ──────────────────────────────────────────────────────────────────

export type WorkerOptions = {
  id?: string;
  /** Jobs in flight at once (each provider's own limit still applies). */
  concurrency?: number;
  /**
   * Jobs leased ahead of a free slot, so a reply's slot is refilled at once
   * instead of after the next store (default ceil(concurrency / 4); 0 = none).
   * They are calls not yet made: a crash repeats none of them.
   */
  prefetch?: number;
  leaseMs?: number;
  pollMs?: number;
  /** Stop once no claimable work remains (CLI and tests). */
  untilIdle?: boolean;
  /** Only work on this run. */
  runId?: number;
  /** Log every HTTP attempt to provider_calls (default true). */
  logCalls?: boolean;
  /** How much of each request body provider_calls keeps (default "full"). */
  callLog?: CallLogDetail;
  /**
   * Least time between two stores (default 4 ms): replies arriving meanwhile
   * share one transaction. Prefetched jobs keep the slots busy in between; a
   * crash loses at most this window's replies (their calls are repeated).
   */
  storeEveryMs?: number;
};

export const defaultPrefetch = (concurrency: number) => Math.ceil(concurrency / 4);

export class Worker {
  readonly id: string;
  private readonly o: Required<Omit<WorkerOptions, "runId" | "id">> & { runId?: number };
  private providers = new Map<number, { provider: LlmProvider; concurrency: number; requestsPerMinute: number | null; gated: boolean }>();
  /** Per executing job: `stop` ends waiting for a slot (pause or cancel), `cancel` also aborts the request in flight. */
  private controls = new Map<number, { stop: AbortController; cancel: AbortController; runId: number }>();
  private watcher: NodeJS.Timeout | null = null;
  private runs = new Map<number, { protocol: ReturnType<typeof getProtocol>; settings: unknown }>();
  /** Jobs calling their provider now. */
  private executing = new Map<number, Promise<void>>();
  /** Replied, waiting for the next store. */
  private finished: Finished[] = [];
  /** Leased, not started (prefetched). */
  private ready: ClaimedJob[] = [];
  private stopped = false;
  private wake: (() => void) | null = null;
  private wakeQueued = false;
  private lastTick = 0;
  private heartbeat: NodeJS.Timeout | null = null;
  done: Promise<void> = Promise.resolve();
  processed = 0;

  constructor(
    private readonly db: Db,
    opts: WorkerOptions = {},
  ) {
    this.id = opts.id ?? `w-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const concurrency = opts.concurrency ?? 8;
    this.o = { leaseMs: 60_000, pollMs: 500, untilIdle: false, logCalls: true, callLog: "full", prefetch: defaultPrefetch(concurrency), storeEveryMs: 4, ...opts, concurrency };
  }

  /** Every job this worker holds a lease on. */
  private held(): number[] {
    return [...this.executing.keys(), ...this.finished.map((f) => f.job.id), ...this.ready.map((j) => j.id)];
  }

  start(): this {
    this.stopped = false;
    // Registered before the first claim, and a dead worker's jobs and calls reclaimed at once.
    heartbeat(this.db, this.id, this.o.leaseMs);
    try {
      sweepDeadWorkers(this.db, this.id);
      encryptPlaintextKeys(this.db);
    } catch {
      /* retried by the heartbeat */
    }
    this.heartbeat = setInterval(() => {
      try {
        heartbeat(this.db, this.id, this.o.leaseMs);
        renewLeases(this.db, this.id, this.held(), this.o.leaseMs);
        sweepDeadWorkers(this.db, this.id);
      } catch {
        /* the next beat retries */
      }
    }, Math.min(5_000, Math.max(50, Math.floor(this.o.leaseMs / 3))));
    this.heartbeat.unref?.();
    // Pause and cancel reach the jobs of this worker promptly: no new call starts once the run is stopped.
    this.watcher = setInterval(() => this.watchRuns(), Math.min(200, this.o.pollMs));
    this.watcher.unref?.();
    this.done = this.loop().finally(() => {
      if (this.heartbeat) clearInterval(this.heartbeat);
      if (this.watcher) clearInterval(this.watcher);
      try {
        sharedLimits(this.db).flushEnds();
        unregisterWorker(this.db, this.id);
      } catch {
        /* a stale row is swept by the next worker */
      }
    });
    return this;
  }

  private watchRuns(): void {
    if (this.controls.size === 0) return;
    const ids = [...new Set([...this.controls.values()].map((c) => c.runId))];
    let rows: { id: number; status: string }[];
    try {
      rows = this.db.$client.prepare(`SELECT id, status FROM runs WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as { id: number; status: string }[];
    } catch {
      return;
    }
    const status = new Map(rows.map((r) => [r.id, r.status]));
    for (const c of this.controls.values()) {
      const st = status.get(c.runId) ?? "deleted";
      if (st === "queued" || st === "running") continue;
      if (!c.stop.signal.aborted) c.stop.abort(st);
      if ((st === "cancelled" || st === "deleted") && !c.cancel.signal.aborted) c.cancel.abort(st);
    }
  }

  /** Stops claiming; resolves when in-flight jobs have finished and been stored. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.done;
  }

  /** Starts prefetched jobs while slots are free; a job whose run was paused or cancelled meanwhile waits to be handed back. */
  private startReady(): void {
    if (this.ready.length === 0 || this.executing.size >= this.o.concurrency) return;
    const st = stmts(this.db);
    const active = new Map<number, boolean>();
    const isActive = (runId: number) => {
      let a = active.get(runId);
      if (a === undefined) active.set(runId, (a = st.isActive.get(runId) !== undefined));
      return a;
    };
    for (let i = 0; i < this.ready.length && this.executing.size < this.o.concurrency; ) {
      const job = this.ready[i];
      if (!isActive(job.runId)) {
        i++;
        continue;
      }
      this.ready.splice(i, 1);
      this.executing.set(job.id, this.execute(job));
    }
  }

  /**
   * Stores what has finished, hands back prefetched jobs of paused or
   * cancelled runs, and claims for the free slots plus the prefetch, in one
   * transaction; starts what the slots allow. Returns the number claimed.
   */
  private tick(claim: boolean): number {
    const batch = this.finished;
    const want = claim ? Math.max(0, this.o.concurrency - this.executing.size + this.o.prefetch - this.ready.length) : 0;
    if (batch.length === 0 && want === 0 && this.ready.length === 0) return 0;
    this.finished = [];
    this.lastTick = performance.now();
    let r: StoreResult;
    try {
      r = storeAndClaim(this.db, this.id, batch, want, this.o.leaseMs, { runId: this.o.runId, detail: this.o.callLog, held: this.ready, releaseAll: !claim });
    } catch (err) {
      this.finished = batch.concat(this.finished);
      if (isBusy(err)) return 0;
      throw err;
    }
    this.processed += batch.length;
    if (r.released.length) {
      const gone = new Set(r.released);
      this.ready = this.ready.filter((j) => !gone.has(j.id));
    }
    this.ready.push(...r.claimed);
    this.startReady();
    return r.claimed.length;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const claimed = this.tick(true);
      if (claimed === 0 && this.executing.size === 0 && this.finished.length === 0 && this.ready.length === 0 && this.o.untilIdle && !this.hasPendingWork()) break;
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, this.o.pollMs);
        this.wake = () => {
          clearTimeout(t);
          this.wake = null;
          ok();
        };
      });
    }
    for (;;) {
      await Promise.allSettled([...this.executing.values()]);
      this.tick(false);
      if (this.executing.size === 0 && this.finished.length === 0 && this.ready.length === 0) break;
      await new Promise((ok) => setTimeout(ok, Math.min(this.o.pollMs, 100))); // the store was busy; retry
    }
  }

  /** A reply's slot goes to a prefetched job at once; replies of one event-loop turn (or of storeEveryMs) are stored together. */
  private finish(f: Finished): void {
    this.executing.delete(f.job.id);
    this.finished.push(f);
    if (!this.stopped) this.startReady();
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    const fire = () => {
      this.wakeQueued = false;
      this.wake?.();
    };
    const wait = this.lastTick + this.o.storeEveryMs - performance.now();
    if (wait > 1) setTimeout(fire, wait);
    else setImmediate(fire);
  }

  private hasPendingWork(): boolean {
    const row = this.db.$client
      .prepare(
        `SELECT COUNT(*) AS n FROM jobs j JOIN runs r ON r.id=j.run_id WHERE r.status IN ('queued','running') AND j.status IN ('queued','leased') ${this.o.runId !== undefined ? "AND j.run_id = ?" : ""}`,
      )
      .get(...(this.o.runId !== undefined ? [this.o.runId] : [])) as { n: number };
    return row.n > 0;
  }

  private provider(id: number) {
    let p = this.providers.get(id);
    if (!p) {
      const row = this.db.select().from(schema.providers).where(eq(schema.providers.id, id)).get();
      if (!row) throw new ProviderError(`provider ${id} no longer exists`, false);
      p = { provider: providerFromRow(row, this.db.$client.name), concurrency: row.concurrency, requestsPerMinute: row.requestsPerMinute, gated: row.kind !== "replay" };
      this.providers.set(id, p);
    }
    return p;
  }

  /** The run's protocol and parsed settings, read once per run (settings do not change after creation). */
  private run(runId: number) {
    let r = this.runs.get(runId);
    if (!r) {
      const row = stmts(this.db).runSettings.get(runId) as { protocol: string; config: string } | undefined;
      if (!row) throw new Error(`run ${runId} no longer exists`);
      const protocol = getProtocol(row.protocol);
      const settings = (JSON.parse(row.config) as Partial<StoredRunConfig>).settings ?? {};
      r = { protocol, settings: protocol.configSchema.parse(settings) };
      this.runs.set(runId, r);
    }
    return r;
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const calls: CallRecord[] = [];
    const onCall = this.o.logCalls ? (c: CallRecord) => void calls.push(c) : undefined;
    const control = { stop: new AbortController(), cancel: new AbortController(), runId: job.runId };
    this.controls.set(job.id, control);
    // Yield first, so the job is registered as executing before it can finish.
    await undefined;
    try {
      const { protocol, settings } = this.run(job.runId);
      const p = this.provider(job.payload.providerId);
      const detail = this.o.callLog;
      // HTTP providers: each attempt is admitted and logged by the shared limits before it is sent.
      const gate = p.gated
        ? sharedLimits(this.db).gate({
            providerId: job.payload.providerId,
            concurrency: p.concurrency,
            requestsPerMinute: p.requestsPerMinute,
            owner: this.id,
            runId: job.runId,
            jobId: job.id,
            requestJson: (r) => requestJson(r, detail),
            signal: control.stop.signal,
          })
        : undefined;
      const reply = await p.provider.call(job.payload.request, { onCall: gate ? undefined : onCall, gate, signal: control.cancel.signal, stopSignal: control.stop.signal });
      const outcome = protocol.onReply(job.payload, reply.text, settings);
      if (reply.recorded) for (const r of outcome.responses) r.metadata = { ...r.metadata, recorded: true };
      this.finish({ job, outcome, calls });
    } catch (err) {
      if (err instanceof RunStopped || control.stop.signal.aborted) this.finish({ job, stopped: true, calls });
      else this.finish({ job, error: err instanceof Error ? err.message : String(err), calls });
    } finally {
      this.controls.delete(job.id);
    }
  }
}

// ─── Progress ────────────────────────────────────────────────────────────────

export type RunProgress = {
  runId: number;
  status: string;
  done: number;
  failed: number;
  inFlight: number;
  remaining: number;
  total: number;
  /** Jobs per second over the last minute. */
  throughput: number;
  etaSeconds: number | null;
  /** Includes the estimated prompt tokens of calls interrupted before their reply (a worker died mid-call). */
  promptTokens: number;
  completionTokens: number;
  /** Provider calls made for this run (every HTTP attempt), and how many were interrupted. */
  calls: number;
  interruptedCalls: number;
  /** In the provider's currency, when its settings give prices per million tokens. */
  cost: number | null;
};

export function runProgress(db: Db, runId: number): RunProgress | null {
  const run = db.select({ status: schema.runs.status, config: schema.runs.config }).from(schema.runs).where(eq(schema.runs.id, runId)).get();
  if (!run) return null;
  const counts = db.$client.prepare(`SELECT status, COUNT(*) AS n FROM jobs WHERE run_id=? GROUP BY status`).all(runId) as { status: string; n: number }[];
  const c = Object.fromEntries(counts.map((r) => [r.status, r.n])) as Record<string, number>;
  const done = c.done ?? 0;
  const failed = c.failed ?? 0;
  const inFlight = c.leased ?? 0;
  const queued = c.queued ?? 0;
  const estimate = Number((run.config as Partial<StoredRunConfig>).estimatedJobs ?? 0);
  const terminal = TERMINAL_RUN_STATUSES.includes(run.status);
  const remaining = terminal ? queued + inFlight : Math.max(queued + inFlight, estimate - done - failed);
  const recent = db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done' AND finished_at >= unixepoch() - 60`).get(runId) as { n: number };
  const first = db.$client.prepare(`SELECT MIN(finished_at) AS t FROM jobs WHERE run_id=? AND finished_at >= unixepoch() - 60`).get(runId) as { t: number | null };
  const window = first.t ? Math.max(1, Math.floor(Date.now() / 1000) - first.t) : 60;
  const throughput = recent.n / window;
  const tokens = db.$client
    .prepare(
      `SELECT pc.provider_id AS providerId, COALESCE(SUM(pc.prompt_tokens),0) AS p, COALESCE(SUM(pc.completion_tokens),0) AS c,
              COUNT(*) AS n, COALESCE(SUM(pc.state = 'interrupted'),0) AS i
       FROM provider_calls pc JOIN jobs j ON j.id = pc.job_id WHERE j.run_id=? GROUP BY pc.provider_id`,
    )
    .all(runId) as { providerId: number | null; p: number; c: number; n: number; i: number }[];
  let cost: number | null = null;
  for (const t of tokens) {
    if (t.providerId == null) continue;
    const s = (db.select({ settings: schema.providers.settings }).from(schema.providers).where(eq(schema.providers.id, t.providerId)).get()?.settings ?? {}) as Record<string, unknown>;
    const pin = Number(s.pricePerMillionInput);
    const pout = Number(s.pricePerMillionOutput);
    if (Number.isFinite(pin) && Number.isFinite(pout) && (pin > 0 || pout > 0)) cost = (cost ?? 0) + (t.p * pin + t.c * pout) / 1e6;
  }
  return {
    runId,
    status: run.status,
    done,
    failed,
    inFlight,
    remaining,
    total: done + failed + remaining,
    throughput,
    etaSeconds: throughput > 0 && remaining > 0 ? Math.round(remaining / throughput) : remaining === 0 ? 0 : null,
    promptTokens: tokens.reduce((a, t) => a + t.p, 0),
    completionTokens: tokens.reduce((a, t) => a + t.c, 0),
    calls: tokens.reduce((a, t) => a + t.n, 0),
    interruptedCalls: tokens.reduce((a, t) => a + t.i, 0),
    cost,
  };
}
