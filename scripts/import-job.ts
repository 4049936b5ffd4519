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
 * own upload path, never a path a user typed), then the job's folder (the
 * upload's). Output: JSON lines on stdout, {"progress": {...}} while the file
 * is read, then {"summary": {...}} or {"failure": "message"}. The database is
 * DATABASE_URL, as for every command.
 *
 * The job does not outlive its server. Its stdin is a pipe from the server,
 * which never writes to it: end of file there, a parent process that is no
 * longer the one that started it, a broken stdout, or SIGTERM (the upload
 * discarded) all mean "stop". The check stops at its next progress report;
 * the write (SQLite) stops before its next chunk or before the final
 * transaction and deletes the rows it had copied (in short chunks, as a
 * failed import does), so nothing of the file becomes visible; on PostgreSQL
 * the write is one transaction, rolled back when the process ends. Then the
 * job's folder is removed and the process exits with 1. A stop that comes
 * while the final transaction commits comes too late: the import is then
 * whole.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { ImportOptions } from "../app/formats/import.server";
import type { CommitStats } from "../app/formats/stage.server";

type Options = Omit<ImportOptions, "databaseFile" | "onProgress">;
type ToMain = { out: unknown } | { commit: string; databaseFile: string } | { exit: number };
type ToWorker = { stats: CommitStats } | { error: string };

/** Thrown on the check's thread when the job was told to stop. */
class JobStopped extends Error {}

/** How long the check's thread has to stop by itself before it is terminated (a progress report comes every ~100 ms). */
const CHECK_STOP_GRACE_MS = 5_000;

/** The parent process's ID as the kernel has it now (Linux: /proc; elsewhere whether the first parent still exists). */
function parentNow(first: number): number {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; the fields after the last ")" do not.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    try {
      process.kill(first, 0);
      return first;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "ESRCH" ? 0 : first;
    }
  }
}

/** Only an upload's folder (a 32-hex-digit token under concord-uploads) is ever removed, whatever argument was passed. */
function isUploadFolder(dir: string | undefined): dir is string {
  return !!dir && /^[0-9a-f]{32}$/.test(path.basename(dir)) && path.basename(path.dirname(dir)) === "concord-uploads";
}

if (isMainThread) {
  const opts = JSON.parse(process.argv[2] ?? "{}") as Options;
  /** The job's folder: given when a server started this job; then the job watches the server. */
  const jobDir = process.argv[3];
  let conn: Database.Database | undefined;
  /** Set when the server has gone (or the job was told to stop); read by the check's thread between reads. */
  const stopFlag = new Int32Array(new SharedArrayBuffer(4));
  const abort = new AbortController();
  let stopping = false;
  let committing = false;
  let workerGone = false;
  /** The phase the check last reported: "writing" once the file is checked and the write begins. */
  let phase = "";
  const write = (o: unknown) => {
    if (!stopping) process.stdout.write(JSON.stringify(o) + "\n");
  };
  // The check's thread runs this same module. From the sources (tsx), a worker does not inherit tsx's loader
  // (Node 20): it registers it, then loads this file; from the bundle (scripts/cli.mjs import-job) it loads the bundle.
  const fromSources = import.meta.url.endsWith(".ts");
  const data = { opts, stopFlag };
  const worker = fromSources
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}); });`,
        { eval: true, workerData: data },
      )
    : new Worker(new URL(import.meta.url), { workerData: data });

  /** Once the check's thread and any write are over: removes the job's folder and exits. */
  const leaveNothing = () => {
    if (!stopping || committing || !workerGone) return;
    conn?.close();
    conn = undefined;
    if (isUploadFolder(jobDir)) fs.rmSync(jobDir, { recursive: true, force: true });
    process.exit(1);
  };
  const stop = () => {
    if (stopping || (workerGone && !committing)) return;
    stopping = true;
    Atomics.store(stopFlag, 0, 1);
    abort.abort(new Error("the import was stopped (its server has gone)"));
    // Once the write has begun the check is over: its thread only waits for this thread's write (SQLite), or runs the
    // write's one transaction itself (PostgreSQL), which ending the thread and the process rolls back. Before, the
    // check stops at its next progress report, and one that does not is terminated.
    if (committing || phase === "writing") void worker.terminate();
    else setTimeout(() => void worker.terminate(), CHECK_STOP_GRACE_MS).unref();
  };
  let unwatch = () => {};
  if (jobDir !== undefined) {
    const first = process.ppid;
    process.stdin.on("end", stop);
    process.stdin.on("close", stop);
    process.stdin.on("error", stop);
    process.stdin.resume();
    const poll = setInterval(() => {
      if (parentNow(first) !== first) stop();
    }, 500);
    poll.unref();
    process.on("SIGTERM", stop);
    unwatch = () => {
      clearInterval(poll);
      process.stdin.removeListener("close", stop);
      process.stdin.removeListener("end", stop);
      process.removeListener("SIGTERM", stop);
      process.stdin.destroy();
    };
  }
  // Nobody reads what is written after the server has gone.
  process.stdout.on("error", stop);
  process.stderr.on("error", () => {});

  worker.on("message", async (m: ToMain) => {
    if ("out" in m) {
      phase = (m.out as { progress?: { phase?: string } }).progress?.phase ?? phase;
      write(m.out);
    } else if ("exit" in m) process.exitCode = m.exit;
    else {
      if (stopping) {
        worker.postMessage({ error: "the import was stopped" } satisfies ToWorker);
        return;
      }
      // The write, here at normal priority, on a connection of its own that attaches the stage the check filled.
      let reply: ToWorker;
      committing = true;
      try {
        // Loaded when needed: the thread starts at once, and the check's thread loads what it needs.
        const { openDatabase } = await import("../db/client");
        const { attachFilledStage, commitStage } = await import("../app/formats/stage.server");
        conn ??= openDatabase(m.databaseFile).$client;
        attachFilledStage(conn, m.commit);
        try {
          reply = { stats: await commitStage(conn, { signal: abort.signal }) };
        } finally {
          conn.exec("detach database stage");
        }
      } catch (err) {
        reply = { error: (err as Error).message };
      } finally {
        committing = false;
      }
      if (stopping) leaveNothing();
      else worker.postMessage(reply);
    }
  });
  worker.on("error", (err) => {
    if (stopping) return;
    write({ failure: "The import failed unexpectedly; nothing was written." });
    console.error(err);
    process.exitCode = 1;
  });
  worker.on("exit", () => {
    workerGone = true;
    if (stopping) return leaveNothing();
    unwatch();
    conn?.close();
  });
} else {
  const { opts, stopFlag } = workerData as { opts: Options; stopFlag: Int32Array };
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
    const summary = await runImport({
      ...opts,
      databaseFile,
      onProgress: (p) => {
        // Stopping here unwinds the check like any failure: its stage and, on PostgreSQL, its mirror are removed.
        if (Atomics.load(stopFlag, 0) === 1) throw new JobStopped("the import was stopped");
        send({ out: { progress: p } });
      },
      commitWith,
    });
    // Problems and warnings beyond what a page shows stay out of the pipe.
    send({ out: { summary: { ...summary, errors: summary.errors.slice(0, 200), warnings: summary.warnings.slice(0, 200) } } });
    send({ exit: 0 });
  } catch (err) {
    send({ out: { failure: err instanceof ImportUsageError ? err.message : "The import failed unexpectedly; nothing was written." } });
    if (!(err instanceof ImportUsageError) && !(err instanceof JobStopped)) console.error(err);
    send({ exit: 1 });
  }
  // PostgreSQL: the pool would keep the thread alive (SQLite has none to close).
  const { closeDal } = await import("../app/dal.server");
  await closeDal();
  port.close();
}
