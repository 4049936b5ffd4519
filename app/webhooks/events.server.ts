/**
 * Emitting a webhook event: one `webhook_deliveries` row per active webhook of the project that listens to
 * the event, holding the exact JSON body that will be signed and sent. Emitting writes only rows, so it
 * works the same in every process that ends something (the web server, a run worker, an import's child
 * process, a command), and inside the transaction that ends it: the event exists if and only if what it
 * reports was committed. The sender (./sender.server.ts, in the server and the worker) does the HTTP.
 *
 * The body (the contract with receivers, docs/api.md "Webhooks"):
 *
 *   { "id": "<uuid of the event>", "event": "run.finished", "created_at": "<RFC 3339 UTC>",
 *     "project": { "id": 1, "slug": "demo" }, "data": { … } }
 *
 * `data` carries names, ids and counts only — never labels, model outputs, verdicts or secrets.
 */
import { randomUUID } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../../db/schema";
import { dalOf, first, type DalLike } from "../dal.server";

export { WEBHOOK_EVENTS, type WebhookEvent };

/** The event of "Send test event": sent to one webhook whatever its events. */
export const PING_EVENT = "ping";

export type RunFinishedData = {
  id: number;
  name: string;
  protocol: string;
  /** "completed", "completed-with-errors", "failed" or "cancelled". */
  status: string;
  counts: { jobs_done: number; jobs_failed: number };
};
export type TaskCompletedData = {
  id: number;
  name: string;
  kind: string;
  units: number;
  counts: { assignments: number; submitted: number; skipped: number };
};
export type ImportFinishedData = {
  preset: string;
  dataset: { id: number | null; name: string; version: number | null } | null;
  committed: boolean;
  unchanged: boolean;
  dry_run: false;
  counts: Record<string, number>;
};

export type WebhookPayload = {
  id: string;
  event: string;
  created_at: string;
  project: { id: number; slug: string };
  data: Record<string, unknown>;
};

const now = () => Math.floor(Date.now() / 1000);

/** The body of one event, as text (signed and sent byte for byte as stored). */
export function payloadText(event: string, project: { id: number; slug: string }, data: object, at = new Date()): string {
  const body: WebhookPayload = {
    id: randomUUID(),
    event,
    created_at: at.toISOString().replace(/\.\d{3}Z$/, "Z"),
    project: { id: project.id, slug: project.slug },
    data: data as Record<string, unknown>,
  };
  return JSON.stringify(body);
}

/**
 * A process-wide bell: senders running in this process (./sender.server.ts) ring-register here, and an
 * emission rings it, so an event emitted where a sender runs goes out at once instead of at the next poll.
 * On globalThis because the server's Remix bundle and its own modules are separate module instances.
 */
const BELL = Symbol.for("concord.webhooks.bell");
type Bell = Set<() => void>;
export function webhookBell(): Bell {
  const g = globalThis as unknown as Record<symbol, Bell | undefined>;
  return (g[BELL] ??= new Set());
}
/** Wakes this process's senders (after an emission; app/runs/jobs.server.ts calls it after its synchronous one). */
export function ringWebhookBell(): void {
  setTimeout(() => {
    for (const wake of webhookBell()) wake();
  }, 0).unref?.();
}

/**
 * Emits `event` for the project: one pending delivery per active webhook listening to it (or, with
 * `webhookId`, to that webhook alone whatever its events: the test event). Runs in a transaction of its
 * own, or joins the caller's when called inside `d.tx` of the same layer. Returns the deliveries made.
 */
export async function emitWebhookEvent(
  db: DalLike,
  projectId: number,
  event: WebhookEvent | typeof PING_EVENT,
  data: object,
  opts: { webhookId?: number } = {},
): Promise<number> {
  const d = dalOf(db);
  const { webhooks, webhookDeliveries, projects } = d.t;
  const made = await d.tx(async (q) => {
    const project = first(await q.select({ id: projects.id, slug: projects.slug }).from(projects).where(eq(projects.id, projectId)));
    if (!project) return 0;
    const hooks = await q
      .select({ id: webhooks.id, events: webhooks.events })
      .from(webhooks)
      .where(
        and(
          eq(webhooks.projectId, projectId),
          isNull(webhooks.disabledAt),
          ...(opts.webhookId !== undefined ? [eq(webhooks.id, opts.webhookId)] : []),
        ),
      );
    const targets = opts.webhookId !== undefined ? hooks : hooks.filter((h) => (h.events as string[]).includes(event));
    if (targets.length === 0) return 0;
    const payload = payloadText(event, project, data);
    const at = now();
    await q.insert(webhookDeliveries).values(targets.map((h) => ({ webhookId: h.id, event, payload, nextAttemptAt: at })));
    return targets.length;
  });
  if (made) ringWebhookBell();
  return made;
}

/** Emits run.finished for a run that just ended (a cancel), on either dialect; joins the caller's `d.tx`. */
export async function emitRunFinished(db: DalLike, runId: number): Promise<number> {
  const d = dalOf(db);
  const { runs, jobs } = d.t;
  return d.tx(async (q) => {
    const run = first(
      await q
        .select({ projectId: runs.projectId, name: runs.name, protocol: runs.protocol, status: runs.status })
        .from(runs)
        .where(eq(runs.id, runId)),
    );
    if (!run) return 0;
    const rows = await q
      .select({ status: jobs.status, n: sql<number>`count(*)`.mapWith(Number) })
      .from(jobs)
      .where(eq(jobs.runId, runId))
      .groupBy(jobs.status);
    const n = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
    const data: RunFinishedData = {
      id: runId,
      name: run.name,
      protocol: run.protocol,
      status: run.status,
      counts: { jobs_done: n("done"), jobs_failed: n("failed") },
    };
    return emitWebhookEvent(d, run.projectId, "run.finished", data);
  });
}

/**
 * Emits task.completed when the task's last open assignment was just submitted or skipped, inside the
 * transaction that did it (the caller checks that this save turned an open assignment into a done one).
 *
 * On PostgreSQL, saves run at READ COMMITTED (app/annotation/annotate.server.ts): two saves finishing the last
 * two assignments at once would each see the other's as open, and neither would emit. A transaction-scoped
 * advisory lock per task serialises the final check, and the check after it reads what the previous holder
 * committed, so exactly one save sees none left. The lock is taken only near the end: a save sees as open at
 * most the assignments of saves in flight beside it, one each, and there are fewer of those than
 * max_connections; with more open than that, the task cannot be complete, and no save waits.
 */
export async function emitTaskCompletedIfDone(db: DalLike, taskId: number): Promise<number> {
  const d = dalOf(db);
  return d.tx(async (q) => {
    const open = async (atMost: number) =>
      Number(
        (
          await d.rows<{ n: number | string }>(
            sql`SELECT COUNT(*) AS n FROM (SELECT 1 FROM assignments a JOIN units u ON u.id = a.unit_id
                 WHERE u.task_id = ${taskId} AND a.status NOT IN ('submitted', 'skipped') LIMIT ${atMost}) AS x`,
            q,
          )
        )[0].n,
      );
    if (d.dialect === "postgres") {
      const [{ m }] = await d.rows<{ m: number | string }>(sql`SELECT current_setting('max_connections')::int AS m`, q);
      if ((await open(Number(m) + 1)) > Number(m)) return 0;
      await d.rows(sql`SELECT pg_advisory_xact_lock(${TASK_LOCK_SPACE}, ${taskId})`, q);
    }
    if ((await open(1)) > 0) return 0;
    const [c] = await d.rows<{ total: number | string; submitted: number | string; skipped: number | string }>(
      sql`SELECT COUNT(*) AS total,
                 COALESCE(SUM(CASE WHEN a.status = 'submitted' THEN 1 ELSE 0 END), 0) AS submitted,
                 COALESCE(SUM(CASE WHEN a.status = 'skipped' THEN 1 ELSE 0 END), 0) AS skipped
            FROM assignments a JOIN units u ON u.id = a.unit_id WHERE u.task_id = ${taskId}`,
      q,
    );
    const total = Number(c.total);
    if (total === 0) return 0;
    const { tasks, units } = d.t;
    const task = first(
      await q.select({ projectId: tasks.projectId, name: tasks.name, kind: tasks.kind }).from(tasks).where(eq(tasks.id, taskId)),
    );
    if (!task) return 0;
    const [u] = await q
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(units)
      .where(eq(units.taskId, taskId));
    const data: TaskCompletedData = {
      id: taskId,
      name: task.name,
      kind: task.kind,
      units: u.n,
      counts: { assignments: total, submitted: Number(c.submitted), skipped: Number(c.skipped) },
    };
    return emitWebhookEvent(d, task.projectId, "task.completed", data);
  });
}

/** The first key of the advisory locks of task completion (any constant; "task" in ASCII). */
const TASK_LOCK_SPACE = 0x7461736b;

/** What import.finished reports of an import's summary (app/formats/import.server.ts ImportSummary). */
export type ImportEnd = {
  preset: string;
  dryRun: boolean;
  committed: boolean;
  unchanged: boolean;
  dataset: { id: number | null; name: string; version: number | null } | null;
  items: number;
  checklistItems: number;
  references: number;
  responses: number;
  verdicts: number;
  annotations: number;
  newRows: number;
  alreadyPresent: number;
  errorCount: number;
  warningCount: number;
};

/** Emits import.finished for an import into the project `slug` that ended (not for a dry run). */
export async function emitImportFinished(db: DalLike, slug: string, s: ImportEnd): Promise<number> {
  if (s.dryRun) return 0;
  const d = dalOf(db);
  const { projects } = d.t;
  const project = first(await d.q.select({ id: projects.id }).from(projects).where(eq(projects.slug, slug)));
  if (!project) return 0;
  const data: ImportFinishedData = {
    preset: s.preset,
    dataset: s.dataset,
    committed: s.committed,
    unchanged: s.unchanged,
    dry_run: false,
    counts: {
      items: s.items,
      checklist_items: s.checklistItems,
      references: s.references,
      responses: s.responses,
      verdicts: s.verdicts,
      annotations: s.annotations,
      new_rows: s.newRows,
      already_present: s.alreadyPresent,
      errors: s.errorCount,
      warnings: s.warningCount,
    },
  };
  return emitWebhookEvent(d, project.id, "import.finished", data);
}
