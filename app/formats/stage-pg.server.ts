/**
 * Imports into PostgreSQL (issue 17): the same check and staging as on
 * SQLite, then one transaction of multi-row inserts.
 *
 * The writer (writer/*.server.ts) looks rows up synchronously, row by row, in
 * the database it is given. On PostgreSQL it is given a mirror: a scratch
 * SQLite file holding the project's rows as the database had them when the
 * import started (its datasets, items, checklists, responses, judges,
 * verdicts, tasks and labels, and the users; no password hashes), with the
 * same IDs. The check then runs exactly as on SQLite, against that snapshot,
 * and stages its rows in the stage file attached to the mirror.
 *
 * The copy (commitStagePg) runs in one serializable transaction: the staged
 * rows get IDs from the tables' sequences (nextval, so no other writer can
 * get them), then go in, parents first, in multi-row INSERTs. PostgreSQL
 * holds no database-wide write lock: other writers go on meanwhile, and
 * readers see the rows at commit, all of them at once, as the chunked copy's
 * final transaction makes them visible on SQLite. Foreign keys are enforced
 * and the report-freshness triggers bump their counters per row, as a
 * one-transaction copy does on SQLite; a row that conflicts with one written
 * since the snapshot (a unique key, a deleted parent) rolls it all back.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import type Database from "better-sqlite3";
import { eq, getTableColumns, getTableName, inArray, sql, type Column } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Dal, Q, Tables } from "~/dal.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { STAGE_BASE, STAGED_TABLES } from "./stage-file.server";
import type { CommitStats } from "./stage.server";

type TableKey = keyof Tables;

/** The schema key of every staged table, by its SQL name. */
const KEYS = new Map<string, TableKey>(
  (Object.keys(schema) as TableKey[])
    .filter((k) => typeof schema[k] === "object" && schema[k] !== null && (STAGED_TABLES as readonly string[]).includes(tableName(k)))
    .map((k) => [tableName(k), k]),
);

function tableName(k: TableKey): string {
  try {
    return getTableName(schema[k] as SQLiteTable);
  } catch {
    return "";
  }
}

/** Rows per INSERT: at most 1000, and under PostgreSQL's 65,535 bound parameters. */
const batchOf = (columns: number) => Math.max(1, Math.min(1000, Math.floor(60_000 / columns)));

/** A scratch SQLite file with the project's rows as the PostgreSQL database holds them now (see the header). */
export async function mirrorProject(d: Dal, slug: string): Promise<{ db: Db; file: string }> {
  const file = path.join(os.tmpdir(), `concord-mirror-${crypto.randomBytes(8).toString("hex")}.db`);
  const db = openDatabase(file);
  const t = d.t;
  // One snapshot for all the reads.
  const rows = await d.tx(async (q) => {
    const out: [TableKey, Record<string, unknown>[]][] = [];
    const users = await q.select({ id: t.users.id, email: t.users.email, name: t.users.name, disabled: t.users.disabled }).from(t.users);
    out.push(["users", users.map((u) => ({ ...u, passwordHash: "!" }))]);
    const project = await q.select().from(t.projects).where(eq(t.projects.slug, slug));
    out.push(["projects", project]);
    if (project.length) {
      const pid = project[0].id;
      const datasets = q.select({ id: t.datasets.id }).from(t.datasets).where(eq(t.datasets.projectId, pid));
      const items = q.select({ id: t.items.id }).from(t.items).where(inArray(t.items.datasetId, datasets));
      const judges = q.select({ id: t.judges.id }).from(t.judges).where(eq(t.judges.projectId, pid));
      const tasks = q.select({ id: t.tasks.id }).from(t.tasks).where(eq(t.tasks.projectId, pid));
      const units = q.select({ id: t.units.id }).from(t.units).where(inArray(t.units.taskId, tasks));
      const assignments = q.select({ id: t.assignments.id }).from(t.assignments).where(inArray(t.assignments.unitId, units));
      out.push(["datasets", await q.select().from(t.datasets).where(eq(t.datasets.projectId, pid))]);
      out.push(["items", await q.select().from(t.items).where(inArray(t.items.datasetId, datasets))]);
      out.push(["checklistItems", await q.select().from(t.checklistItems).where(inArray(t.checklistItems.itemId, items))]);
      out.push(["responses", await q.select().from(t.responses).where(inArray(t.responses.itemId, items))]);
      out.push(["judges", await q.select().from(t.judges).where(eq(t.judges.projectId, pid))]);
      out.push(["verdicts", await q.select().from(t.verdicts).where(inArray(t.verdicts.judgeId, judges))]);
      out.push(["tasks", await q.select().from(t.tasks).where(eq(t.tasks.projectId, pid))]);
      out.push(["units", await q.select().from(t.units).where(inArray(t.units.taskId, tasks))]);
      out.push(["assignments", await q.select().from(t.assignments).where(inArray(t.assignments.unitId, units))]);
      out.push(["annotations", await q.select().from(t.annotations).where(inArray(t.annotations.assignmentId, assignments))]);
    }
    return out;
  });
  const conn = db.$client;
  conn.pragma("foreign_keys = OFF");
  conn.exec("begin");
  try {
    for (const [k, list] of rows) {
      const table = schema[k] as SQLiteTable;
      const n = batchOf(Object.keys(getTableColumns(table)).length);
      for (let i = 0; i < list.length; i += n)
        db.insert(table)
          .values(list.slice(i, i + n))
          .run();
    }
    conn.exec("commit");
  } catch (err) {
    if (conn.inTransaction) conn.exec("rollback");
    conn.close();
    removeMirror(file);
    throw err;
  }
  conn.pragma("foreign_keys = ON");
  return { db, file };
}

export function removeMirror(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-wait`]) fs.rmSync(f, { force: true });
}

/**
 * Copies the rows staged on `conn` (the mirror, its stage attached) into the PostgreSQL database of `d`, in one
 * transaction (see the header). Throws if PostgreSQL refuses a row; nothing is written then.
 */
export async function commitStagePg(d: Dal, conn: Database.Database): Promise<CommitStats> {
  const tables = STAGED_TABLES.map((t) => {
    const key = KEYS.get(t)!;
    const columns = Object.entries(getTableColumns(schema[key] as SQLiteTable)) as [string, Column][];
    const fks = new Map(
      (conn.prepare(`select "from", "table" from pragma_foreign_key_list(?, 'main')`).all(t) as { from: string; table: string }[]).map(
        (f) => [f.from, f.table],
      ),
    );
    const maxStage = (conn.prepare(`select coalesce(max(id), 0) as m from stage."${t}"`).get() as { m: number }).m;
    return { t, key, columns, fks, size: maxStage === 0 ? 0 : maxStage - STAGE_BASE + 1 };
  });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let rows = 0;
  await d.tx(async (q: Q) => {
    rows = 0;
    // New IDs, from each table's own sequence: staged ID STAGE_BASE + k becomes ids[k].
    const ids = new Map<string, number[]>();
    for (const p of tables) {
      if (p.size === 0) continue;
      const got = await d.rows<{ id: number }>(
        sql`select nextval(pg_get_serial_sequence(${`"${p.t}"`}, 'id')) as id from generate_series(1, ${p.size})`,
        q,
      );
      ids.set(
        p.t,
        got.map((r) => Number(r.id)).sort((a, b) => a - b),
      );
    }
    const mapId = (table: string, v: number) => (v >= STAGE_BASE ? ids.get(table)![v - STAGE_BASE] : v);
    for (const p of tables) {
      if (p.size === 0) continue;
      const n = batchOf(p.columns.length);
      const page = conn.prepare(`select * from stage."${p.t}" where id > ? order by id limit ${n}`);
      for (let from = 0; ;) {
        const staged = page.all(from) as Record<string, unknown>[];
        if (staged.length === 0) break;
        from = staged[staged.length - 1].id as number;
        const values = staged.map((r) => {
          const out: Record<string, unknown> = {};
          for (const [js, col] of p.columns) {
            const raw = r[col.name];
            let v = raw === null || raw === undefined ? raw : col.mapFromDriverValue(raw);
            if (col.name === "id") v = mapId(p.t, v as number);
            else if (typeof v === "number" && p.fks.has(col.name) && ids.has(p.fks.get(col.name)!)) v = mapId(p.fks.get(col.name)!, v);
            out[js] = v;
          }
          return out;
        });
        await q.insert(d.t[p.key] as typeof schema.items).values(values as (typeof schema.items.$inferInsert)[]);
        rows += values.length;
      }
    }
  });
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  const cpuMs = (c.user + c.system) / 1000;
  return {
    rows,
    lockMs: wallMs,
    lockTotalMs: wallMs,
    holds: 1,
    lockCpuMs: cpuMs,
    lockCpuTotalMs: cpuMs,
    maxHoldRows: rows,
    chunkedRows: 0,
    finalRows: rows,
    longGaps: { waited: 0, periodic: 0 },
    finalMs: wallMs,
  };
}
