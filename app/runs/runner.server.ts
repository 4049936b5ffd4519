/**
 * The durable runner. A run's jobs live in the `jobs` table; a worker claims
 * them under a lease (an IMMEDIATE transaction), calls the provider, and
 * stores the protocol's outcome — responses, verdicts, follow-up jobs and the
 * job's "done" mark — atomically, guarded by its lease. So a worker killed at
 * any moment loses only the calls whose results were not yet committed: their
 * leases expire (or are taken at once when the worker's process is known to be
 * gone), another worker (or the restarted one) repeats exactly those, and
 * results are never duplicated (unique keys on jobs, responses and verdicts,
 * plus the guard).
 *
 * This module: run definitions, creating and controlling runs, progress.
 * Scheduling is in worker-loop.server.ts, persistence of jobs in
 * jobs.server.ts, provider calls and their shared limits in providers/; all
 * are re-exported here.
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { schema, type Db } from "../../db/client";
import { dalOf, first, type DalLike } from "../dal.server";
import { DomainError } from "../errors";
import { getProtocol, PROTOCOL_IDS, validateDataset } from "./protocols";
import type { ItemData, JudgeRef, ModelRef, Protocol } from "./protocols/types";
import { providerFromRow, type ProviderRow } from "./providers/index.server";

export { providerFromRow, type ProviderRow };
export * from "./jobs.server";
export { defaultPrefetch, Worker, type WorkerOptions } from "./worker-loop.server";

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

/** A run cannot be created or controlled as asked (400); the message names the part of the definition ("models: …"). */
export class RunInputError extends DomainError {}

export function loadItems(db: Db, datasetId: number, opts: { itemIds?: number[]; limit?: number } = {}): ItemData[] {
  const where = opts.itemIds?.length
    ? and(eq(schema.items.datasetId, datasetId), inArray(schema.items.id, opts.itemIds))
    : eq(schema.items.datasetId, datasetId);
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
    byItem.set(r.id, {
      id: r.id,
      sourceId: r.sourceId,
      query: r.query,
      passage: r.passage,
      domain: r.domain,
      subject: r.subject,
      taskType: r.taskType,
      metadata: r.metadata ?? {},
      checklist: [],
      reference: null,
    });
  for (const c of checklist) byItem.get(c.itemId)?.checklist.push({ id: c.id, text: c.text, weight: c.weight, position: c.position });
  for (const r of refs) {
    const it = byItem.get(r.itemId);
    if (it) it.reference = r.text; // highest current version wins
  }
  return [...byItem.values()];
}

function estimateJobs(protocol: Protocol, convs: number, judges: number, settings: Record<string, unknown>): number {
  return convs * (protocol.turns?.(settings) ?? 1) * (1 + judges);
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
  const dataset = db
    .select()
    .from(schema.datasets)
    .where(and(eq(schema.datasets.id, def.datasetId), eq(schema.datasets.projectId, projectId)))
    .get();
  if (!dataset) throw new RunInputError(`datasetId ${def.datasetId}: no such dataset in this project`);
  const providerByName = (name: string, field: string) => {
    const p = db
      .select()
      .from(schema.providers)
      .where(and(eq(schema.providers.projectId, projectId), eq(schema.providers.name, name)))
      .get();
    if (!p) throw new RunInputError(`${field}: no provider named "${name}" in this project`);
    return p;
  };
  const models: ModelRef[] = def.models.map((m, i) => {
    const p = providerByName(m.provider, `models[${i}].provider`);
    return { providerId: p.id, name: m.as ?? p.model };
  });
  if (new Set(models.map((m) => m.name)).size !== models.length)
    throw new RunInputError("models: two targets share a name; give one an `as`");
  const items = loadItems(db, def.datasetId, { itemIds: def.itemIds, limit: def.limit });
  if (items.length === 0) throw new RunInputError("the dataset (or the chosen subset) has no items");
  const problems = validateDataset(
    protocol.id,
    items,
    def.models.map((m, i) => {
      const p = providerByName(m.provider, `models[${i}].provider`);
      return { name: models[i].name, kind: p.kind, settings: p.settings ?? {} };
    }),
    settings,
  );
  if (problems.length)
    throw new RunInputError(
      `${protocol.title} cannot run on this data: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ""}`,
    );

  return db.transaction(
    (tx) => {
      const judges: JudgeRef[] = def.judges.map((j, i) => {
        const p = providerByName(j.provider, `judges[${i}].provider`);
        const name = j.name ?? `${p.name} · ${protocol.id} v${protocol.version}`;
        let row = tx
          .select()
          .from(schema.judges)
          .where(and(eq(schema.judges.projectId, projectId), eq(schema.judges.name, name)))
          .get();
        if (!row)
          row = tx
            .insert(schema.judges)
            .values({
              projectId,
              name,
              provider: p.name,
              model: p.model,
              promptVersion: `${protocol.id}@${protocol.version}`,
              settings: { providerId: p.id, recorded: p.kind === "replay" },
            })
            .returning()
            .get();
        return { providerId: p.id, judgeId: row.id, name };
      });
      const run = tx
        .insert(schema.runs)
        .values({
          projectId,
          datasetId: def.datasetId,
          name: def.name,
          protocol: protocol.id,
          protocolVersion: protocol.version,
          status: "queued",
          createdBy,
          config: {},
        })
        .returning()
        .get();
      const jobs = protocol.plan({ runId: run.id, items, models, judges, config: settings });
      const stored: StoredRunConfig = {
        settings,
        models,
        judges,
        itemCount: items.length,
        estimatedJobs: estimateJobs(protocol, jobs.length, judges.length, settings),
        definition: { ...input, settings },
      };
      tx.update(schema.runs)
        .set({ config: stored as unknown as Record<string, unknown> })
        .where(eq(schema.runs.id, run.id))
        .run();
      for (let i = 0; i < jobs.length; i += 500)
        tx.insert(schema.jobs)
          .values(
            jobs.slice(i, i + 500).map((j) => ({ runId: run.id, key: j.key, payload: j.payload as unknown as Record<string, unknown> })),
          )
          .run();
      return { ...run, config: stored, jobs: jobs.length };
    },
    { behavior: "immediate" },
  );
}

export type RunControl = "pause" | "resume" | "cancel" | "retry-failed";

/** Pause (in-flight calls finish), resume, cancel or retry a run's failed jobs, in one transaction on either dialect; returns the new status. */
export async function controlRun(db: DalLike, runId: number, action: RunControl): Promise<string> {
  const d = dalOf(db);
  const { runs, jobs } = d.t;
  return d.tx(async (q) => {
    const run = first(await q.select({ status: runs.status }).from(runs).where(eq(runs.id, runId)));
    if (!run) throw new RunInputError(`run ${runId} not found`);
    let status = run.status;
    if (action === "pause" && (status === "queued" || status === "running")) status = "paused";
    else if (action === "resume" && status === "paused") status = "queued";
    else if (action === "cancel" && !TERMINAL_RUN_STATUSES.includes(status)) status = "cancelled";
    else if (action === "retry-failed" && status !== "cancelled" && status !== "completed") {
      const retried = await q
        .update(jobs)
        .set({ status: "queued", error: null, leaseOwner: null, leaseExpiresAt: null })
        .where(and(eq(jobs.runId, runId), eq(jobs.status, "failed")))
        .returning({ id: jobs.id });
      if (retried.length > 0) status = status === "paused" ? "paused" : "queued";
      else throw new RunInputError("no failed jobs to retry");
    } else throw new RunInputError(`cannot ${action} a ${status} run`);
    await q
      .update(runs)
      .set({ status, finishedAt: status === "cancelled" ? Math.floor(Date.now() / 1000) : status === "queued" ? null : undefined })
      .where(eq(runs.id, runId));
    return status;
  });
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

/** A run's progress, read the same way on SQLite and PostgreSQL (the run page and its live events on any app server). */
export async function runProgress(db: DalLike, runId: number): Promise<RunProgress | null> {
  const d = dalOf(db);
  const run = first(await d.q.select({ status: d.t.runs.status, config: d.t.runs.config }).from(d.t.runs).where(eq(d.t.runs.id, runId)));
  if (!run) return null;
  const counts = await d.rows<{ status: string; n: number | string }>(
    sql`SELECT status, COUNT(*) AS n FROM jobs WHERE run_id = ${runId} GROUP BY status`,
  );
  const c = Object.fromEntries(counts.map((r) => [r.status, Number(r.n)])) as Record<string, number>;
  const done = c.done ?? 0;
  const failed = c.failed ?? 0;
  const inFlight = c.leased ?? 0;
  const queued = c.queued ?? 0;
  const estimate = Number((run.config as Partial<StoredRunConfig>).estimatedJobs ?? 0);
  const terminal = TERMINAL_RUN_STATUSES.includes(run.status);
  const remaining = terminal ? queued + inFlight : Math.max(queued + inFlight, estimate - done - failed);
  // The last minute of finished jobs (finished_at is in seconds on both dialects).
  const since = Math.floor(Date.now() / 1000) - 60;
  const [recent] = await d.rows<{ n: number | string }>(
    sql`SELECT COUNT(*) AS n FROM jobs WHERE run_id = ${runId} AND status = 'done' AND finished_at >= ${since}`,
  );
  const [firstFinished] = await d.rows<{ t: number | string | null }>(
    sql`SELECT MIN(finished_at) AS t FROM jobs WHERE run_id = ${runId} AND finished_at >= ${since}`,
  );
  const t0 = firstFinished?.t == null ? null : Number(firstFinished.t);
  const window = t0 ? Math.max(1, Math.floor(Date.now() / 1000) - t0) : 60;
  const throughput = Number(recent?.n ?? 0) / window;
  const tokens = (
    await d.rows<{ providerId: number | null; p: number | string; c: number | string; n: number | string; i: number | string }>(
      sql`SELECT pc.provider_id AS "providerId", COALESCE(SUM(pc.prompt_tokens), 0) AS p, COALESCE(SUM(pc.completion_tokens), 0) AS c,
                 COUNT(*) AS n, COALESCE(SUM(CASE WHEN pc.state = 'interrupted' THEN 1 ELSE 0 END), 0) AS i
          FROM provider_calls pc JOIN jobs j ON j.id = pc.job_id WHERE j.run_id = ${runId} GROUP BY pc.provider_id`,
    )
  ).map((t) => ({
    providerId: t.providerId == null ? null : Number(t.providerId),
    p: Number(t.p),
    c: Number(t.c),
    n: Number(t.n),
    i: Number(t.i),
  }));
  let cost: number | null = null;
  for (const t of tokens) {
    if (t.providerId == null) continue;
    const s = (first(await d.q.select({ settings: d.t.providers.settings }).from(d.t.providers).where(eq(d.t.providers.id, t.providerId)))
      ?.settings ?? {}) as Record<string, unknown>;
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
