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
import { dalOf, first, type DalLike, type Q } from "../dal.server";
import { DomainError } from "../errors";
import { getProtocol, PROTOCOL_IDS, validateDataset } from "./protocols";
import type { ItemData, JudgeRef, ModelRef, Protocol } from "./protocols/types";
import { providerFromRow, type ProviderRow } from "./providers/index.server";
import { emitRunFinished } from "../webhooks/events.server";

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

/**
 * A run cannot be created or controlled as asked (400); the message names the part of the definition ("models: …").
 * `at` is that part as a path in the definition ("models.0.provider"), for the HTTP API's `errors[].field`; the
 * pages show the message as a whole (their fields are named otherwise).
 */
export class RunInputError extends DomainError {
  readonly at?: string;
  constructor(message: string, options: { status?: number; at?: string } = {}) {
    super(message, { status: options.status });
    this.at = options.at;
  }
}

/**
 * A control that does not apply to the run in its present state ("cannot resume a queued run", "no failed jobs to
 * retry"). The pages answer it as any RunInputError (400, beside the buttons); the HTTP API as 409 Conflict (RFC 9110
 * §15.5.10: the request conflicts with the resource's current state).
 */
export class RunStateError extends RunInputError {}

/** "models[0].provider" → "models.0.provider": a place in the definition as the API's errors name it. */
const pathOf = (field: string) => field.replace(/\[(\d+)\]/g, ".$1");

/** Ids per `IN (…)` list: well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const IN_CHUNK = 5000;

/** A dataset's items (or a subset) with their current checklists and references, in id order, on either dialect. */
export async function loadItems(db: DalLike, datasetId: number, opts: { itemIds?: number[]; limit?: number } = {}): Promise<ItemData[]> {
  const d = dalOf(db);
  const { items, checklistItems, references } = d.t;
  const where = opts.itemIds?.length
    ? and(eq(items.datasetId, datasetId), inArray(items.id, opts.itemIds))
    : eq(items.datasetId, datasetId);
  let q = d.q.select().from(items).where(where).orderBy(asc(items.id)).$dynamic();
  if (opts.limit) q = q.limit(opts.limit);
  const rows = await q;
  if (rows.length === 0) return [];
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
  const ids = rows.map((r) => r.id);
  for (let at = 0; at < ids.length; at += IN_CHUNK) {
    const chunk = ids.slice(at, at + IN_CHUNK);
    const checklist = await d.q
      .select()
      .from(checklistItems)
      .where(and(inArray(checklistItems.itemId, chunk), isNull(checklistItems.retiredAt)))
      .orderBy(asc(checklistItems.position), asc(checklistItems.id));
    const refs = await d.q
      .select()
      .from(references)
      .where(and(inArray(references.itemId, chunk), eq(references.isCurrent, true)))
      .orderBy(asc(references.version));
    for (const c of checklist) byItem.get(c.itemId)?.checklist.push({ id: c.id, text: c.text, weight: c.weight, position: c.position });
    for (const r of refs) {
      const it = byItem.get(r.itemId);
      if (it) it.reference = r.text; // highest current version wins
    }
  }
  return [...byItem.values()];
}

function estimateJobs(protocol: Protocol, convs: number, judges: number, settings: Record<string, unknown>): number {
  return convs * (protocol.turns?.(settings) ?? 1) * (1 + judges);
}

/**
 * Creates a run and its first jobs in one transaction, on either dialect. Status "queued": a worker picks it up
 * (the server's in-process worker on SQLite, `npm run worker` processes on PostgreSQL).
 *
 * The definition and the data are checked first, outside the transaction (nothing is written when they are
 * refused); the providers are read again inside it, so a provider removed in between refuses the run instead of
 * leaving jobs that name it.
 */
export async function createRun(db: DalLike, projectId: number, input: RunDefinition, createdBy: number | null = null) {
  const d = dalOf(db);
  const t = d.t;
  const def = RunDefinition.parse(input);
  const protocol = getProtocol(def.protocol);
  const settingsParsed = protocol.configSchema.safeParse(def.settings);
  if (!settingsParsed.success) {
    const i = settingsParsed.error.issues[0];
    throw new RunInputError(`settings.${i.path.join(".")}: ${i.message}`, { at: ["settings", ...i.path].join(".") });
  }
  const settings = settingsParsed.data as Record<string, unknown>;
  const dataset = first(
    await d.q
      .select({ id: t.datasets.id })
      .from(t.datasets)
      .where(and(eq(t.datasets.id, def.datasetId), eq(t.datasets.projectId, projectId))),
  );
  if (!dataset) throw new RunInputError(`datasetId ${def.datasetId}: no such dataset in this project`, { at: "datasetId" });
  const projectProviders = async (q: Q) => {
    const rows = await q.select().from(t.providers).where(eq(t.providers.projectId, projectId));
    const byName = new Map(rows.map((p) => [p.name, p]));
    return (name: string, field: string) => {
      const p = byName.get(name);
      if (!p) throw new RunInputError(`${field}: no provider named "${name}" in this project`, { at: pathOf(field) });
      return p;
    };
  };
  const providerByName = await projectProviders(d.q);
  const targets = def.models.map((m, i) => providerByName(m.provider, `models[${i}].provider`));
  const models: ModelRef[] = def.models.map((m, i) => ({ providerId: targets[i].id, name: m.as ?? targets[i].model }));
  if (new Set(models.map((m) => m.name)).size !== models.length)
    throw new RunInputError("models: two targets share a name; give one an `as`", { at: "models" });
  def.judges.forEach((j, i) => providerByName(j.provider, `judges[${i}].provider`));
  const items = await loadItems(d, def.datasetId, { itemIds: def.itemIds, limit: def.limit });
  if (items.length === 0)
    throw new RunInputError("the dataset (or the chosen subset) has no items", { at: def.itemIds?.length ? "itemIds" : "datasetId" });
  const problems = validateDataset(
    protocol.id,
    items,
    targets.map((p, i) => ({ name: models[i].name, kind: p.kind, settings: p.settings ?? {} })),
    settings,
  );
  if (problems.length)
    throw new RunInputError(
      `${protocol.title} cannot run on this data: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ""}`,
    );

  return d.tx(async (tx) => {
    const providerIn = await projectProviders(tx);
    def.models.forEach((m, i) => {
      if (providerIn(m.provider, `models[${i}].provider`).id !== models[i].providerId)
        throw new RunInputError(`models[${i}].provider: the provider "${m.provider}" was replaced while the run was being created`, {
          at: `models.${i}.provider`,
        });
    });
    const judges: JudgeRef[] = [];
    for (const [i, j] of def.judges.entries()) {
      const p = providerIn(j.provider, `judges[${i}].provider`);
      const name = j.name ?? `${p.name} · ${protocol.id} v${protocol.version}`;
      let row = first(
        await tx
          .select({ id: t.judges.id })
          .from(t.judges)
          .where(and(eq(t.judges.projectId, projectId), eq(t.judges.name, name))),
      );
      row ??= first(
        await tx
          .insert(t.judges)
          .values({
            projectId,
            name,
            provider: p.name,
            model: p.model,
            promptVersion: `${protocol.id}@${protocol.version}`,
            settings: { providerId: p.id, recorded: p.kind === "replay" },
          })
          .returning({ id: t.judges.id }),
      )!;
      judges.push({ providerId: p.id, judgeId: row.id, name });
    }
    const run = first(
      await tx
        .insert(t.runs)
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
        .returning(),
    )!;
    const jobs = protocol.plan({ runId: run.id, items, models, judges, config: settings });
    const stored: StoredRunConfig = {
      settings,
      models,
      judges,
      itemCount: items.length,
      estimatedJobs: estimateJobs(protocol, jobs.length, judges.length, settings),
      definition: { ...input, settings },
    };
    await tx
      .update(t.runs)
      .set({ config: stored as unknown as Record<string, unknown> })
      .where(eq(t.runs.id, run.id));
    for (let i = 0; i < jobs.length; i += 500)
      await tx
        .insert(t.jobs)
        .values(
          jobs.slice(i, i + 500).map((j) => ({ runId: run.id, key: j.key, payload: j.payload as unknown as Record<string, unknown> })),
        );
    return { ...run, config: stored, jobs: jobs.length };
  });
}

export type RunControl = "pause" | "resume" | "cancel" | "retry-failed";

/** Pause (in-flight calls finish), resume, cancel or retry a run's failed jobs, in one transaction on either dialect; returns the new status. */
export async function controlRun(db: DalLike, runId: number, action: RunControl): Promise<string> {
  const d = dalOf(db);
  const { runs, jobs } = d.t;
  return d.tx(async (q) => {
    const run = first(await q.select({ status: runs.status }).from(runs).where(eq(runs.id, runId)));
    if (!run) throw new RunInputError(`run ${runId} not found`, { status: 404 });
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
      else throw new RunStateError("no failed jobs to retry");
    } else throw new RunStateError(`cannot ${action} a ${status} run`);
    await q
      .update(runs)
      .set({ status, finishedAt: status === "cancelled" ? Math.floor(Date.now() / 1000) : status === "queued" ? null : undefined })
      .where(eq(runs.id, runId));
    // A cancel ends the run: its webhooks hear run.finished, in this transaction (app/webhooks/events.server.ts).
    if (action === "cancel") await emitRunFinished(d, runId);
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
  /** Run workers alive now (a heartbeat within its lease), on any machine: with none, a queued run waits. */
  workers: number;
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
  // `npm run providers test` registers as "cli-…" while its one call lasts: not a worker that drains runs.
  const [alive] = await d.rows<{ n: number | string }>(
    sql`SELECT COUNT(*) AS n FROM workers WHERE heartbeat_at + lease_ms >= ${Date.now()} AND id NOT LIKE 'cli-%'`,
  );
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
    workers: Number(alive?.n ?? 0),
  };
}
