/**
 * The one database client. Opens the SQLite file named by DATABASE_URL
 * (default data/concord.db), turns on WAL and foreign keys, and applies the
 * committed drizzle-kit migrations, so an older database is upgraded in place.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { repoPath } from "./repo-path";
import * as schema from "./schema";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** db/migrations, found from this file (db/), the server build (build/) or a command's bundle (repoPath). */
export const MIGRATIONS_DIR = repoPath("db/migrations", import.meta.url);

/** How long a write waits for the lock before it fails with SQLITE_BUSY (ms): the busy timeout, and writeWithoutBusyWait's bound. */
export const BUSY_TIMEOUT_MS = 5000;

export class DatabaseOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseOpenError";
  }
}

export function databasePathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.DATABASE_URL?.trim() || "data/concord.db";
  return url.startsWith("file:") ? url.slice("file:".length) : url;
}

/**
 * The folder that holds the installation's generated secrets (the session
 * secret, the provider-key encryption key): beside a SQLite file; for a
 * PostgreSQL URL, CONCORD_STATE_DIR (default "data") — a URL is never a path.
 */
export function stateDirFor(database: string, env: NodeJS.ProcessEnv = process.env): string {
  if (/^postgres(ql)?:\/\//i.test(database.trim())) return path.resolve(env.CONCORD_STATE_DIR?.trim() || "data");
  return path.dirname(path.resolve(database));
}

/**
 * Opens (creating if needed) and migrates a database file.
 * Throws DatabaseOpenError with a one-line message if the file is not SQLite.
 */
export function openDatabase(file: string, opts: { migrationsFolder?: string } = {}): Db {
  // A PostgreSQL URL is never opened as a file (it would make a SQLite database in a folder named after the URL).
  if (/^postgres(ql)?:\/\//i.test(file.trim()))
    throw new DatabaseOpenError("This part of Concord does not run on PostgreSQL yet (DATABASE_URL is a PostgreSQL URL).");
  if (file !== ":memory:") {
    const dir = path.dirname(path.resolve(file));
    fs.mkdirSync(dir, { recursive: true });
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
      throw new DatabaseOpenError(`DATABASE_URL points at a directory, not a SQLite file: ${file}`);
    }
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.pragma("synchronous = NORMAL");
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new DatabaseOpenError(`DATABASE_URL does not point at a SQLite database: ${file}`);
    }
    throw new DatabaseOpenError(`Cannot open database ${file}: ${(err as Error).message}`);
  }
  const db = drizzle(sqlite, { schema }) as Db;
  migrate(db, { migrationsFolder: opts.migrationsFolder ?? MIGRATIONS_DIR });
  return db;
}

/**
 * The waiting-writer mark: a file beside the database (`<file>-wait`, like
 * SQLite's own `-wal` and `-shm`) whose modification time says when a writer
 * last found the write lock held. A writer that waits without sleeping in
 * SQLite's busy handler (writeWithoutBusyWait, the run workers' turns) touches
 * it on each SQLITE_BUSY; an import that copies in chunks reads it after each
 * chunk and leaves the lock free for longer only when someone waited during
 * that chunk (app/formats/stage.server.ts). It holds no data; removing it is
 * harmless. The path is the database's own, never one a user supplied.
 */
export function waitMarkPath(conn: Database.Database): string | null {
  const file = conn.name;
  if (!file || file === ":memory:" || conn.memory) return null;
  return path.resolve(file.startsWith("file:") ? file.slice("file:".length) : file) + "-wait";
}

let lastMark = 0;

/** Records that a writer of this database found its write lock held (at most once per ms per process). */
export function markWriteWaiter(conn: Database.Database): void {
  const now = Date.now();
  if (now - lastMark < 1) return;
  lastMark = now;
  const p = waitMarkPath(conn);
  if (!p) return;
  const t = now / 1000;
  try {
    fs.utimesSync(p, t, t);
  } catch {
    try {
      fs.writeFileSync(p, "");
      fs.utimesSync(p, t, t);
    } catch {
      // advisory only: an import that cannot see the mark leaves its shortest gap
    }
  }
}

/** When a writer of this database last found its write lock held (epoch ms; 0 if never). */
export function lastWriteWaiter(conn: Database.Database): number {
  const p = waitMarkPath(conn);
  if (!p) return 0;
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

/** After SQLITE_BUSY, how soon writeWithoutBusyWait tries the write again (ms). */
export const BUSY_RETRY_MS = 2;

export const isBusyError = (err: unknown): boolean =>
  (err as { code?: string } | null)?.code === "SQLITE_BUSY" || /SQLITE_BUSY|database is locked/i.test(String(err));

/**
 * Runs `fn` — one synchronous write transaction on `db` — without ever
 * sleeping in SQLite's busy handler. better-sqlite3 is synchronous, so while a
 * statement waits out the busy timeout (another process, an import, holds the
 * write lock) the whole event loop waits with it: every other request of the
 * server, reads included, stalls behind one submit. Here the busy timeout is
 * 0 for the call: a held lock makes `fn` fail at once with SQLITE_BUSY
 * (`BEGIN IMMEDIATE` takes the lock first, so nothing was done), and it is
 * tried again BUSY_RETRY_MS later on a timer, the event loop free meanwhile,
 * until `timeoutMs` (the busy timeout, BUSY_TIMEOUT_MS) have passed; then the
 * last SQLITE_BUSY is thrown, as the busy timeout would have. Other errors
 * are thrown at once. `fn` must not await: the transaction begins and ends in
 * one synchronous stretch.
 *
 * The pragma is run anew each time, not as a prepared statement: SQLite
 * applies `PRAGMA busy_timeout = N` when the statement is prepared, and
 * running a prepared one again changes nothing.
 */
export async function writeWithoutBusyWait<T>(db: Db, fn: () => T, timeoutMs = BUSY_TIMEOUT_MS): Promise<T> {
  const conn = db.$client;
  const before = Number(conn.pragma("busy_timeout", { simple: true })) || 0;
  const start = performance.now();
  for (;;) {
    conn.pragma("busy_timeout = 0");
    try {
      return fn();
    } catch (err) {
      if (!isBusyError(err) || conn.inTransaction || performance.now() - start >= timeoutMs) throw err;
      markWriteWaiter(conn);
    } finally {
      conn.pragma(`busy_timeout = ${before}`);
    }
    await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
  }
}

let singleton: Db | undefined;

/** The process-wide client, opened on first use from DATABASE_URL. */
export function getDb(): Db {
  if (!singleton) {
    singleton = openDatabase(databasePathFromEnv());
  }
  return singleton;
}

/** Closes the process-wide client (tests and graceful shutdown). */
export function closeDb(): void {
  singleton?.$client.close();
  singleton = undefined;
}

export { schema };
