/**
 * `npm run db:copy` (issue 17): the demo deployment on SQLite is copied to a
 * throw-away PostgreSQL cluster and back to a new SQLite file, through the
 * command a user runs. Checked independently of the command's own checks:
 * every table has the same rows on all three (ids kept; booleans and JSON
 * compared as values), the reports' figures (the agreement, judge-agreement
 * and annotations exports) are equal before and after, new rows on PostgreSQL
 * get ids after the copied ones, and a target with rows is refused with
 * nothing written; a password in the URL never appears in a message.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportRows } from "../../app/formats/export.server";
import { openDatabase } from "../../db/client";
import "../../db/client-pg";
import { seedDemo } from "../../seeds/demo";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import { tempDir } from "../support/db";

const NO_PG = pgSkipReason();

const run = promisify(execFile);
const dir = tempDir("concord-db-copy-");
const ORIGINAL = path.join(dir, "original.db");
const BACK = path.join(dir, "back.db");
let testPg: TestPg;
let admin: pg.Client;
const url = (db: string) => testPg.urlOf(db);

async function dbCopy(from: string, to: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["scripts/cli.mjs", "db-copy", "--from", from, "--to", to], {
      env: { ...process.env, DATABASE_URL: "" },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Every table's rows on SQLite, in key order, booleans and JSON read as values (the schema says which columns). */
const BOOLEAN = new Set(["is_site_admin", "disabled", "is_current", "is_gold"]);
const JSON_COLUMNS = new Set([
  "metadata",
  "settings",
  "config",
  "justification",
  "response_ids",
  "shown_order",
  "label",
  "penalty_reasons",
  "notes",
  "payload",
  "result",
  "request",
  "reply",
  "before",
  "after",
  "ranges",
]);
const sorted = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sorted)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
        )
      : v;
const tables = (c: Database.Database) =>
  (
    c
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name <> '__drizzle_migrations'")
      .all() as { name: string }[]
  )
    .map((t) => t.name)
    .sort();
function sqliteRows(c: Database.Database, t: string) {
  const key = (c.prepare("select name from pragma_table_info(?) where pk > 0 order by pk").all(t) as { name: string }[]).map(
    (k) => `"${k.name}"`,
  );
  return (c.prepare(`select * from "${t}" order by ${key.join(", ")}`).all() as Record<string, unknown>[]).map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [
        k,
        v === null ? null : BOOLEAN.has(k) ? v === 1 : JSON_COLUMNS.has(k) ? sorted(JSON.parse(v as string)) : v,
      ]),
    ),
  );
}
async function pgRows(client: pg.Client, t: string, sqliteKey: string[]) {
  const { rows } = await client.query(`select * from "${t}" order by ${sqliteKey.join(", ")}`);
  return rows.map((r: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, JSON_COLUMNS.has(k) && v !== null ? sorted(v) : v])),
  );
}

beforeAll(async () => {
  if (NO_PG) return;
  testPg = await startTestPg();
  admin = new pg.Client({ connectionString: testPg.url });
  await admin.connect();
  await admin.query("create database copy1");
  const db = openDatabase(ORIGINAL);
  await seedDemo(db);
  db.$client.close();
}, 180_000);

afterAll(async () => {
  await admin?.end();
  testPg?.stop();
});

describe.skipIf(Boolean(NO_PG))("db:copy", () => {
  it("SQLite → PostgreSQL → SQLite keeps every row of every table, ids included, and every report figure", async () => {
    const there = await dbCopy(ORIGINAL, url("copy1"));
    expect(there.stderr).not.toMatch(/Error|failed/);
    expect(there.code).toBe(0);
    expect(there.stdout).toContain("table\tsource rows\ttarget rows\tequal");
    expect(there.stdout).not.toMatch(/\tNO$/m);

    const originalDb = openDatabase(ORIGINAL);
    const original = originalDb.$client;
    const onPg = new pg.Client({ connectionString: url("copy1") });
    await onPg.connect();
    try {
      // The demo fills most tables; each one's rows on PostgreSQL equal SQLite's.
      const names = tables(original);
      const filled = names.filter((t) => (original.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n > 0);
      expect(filled.length).toBeGreaterThan(15);
      for (const t of names) {
        const key = (original.prepare("select name from pragma_table_info(?) where pk > 0 order by pk").all(t) as { name: string }[]).map(
          (k) => `"${k.name}"`,
        );
        expect({ t, rows: await pgRows(onPg, t, key) }).toEqual({ t, rows: sqliteRows(original, t) });
      }
      // A row written on PostgreSQL after the copy gets the next id, not one the copy used.
      const maxUser = (original.prepare("select max(id) as m from users").get() as { m: number }).m;
      const { rows } = await onPg.query("insert into users (email, name, password_hash) values ('new@x', 'New', 'h') returning id");
      expect(rows[0].id).toBe(maxUser + 1);
      await onPg.query("delete from users where email = 'new@x'");
    } finally {
      await onPg.end();
    }

    const back = await dbCopy(url("copy1"), BACK);
    expect(back.code).toBe(0);
    const returnedDb = openDatabase(BACK);
    const returned = returnedDb.$client;
    try {
      for (const t of tables(original)) expect({ t, rows: sqliteRows(returned, t) }).toEqual({ t, rows: sqliteRows(original, t) });
      // The reports' figures, as exported, are the same before and after the round trip.
      const projects = original.prepare("select id from projects order by id").all() as { id: number }[];
      for (const { id } of projects)
        for (const what of ["agreement", "judge-agreement", "annotations"] as const)
          expect({ id, what, rows: await exportRows(returnedDb, id, what) }).toEqual({
            id,
            what,
            rows: await exportRows(originalDb, id, what),
          });
      expect((await exportRows(originalDb, projects[0].id, "agreement")).length).toBeGreaterThan(0);
    } finally {
      original.close();
      returned.close();
    }
  });

  it("refuses a target that holds rows, writing nothing", async () => {
    const onPg = new pg.Client({ connectionString: url("copy1") });
    await onPg.connect();
    try {
      const before = (await onPg.query("select count(*)::int as n from annotations")).rows[0].n;
      const again = await dbCopy(ORIGINAL, url("copy1"));
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/the target is not empty \(rows in .*annotations/);
      expect((await onPg.query("select count(*)::int as n from annotations")).rows[0].n).toBe(before);
    } finally {
      await onPg.end();
    }
  });

  it("never prints the password of a database URL", async () => {
    const bad = await dbCopy(ORIGINAL, "postgres://concord:s3cret-pw@127.0.0.1:1/nowhere");
    expect(bad.code).toBe(2);
    expect(bad.stderr + bad.stdout).not.toContain("s3cret-pw");
    expect(bad.stderr).toContain("db:copy: the copy failed and nothing was written");
  });
});
