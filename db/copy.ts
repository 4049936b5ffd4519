/**
 * Copies a whole Concord database between SQLite and PostgreSQL (either way):
 * every table, ids kept, in one transaction on the target, which must be empty
 * (freshly migrated). Then both sides are read back and compared table by
 * table: row count and a SHA-256 of the rows in key order, each value in one
 * form for both dialects (booleans true/false, JSON parsed with sorted keys).
 *
 * Parents are copied before children (foreign keys are checked as rows go in);
 * the report-freshness counters are copied last and overwrite what the
 * target's triggers counted while the rows went in, so they equal the source's.
 * PostgreSQL identity sequences are moved past the highest copied id.
 */
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import fs from "node:fs";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import type pg from "pg";
import { openDatabase } from "./client";
import { openPgDatabase, pgSchema } from "./client-pg";

export type Side = { kind: "sqlite"; file: string } | { kind: "postgres"; url: string };

/** What a column holds, as far as the copy must convert it. */
type Kind = "boolean" | "json" | "plain";
type TableInfo = { name: string; columns: { name: string; kind: Kind }[]; key: string[]; identity: boolean; counter: boolean };
export type TableCheck = { table: string; source: number; target: number; same: boolean };

/** Tables bumped by triggers (copied last, overwriting). */
const COUNTERS = new Set(["task_data_versions", "project_verdict_versions", "task_data_bumps"]);
/** Counter tables whose rows the copy's own inserts add to (PostgreSQL's label trigger adds bumps): emptied before theirs are copied. */
const REPLACED = new Set(["task_data_bumps"]);

/** The tables in an order where every foreign key points at a table before it, counters last. */
export function copyPlan(): TableInfo[] {
  const tables = (Object.values(pgSchema) as unknown[]).filter((t): t is PgTable => is(t, PgTable));
  const infos = new Map<string, TableInfo & { parents: string[] }>();
  for (const t of tables) {
    const cfg = getTableConfig(t);
    const pk = cfg.columns.filter((c) => c.primary).map((c) => c.name);
    const key = pk.length ? pk : (cfg.primaryKeys[0]?.columns.map((c) => c.name) ?? []);
    infos.set(cfg.name, {
      name: cfg.name,
      columns: cfg.columns.map((c) => ({
        name: c.name,
        kind: c.columnType === "PgBoolean" ? "boolean" : c.columnType === "PgJsonb" ? "json" : "plain",
      })),
      key,
      identity: cfg.columns.some((c) => c.name === "id" && (c as { generatedIdentity?: unknown }).generatedIdentity !== undefined),
      counter: COUNTERS.has(cfg.name),
      parents: cfg.foreignKeys.map((f) => getTableConfig(f.reference().foreignTable).name).filter((p) => p !== cfg.name),
    });
  }
  const order: TableInfo[] = [];
  const done = new Set<string>();
  const visit = (name: string, path: string[]) => {
    if (done.has(name)) return;
    if (path.includes(name)) throw new Error(`foreign keys form a cycle: ${[...path, name].join(" → ")}`);
    const t = infos.get(name)!;
    for (const p of t.parents) visit(p, [...path, name]);
    done.add(name);
    const { parents: _parents, ...info } = t;
    order.push(info);
  };
  for (const name of [...infos.keys()].sort()) visit(name, []);
  return [...order.filter((t) => !t.counter), ...order.filter((t) => t.counter)];
}

type Row = Record<string, unknown>;

/**
 * A database to read and write rows of the copy plan's tables. Rows cross in
 * one form: booleans true/false, JSON columns parsed, numbers as numbers.
 */
interface Store {
  count(t: TableInfo): Promise<number>;
  /** Rows in key order, in pages. */
  rows(t: TableInfo): AsyncGenerator<Row[]>;
  begin(): Promise<void>;
  insert(t: TableInfo, rows: Row[]): Promise<void>;
  /** Deletes every row of the table (in the copy's transaction). */
  clear(t: TableInfo): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
}

const PAGE = 2000;
const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** One value as compared: JSON with its keys sorted (jsonb does not keep their order). */
function canonical(kind: Kind, v: unknown): unknown {
  if (v === undefined) return null;
  return kind === "json" ? sortKeys(v) : v;
}
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Row)[k])]),
    );
  return v;
}

function sqliteStore(file: string): Store {
  const conn = openDatabase(file).$client;
  const insert = new Map<string, Database.Statement>();
  const neutral = (t: TableInfo, r: Row): Row => {
    for (const { name, kind } of t.columns) {
      const v = r[name];
      if (v === null || v === undefined) r[name] = null;
      else if (kind === "boolean") r[name] = v === 1;
      else if (kind === "json") r[name] = JSON.parse(v as string);
    }
    return r;
  };
  return {
    async count(t) {
      return (conn.prepare(`select count(*) as n from ${q(t.name)}`).get() as { n: number }).n;
    },
    async *rows(t) {
      const order = t.key.map(q).join(", ");
      let page: Row[] = [];
      for (const r of conn.prepare(`select * from ${q(t.name)} order by ${order}`).iterate() as IterableIterator<Row>) {
        page.push(neutral(t, r));
        if (page.length === PAGE) {
          yield page;
          page = [];
        }
      }
      if (page.length) yield page;
    },
    async begin() {
      conn.exec("begin immediate");
    },
    async insert(t, rows) {
      let st = insert.get(t.name);
      if (!st) {
        const cols = t.columns.map((c) => q(c.name)).join(", ");
        st = conn.prepare(
          `insert ${t.counter ? "or replace " : ""}into ${q(t.name)} (${cols}) values (${t.columns.map(() => "?").join(", ")})`,
        );
        insert.set(t.name, st);
      }
      for (const r of rows)
        st.run(
          t.columns.map(({ name, kind }) => {
            const v = r[name];
            if (v === null || v === undefined) return null;
            if (kind === "boolean") return v ? 1 : 0;
            if (kind === "json") return JSON.stringify(v);
            return v;
          }),
        );
    },
    async clear(t) {
      conn.prepare(`delete from ${q(t.name)}`).run();
    },
    async commit() {
      conn.exec("commit");
    },
    async rollback() {
      if (conn.inTransaction) conn.exec("rollback");
    },
    async close() {
      conn.close();
    },
  };
}

async function pgStore(url: string): Promise<Store> {
  const db = await openPgDatabase(url, { max: 1 });
  const pool: pg.Pool = db.$client;
  const client = await pool.connect();
  return {
    async count(t) {
      return Number((await client.query(`select count(*) as n from ${q(t.name)}`)).rows[0].n);
    },
    async *rows(t) {
      const order = t.key.map(q).join(", ");
      if (t.key.length === 1 && t.key[0] === "id") {
        // Keyset pages on the integer id.
        let last = -1;
        for (;;) {
          const { rows } = await client.query(`select * from ${q(t.name)} where id > $1 order by id limit ${PAGE}`, [last]);
          if (!rows.length) return;
          yield rows;
          last = rows[rows.length - 1].id as number;
        }
      }
      // Small tables keyed otherwise (sessions, throttles, workers, counters): one read.
      const { rows } = await client.query(`select * from ${q(t.name)} order by ${order}`);
      if (rows.length) yield rows;
    },
    async begin() {
      await client.query("begin");
    },
    async insert(t, rows) {
      const cols = t.columns.map((c) => q(c.name)).join(", ");
      // At most 65535 parameters per statement.
      const per = Math.max(1, Math.floor(60_000 / t.columns.length));
      for (let i = 0; i < rows.length; i += per) {
        const chunk = rows.slice(i, i + per);
        const values: unknown[] = [];
        const tuples = chunk.map((r) => {
          const ps = t.columns.map(({ name, kind }) => {
            const v = r[name];
            // A JSON value goes as its text (the server parses it into jsonb; a bare string would not be JSON).
            values.push(v === null || v === undefined ? null : kind === "json" ? JSON.stringify(v) : v);
            return `$${values.length}`;
          });
          return `(${ps.join(", ")})`;
        });
        const upsert = t.counter
          ? ` on conflict (${t.key.map(q).join(", ")}) do update set ${t.columns
              .filter((c) => !t.key.includes(c.name))
              .map((c) => `${q(c.name)} = excluded.${q(c.name)}`)
              .join(", ")}`
          : "";
        await client.query(`insert into ${q(t.name)} (${cols}) overriding system value values ${tuples.join(", ")}${upsert}`, values);
      }
    },
    async clear(t) {
      await client.query(`delete from ${q(t.name)}`);
    },
    async commit() {
      // Identity columns continue after the highest copied id.
      for (const t of copyPlan().filter((x) => x.identity))
        await client.query(
          `select setval(pg_get_serial_sequence('${q(t.name)}', 'id'), coalesce((select max(id) from ${q(t.name)}), 0) + 1, false)`,
        );
      await client.query("commit");
    },
    async rollback() {
      await client.query("rollback").catch(() => undefined);
    },
    async close() {
      client.release();
      await pool.end();
    },
  };
}

/** A URL with its password replaced, for messages. */
export function maskUrl(url: string): string {
  return url.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, "$1***@");
}

export class CopyError extends Error {}

async function open(side: Side, role: "source" | "target"): Promise<Store> {
  if (side.kind === "postgres") return pgStore(side.url);
  if (role === "source" && !fs.existsSync(side.file)) throw new CopyError(`--from: no such database file: ${side.file}`);
  return sqliteStore(side.file);
}

async function digest(store: Store, t: TableInfo): Promise<{ n: number; hash: string }> {
  const h = createHash("sha256");
  let n = 0;
  for await (const page of store.rows(t))
    for (const r of page) {
      n++;
      h.update(JSON.stringify(t.columns.map((c) => canonical(c.kind, r[c.name]))));
      h.update("\n");
    }
  return { n, hash: h.digest("hex") };
}

/**
 * Copies `from` into `to` and checks every table. Throws CopyError (nothing
 * written) when the target holds rows already; otherwise returns the checks.
 */
export async function copyDatabase(from: Side, to: Side, log: (line: string) => void = () => {}): Promise<TableCheck[]> {
  const plan = copyPlan();
  const source = await open(from, "source");
  let target: Store | undefined;
  try {
    target = await open(to, "target");
    const occupied: string[] = [];
    for (const t of plan) if ((await target.count(t)) > 0) occupied.push(t.name);
    if (occupied.length) throw new CopyError(`the target is not empty (rows in ${occupied.join(", ")}); copy into a new, empty database`);
    await target.begin();
    try {
      for (const t of plan) {
        let n = 0;
        if (REPLACED.has(t.name)) await target.clear(t);
        for await (const page of source.rows(t)) {
          await target.insert(t, page);
          n += page.length;
        }
        log(`${t.name}: ${n} rows`);
      }
      await target.commit();
    } catch (err) {
      await target.rollback();
      throw err;
    }
    const checks: TableCheck[] = [];
    for (const t of plan) {
      const [a, b] = [await digest(source, t), await digest(target, t)];
      checks.push({ table: t.name, source: a.n, target: b.n, same: a.n === b.n && a.hash === b.hash });
    }
    return checks;
  } finally {
    await target?.close();
    await source.close();
  }
}
