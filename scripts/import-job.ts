/**
 * One import, run by the web server in a child process of its own (see
 * app/formats/import-jobs.server.ts), so that reading, checking and staging a
 * large file never runs on the server's event loop or in its memory.
 *
 * Input: one JSON argument with the ImportOptions (the file is the server's
 * own upload path, never a path a user typed). Output: JSON lines on stdout,
 * {"progress": {...}} while the file is read, then {"summary": {...}} or
 * {"failure": "message"}. The database is DATABASE_URL, as for every command.
 */
import { databasePathFromEnv } from "../db/client";
import { runImport, ImportUsageError, type ImportOptions } from "../app/formats/import.server";

const write = (o: unknown) => process.stdout.write(JSON.stringify(o) + "\n");

try {
  const opts = JSON.parse(process.argv[2] ?? "{}") as Omit<ImportOptions, "databaseFile" | "onProgress">;
  const summary = await runImport({
    ...opts,
    databaseFile: databasePathFromEnv(),
    onProgress: (p) => write({ progress: p }),
  });
  // Problems and warnings beyond what a page shows stay out of the pipe.
  write({ summary: { ...summary, errors: summary.errors.slice(0, 200), warnings: summary.warnings.slice(0, 200) } });
  process.exitCode = 0;
} catch (err) {
  write({ failure: err instanceof ImportUsageError ? err.message : "The import failed unexpectedly; nothing was written." });
  if (!(err instanceof ImportUsageError)) console.error(err);
  process.exitCode = 1;
}
