/**
 * A project's runs as the Runs pages, the HTTP API (/api/v1/projects/{slug}/runs…) and `npm run runs` see them, on
 * either dialect through the data-access layer: the list, the choices of the new-run form, one run's status and
 * progress with what its page shows (failed jobs, providers, the calibration tasks made from it), its controls within
 * the project, and its results with their calibration against human labels. The routes only authenticate, parse and
 * render what these return.
 */
import { and, asc, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { schema } from "../../db/client";
import type { TaskKind } from "../../db/schema";
import { dalOf, first, type DalLike } from "../dal.server";
import { calibratedScores, calibrationReport, calibrationWarnings, type CalibrationReport } from "./calibration.server";
import { PROTOCOLS } from "./protocols";
import { runResults, runResultsAll, runRow, type RunResults } from "./results.server";
import { controlRun, runProgress, RunInputError, type RunControl, type RunProgress, type StoredRunConfig } from "./runner.server";

type RunRow = typeof schema.runs.$inferSelect;

/** A run not in this project (or none at all): 404, as for a run id of another project. */
export class RunNotFoundError extends RunInputError {
  constructor() {
    super("Run not found.", { status: 404 });
  }
}

// ─── The list ────────────────────────────────────────────────────────────────

export type RunListRow = {
  id: number;
  name: string;
  protocol: string;
  status: string;
  datasetId: number | null;
  createdAt: number;
  finishedAt: number | null;
};

/**
 * The project's runs, newest first (by id). `before`: only runs with a smaller id (the keyset of the API's cursor
 * pages); `limit`: at most that many (the page asks for all).
 */
export async function projectRuns(
  db: DalLike,
  projectId: number,
  opts: { before?: number | null; limit?: number } = {},
): Promise<RunListRow[]> {
  const d = dalOf(db);
  const R = d.t.runs;
  const where = opts.before != null ? and(eq(R.projectId, projectId), lt(R.id, opts.before)) : eq(R.projectId, projectId);
  let q = d.q
    .select({
      id: R.id,
      name: R.name,
      protocol: R.protocol,
      status: R.status,
      datasetId: R.datasetId,
      createdAt: R.createdAt,
      finishedAt: R.finishedAt,
    })
    .from(R)
    .where(where)
    .orderBy(desc(R.id))
    .$dynamic();
  if (opts.limit !== undefined) q = q.limit(opts.limit);
  return q;
}

/**
 * What the new-run form offers in the project: its datasets and providers, and the definition of the latest run
 * (the form starts from it; on the demo: the recorded providers), null without one.
 */
export async function newRunChoices(db: DalLike, projectId: number) {
  const d = dalOf(db);
  const { runs, datasets, providers } = d.t;
  const [datasetRows, providerRows, latest] = await Promise.all([
    d.q
      .select({ id: datasets.id, name: datasets.name, version: datasets.version })
      .from(datasets)
      .where(eq(datasets.projectId, projectId))
      .orderBy(asc(datasets.id)),
    d.q
      .select({ name: providers.name, kind: providers.kind, model: providers.model })
      .from(providers)
      .where(eq(providers.projectId, projectId))
      .orderBy(asc(providers.name)),
    d.q.select({ config: runs.config }).from(runs).where(eq(runs.projectId, projectId)).orderBy(desc(runs.id)).limit(1).then(first),
  ]);
  const previous = (latest?.config as { definition?: Record<string, unknown> } | undefined)?.definition ?? null;
  return { datasets: datasetRows, providers: providerRows, previous };
}

// ─── One run ─────────────────────────────────────────────────────────────────

/** The project's run, or RunNotFoundError (404) when it is another project's or does not exist. */
export async function projectRun(db: DalLike, projectId: number, runId: number): Promise<RunRow> {
  const run = Number.isSafeInteger(runId) && runId > 0 ? await runRow(db, projectId, runId) : undefined;
  if (!run) throw new RunNotFoundError();
  return run;
}

/** The tasks made from a run (calibration tasks store the run's id in their config), in id order; `kinds` narrows them. */
export async function runCalibrationTasks(
  db: DalLike,
  projectId: number,
  runId: number,
  kinds?: TaskKind[],
): Promise<{ id: number; name: string; kind: string }[]> {
  const d = dalOf(db);
  const T = d.t.tasks;
  const where = kinds ? and(eq(T.projectId, projectId), inArray(T.kind, kinds)) : eq(T.projectId, projectId);
  const rows = await d.q.select({ id: T.id, name: T.name, kind: T.kind, config: T.config }).from(T).where(where).orderBy(asc(T.id));
  return rows
    .filter((t) => (t.config as Record<string, unknown> | null)?.runId === runId)
    .map((t) => ({ id: t.id, name: t.name, kind: t.kind }));
}

/** The run as its page and the API describe it: what it is (its definition as stored) and its state. */
export function runSummary(run: RunRow) {
  const cfg = (run.config ?? {}) as Partial<StoredRunConfig>;
  return {
    id: run.id,
    name: run.name,
    protocol: run.protocol,
    protocolVersion: run.protocolVersion,
    status: run.status,
    datasetId: run.datasetId,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    itemCount: cfg.itemCount ?? null,
    settings: cfg.settings ?? {},
    models: cfg.models?.map((m) => m.name) ?? [],
    judges: cfg.judges?.map((j) => ({ id: j.judgeId, name: j.name })) ?? [],
    definition: cfg.definition ?? null,
  };
}

/** A failed job with the provider's error (stored with the API key masked), for the run page and the API. */
export type FailedJob = { id: number; key: string; attempts: number; error: string; provider: string };

/** Failed jobs shown at most (the oldest first). */
export const FAILED_JOBS_SHOWN = 200;

/**
 * Everything the run page shows of a run but its members: the run, its providers and their sampling, its progress,
 * the calibration tasks made from it (Yes/No ones with their corrected scores and plan warnings, 1–10 score ones by
 * name), and its failed jobs. RunNotFoundError for a run not in the project.
 */
export async function runOverview(db: DalLike, projectId: number, runId: number) {
  const d = dalOf(db);
  const run = await projectRun(d, projectId, runId);
  const cfg = (run.config ?? {}) as Partial<StoredRunConfig>;
  const P = d.t.providers;
  const providerIds = [...new Set([...(cfg.models ?? []), ...(cfg.judges ?? [])].map((m) => m.providerId))];
  const providerRows = providerIds.length ? await d.q.select().from(P).where(inArray(P.id, providerIds)).orderBy(asc(P.id)) : [];
  const providerNames = new Map(providerRows.map((p) => [p.id, p.name]));
  const calibration = [];
  for (const t of await runCalibrationTasks(d, projectId, run.id, ["response-satisfaction"]))
    calibration.push({
      taskId: t.id,
      name: t.name,
      scores: await calibratedScores(d, run.id, t.id),
      warnings: await calibrationWarnings(d, run.id, t.id),
    });
  // C3EBench calibration tasks score writings 1–10: their corrected means are tables of the results page.
  const scoreCalibration = (await runCalibrationTasks(d, projectId, run.id, ["writing-quality"])).map((t) => ({
    taskId: t.id,
    name: t.name,
  }));
  const failedJobs: FailedJob[] = (
    await d.rows<{ id: number | string; key: string; attempts: number | string; error: string | null; payload: unknown }>(
      sql`SELECT id, key, attempts, error, payload FROM jobs WHERE run_id = ${run.id} AND status = 'failed' ORDER BY id LIMIT ${FAILED_JOBS_SHOWN}`,
    )
  ).map((j) => {
    // The payload is JSON text on SQLite, a parsed jsonb value on PostgreSQL.
    const payload = (typeof j.payload === "string" ? JSON.parse(j.payload) : j.payload) as { providerId?: number };
    return {
      id: Number(j.id),
      key: j.key,
      attempts: Number(j.attempts),
      error: (j.error ?? "unknown error").slice(0, 1000),
      provider: providerNames.get(payload.providerId ?? -1) ?? "—",
    };
  });
  // The sampling settings each provider adds to every request (a run's protocol settings override them).
  const providers = providerRows.map((p) => {
    const s = (p.settings ?? {}) as Record<string, unknown>;
    return {
      name: p.name,
      kind: p.kind,
      model: p.model,
      concurrency: p.concurrency,
      requestsPerMinute: p.requestsPerMinute,
      sampling: Object.fromEntries(
        ["temperature", "top_p", "max_tokens"].filter((k) => s[k] !== undefined).map((k) => [k, s[k] as number]),
      ),
    };
  });
  return {
    run,
    summary: runSummary(run),
    recorded: providerRows.some((p) => p.kind === "replay"),
    progress: (await runProgress(d, run.id))!,
    calibration,
    scoreCalibration,
    failedJobs,
    providers,
    // The sampling plans the run's protocol can be calibrated by, its default first.
    calibrationPlans: PROTOCOLS[run.protocol]?.calibration?.plans ?? [],
  };
}

/**
 * A run's progress as the API answers it: the run page's figures (jobs done, failed, in flight, remaining — queued
 * plus those the protocol will still plan — and their total; jobs per second over the last minute; tokens, calls
 * and cost) with the estimated time left, in seconds and as the moment it should end (ISO 8601, UTC). The estimate
 * is remaining ÷ the rate of jobs finished in the last minute: null while nothing finished lately, 0 when nothing
 * remains.
 */
export function progressView(p: RunProgress, now = Date.now()) {
  return {
    done: p.done,
    failed: p.failed,
    inFlight: p.inFlight,
    remaining: p.remaining,
    total: p.total,
    throughput: p.throughput,
    etaSeconds: p.etaSeconds,
    etaAt: p.etaSeconds == null ? null : new Date(now + p.etaSeconds * 1000).toISOString(),
    promptTokens: p.promptTokens,
    completionTokens: p.completionTokens,
    calls: p.calls,
    interruptedCalls: p.interruptedCalls,
    cost: p.cost,
    workers: p.workers,
  };
}

/** One run as GET /api/v1/projects/{slug}/runs/{id} answers it: its summary, progress, providers, failed jobs and calibration tasks. */
export async function runStatus(db: DalLike, projectId: number, runId: number) {
  const o = await runOverview(db, projectId, runId);
  return {
    ...o.summary,
    progress: progressView(o.progress),
    providers: o.providers,
    failedJobs: o.failedJobs,
    calibrationTasks: [...o.calibration.map((c) => ({ taskId: c.taskId, name: c.name })), ...o.scoreCalibration].sort(
      (a, b) => a.taskId - b.taskId,
    ),
  };
}

/**
 * Pause, resume, cancel or retry the failed jobs of the project's run (the run page's buttons, `npm run runs`, the
 * API): RunNotFoundError for a run not in the project; controlRun's RunStateError when the control does not apply to
 * the run's state. Returns the new status.
 */
export async function controlProjectRun(db: DalLike, projectId: number, runId: number, action: RunControl): Promise<string> {
  const run = await projectRun(db, projectId, runId);
  return controlRun(db, run.id, action);
}

// ─── Results ─────────────────────────────────────────────────────────────────

/**
 * A run's results as its results page computes them: every judge's tables (runResultsAll: the protocol's metrics and
 * the parse counts), or one judge's (`judgeId`, which must be one of the run's judges: RunInputError naming `judge`
 * otherwise), and for every calibration task made from the run, the headline metrics raw and corrected by the human
 * labels with their intervals (calibrationReport; null for a task that cannot be reported).
 */
export async function runResultsReport(
  db: DalLike,
  run: RunRow,
  projectId: number,
  opts: { judgeId?: number } = {},
): Promise<{ judges: RunResults[]; calibration: { taskId: number; name: string; report: CalibrationReport | null }[] }> {
  const d = dalOf(db);
  let judges: RunResults[];
  if (opts.judgeId === undefined) judges = await runResultsAll(d, run);
  else {
    const cfg = run.config as unknown as StoredRunConfig;
    if (!cfg.judges.some((j) => j.judgeId === opts.judgeId))
      throw new RunInputError(
        `judge: ${opts.judgeId} is not a judge of this run; its judges are ${cfg.judges.map((j) => `${j.judgeId} (${j.name})`).join(", ")}.`,
        { at: "judge" },
      );
    judges = [await runResults(d, run, opts.judgeId)];
  }
  const calibration = [];
  for (const t of await runCalibrationTasks(d, projectId, run.id))
    calibration.push({ taskId: t.id, name: t.name, report: await calibrationReport(d, run.id, t.id) });
  return { judges, calibration };
}
