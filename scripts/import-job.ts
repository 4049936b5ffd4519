/**
 * One import, run by the web server in a child process of its own (see
 * app/formats/import-jobs.server.ts), so that reading, checking and staging a
 * large file never runs on the server's event loop or in its memory.
 *
 * Two threads: the check (read the file, look rows up, stage them) runs on a
 * worker thread at nice 10, so annotators' requests get the CPU first; the
 * write of the staged rows runs on the main thread at normal priority. The
 * write holds the database's write lock in short chunks (stage.server.ts),
 * and a niced thread holding it would keep everyone waiting whenever the
 * machine is busy: it would not get the CPU to finish and let go.
 *
 * Input: one JSON argument with the ImportOptions (the file is the server's
 * own upload path, never a path a user typed). Output: JSON lines on stdout,
 * {"progress": {...}} while the file is read, then {"summary": {...}} or
 * {"failure": "message"}. The database is DATABASE_URL, as for every command.
 */
import os from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { ImportOptions } from "../app/formats/import.server";
import type { CommitStats } from "../app/formats/stage.server";

type Options = Omit<ImportOptions, "databaseFile" | "onProgress">;
type ToMain = { out: unknown } | { commit: string; databaseFile: string } | { exit: number };
type ToWorker = { stats: CommitStats } | { error: string };

if (isMainThread) {
  const write = (o: unknown) => process.stdout.write(JSON.stringify(o) + "\n");
  const opts = JSON.parse(process.argv[2] ?? "{}") as Options;
  let conn: Database.Database | undefined;
  // The check's thread runs this same module. From the sources (tsx), a worker does not inherit tsx's loader
  // (Node 20): it registers it, then loads this file; from the bundle (scripts/cli.mjs import-job) it loads the bundle.
  const fromSources = import.meta.url.endsWith(".ts");
  const worker = fromSources
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}); });`,
        { eval: true, workerData: { opts } },
      )
    : new Worker(new URL(import.meta.url), { workerData: { opts } });
  worker.on("message", async (m: ToMain) => {
    if ("out" in m) write(m.out);
    else if ("exit" in m) process.exitCode = m.exit;
    else {
      // The write, here at normal priority, on a connection of its own that attaches the stage the check filled.
      let reply: ToWorker;
      try {
        // Loaded when needed: the thread starts at once, and the check's thread loads what it needs.
        const { openDatabase } = await import("../db/client");
        const { attachFilledStage, commitStage } = await import("../app/formats/stage.server");
        conn ??= openDatabase(m.databaseFile).$client;
        attachFilledStage(conn, m.commit);
        try {
          reply = { stats: await commitStage(conn) };
        } finally {
          conn.exec("detach database stage");
        }
      } catch (err) {
        reply = { error: (err as Error).message };
      }
      worker.postMessage(reply);
    }
  });
  worker.on("error", (err) => {
    write({ failure: "The import failed unexpectedly; nothing was written." });
    console.error(err);
    process.exitCode = 1;
  });
  worker.on("exit", () => conn?.close());
} else {
  const { opts } = workerData as { opts: Options };
  const port = parentPort!;
  const send = (m: ToMain) => port.postMessage(m);
  try {
    // This thread only (Linux nice values are per thread): the main thread, which writes, keeps its priority.
    os.setPriority(10);
  } catch {
    // not permitted here; it runs at normal priority
  }
  const commitWith = (stageFile: string) =>
    new Promise<CommitStats>((resolve, reject) => {
      port.once("message", (r: ToWorker) => ("stats" in r ? resolve(r.stats) : reject(new Error(r.error))));
      send({ commit: stageFile, databaseFile });
    });
  // Loaded here only: the main thread needs none of the presets.
  const { runImport, ImportUsageError } = await import("../app/formats/import.server");
  const { databasePathFromEnv } = await import("../db/client");
  const databaseFile = databasePathFromEnv();
  try {
    const summary = await runImport({ ...opts, databaseFile, onProgress: (p) => send({ out: { progress: p } }), commitWith });
    // Problems and warnings beyond what a page shows stay out of the pipe.
    send({ out: { summary: { ...summary, errors: summary.errors.slice(0, 200), warnings: summary.warnings.slice(0, 200) } } });
    send({ exit: 0 });
  } catch (err) {
    send({ out: { failure: err instanceof ImportUsageError ? err.message : "The import failed unexpectedly; nothing was written." } });
    if (!(err instanceof ImportUsageError)) console.error(err);
    send({ exit: 1 });
  }
  // PostgreSQL: the pool would keep the thread alive (SQLite has none to close).
  const { closeDal } = await import("../app/dal.server");
  await closeDal();
  port.close();
}
