/**
 * The PostgreSQL schema is the SQLite schema (issue 17: "every constraint that
 * SQLite has exist on PostgreSQL too"): both migration sets are applied — SQLite's
 * to a temp file, PostgreSQL's to a throw-away cluster — and the two catalogs
 * are read back and compared: tables, columns (name, type family, NOT NULL,
 * default or not), primary keys, unique and partial indexes, foreign keys with
 * their ON DELETE action, and the report-freshness triggers. Then the same
 * writes on both must move the freshness counters the same way.
 */
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { openPgDatabase } from "../../db/client-pg";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import { tempDir } from "../support/db";

const NO_PG = pgSkipReason();

let testPg: TestPg;
let pool: pg.Pool;
let sqlite: Database.Database;

beforeAll(async () => {
  if (NO_PG) return;
  testPg = await startTestPg();
  const db = await openPgDatabase(testPg.url);
  pool = db.$client;
  sqlite = openDatabase(path.join(tempDir("concord-pg-schema-"), "schema.db")).$client;
}, 120_000);

afterAll(async () => {
  await pool?.end();
  sqlite?.close();
  testPg?.stop();
});

type Column = { name: string; type: string; notNull: boolean; hasDefault: boolean };
type Index = { name: string; columns: string[]; unique: boolean; partial: boolean };
type ForeignKey = { columns: string[]; table: string; to: string[]; onDelete: string };
type Table = { columns: Column[]; primaryKey: string[]; indexes: Index[]; foreignKeys: ForeignKey[] };

// SQLite declared types and PostgreSQL types, by the kind of value they hold. Booleans and JSON are
// INTEGER / TEXT on SQLite (drizzle's modes), so the family of those columns is read from PostgreSQL:
// a bigint column must be an INTEGER on SQLite, a boolean one an INTEGER too, text and jsonb are TEXT.
const SQLITE_FAMILY: Record<string, string> = { integer: "integer", text: "text", real: "real" };
const PG_FAMILY: Record<string, string> = {
  bigint: "integer",
  boolean: "integer",
  text: "text",
  jsonb: "text",
  "double precision": "real",
};

const IGNORED = new Set(["__drizzle_migrations", "sqlite_sequence"]);

function sqliteCatalog(db: Database.Database): Record<string, Table> {
  const tables = (
    db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as { name: string }[]
  )
    .map((t) => t.name)
    .filter((t) => !IGNORED.has(t));
  return Object.fromEntries(
    tables.map((t) => {
      const autoincrement = /AUTOINCREMENT/i.test(
        (db.prepare("select sql from sqlite_master where name = ?").get(t) as { sql: string }).sql,
      );
      const cols = db.prepare("select * from pragma_table_info(?)").all(t) as {
        name: string;
        type: string;
        notnull: number;
        dflt_value: string | null;
        pk: number;
      }[];
      const indexes = (
        db.prepare("select * from pragma_index_list(?)").all(t) as { name: string; unique: number; origin: string; partial: number }[]
      )
        .filter((i) => i.origin === "c")
        .map((i) => ({
          name: i.name,
          columns: (db.prepare("select name from pragma_index_info(?) order by seqno").all(i.name) as { name: string }[]).map(
            (c) => c.name,
          ),
          unique: i.unique === 1,
          partial: i.partial === 1,
        }));
      const fkRows = db.prepare("select * from pragma_foreign_key_list(?)").all(t) as {
        id: number;
        table: string;
        from: string;
        to: string;
        on_delete: string;
      }[];
      const fks = new Map<number, ForeignKey>();
      for (const f of fkRows) {
        const fk = fks.get(f.id) ?? { columns: [], table: f.table, to: [], onDelete: f.on_delete.toLowerCase() };
        fk.columns.push(f.from);
        fk.to.push(f.to);
        fks.set(f.id, fk);
      }
      return [
        t,
        {
          columns: cols.map((c) => ({
            name: c.name,
            type: SQLITE_FAMILY[c.type.toLowerCase()] ?? c.type,
            // A primary key column is NOT NULL on PostgreSQL whatever it says on SQLite (an INTEGER PRIMARY KEY is the rowid).
            notNull: c.notnull === 1 || c.pk > 0,
            // An AUTOINCREMENT key takes the next id as PostgreSQL's identity column does.
            hasDefault: c.dflt_value !== null || (c.pk === 1 && autoincrement),
          })),
          primaryKey: cols
            .filter((c) => c.pk > 0)
            .sort((a, b) => a.pk - b.pk)
            .map((c) => c.name),
          indexes: indexes.sort((a, b) => a.name.localeCompare(b.name)),
          foreignKeys: [...fks.values()].sort((a, b) => a.columns.join().localeCompare(b.columns.join())),
        },
      ];
    }),
  );
}

async function pgCatalog(client: pg.Pool): Promise<Record<string, Table>> {
  const q = async <T>(text: string, values: unknown[] = []) => (await client.query(text, values)).rows as T[];
  const tables = (
    await q<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    )
  )
    .map((t) => t.table_name)
    .filter((t) => !IGNORED.has(t));
  const out: Record<string, Table> = {};
  for (const t of tables) {
    const cols = await q<{
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
      is_identity: string;
    }>(
      "select column_name, data_type, is_nullable, column_default, is_identity from information_schema.columns where table_schema = 'public' and table_name = $1 order by ordinal_position",
      [t],
    );
    const pk = await q<{ attname: string }>(
      `select a.attname from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
       where i.indrelid = $1::regclass and i.indisprimary order by array_position(i.indkey, a.attnum)`,
      [`"${t}"`],
    );
    const indexes = await q<{ name: string; unique: boolean; partial: boolean; columns: string[] }>(
      `select c.relname as name, i.indisunique as unique, i.indpred is not null as partial,
         array(select a.attname from unnest(i.indkey) with ordinality k(attnum, n) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum order by k.n)::text[] as columns
       from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = $1::regclass and not i.indisprimary`,
      [`"${t}"`],
    );
    const fks = await q<{ columns: string[]; table: string; to: string[]; on_delete: string }>(
      `select array(select a.attname from unnest(con.conkey) with ordinality k(attnum, n) join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum order by k.n)::text[] as columns,
         ref.relname as table,
         array(select a.attname from unnest(con.confkey) with ordinality k(attnum, n) join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum order by k.n)::text[] as to,
         case con.confdeltype when 'a' then 'no action' when 'r' then 'restrict' when 'c' then 'cascade' when 'n' then 'set null' when 'd' then 'set default' end as on_delete
       from pg_constraint con join pg_class ref on ref.oid = con.confrelid where con.conrelid = $1::regclass and con.contype = 'f'`,
      [`"${t}"`],
    );
    out[t] = {
      columns: cols.map((c) => ({
        name: c.column_name,
        type: PG_FAMILY[c.data_type] ?? c.data_type,
        notNull: c.is_nullable === "NO",
        hasDefault: c.column_default !== null || c.is_identity === "YES",
      })),
      primaryKey: pk.map((p) => p.attname),
      indexes: indexes.sort((a, b) => a.name.localeCompare(b.name)),
      foreignKeys: fks
        .map((f) => ({ columns: f.columns, table: f.table, to: f.to, onDelete: f.on_delete }))
        .sort((a, b) => a.columns.join().localeCompare(b.columns.join())),
    };
  }
  return out;
}

describe.skipIf(Boolean(NO_PG))("the PostgreSQL schema", () => {
  it("has every table, column, key, index (unique and partial) and foreign key that SQLite has, and nothing else", async () => {
    const lite = sqliteCatalog(sqlite);
    const post = await pgCatalog(pool);
    expect(Object.keys(post).sort()).toEqual(Object.keys(lite).sort());
    expect(Object.keys(lite).length).toBeGreaterThan(20);
    // Column order is not compared (SQLite appends a column added by a later migration).
    const byName = (x: Table) => ({ ...x, columns: [...x.columns].sort((a, b) => a.name.localeCompare(b.name)) });
    for (const t of Object.keys(lite)) expect({ table: t, ...byName(post[t]) }).toEqual({ table: t, ...byName(lite[t]) });
  });

  it("has the report-freshness triggers SQLite has, by name and table", async () => {
    const lite = (
      sqlite.prepare("select name, tbl_name as tbl from sqlite_master where type = 'trigger'").all() as { name: string; tbl: string }[]
    )
      .map((r) => `${r.tbl}.${r.name}`)
      .sort();
    const post = (
      await pool.query<{ name: string; tbl: string }>(
        "select t.tgname as name, c.relname as tbl from pg_trigger t join pg_class c on c.oid = t.tgrelid where not t.tgisinternal",
      )
    ).rows
      .map((r) => `${r.tbl}.${r.name}`)
      .sort();
    expect(post).toEqual(lite);
    expect(lite.length).toBe(16);
  });

  it("moves the freshness counters the same way on the same writes", async () => {
    // The same statements on both databases (plain SQL both dialects accept); each returns the counters after it.
    const steps: [string, string][] = [
      ["project", "insert into projects (slug, name) values ('p', 'P')"],
      ["user", "insert into users (email, name, password_hash) values ('a@x', 'A', 'h')"],
      ["dataset", "insert into datasets (project_id, name) values (1, 'd')"],
      ["item", "insert into items (dataset_id, source_id, query, metadata) values (1, 'i1', 'q', '{}')"],
      ["response", "insert into responses (item_id, model, text, origin, source_key, metadata) values (1, 'm', 't', 'import', 'k', '{}')"],
      ["task", "insert into tasks (project_id, dataset_id, kind, name, config) values (1, 1, 'response-satisfaction', 't', '{}')"],
      ["unit", "insert into units (task_id, item_id, response_id) values (1, 1, 1)"],
      ["assignment", "insert into assignments (unit_id, annotator_id) values (1, 1)"],
      ["draft label (not counted)", `insert into annotations (assignment_id, revision, label, status) values (1, 1, '"Yes"', 'draft')`],
      ["submitted label", `insert into annotations (assignment_id, revision, label, status) values (1, 2, '"No"', 'submitted')`],
      ["label marked stale", "update annotations set stale_at = 5 where revision = 2"],
      ["item subject edited", "update items set subject = 's' where id = 1"],
      ["response text edited", "update responses set text = 't2' where id = 1"],
      ["judge", "insert into judges (project_id, name, provider, model, settings) values (1, 'j', 'p', 'm', '{}')"],
      ["verdict", "insert into verdicts (judge_id, response_id, value) values (1, 1, 'Yes')"],
      ["verdict revised", "update verdicts set value = 'No' where id = 1"],
      ["verdict deleted", "delete from verdicts where id = 1"],
      ["label deleted", "delete from annotations where revision = 2"],
      ["assignment deleted", "delete from assignments where id = 1"],
    ];
    // A task's version is its counter plus its unfolded bumps (on PostgreSQL a submitted label adds a bump row).
    const counters =
      "select (select version from task_data_versions where task_id = 1) + (select count(*) from task_data_bumps where task_id = 1) as task, (select version from project_verdict_versions where project_id = 1) as project";
    const onSqlite: Record<string, unknown>[] = [];
    const onPg: Record<string, unknown>[] = [];
    const lite = openDatabase(path.join(tempDir("concord-pg-counters-"), "c.db")).$client;
    // A database of its own on the cluster, so the catalog tests above see only the migrated schema.
    await pool.query("create database counters");
    const own = await openPgDatabase(testPg.urlOf("counters"));
    try {
      for (const [what, statement] of steps) {
        lite.prepare(statement).run();
        await own.$client.query(statement);
        onSqlite.push({ what, ...(lite.prepare(counters).get() as object) });
        onPg.push({ what, ...(await own.$client.query(counters)).rows[0] });
      }
    } finally {
      lite.close();
      await own.$client.end();
    }
    expect(onPg).toEqual(onSqlite);
    // Where the counters end (worked out by hand from the SQLite triggers: the task counter moves on the submitted
    // label, stale mark, subject edit, text edit, label delete and assignment delete; the project counter on the
    // judge and the verdict's insert, update and delete).
    expect(onSqlite.at(-1)).toMatchObject({ task: 6, project: 4 });
  });
});
