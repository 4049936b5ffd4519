/**
 * Import: one file, one preset, all or nothing, in two steps on a connection
 * of its own.
 *
 * 1. Check: the file streams through the preset into the ImportWriter, which
 *    looks rows up in the database (a read snapshot, no lock that blocks
 *    writers) and writes what it would add to a scratch stage file
 *    (stage.server.ts). Memory is bounded by the reader's window, not the
 *    file: the rows wait on disk.
 * 2. Write (not for a dry run, nor when anything is wrong): the staged rows
 *    are copied into the database by commitStage (stage.server.ts): in short
 *    chunks into rows no reader can reach yet, then one short transaction
 *    writes the rows that make them visible (the new dataset version, task,
 *    judge or project). The write lock is never held while the file is read
 *    or across an await, and never for longer than one chunk or that final
 *    transaction, so annotators' submits wait at most for one of those.
 *    What a killed import leaves is deleted by the next import.
 */
import path from "node:path";
import type Database from "better-sqlite3";
import { and, eq } from "drizzle-orm";
import { first, initDal, type Dal } from "~/dal.server";
import { openDatabase } from "../../db/client";
import { isPostgresUrl } from "../../db/client-pg";
import { LABEL_LEVELS, parseScale, type LabelLevel, type LabelValue } from "./labels";
import { PRESETS, type Preset } from "./presets/index.server";
import { formatProblem, ImportRefusal, ImportUsageError, type Problem } from "./problems";
import { formatFromName, sniffFile, type FileFormat } from "./source.server";
import {
  attachStage,
  cleanupLeftovers,
  commitStage,
  detachStage,
  STAGE_BASE,
  STAGED_TABLES,
  type ChunkEvent,
  type CommitStats,
} from "./stage.server";
import { newStageFilePath, removeOrphanStageFiles } from "./stage-file.server";
import { emitImportFinished } from "../webhooks/events.server";
import { commitStagePg, mirrorProject, removeMirror } from "./stage-pg.server";
import { ImportWriter, type Counts, type LevelInfo, type SampleRow } from "./writer.server";

export type ImportProgress = { phase: "checking" | "writing"; bytes: number; totalBytes: number };

export type ImportOptions = {
  /** The SQLite file, or a PostgreSQL URL (postgres://…). */
  databaseFile: string;
  /** A PostgreSQL database to import into instead of databaseFile (tests); default: databaseFile's. */
  dal?: Dal;
  projectSlug: string;
  preset: string;
  /** Path of the file to read. */
  file: string;
  /** Name to show and derive the dataset name from (an upload's original name); default: file. */
  fileName?: string;
  dryRun?: boolean;
  /** canonical field → column/key in the file. */
  mapping?: Record<string, string>;
  /** Dataset to create (benchmarks, labels) or to look items up in (responses, verdicts). */
  datasetName?: string;
  level?: LabelLevel;
  /** Labels presets: the scale, its categories in order (`--categories`); stored with the task, labels outside it refused. */
  categories?: string[];
  /** Verdict presets: judge name → the base judge it is a variant (ablation) of (`--variant-of JUDGE=BASE`), for judges the file does not mark. */
  variantOf?: Record<string, string>;
  /** labels-wide: the annotator columns (other columns are ignored). */
  annotators?: string[];
  format?: FileFormat;
  /** Scratch file for the staged rows (default: a new file in the OS temp folder); removed afterwards. */
  stageFile?: string;
  /** Called as the file is read (at most every ~100 ms) and when the write starts. */
  onProgress?: (p: ImportProgress) => void;
  /** Called after each chunk of the write, the lock free (tests observe the database here; a throw fails the import). */
  onCommitChunk?: (e: ChunkEvent) => void | Promise<void>;
  /** Target write-lock hold per chunk (ms); default CHUNK_TARGET_MS. */
  chunkTargetMs?: number;
  /**
   * Writes the staged rows from the stage file by other means than this connection (scripts/import-job.ts: on a thread that
   * is not niced, while the check runs on a niced one); default commitStage on this connection. SQLite only: on
   * PostgreSQL the copy is one transaction of its own (stage-pg.server.ts).
   */
  commitWith?: (stageFile: string) => Promise<CommitStats>;
};

export type ImportSummary = Counts & {
  preset: string;
  project: string;
  dryRun: boolean;
  /** True when the same content was already imported: nothing was (or would be) written. */
  unchanged: boolean;
  committed: boolean;
  dataset: { id: number | null; name: string; version: number | null } | null;
  warnings: Problem[];
  errors: Problem[];
  warningCount: number;
  errorCount: number;
  /** Rows whose key the database already holds with different content (responses, verdicts); they are among the errors. */
  conflictCount: number;
  /** Rows the database already holds with the same content. */
  alreadyPresent: number;
  /** Rows the import adds (or would add, in a dry run). */
  newRows: number;
  /** The first records as parsed. */
  sample: SampleRow[];
  /** The longest the database's write lock was held at a time (0 when nothing was written). */
  lockMs: number;
  /** All the write's lock holds together (ms), and how many there were. */
  lockTotalMs: number;
  lockHolds: number;
  /** Of the gaps between the write's chunks, those left long because a writer had waited for the lock, and those left long after every 100 ms of holds. */
  lockLongGaps: { waited: number; periodic: number };
  /** Label imports: the measurement level used, and its source (given with --level, or inferred and why); null otherwise. */
  level: LevelInfo | null;
};

export { ImportUsageError };

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

export function getPreset(name: string): Preset {
  const p = PRESETS[name];
  if (!p) throw new ImportUsageError(`Unknown preset "${name}". Presets: ${Object.keys(PRESETS).join(", ")}.`);
  return p;
}

export async function runImport(o: ImportOptions): Promise<ImportSummary> {
  const summary = await importFile(o);
  if (!summary.dryRun) await announceImport(o, summary);
  return summary;
}

/**
 * import.finished for the project's webhooks, once the import has ended (app/webhooks/events.server.ts). The
 * import stands whatever happens here: a failure to record the event is reported as a warning.
 */
async function announceImport(o: ImportOptions, summary: ImportSummary): Promise<void> {
  let sqlite: ReturnType<typeof openDatabase> | undefined;
  try {
    const pg = o.dal?.dialect === "postgres" ? o.dal : isPostgresUrl(o.databaseFile) ? await initDal(o.databaseFile) : undefined;
    await emitImportFinished(pg ?? (sqlite = openDatabase(o.databaseFile)), o.projectSlug, summary);
  } catch (err) {
    console.warn(`Concord: the import.finished webhook event was not recorded: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    sqlite?.$client.close();
  }
}

async function importFile(o: ImportOptions): Promise<ImportSummary> {
  const preset = getPreset(o.preset);
  if (!SLUG.test(o.projectSlug)) {
    throw new ImportUsageError(`"${o.projectSlug}" is not a project slug: use 2–63 lowercase letters, digits or dashes.`);
  }
  if (o.variantOf && Object.keys(o.variantOf).length && preset.name !== "verdicts" && preset.name !== "unit-verdicts")
    throw new ImportUsageError(`--variant-of marks judges of a verdicts file; the ${preset.name} preset imports no judges' verdicts.`);
  if (o.level && !LABEL_LEVELS.includes(o.level)) throw new ImportUsageError(`--level must be one of ${LABEL_LEVELS.join(", ")}.`);
  let scale: LabelValue[] | undefined;
  if (o.categories) {
    if (preset.kind !== "labels")
      throw new ImportUsageError(`--categories declares the scale of labels; the ${preset.name} preset imports no labels.`);
    const r = parseScale(o.categories);
    if ("error" in r) throw new ImportUsageError(`--categories: ${r.error}.`);
    if ((o.level === "ordinal" || o.level === "interval") && r.values.some((v) => typeof v !== "number")) {
      throw new ImportUsageError(`--categories must all be numbers for --level ${o.level}.`);
    }
    scale = r.values;
  }
  const fileName = o.fileName ?? o.file;
  let format = o.format ?? formatFromName(fileName) ?? preset.formats[0];
  if (!preset.formats.includes(format)) {
    if (preset.formats.length === 1) format = preset.formats[0];
    else throw new ImportUsageError(`The ${preset.name} preset reads ${preset.formats.join(" or ")} files, not ${format}.`);
  }
  // PostgreSQL: the check runs against a SQLite mirror of the project (stage-pg.server.ts).
  const pg = o.dal?.dialect === "postgres" ? o.dal : isPostgresUrl(o.databaseFile) ? await initDal(o.databaseFile) : undefined;
  const mirror = pg ? await mirrorProject(pg, o.projectSlug) : undefined;
  const db = mirror ? mirror.db : openDatabase(o.databaseFile);
  const conn = db.$client;
  try {
    removeOrphanStageFiles();
    if (!o.dryRun && !pg) await cleanupLeftovers(conn);
    let first: Attempt;
    let totalBytes: number;
    try {
      totalBytes = sniffFile(o.file);
      first = await attempt(conn, pg, { ...o, scale }, preset, format, fileName, undefined, totalBytes);
    } catch (err) {
      if (!(err instanceof ImportRefusal)) throw err;
      return refused(o, preset, fileName, err.problem);
    }
    if (first.identicalDatasetId && !o.dryRun && !preset.attachesToExistingVersion) {
      // The same content is already there and this preset would add nothing to it.
      return { ...first.summary, unchanged: true, committed: true };
    }
    if (first.identicalDatasetId && !o.dryRun) {
      const again = await attempt(conn, pg, { ...o, scale }, preset, format, fileName, first.identicalDatasetId, totalBytes);
      return { ...again.summary, unchanged: again.summary.unchanged || !again.wroteAnything };
    }
    return first.summary;
  } finally {
    conn.close();
    if (mirror) removeMirror(mirror.file);
  }
}

type Attempt = { summary: ImportSummary; identicalDatasetId?: number; wroteAnything: boolean };

async function attempt(
  conn: Database.Database,
  pg: Dal | undefined,
  o: ImportOptions & { scale?: LabelValue[] },
  preset: Preset,
  format: FileFormat,
  fileName: string,
  reuseId: number | undefined,
  totalBytes: number,
): Promise<Attempt> {
  const stageFile = o.stageFile ?? newStageFilePath();
  conn.pragma("foreign_keys = OFF");
  attachStage(conn, stageFile);
  // A deferred transaction: the database is only read (one snapshot, no lock that blocks writers); the stage is written.
  conn.exec("begin");
  let open = true;
  try {
    let project = conn.prepare("select id from main.projects where slug = ?").get(o.projectSlug) as { id: number } | undefined;
    if (!project) {
      const id = conn.prepare("insert into stage.projects (slug, name) values (?, ?)").run(o.projectSlug, o.projectSlug).lastInsertRowid;
      project = { id: Number(id) };
    }
    const datasetName = o.datasetName?.trim() || preset.datasetName(fileName);
    const creates = preset.kind !== "attach";
    const sink = new ImportWriter(conn, {
      projectId: project.id,
      dataset: creates ? { name: datasetName, source: `${preset.name}: ${path.basename(fileName)}`, reuseId } : undefined,
      lookupDataset: creates ? undefined : o.datasetName?.trim() || undefined,
      level: preset.kind === "labels" ? o.level : undefined,
      categories: o.scale,
      weightsSumToOne: preset.weightsSumToOne,
      variantOf: o.variantOf,
    });
    let bytes = 0;
    let lastReport = 0;
    const onBytes = o.onProgress
      ? (chunk: Buffer) => {
          bytes += chunk.length;
          const now = performance.now();
          if (now - lastReport > 100) {
            lastReport = now;
            o.onProgress!({ phase: "checking", bytes, totalBytes });
          }
        }
      : undefined;
    try {
      await preset.run({ file: o.file, fileName, format, mapping: o.mapping ?? {}, sink, onBytes, annotators: o.annotators });
    } catch (err) {
      if (!(err instanceof ImportRefusal)) throw err;
      sink.error(err.problem);
    }
    const { identicalDatasetId } = sink.finish();
    o.onProgress?.({ phase: "checking", bytes: totalBytes, totalBytes });
    conn.exec("commit");
    open = false;
    const newRows = STAGED_TABLES.reduce(
      (n, t) => n + (conn.prepare(`select count(*) as n from stage."${t}"`).get() as { n: number }).n,
      0,
    );
    let commit = !sink.failed && !o.dryRun && !identicalDatasetId && newRows > 0;
    let lock = { lockMs: 0, lockTotalMs: 0, lockHolds: 0, lockLongGaps: { waited: 0, periodic: 0 } };
    if (commit) {
      o.onProgress?.({ phase: "writing", bytes: totalBytes, totalBytes });
      try {
        const stats = pg
          ? await commitStagePg(pg, conn)
          : o.commitWith
            ? await o.commitWith(stageFile)
            : await commitStage(conn, { onChunk: o.onCommitChunk, targetMs: o.chunkTargetMs });
        lock = { lockMs: stats.lockMs, lockTotalMs: stats.lockTotalMs, lockHolds: stats.holds, lockLongGaps: stats.longGaps };
        if (sink.datasetId !== undefined && sink.datasetId >= STAGE_BASE) {
          // The new version's ID as the database numbered it.
          sink.datasetId = pg
            ? await newDatasetId(pg, o.projectSlug, datasetName, sink.datasetVersion!)
            : (
                conn
                  .prepare(
                    "select id from main.datasets where project_id = (select id from main.projects where slug = ?) and name = ? and version = ?",
                  )
                  .get(o.projectSlug, datasetName, sink.datasetVersion) as { id: number }
              ).id;
        }
      } catch (err) {
        commit = false;
        sink.error({
          row: 0,
          message: `the database changed while the file was being checked (${refusal(err, pg).replace(/^[A-Z_]+: /, "")}); nothing was written — run the import again`,
        });
      }
    }
    const nothingNew = !sink.failed && newRows === 0;
    const unchanged = Boolean(identicalDatasetId) || ((reuseId !== undefined || !creates) && nothingNew);
    return {
      identicalDatasetId,
      wroteAnything: commit && newRows > 0,
      summary: {
        preset: preset.name,
        project: o.projectSlug,
        dryRun: Boolean(o.dryRun),
        unchanged,
        committed: commit || (!o.dryRun && nothingNew && !identicalDatasetId),
        dataset: creates
          ? {
              id: commit ? (sink.datasetId ?? null) : (identicalDatasetId ?? null),
              name: datasetName,
              version: commit ? (sink.datasetVersion ?? null) : identicalDatasetId ? datasetVersion(conn, identicalDatasetId) : null,
            }
          : null,
        ...sink.counts,
        warnings: sink.warnings,
        errors: sink.errors,
        warningCount: sink.warningCount,
        errorCount: sink.errorCount,
        conflictCount: sink.conflictCount,
        alreadyPresent: sink.alreadyPresent,
        newRows: sink.failed || identicalDatasetId ? 0 : newRows,
        sample: sink.sample,
        ...lock,
        level: sink.level ?? null,
      },
    };
  } finally {
    if (open) conn.exec("rollback");
    detachStage(conn, stageFile);
  }
}

/** Why the database refused the copy: SQLite's message, or PostgreSQL's own (not drizzle's, which quotes the whole statement). */
function refusal(err: unknown, pg: Dal | undefined): string {
  const e = err as Error & { cause?: unknown };
  return pg && e.cause instanceof Error ? e.cause.message : e.message;
}

async function newDatasetId(d: Dal, slug: string, name: string, version: number): Promise<number> {
  const { datasets: ds, projects: p } = d.t;
  const row = first(
    await d.q
      .select({ id: ds.id })
      .from(ds)
      .innerJoin(p, eq(p.id, ds.projectId))
      .where(and(eq(p.slug, slug), eq(ds.name, name), eq(ds.version, version)))
      .limit(1),
  );
  return row!.id;
}

function datasetVersion(conn: Database.Database, id: number): number | null {
  return (conn.prepare("select version from datasets where id = ?").get(id) as { version: number } | undefined)?.version ?? null;
}

function refused(o: ImportOptions, preset: Preset, fileName: string, problem: Problem): ImportSummary {
  return {
    preset: preset.name,
    project: o.projectSlug,
    dryRun: Boolean(o.dryRun),
    unchanged: false,
    committed: false,
    dataset: preset.kind === "attach" ? null : { id: null, name: o.datasetName || preset.datasetName(fileName), version: null },
    items: 0,
    checklistItems: 0,
    references: 0,
    responses: 0,
    verdicts: 0,
    annotations: 0,
    warnings: [],
    errors: [problem],
    warningCount: 0,
    errorCount: 1,
    conflictCount: 0,
    alreadyPresent: 0,
    newRows: 0,
    sample: [],
    lockMs: 0,
    lockTotalMs: 0,
    lockHolds: 0,
    lockLongGaps: { waited: 0, periodic: 0 },
    level: null,
  };
}

/** The human-readable report (CLI and logs): counts, then the first `limit` problems. */
export function describeSummary(s: ImportSummary, limit = 20): string {
  const lines: string[] = [];
  const counts = `${s.items} items, ${s.checklistItems} checklist items, ${s.references} references, ${s.responses} responses, ${s.verdicts} verdicts, ${s.annotations} annotations`;
  const ds = s.dataset ? ` into dataset "${s.dataset.name}"${s.dataset.version ? ` v${s.dataset.version}` : ""}` : "";
  const present = s.alreadyPresent > 0 && !s.unchanged ? ` (${s.alreadyPresent} of them already imported with the same content)` : "";
  if (s.errorCount > 0) {
    lines.push(`Import refused (${s.errorCount} problem${s.errorCount === 1 ? "" : "s"}); nothing was written. The file has ${counts}.`);
    if (s.conflictCount > 0) {
      lines.push(
        `${s.conflictCount} row${s.conflictCount === 1 ? "" : "s"} conflict${s.conflictCount === 1 ? "s" : ""} with what is already imported under the same key ` +
          "(responses: item, model, turn; verdicts: judge, item, response, checklist item). Imported rows are never replaced silently: the file is refused.",
      );
    }
  } else if (s.dryRun)
    lines.push(
      `Dry run: the file is valid${ds}: ${counts}${present}${s.unchanged ? " (already imported with the same content: nothing would change)" : ""}. Nothing was written.`,
    );
  else if (s.unchanged) lines.push(`Already imported${ds} with the same content: nothing changed (${counts}).`);
  else lines.push(`Imported${ds} in project "${s.project}": ${counts}${present}.`);
  if (s.level) lines.push(`Measurement level: ${s.level.level} (${s.level.reason}).`);
  for (const p of s.errors.slice(0, limit)) lines.push(`  error: ${formatProblem(p)}`);
  if (s.errorCount > limit) lines.push(`  … and ${s.errorCount - limit} more errors`);
  for (const p of s.warnings.slice(0, limit)) lines.push(`  warning: ${formatProblem(p)}`);
  if (s.warningCount > limit) lines.push(`  … and ${s.warningCount - limit} more warnings`);
  return lines.join("\n");
}
