/**
 * The durable runner. A run's jobs live in the `jobs` table; a worker claims
 * them under a lease (an IMMEDIATE transaction), calls the provider, and
 * stores the protocol's outcome — responses, verdicts, follow-up jobs and the
 * job's "done" mark — in ONE transaction, guarded by its lease. So a worker
 * killed at any moment loses only its in-flight calls: their leases expire,
 * another worker (or the restarted one) repeats exactly those, and results are
 * never duplicated (unique keys on jobs, responses and verdicts, plus the guard).
 *
 * Lease times are epoch milliseconds (sub-second leases keep tests fast).
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { schema, type Db } from "../../db/client";
import { getProtocol, PROTOCOL_IDS } from "./protocols";
import type { ItemData, JobPayload, JudgeRef, ModelRef, Outcome } from "./protocols/types";
import { OpenAIProvider } from "./providers/openai.server";
import { ReplayProvider } from "./providers/replay.server";
import { ProviderError, type CallRecord, type LlmProvider } from "./providers/types";

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
      const stored: StoredRunConfig = { settings, models, judges, itemCount: items.length, estimatedJobs: estimateJobs(protocol.id, jobs.length, judges.length, settings) };
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
      else if (action === "cancel" && !["completed", "cancelled"].includes(status)) status = "cancelled";
      else if (action === "retry-failed" && status !== "cancelled") {
        const n = tx.update(schema.jobs).set({ status: "queued", error: null, leaseOwner: null, leaseExpiresAt: null }).where(and(eq(schema.jobs.runId, runId), eq(schema.jobs.status, "failed"))).run().changes;
        if (n > 0) status = "queued";
      } else throw new RunInputError(`cannot ${action} a ${status} run`);
      tx.update(schema.runs).set({ status, finishedAt: status === "cancelled" ? sql`(unixepoch())` : status === "queued" ? null : undefined }).where(eq(schema.runs.id, runId)).run();
      return status;
    },
    { behavior: "immediate" },
  );
}

// ─── Claiming and completing ─────────────────────────────────────────────────

export type ClaimedJob = { id: number; runId: number; key: string; payload: JobPayload; protocol: string; attempts: number };

export function claimJobs(db: Db, owner: string, max: number, leaseMs: number, now = Date.now()): ClaimedJob[] {
  if (max <= 0) return [];
  const sqlite = db.$client;
  return db.transaction(
    () => {
      const rows = sqlite
        .prepare(
          `SELECT j.id, j.run_id AS runId, j.key, j.payload, j.attempts, r.protocol FROM jobs j JOIN runs r ON r.id = j.run_id
           WHERE r.status IN ('queued','running') AND (j.status = 'queued' OR (j.status = 'leased' AND j.lease_expires_at < ?))
           ORDER BY j.id LIMIT ?`,
        )
        .all(now, max) as { id: number; runId: number; key: string; payload: string; attempts: number; protocol: string }[];
      if (rows.length === 0) return [];
      const upd = sqlite.prepare(`UPDATE jobs SET status='leased', lease_owner=?, lease_expires_at=?, attempts=attempts+1 WHERE id=?`);
      for (const r of rows) upd.run(owner, now + leaseMs, r.id);
      const runIds = [...new Set(rows.map((r) => r.runId))];
      sqlite.prepare(`UPDATE runs SET status='running' WHERE status='queued' AND id IN (${runIds.map(() => "?").join(",")})`).run(...runIds);
      return rows.map((r) => ({ id: r.id, runId: r.runId, key: r.key, payload: JSON.parse(r.payload) as JobPayload, protocol: r.protocol, attempts: r.attempts + 1 }));
    },
    { behavior: "immediate" },
  );
}

export function renewLeases(db: Db, owner: string, jobIds: number[], leaseMs: number): void {
  if (jobIds.length === 0) return;
  db.$client.prepare(`UPDATE jobs SET lease_expires_at=? WHERE status='leased' AND lease_owner=? AND id IN (${jobIds.map(() => "?").join(",")})`).run(Date.now() + leaseMs, owner, ...jobIds);
}

function finishRunIfDrained(db: Db, runId: number): void {
  const left = db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status IN ('queued','leased')`).get(runId) as { n: number };
  if (left.n === 0) db.$client.prepare(`UPDATE runs SET status='completed', finished_at=unixepoch() WHERE id=? AND status IN ('queued','running')`).run(runId);
}

/**
 * Stores a job's outcome atomically. Returns false (and writes nothing) when
 * the lease was lost to another worker, who will store it instead.
 */
export function completeJob(db: Db, owner: string, job: ClaimedJob, outcome: Outcome): boolean {
  const sqlite = db.$client;
  return db.transaction(
    (tx) => {
      const cur = sqlite.prepare(`SELECT status, lease_owner AS owner FROM jobs WHERE id=?`).get(job.id) as { status: string; owner: string } | undefined;
      if (!cur || cur.status !== "leased" || cur.owner !== owner) return false;
      for (const r of outcome.responses)
        tx.insert(schema.responses).values({ itemId: r.itemId, model: r.model, turn: r.turn, text: r.text, origin: "run", runId: job.runId, sourceKey: r.sourceKey, metadata: r.metadata }).onConflictDoNothing().run();
      const findResponse = sqlite.prepare(`SELECT id FROM responses WHERE item_id=? AND source_key=?`);
      const verdictExists = sqlite.prepare(`SELECT 1 FROM verdicts WHERE judge_id=? AND response_id=? AND checklist_item_id IS ?`);
      for (const v of outcome.verdicts) {
        const resp = findResponse.get(v.itemId, v.responseSourceKey) as { id: number } | undefined;
        if (!resp) throw new Error(`job ${job.key}: verdict for unknown response ${v.responseSourceKey}`);
        if (verdictExists.get(v.judgeId, resp.id, v.checklistItemId)) continue;
        tx.insert(schema.verdicts)
          .values({ judgeId: v.judgeId, responseId: resp.id, checklistItemId: v.checklistItemId, value: v.value, score: v.score, rawOutput: v.rawOutput, parseStatus: v.parseStatus, runId: job.runId })
          .run();
      }
      if (outcome.next.length)
        tx.insert(schema.jobs)
          .values(outcome.next.map((n) => ({ runId: job.runId, key: n.key, payload: n.payload as unknown as Record<string, unknown> })))
          .onConflictDoNothing()
          .run();
      sqlite
        .prepare(`UPDATE jobs SET status='done', result=?, error=NULL, lease_owner=NULL, lease_expires_at=NULL, finished_at=unixepoch() WHERE id=?`)
        .run(outcome.result === undefined ? null : JSON.stringify(outcome.result), job.id);
      finishRunIfDrained(db, job.runId);
      return true;
    },
    { behavior: "immediate" },
  );
}

export function failJob(db: Db, owner: string, job: ClaimedJob, error: string): boolean {
  return db.transaction(
    () => {
      const r = db.$client
        .prepare(`UPDATE jobs SET status='failed', error=?, lease_owner=NULL, lease_expires_at=NULL, finished_at=unixepoch() WHERE id=? AND status='leased' AND lease_owner=?`)
        .run(error.slice(0, 2000), job.id, owner);
      if (r.changes) finishRunIfDrained(db, job.runId);
      return r.changes > 0;
    },
    { behavior: "immediate" },
  );
}

// ─── Providers ───────────────────────────────────────────────────────────────

export type ProviderRow = typeof schema.providers.$inferSelect;

/** Builds a provider client from its row. Tuning in settings: timeoutMs, maxRetries, backoffBaseMs, backoffMaxMs, continueMode, chatTemplate, temperature, top_p, max_tokens. */
export function providerFromRow(row: ProviderRow): LlmProvider {
  const s = row.settings ?? {};
  const num = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : undefined);
  if (row.kind === "replay") return new ReplayProvider(String(s.file ?? row.baseUrl ?? ""), row.model);
  return new OpenAIProvider({
    baseUrl: row.baseUrl ?? "",
    apiKey: row.apiKey,
    model: row.model,
    label: row.name,
    concurrency: row.concurrency,
    requestsPerMinute: row.requestsPerMinute,
    defaults: { temperature: num("temperature"), top_p: num("top_p"), max_tokens: num("max_tokens") },
    timeoutMs: num("timeoutMs"),
    maxRetries: num("maxRetries"),
    backoffBaseMs: num("backoffBaseMs"),
    backoffMaxMs: num("backoffMaxMs"),
    continueMode: s.continueMode === "template" ? "template" : "vllm",
    chatTemplate: typeof s.chatTemplate === "string" ? s.chatTemplate : undefined,
    bosToken: typeof s.bosToken === "string" ? s.bosToken : undefined,
    eosToken: typeof s.eosToken === "string" ? s.eosToken : undefined,
  });
}

// ─── Worker ──────────────────────────────────────────────────────────────────

export type WorkerOptions = {
  id?: string;
  /** Jobs in flight at once (each provider's own limit still applies). */
  concurrency?: number;
  leaseMs?: number;
  pollMs?: number;
  /** Stop once no claimable work remains (CLI and tests). */
  untilIdle?: boolean;
  /** Only work on this run. */
  runId?: number;
  /** Log every HTTP attempt to provider_calls (default true). */
  logCalls?: boolean;
};

export class Worker {
  readonly id: string;
  private readonly o: Required<Omit<WorkerOptions, "runId" | "id">> & { runId?: number };
  private providers = new Map<number, LlmProvider>();
  private inflight = new Map<number, Promise<void>>();
  private stopped = false;
  private wake: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  done: Promise<void> = Promise.resolve();
  processed = 0;

  constructor(
    private readonly db: Db,
    opts: WorkerOptions = {},
  ) {
    this.id = opts.id ?? `w-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.o = { concurrency: 8, leaseMs: 60_000, pollMs: 500, untilIdle: false, logCalls: true, ...opts };
  }

  start(): this {
    this.stopped = false;
    this.heartbeat = setInterval(() => {
      try {
        renewLeases(this.db, this.id, [...this.inflight.keys()], this.o.leaseMs);
      } catch {
        /* the next beat retries */
      }
    }, Math.max(50, Math.floor(this.o.leaseMs / 3)));
    this.heartbeat.unref?.();
    this.done = this.loop().finally(() => {
      if (this.heartbeat) clearInterval(this.heartbeat);
    });
    return this;
  }

  /** Stops claiming; resolves when in-flight jobs have finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.done;
  }

  private claim(n: number): ClaimedJob[] {
    const jobs = claimJobs(this.db, this.id, n, this.o.leaseMs);
    if (this.o.runId === undefined) return jobs;
    // A run-scoped worker hands back other runs' jobs at once.
    const mine = jobs.filter((j) => j.runId === this.o.runId);
    const others = jobs.filter((j) => j.runId !== this.o.runId).map((j) => j.id);
    if (others.length) this.db.$client.prepare(`UPDATE jobs SET status='queued', lease_owner=NULL, lease_expires_at=NULL, attempts=attempts-1 WHERE id IN (${others.map(() => "?").join(",")})`).run(...others);
    return mine;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const free = this.o.concurrency - this.inflight.size;
      let claimed: ClaimedJob[] = [];
      if (free > 0) {
        try {
          claimed = this.claim(free);
        } catch (err) {
          if (!/SQLITE_BUSY|database is locked/i.test(String(err))) throw err;
        }
        for (const job of claimed) {
          const p = this.execute(job).finally(() => {
            this.inflight.delete(job.id);
            this.processed++;
            this.wake?.();
          });
          this.inflight.set(job.id, p);
        }
      }
      if (claimed.length === 0 && this.inflight.size === 0 && this.o.untilIdle && !this.hasPendingWork()) break;
      if (claimed.length > 0 && this.inflight.size < this.o.concurrency) continue;
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, this.o.pollMs);
        this.wake = () => {
          clearTimeout(t);
          this.wake = null;
          ok();
        };
      });
    }
    await Promise.allSettled([...this.inflight.values()]);
  }

  private hasPendingWork(): boolean {
    const row = this.db.$client
      .prepare(
        `SELECT COUNT(*) AS n FROM jobs j JOIN runs r ON r.id=j.run_id WHERE r.status IN ('queued','running') AND j.status IN ('queued','leased') ${this.o.runId !== undefined ? "AND j.run_id = ?" : ""}`,
      )
      .get(...(this.o.runId !== undefined ? [this.o.runId] : [])) as { n: number };
    return row.n > 0;
  }

  private provider(id: number): LlmProvider {
    let p = this.providers.get(id);
    if (!p) {
      const row = this.db.select().from(schema.providers).where(eq(schema.providers.id, id)).get();
      if (!row) throw new ProviderError(`provider ${id} no longer exists`, false);
      p = providerFromRow(row);
      this.providers.set(id, p);
    }
    return p;
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const insertCall = this.db.$client.prepare(
      `INSERT INTO provider_calls (provider_id, job_id, request, reply, status, latency_ms, prompt_tokens, completion_tokens, error) VALUES (?,?,?,?,?,?,?,?,?)`,
    );
    const onCall = (c: CallRecord) => {
      if (!this.o.logCalls) return;
      try {
        insertCall.run(job.payload.providerId, job.id, JSON.stringify(c.request), c.reply == null ? null : JSON.stringify(c.reply), c.status, c.latencyMs, c.promptTokens, c.completionTokens, c.error);
      } catch {
        /* logging must not fail the job */
      }
    };
    try {
      const protocol = getProtocol(job.protocol);
      const run = this.db.select({ config: schema.runs.config }).from(schema.runs).where(eq(schema.runs.id, job.runId)).get();
      const settings = ((run?.config ?? {}) as Partial<StoredRunConfig>).settings ?? {};
      const reply = await this.provider(job.payload.providerId).call(job.payload.request, { onCall });
      const outcome = protocol.onReply(job.payload, reply.text, protocol.configSchema.parse(settings));
      if (reply.recorded) for (const r of outcome.responses) r.metadata = { ...r.metadata, recorded: true };
      completeJob(this.db, this.id, job, outcome);
    } catch (err) {
      try {
        failJob(this.db, this.id, job, err instanceof Error ? err.message : String(err));
      } catch {
        /* lease expires; another worker retries */
      }
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
  promptTokens: number;
  completionTokens: number;
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
  const terminal = run.status === "completed" || run.status === "cancelled";
  const remaining = terminal ? queued + inFlight : Math.max(queued + inFlight, estimate - done - failed);
  const recent = db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done' AND finished_at >= unixepoch() - 60`).get(runId) as { n: number };
  const first = db.$client.prepare(`SELECT MIN(finished_at) AS t FROM jobs WHERE run_id=? AND finished_at >= unixepoch() - 60`).get(runId) as { t: number | null };
  const window = first.t ? Math.max(1, Math.floor(Date.now() / 1000) - first.t) : 60;
  const throughput = recent.n / window;
  const tokens = db.$client
    .prepare(
      `SELECT pc.provider_id AS providerId, COALESCE(SUM(pc.prompt_tokens),0) AS p, COALESCE(SUM(pc.completion_tokens),0) AS c
       FROM provider_calls pc JOIN jobs j ON j.id = pc.job_id WHERE j.run_id=? GROUP BY pc.provider_id`,
    )
    .all(runId) as { providerId: number | null; p: number; c: number }[];
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
    cost,
  };
}
