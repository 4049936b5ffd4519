/**
 * The record of each import made through the HTTP API (table api_imports): created when the body has arrived,
 * then queued → running → succeeded | failed, with its progress while it runs, and its summary, problems or error
 * once it ends. GET /api/v1/projects/{slug}/imports[/{id}] reads it; the import itself runs as the Import page's
 * do (app/api/imports.server.ts).
 *
 * A record names the server process that runs its import (host and process id, kept in `progress`, never shown).
 * When a server starts, the records its dead predecessors left queued or running are failed
 * (failInterruptedApiImports): their import was stopped with its server, and an import stopped midway writes
 * nothing (app/formats/import-jobs.server.ts).
 */
import os from "node:os";
import { and, desc, eq, inArray, lt } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import type { FileFormat } from "~/formats/source.server";
import { processGone } from "~/formats/stage-file.server";
import type { ApiImportStatus } from "../../db/schema";

/** What an interrupted import's record says. */
export const INTERRUPTED = "The server stopped during the import; nothing of it was written.";

export type ImportProgressView = { phase: "waiting" | "checking" | "writing"; bytes: number; totalBytes: number };
export type FileProblemView = { row?: number; field?: string; message: string };

/** The process that runs an import: kept in the record's progress. */
type Runner = { host: string; pid: number };
type StoredProgress = Partial<ImportProgressView> & { runner?: Runner };

export type ApiImportView = {
  id: number;
  status: ApiImportStatus;
  preset: string;
  options: Record<string, unknown>;
  format: FileFormat;
  size: number;
  dry_run: boolean;
  progress: ImportProgressView | null;
  summary: Record<string, unknown> | null;
  problems: FileProblemView[] | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
};

const iso = (t: number) => new Date(t * 1000).toISOString().replace(".000Z", "Z");
const now = () => Math.floor(Date.now() / 1000);
const thisRunner = (): Runner => ({ host: os.hostname(), pid: process.pid });

type Row = {
  id: number;
  status: ApiImportStatus;
  preset: string;
  options: Record<string, unknown>;
  format: string;
  size: number;
  dryRun: boolean;
  progress: Record<string, unknown> | null;
  summary: Record<string, unknown> | null;
  problems: Array<Record<string, unknown>> | null;
  error: string | null;
  createdAt: number;
  finishedAt: number | null;
};

function view(r: Row): ApiImportView {
  const p = r.progress as StoredProgress | null;
  const active = r.status === "queued" || r.status === "running";
  return {
    id: r.id,
    status: r.status,
    preset: r.preset,
    options: r.options,
    format: r.format as FileFormat,
    size: r.size,
    dry_run: r.dryRun,
    progress: active && p ? { phase: p.phase ?? "waiting", bytes: p.bytes ?? 0, totalBytes: p.totalBytes ?? r.size } : null,
    summary: r.summary,
    problems: (r.problems as FileProblemView[] | null) ?? null,
    error: r.error,
    created_at: iso(r.createdAt),
    finished_at: r.finishedAt === null ? null : iso(r.finishedAt),
  };
}

/** A new record (queued), run by this process. */
export async function createApiImport(
  input: {
    projectId: number;
    userId: number;
    preset: string;
    options: Record<string, unknown>;
    format: FileFormat;
    size: number;
    dryRun: boolean;
  },
  db: DalLike = getDal(),
): Promise<ApiImportView> {
  const d = dalOf(db);
  const t = d.t.apiImports;
  const progress: StoredProgress = { phase: "waiting", bytes: 0, totalBytes: input.size, runner: thisRunner() };
  const [row] = await d.tx((q) =>
    q
      .insert(t)
      .values({ ...input, status: "queued", progress })
      .returning(),
  );
  return view(row as Row);
}

/** The import's progress while it is queued or running (a finished record is left as it is). */
export async function recordApiImportProgress(id: number, p: ImportProgressView, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const t = d.t.apiImports;
  const progress: StoredProgress = { ...p, runner: thisRunner() };
  await d.tx((q) =>
    q
      .update(t)
      .set({ status: "running", progress })
      .where(and(eq(t.id, id), inArray(t.status, ["queued", "running"]))),
  );
}

/** The import's end: succeeded with its summary, or failed with its problems (a refused file) or a sentence. */
export async function finishApiImport(
  id: number,
  outcome:
    | { status: "succeeded"; summary: Record<string, unknown> }
    | { status: "failed"; summary?: Record<string, unknown>; problems?: FileProblemView[]; error: string },
  db: DalLike = getDal(),
): Promise<ApiImportView> {
  const d = dalOf(db);
  const t = d.t.apiImports;
  const [row] = await d.tx((q) =>
    q
      .update(t)
      .set({
        status: outcome.status,
        summary: outcome.summary ?? null,
        problems: outcome.status === "failed" ? (outcome.problems ?? null) : null,
        error: outcome.status === "failed" ? outcome.error : null,
        finishedAt: now(),
      })
      .where(eq(t.id, id))
      .returning(),
  );
  return view(row as Row);
}

/** One import of the project, or null (another project's id, or none). */
export async function getApiImport(projectId: number, id: number, db: DalLike = getDal()): Promise<ApiImportView | null> {
  const d = dalOf(db);
  const t = d.t.apiImports;
  const row = first(
    await d.q
      .select()
      .from(t)
      .where(and(eq(t.projectId, projectId), eq(t.id, id))),
  );
  return row ? view(row as Row) : null;
}

/** The project's imports, newest first: `limit` of them after the id `before` (a page's cursor), or from the newest. */
export async function listApiImports(
  projectId: number,
  page: { limit: number; before: number | null },
  db: DalLike = getDal(),
): Promise<ApiImportView[]> {
  const d = dalOf(db);
  const t = d.t.apiImports;
  const rows = await d.q
    .select()
    .from(t)
    .where(page.before === null ? eq(t.projectId, projectId) : and(eq(t.projectId, projectId), lt(t.id, page.before)))
    .orderBy(desc(t.id))
    .limit(page.limit);
  return rows.map((r) => view(r as Row));
}

/**
 * At a server's start: fails the records left queued or running by a server of this machine that is gone (or by
 * an earlier process with this process's id: a container's PID 1). Another machine's records are its own server's
 * to finish. Returns how many.
 */
export async function failInterruptedApiImports(db: DalLike = getDal()): Promise<number> {
  const d = dalOf(db);
  const t = d.t.apiImports;
  const open = await d.q
    .select({ id: t.id, progress: t.progress })
    .from(t)
    .where(inArray(t.status, ["queued", "running"]));
  const host = os.hostname();
  const dead = open
    .filter((r) => {
      const runner = (r.progress as StoredProgress | null)?.runner;
      if (!runner) return true;
      if (runner.host !== host) return false;
      return runner.pid === process.pid || processGone(runner.pid);
    })
    .map((r) => r.id);
  if (!dead.length) return 0;
  await d.tx((q) =>
    q
      .update(t)
      .set({ status: "failed", error: INTERRUPTED, finishedAt: now() })
      .where(and(inArray(t.id, dead), inArray(t.status, ["queued", "running"]))),
  );
  return dead.length;
}
