/**
 * Staging for imports: the checked rows are first written to a scratch SQLite
 * file attached as `stage` (its own write lock, not the database's), and only
 * then copied into the database in one short transaction.
 *
 * Staged rows get IDs from STAGE_BASE upwards (the stage tables'
 * AUTOINCREMENT counters start there), so a staged ID never equals a live
 * one and the writer can look rows up in `main` and `stage` alike. The copy
 * (`commitStage`) renumbers them after the database's highest IDs, read
 * under the write lock: one INSERT … SELECT per table, foreign keys to staged
 * rows renumbered the same way, foreign keys to live rows kept. Nothing in
 * the copy awaits or reads the file; foreign keys and unique indexes of the
 * database are checked by SQLite as the rows go in, so rows that vanished or
 * appeared since the check make the whole copy roll back.
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
 * checks are turned off while staging and back on for the copy).
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

export function detachStage(conn: Database.Database, file: string): void {
  try {
    if (conn.inTransaction) conn.exec("rollback");
    conn.exec("detach database stage");
  } catch {
    // already detached
  }
  fs.rmSync(file, { force: true });
}

export type CommitStats = { rows: number; lockMs: number };

/**
 * Copies the staged rows into the database in one transaction. Synchronous:
 * the write lock is taken and released within this call, never across an
 * await. Throws (after rolling back) if SQLite refuses a row.
 */
export function commitStage(conn: Database.Database): CommitStats {
  // Column lists and foreign keys, read before the lock.
  const plans = STAGED_TABLES.map((t) => {
    const cols = (conn.prepare(`select name from pragma_table_info(?, 'main')`).all(t) as { name: string }[]).map((c) => c.name);
    const fks = new Map(
      (conn.prepare(`select "from", "table" from pragma_foreign_key_list(?, 'main')`).all(t) as { from: string; table: string }[]).map(
        (f) => [f.from, f.table],
      ),
    );
    return { t, cols, fks };
  });
  conn.pragma("foreign_keys = ON");
  // A page cache large enough for the indexes the copy touches: fewer page reads while the lock is held.
  conn.pragma("cache_size = -131072");
  // Warm it before the lock: read the indexes the inserts will descend.
  for (const { t } of plans) {
    if (!conn.prepare(`select 1 from stage."${t}" limit 1`).get()) continue;
    for (const idx of conn.prepare(`select name, partial from pragma_index_list(?, 'main')`).all(t) as {
      name: string;
      partial: number;
    }[]) {
      if (!idx.partial) conn.prepare(`select count(*) from main."${t}" indexed by "${idx.name}"`).get();
    }
  }
  const t0 = performance.now();
  conn.exec("begin immediate");
  let rows = 0;
  try {
    const base = new Map<string, number>();
    const seq = conn.prepare("select seq from main.sqlite_sequence where name = ?");
    for (const { t } of plans) {
      const max = (conn.prepare(`select coalesce(max(id), 0) as m from main."${t}"`).get() as { m: number }).m;
      const s = (seq.get(t) as { seq: number } | undefined)?.seq ?? 0;
      base.set(t, Math.max(max, s));
    }
    for (const { t, cols, fks } of plans) {
      const exprs = cols.map((c) => {
        if (c === "id") return `id - ${STAGE_BASE - 1} + ${base.get(t)}`;
        const ref = fks.get(c);
        if (ref && base.has(ref))
          return `case when "${c}" >= ${STAGE_BASE} then "${c}" - ${STAGE_BASE - 1} + ${base.get(ref)} else "${c}" end`;
        return `"${c}"`;
      });
      const r = conn
        .prepare(
          `insert into main."${t}" (${cols.map((c) => `"${c}"`).join(", ")}) select ${exprs.join(", ")} from stage."${t}" order by id`,
        )
        .run();
      rows += r.changes;
    }
    conn.exec("commit");
  } catch (err) {
    if (conn.inTransaction) conn.exec("rollback");
    throw err;
  }
  return { rows, lockMs: performance.now() - t0 };
}
