/**
 * Import: one file, one preset, one transaction. The file streams through
 * the preset into the ImportWriter on a connection of its own (so the
 * transaction, held while the file streams, never mixes with other
 * requests' writes); any error rolls everything back, as does a dry run.
 */
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase } from "../../db/client";
import { LABEL_LEVELS, type LabelLevel } from "./labels";
import { PRESETS, type Preset } from "./presets.server";
import { formatProblem, ImportRefusal, type Problem } from "./problems";
import { formatFromName, sniffFile, type FileFormat } from "./source.server";
import { ImportWriter, type Counts } from "./writer.server";

export type ImportOptions = {
  databaseFile: string;
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
  format?: FileFormat;
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
};

export class ImportUsageError extends Error {}

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

export function getPreset(name: string): Preset {
  const p = PRESETS[name];
  if (!p) throw new ImportUsageError(`Unknown preset "${name}". Presets: ${Object.keys(PRESETS).join(", ")}.`);
  return p;
}

export async function runImport(o: ImportOptions): Promise<ImportSummary> {
  const preset = getPreset(o.preset);
  if (!SLUG.test(o.projectSlug)) {
    throw new ImportUsageError(`"${o.projectSlug}" is not a project slug: use 2–63 lowercase letters, digits or dashes.`);
  }
  if (o.level && !LABEL_LEVELS.includes(o.level)) throw new ImportUsageError(`--level must be one of ${LABEL_LEVELS.join(", ")}.`);
  const fileName = o.fileName ?? o.file;
  let format = o.format ?? formatFromName(fileName) ?? preset.formats[0];
  if (!preset.formats.includes(format)) {
    if (preset.formats.length === 1) format = preset.formats[0];
    else throw new ImportUsageError(`The ${preset.name} preset reads ${preset.formats.join(" or ")} files, not ${format}.`);
  }
  const db = openDatabase(o.databaseFile);
  const conn = db.$client;
  try {
    let first: Attempt;
    try {
      sniffFile(o.file);
      first = await attempt(conn, o, preset, format, fileName);
    } catch (err) {
      if (!(err instanceof ImportRefusal)) throw err;
      return refused(o, preset, fileName, err.problem);
    }
    if (first.identicalDatasetId && !o.dryRun && !preset.attachesToExistingVersion) {
      // The same content is already there and this preset would add nothing to it.
      return { ...first.summary, unchanged: true, committed: true };
    }
    if (first.identicalDatasetId && !o.dryRun) {
      const again = await attempt(conn, o, preset, format, fileName, first.identicalDatasetId);
      return { ...again.summary, unchanged: again.summary.unchanged || !again.wroteAnything };
    }
    return first.summary;
  } finally {
    conn.close();
  }
}

type Attempt = { summary: ImportSummary; identicalDatasetId?: number; wroteAnything: boolean };

async function attempt(
  conn: Database.Database,
  o: ImportOptions,
  preset: Preset,
  format: FileFormat,
  fileName: string,
  reuseId?: number,
): Promise<Attempt> {
  conn.exec("begin immediate");
  let open = true;
  try {
    let project = conn.prepare("select id from projects where slug = ?").get(o.projectSlug) as { id: number } | undefined;
    if (!project) {
      const id = conn.prepare("insert into projects (slug, name) values (?, ?)").run(o.projectSlug, o.projectSlug).lastInsertRowid;
      project = { id: Number(id) };
    }
    const datasetName = o.datasetName?.trim() || preset.datasetName(fileName);
    const creates = preset.kind !== "attach";
    const sink = new ImportWriter(conn, {
      projectId: project.id,
      dataset: creates ? { name: datasetName, source: `${preset.name}: ${path.basename(fileName)}`, reuseId } : undefined,
      lookupDataset: creates ? undefined : o.datasetName?.trim() || undefined,
      level: o.level,
      weightsSumToOne: preset.weightsSumToOne,
    });
    const before = conn.prepare("select total_changes() as n").get() as { n: number };
    try {
      await preset.run({ file: o.file, fileName, format, mapping: o.mapping ?? {}, sink });
    } catch (err) {
      if (!(err instanceof ImportRefusal)) throw err;
      sink.error(err.problem);
    }
    const { identicalDatasetId } = sink.finish();
    const after = conn.prepare("select total_changes() as n").get() as { n: number };
    const commit = !sink.failed && !o.dryRun && !identicalDatasetId;
    conn.exec(commit ? "commit" : "rollback");
    open = false;
    const unchanged = Boolean(identicalDatasetId) || ((reuseId !== undefined || !creates) && commit && after.n - before.n === 0);
    return {
      identicalDatasetId,
      wroteAnything: commit && after.n - before.n > 0,
      summary: {
        preset: preset.name,
        project: o.projectSlug,
        dryRun: Boolean(o.dryRun),
        unchanged,
        committed: commit,
        dataset: creates
          ? {
              id: commit ? (sink.datasetId ?? null) : identicalDatasetId ?? null,
              name: datasetName,
              version: commit ? (sink.datasetVersion ?? null) : identicalDatasetId ? datasetVersion(conn, identicalDatasetId) : null,
            }
          : null,
        ...sink.counts,
        warnings: sink.warnings,
        errors: sink.errors,
        warningCount: sink.warningCount,
        errorCount: sink.errorCount,
      },
    };
  } finally {
    if (open) conn.exec("rollback");
  }
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
  };
}

/** The human-readable report (CLI and logs): counts, then the first `limit` problems. */
export function describeSummary(s: ImportSummary, limit = 20): string {
  const lines: string[] = [];
  const counts = `${s.items} items, ${s.checklistItems} checklist items, ${s.references} references, ${s.responses} responses, ${s.verdicts} verdicts, ${s.annotations} annotations`;
  const ds = s.dataset ? ` into dataset "${s.dataset.name}"${s.dataset.version ? ` v${s.dataset.version}` : ""}` : "";
  if (s.errorCount > 0) lines.push(`Import refused (${s.errorCount} problem${s.errorCount === 1 ? "" : "s"}); nothing was written. The file has ${counts}.`);
  else if (s.dryRun) lines.push(`Dry run: the file is valid${ds}: ${counts}${s.unchanged ? " (already imported: nothing would change)" : ""}. Nothing was written.`);
  else if (s.unchanged) lines.push(`Already imported${ds}: nothing changed (${counts}).`);
  else lines.push(`Imported${ds} in project "${s.project}": ${counts}.`);
  for (const p of s.errors.slice(0, limit)) lines.push(`  error: ${formatProblem(p)}`);
  if (s.errorCount > limit) lines.push(`  … and ${s.errorCount - limit} more errors`);
  for (const p of s.warnings.slice(0, limit)) lines.push(`  warning: ${formatProblem(p)}`);
  if (s.warningCount > limit) lines.push(`  … and ${s.warningCount - limit} more warnings`);
  return lines.join("\n");
}
