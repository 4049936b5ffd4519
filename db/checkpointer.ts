/**
 * WAL checkpoints off the event loop.
 *
 * In WAL mode SQLite appends each committed page to the -wal file, and by
 * default the connection whose commit takes the log past 1,000 pages copies
 * the log back into the database file (a checkpoint, with an fsync) inside
 * that commit. better-sqlite3 is synchronous, so that copy runs on the event
 * loop: measured on this workload's commits (about 30 pages each), a commit
 * costs ~17 µs per page without checkpoints and ~35 µs with them, half of the
 * run worker's time in SQLite, and every reply in flight waits meanwhile.
 *
 * A checkpointer is a worker thread with its own connection to the same file
 * that runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`: PASSIVE
 * never waits for readers or writers (it copies what it can and returns), so
 * it takes no lock a writer needs. While it runs, the owning connection's own
 * automatic checkpoint is raised to BACKSTOP_PAGES — not turned off, so the
 * log stays bounded even if the thread lags or dies. The thread is unref'd:
 * it never keeps a process alive, and `stop()` (or closing the process) ends it.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { Db } from "./client";

/** The owner's automatic checkpoint while a checkpointer runs (pages of the page size; 4 KB pages: 64 MB). */
export const BACKSTOP_PAGES = 16_000;
/** SQLite's default automatic checkpoint, put back by stop(). */
const DEFAULT_AUTOCHECKPOINT = 1000;

/**
 * The thread's code, evaluated as CommonJS (so it needs no separate file in the server bundle):
 * it opens the file given by its owner, never a path from a request.
 */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = 0");
let frames = 0;
const tick = () => {
  try {
    const r = db.pragma("wal_checkpoint(PASSIVE)")[0];
    if (r) frames += r.checkpointed > 0 ? r.checkpointed : 0;
  } catch {
    // SQLITE_BUSY (another checkpoint is running) or the file is being closed: try at the next tick.
  }
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m === "stop") {
    clearInterval(timer);
    tick();
    db.close();
    parentPort.postMessage({ frames });
    parentPort.close();
  } else if (m === "count") parentPort.postMessage({ frames });
});
`;

export type Checkpointer = {
  /** Pages copied back into the database file so far. */
  frames(): Promise<number>;
  /** Ends the thread (after one last checkpoint) and puts the owner's automatic checkpoint back. */
  stop(): Promise<void>;
};

const running = new WeakMap<Db["$client"], { users: number; cp: Checkpointer }>();

/**
 * Starts (or shares) the checkpointer of `db`'s file. Returns null for an
 * in-memory database or one not in WAL mode (nothing to checkpoint).
 * Each start needs its own stop; the thread ends with the last one.
 */
export function startCheckpointer(db: Db, opts: { intervalMs?: number } = {}): Checkpointer | null {
  const conn = db.$client;
  const file = conn.name;
  if (!file || file === ":memory:" || conn.memory) return null;
  if (String(conn.pragma("journal_mode", { simple: true })).toLowerCase() !== "wal") return null;
  const shared = running.get(conn);
  if (shared) {
    shared.users++;
    return releaseOf(conn, shared.cp);
  }
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const thread = new Worker(THREAD, {
    eval: true,
    workerData: { driver, file: path.resolve(file), intervalMs: opts.intervalMs ?? 100 },
  });
  thread.unref();
  // A failing thread (the file went away) leaves the backstop to bound the log.
  thread.on("error", () => undefined);
  conn.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  let stopped: Promise<void> | null = null;
  const ask = (msg: "count" | "stop") =>
    new Promise<number>((ok) => {
      const done = (v: number) => {
        thread.off("message", onMessage);
        thread.off("exit", onExit);
        ok(v);
      };
      const onMessage = (m: { frames: number }) => done(m.frames);
      const onExit = () => done(0);
      thread.on("message", onMessage);
      thread.once("exit", onExit);
      thread.postMessage(msg);
    });
  const cp: Checkpointer = {
    frames: () => ask("count"),
    stop: () =>
      (stopped ??= (async () => {
        running.delete(conn);
        if (conn.open) conn.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
        await ask("stop");
        await thread.terminate();
      })()),
  };
  running.set(conn, { users: 1, cp });
  return releaseOf(conn, cp);
}

/** A handle whose stop() ends the shared thread only when its last user stops. */
function releaseOf(conn: Db["$client"], cp: Checkpointer): Checkpointer {
  let released = false;
  return {
    frames: () => cp.frames(),
    stop: async () => {
      if (released) return;
      released = true;
      const s = running.get(conn);
      if (s && s.cp === cp && --s.users > 0) return;
      await cp.stop();
    },
  };
}
