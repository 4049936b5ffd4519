/**
 * The staging file: a scratch SQLite database attached as `stage`, with empty
 * copies of the tables an import writes, where the writer puts the checked
 * rows before commitStage copies them into the database.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";

/** First ID of staged rows (well inside 2^53, far above any real table). */
export const STAGE_BASE = 1e15;

/** The tables an import writes, parents before children. */
export const STAGED_TABLES = [
  "projects",
  "datasets",
  "items",
  "checklist_items",
  "users",
  "responses",
  "references",
  "judges",
  "verdicts",
  "tasks",
  "units",
  "assignments",
  "annotations",
] as const;

/**
 * Attaches a fresh scratch file as `stage` with empty copies of the tables
 * (no triggers, no foreign keys enforced: the connection's foreign key
 * checks are turned off while staging).
 */
export function attachStage(conn: Database.Database, file: string): void {
  fs.rmSync(file, { force: true });
  conn.prepare("attach database ? as stage").run(file);
  conn.pragma("stage.journal_mode = OFF");
  conn.pragma("stage.synchronous = OFF");
  // The staged rows stay in memory up to this size, so the copy under the lock reads no disk (a constant bound, not the file's size).
  conn.pragma("stage.cache_size = -65536");
  const ddl = conn.prepare("select sql from main.sqlite_master where type = 'table' and name = ?");
  for (const t of STAGED_TABLES) {
    const row = ddl.get(t) as { sql: string } | undefined;
    if (!row) throw new Error(`table ${t} is missing`);
    conn.exec(row.sql.replace(/^CREATE TABLE\s+(`[^`]+`|"[^"]+"|\w+)/i, (_m, name) => `CREATE TABLE stage.${name}`));
  }
  const seq = conn.prepare("insert into stage.sqlite_sequence (name, seq) values (?, ?)");
  for (const t of STAGED_TABLES) seq.run(t, STAGE_BASE - 1);
  // What the writer looks up in staged rows; the response keys seen in the file (not copied).
  conn.exec(`
    create table stage.response_keys (item_id integer not null, source_key text not null, id integer not null, primary key (item_id, source_key)) without rowid;
    create index stage.s_items_dataset on items (dataset_id, source_id);
    create index stage.s_checklist_item on checklist_items (item_id, position);
    create index stage.s_responses_key on responses (item_id, source_key);
    create index stage.s_responses_model on responses (item_id, model);
    create index stage.s_references_item on "references" (item_id);
    create index stage.s_judges_name on judges (project_id, name);
    create index stage.s_users_email on users (email);
  `);
}

/** Attaches a stage that another connection filled (the commit on its own thread: scripts/import-job.ts). */
export function attachFilledStage(conn: Database.Database, file: string): void {
  if (!fs.existsSync(file)) throw new Error("the staged rows are missing");
  conn.prepare("attach database ? as stage").run(file);
  conn.pragma("stage.journal_mode = OFF");
  conn.pragma("stage.cache_size = -65536");
}

export function detachStage(conn: Database.Database, file: string): void {
  try {
    if (conn.inTransaction) conn.exec("rollback");
    conn.exec("detach database stage");
  } catch {
    // already detached
  }
  fs.rmSync(file, { force: true });
}

/** A stage file this process names in the OS temp folder: `concord-stage-<pid>-<16 hex>.db`. */
const STAGE_NAME = /^concord-stage-(\d+)-[0-9a-f]{16}\.db$/;
/** The name stage files had before it held the process id: whose they are is unknown, so only a day's age tells. */
const LEGACY_STAGE_NAME = /^concord-stage-[0-9a-f]{16}\.db$/;
const LEGACY_AGE_MS = 86_400_000;

/** Where an import stages its rows when its caller names no file (the CLI): the OS temp folder, named after this process. */
export function newStageFilePath(): string {
  return path.join(os.tmpdir(), `concord-stage-${process.pid}-${crypto.randomBytes(8).toString("hex")}.db`);
}

/**
 * Whether no process with this id runs on this machine. A zombie counts as gone: it has ended and holds nothing, and
 * an orphan's zombie may never be reaped (its new parent, a container's first process, may not wait for it).
 */
export function processGone(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    // Linux: "pid (comm) state …"; the name may hold spaces and parentheses, the fields after the last ")" do not.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false; // no /proc here: the process exists
  }
}

/**
 * Removes the stage files that imports killed midway (kill -9, a crash) left in the OS temp folder: files named as
 * newStageFilePath names them whose process is gone. A stage holds a copy of every row the import checked, so an
 * import of a large file killed in its commit would otherwise leave hundreds of megabytes behind for good. Run when
 * the server starts and before each import. Only names this pattern matches are touched (read from the folder,
 * never given by a user); a symbolic link with such a name is removed, not what it points to. Files named as before
 * the process id was part of the name go once untouched for a day. Returns how many.
 */
export function removeOrphanStageFiles(dir: string = os.tmpdir()): number {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    const m = STAGE_NAME.exec(name);
    const orphan = m ? processGone(Number(m[1])) : LEGACY_STAGE_NAME.test(name) && untouchedFor(path.join(dir, name), LEGACY_AGE_MS);
    if (!orphan) continue;
    try {
      fs.rmSync(path.join(dir, name), { force: true });
      n++;
    } catch {
      // another process removed it first, or it is not ours to remove: left alone
    }
  }
  return n;
}

/** Whether the file (a link itself, not its target) was last modified more than `ms` ago. */
function untouchedFor(file: string, ms: number): boolean {
  try {
    return Date.now() - fs.lstatSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}
