/**
 * Guards for files the app opens on someone's say-so.
 *
 * SQLite's locks are POSIX advisory locks, which belong to the process and
 * are released when the process closes ANY descriptor on the file. So a
 * process that has the database open must never open the database file (or
 * its -wal / -shm companions) a second time — not even to read a few bytes:
 * closing that descriptor drops the connection's locks, and the next process
 * that opens the database believes it is alone, checkpoints and deletes the
 * WAL under the live connection (acknowledged writes are lost).
 *
 * These checks use stat() only: stat opens no descriptor.
 */
import fs from "node:fs";
import path from "node:path";
import { databasePathFromEnv } from "../db/client";

const SQLITE_COMPANIONS = ["", "-wal", "-shm", "-journal"];

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * True when `file` is the database named by DATABASE_URL (or `databaseFile`),
 * one of its companions, or any SQLite database in WAL mode (a "-wal" or
 * "-shm" file beside it).
 */
export function isDatabaseFile(file: string, databaseFile: string = databasePathFromEnv()): boolean {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return false;
  }
  if (databaseFile && databaseFile !== ":memory:") {
    const db = path.resolve(databaseFile);
    for (const suffix of SQLITE_COMPANIONS) {
      try {
        if (sameFile(st, fs.statSync(db + suffix))) return true;
      } catch {
        /* no such companion */
      }
    }
  }
  const resolved = path.resolve(file);
  if (/-(wal|shm|journal)$/.test(resolved)) return true;
  return fs.existsSync(resolved + "-wal") || fs.existsSync(resolved + "-shm");
}

export class UnsafeFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeFileError";
  }
}

/** Throws (with a message that names the file, never its content) when `file` is a database file. */
export function assertNotDatabaseFile(file: string, databaseFile?: string): void {
  if (isDatabaseFile(file, databaseFile))
    throw new UnsafeFileError(`${path.basename(file)} is a database file; Concord does not read it as input`);
}

/**
 * Reads a small JSON file given by a command-line user (a run config, a
 * provider's settings): refuses the database, limits the size, and reports a
 * parse error by position only — the file's text is never echoed.
 */
export function readJsonFile(file: string, opts: { maxBytes?: number; databaseFile?: string } = {}): unknown {
  const maxBytes = opts.maxBytes ?? 5 * 1024 * 1024;
  assertNotDatabaseFile(file, opts.databaseFile);
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new UnsafeFileError(`${file}: no such file`);
  }
  if (!st.isFile()) throw new UnsafeFileError(`${file}: not a regular file`);
  if (st.size > maxBytes) throw new UnsafeFileError(`${file}: too large (${st.size} bytes; at most ${maxBytes})`);
  return parseJsonQuietly(fs.readFileSync(file, "utf8"), file);
}

/** JSON.parse whose error names where the text stops being JSON, without quoting the text (Node's own message quotes it). */
export function parseJsonQuietly(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const m = /position (\d+)/.exec(String((err as Error).message));
    throw new UnsafeFileError(`${what}: not valid JSON${m ? ` (at character ${Number(m[1]) + 1})` : ""}`);
  }
}
