/**
 * Test-only preload (`node --import ./tests/support/fs-watch.mjs`, or in
 * NODE_OPTIONS so child processes get it too). Does nothing unless
 * CONCORD_FS_WATCH_LOG names a log file.
 *
 * It wraps the node:fs functions that open a file (open, openSync, readFile,
 * readFileSync, createReadStream, createWriteStream, writeFileSync,
 * appendFileSync, and fs.promises.open/readFile/writeFile/appendFile) and
 * appends one JSON line to the log for every call whose path is one of the
 * watched files: the database named by DATABASE_URL with its -wal, -shm and
 * -journal companions, plus the files listed in CONCORD_FS_WATCH_EXTRA (a JSON
 * array; tests use it for a control file that is expected to be opened).
 * A path matches when its real path (symbolic links and ".." resolved) equals
 * a watched file's, or when both exist and are the same inode (a hard link).
 *
 * better-sqlite3 opens the database in native code, not through node:fs, so
 * the database connection itself never appears in the log: any line naming
 * the database is a second descriptor opened on it by JavaScript.
 *
 * Node 20 also runs a NODE_OPTIONS preload in the module-hooks thread that
 * `--import tsx` starts, so each line names its thread (`thread`, 0 for the
 * main one): that thread sometimes logs a `loaded` line of its own.
 */
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { threadId } from "node:worker_threads";

const LOG = process.env.CONCORD_FS_WATCH_LOG;

if (LOG) {
  const original = {
    appendFileSync: fs.appendFileSync,
    realpathSync: fs.realpathSync.native,
    statSync: fs.statSync,
  };
  const cwd = process.cwd();
  const db = process.env.DATABASE_URL ? path.resolve(cwd, process.env.DATABASE_URL) : null;
  /** [label, absolute path] of every watched file. */
  const watched = [];
  if (db) for (const suffix of ["", "-wal", "-shm", "-journal"]) watched.push([`database${suffix}`, db + suffix]);
  for (const extra of JSON.parse(process.env.CONCORD_FS_WATCH_EXTRA ?? "[]"))
    watched.push([`extra:${path.basename(extra)}`, path.resolve(cwd, extra)]);

  /** The real path of `p`; for a file that does not exist (yet), the real path of its folder plus its name. */
  const real = (p) => {
    try {
      return original.realpathSync(p);
    } catch {
      try {
        return path.join(original.realpathSync(path.dirname(p)), path.basename(p));
      } catch {
        return p;
      }
    }
  };
  const inode = (p) => {
    try {
      const st = original.statSync(p);
      return `${st.dev}:${st.ino}`;
    } catch {
      return null;
    }
  };
  const asPath = (p) => {
    if (typeof p === "string") return p;
    if (p instanceof URL) return p.protocol === "file:" ? fileURLToPath(p) : null;
    if (Buffer.isBuffer(p)) return p.toString("utf8");
    return null; // a file descriptor or a FileHandle: opened earlier, by a call logged then
  };

  const record = (fn, p) => {
    const given = asPath(p);
    if (given === null) return;
    const abs = path.resolve(given);
    const realAbs = real(abs);
    const node = inode(abs);
    for (const [label, file] of watched) {
      if (real(file) === realAbs || (node !== null && node === inode(file))) {
        const stack = (new Error().stack ?? "")
          .split("\n")
          .slice(3, 9)
          .map((l) => l.trim());
        const line = JSON.stringify({ pid: process.pid, thread: threadId, fn, path: given, watched: label, stack });
        original.appendFileSync(LOG, line + "\n");
        return;
      }
    }
  };

  const wrap = (target, name, fnName = name) => {
    const inner = target[name];
    if (typeof inner !== "function") return;
    const wrapped = function (p, ...rest) {
      try {
        record(fnName, p);
      } catch {
        /* the watch never breaks the program it watches */
      }
      return inner.call(this, p, ...rest);
    };
    Object.defineProperty(wrapped, "name", { value: inner.name });
    target[name] = wrapped;
  };

  for (const name of [
    "open",
    "openSync",
    "readFile",
    "readFileSync",
    "createReadStream",
    "createWriteStream",
    "writeFileSync",
    "appendFileSync",
  ])
    wrap(fs, name);
  for (const name of ["open", "readFile", "writeFile", "appendFile"]) wrap(fs.promises, name, `promises.${name}`);
  // `import { readFileSync } from "node:fs"` sees the wrapped functions too.
  syncBuiltinESMExports();
  original.appendFileSync(
    LOG,
    JSON.stringify({ pid: process.pid, thread: threadId, loaded: true, watched: watched.map(([label]) => label) }) + "\n",
  );
}
