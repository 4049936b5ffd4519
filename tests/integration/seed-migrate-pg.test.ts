/**
 * `npm run seed` and `npm run db:migrate` with DATABASE_URL=postgres://… (issue
 * 17), through the commands a user runs, on a throw-away cluster: the seed
 * loads the same demo rows as on SQLite (every table's row count, compared with
 * a SQLite file seeded in the test), a second seed is refused and changes
 * nothing, `--if-empty` leaves a seeded database alone, `--reset` is refused on
 * PostgreSQL, migrations apply to a new database (also from three processes
 * at once, as app servers started together do), and a password in the URL is
 * never printed. No folder named after the URL is made.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { seedDemo } from "../../seeds/demo";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";

const run = promisify(execFile);
let testPg: TestPg | undefined;
const cwd = tempDir("concord-seed-pg-cwd-");

/** `npm run db:migrate` or `npm run seed` as an operator runs them (scripts/cli.mjs). */
async function command(name: "migrate" | "seed", url: string, args: string[] = []) {
  try {
    const { stdout, stderr } = await run(process.execPath, ["scripts/cli.mjs", name, ...args], {
      cwd: path.resolve("."),
      env: { ...process.env, DATABASE_URL: url, CONCORD_STATE_DIR: cwd },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

/** A URL with a password: the throw-away cluster trusts local connections, so any password is accepted. */
const withPassword = (url: string) => url.replace("postgres@", "postgres:Hunter2-secret@");

async function counts(url: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const tables = await c.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    const out: Record<string, number> = {};
    for (const { t } of tables.rows) out[t] = (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${t}"`)).rows[0].n;
    return out;
  } finally {
    await c.end();
  }
}

afterAll(() => testPg?.stop());

describe.skipIf(Boolean(pgSkipReason()))("seed and migrate on PostgreSQL", () => {
  beforeAll(async () => {
    testPg = await startTestPg();
  }, 120_000);

  it("db:migrate creates the schema on a new database and prints the URL without its password", async () => {
    const url = withPassword(await testPg!.createDatabase("migrate_only"));
    const r = await command("migrate", url);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/is up to date/);
    expect(r.out).not.toContain("Hunter2-secret");
    const n = await counts(url);
    expect(n.users).toBe(0);
    expect(Object.keys(n).length).toBeGreaterThan(20);
  }, 120_000);

  it("three db:migrate processes started together on a new database all succeed (they take turns)", async () => {
    const url = await testPg!.createDatabase("migrate_together");
    const results = await Promise.all([1, 2, 3].map(() => command("migrate", url)));
    for (const r of results) expect(r.code, r.out).toBe(0);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const applied = (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`)).rows[0].n;
    await c.end();
    expect(applied).toBe(fs.readdirSync(path.resolve("db/migrations-pg")).filter((f) => f.endsWith(".sql")).length);
  }, 120_000);

  it("seed loads the same rows as on SQLite; again is refused, --if-empty leaves it, --reset is refused", async () => {
    const url = withPassword(await testPg!.createDatabase("seeded"));
    const first = await command("seed", url);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toMatch(/loaded the demo into postgres:\/\/postgres:\*\*\*@/);
    expect(first.out).not.toContain("Hunter2-secret");

    // The expected rows: the same demo seeded into a SQLite file here.
    const file = path.join(tempDir("concord-seed-pg-"), "demo.db");
    const db = openDatabase(file);
    await seedDemo(db);
    const sqliteTables = db.$client
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'`)
      .pluck()
      .all() as string[];
    const expected: Record<string, number> = {};
    for (const t of sqliteTables) expected[t] = db.$client.prepare(`SELECT count(*) FROM "${t}"`).pluck().get() as number;
    db.$client.close();
    const seeded = await counts(url);
    for (const [t, n] of Object.entries(expected)) expect(seeded[t], t).toBe(n);
    expect(seeded.users).toBeGreaterThan(0);

    const again = await command("seed", url);
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/already has data/);
    const ifEmpty = await command("seed", url, ["--if-empty"]);
    expect(ifEmpty.code, ifEmpty.out).toBe(0);
    expect(ifEmpty.out).toMatch(/not loaded again/);
    const reset = await command("seed", url, ["--reset"]);
    expect(reset.code).toBe(1);
    expect(reset.out).toMatch(/drop and create the database yourself/);
    expect(await counts(url)).toEqual(seeded);
    for (const r of [again, ifEmpty, reset]) expect(r.out).not.toContain("Hunter2-secret");
    expect(fs.existsSync(path.resolve("postgres:"))).toBe(false);
  }, 180_000);
});
