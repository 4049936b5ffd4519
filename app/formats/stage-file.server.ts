/**
 * The staging file: a scratch SQLite database attached as `stage`, with empty
 * copies of the tables an import writes, where the writer puts the checked
 * rows before commitStage copies them into the database.
 */
import fs from "node:fs";
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
