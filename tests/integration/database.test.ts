import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DatabaseOpenError, MIGRATIONS_DIR, openDatabase } from "../../db/client";
import { tempDir } from "../support/db";

const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const root = path.resolve(__dirname, "../..");

describe("database client", () => {
  it("creates the file, applies every migration, and turns on WAL and foreign keys", () => {
    const db = openDatabase(path.join(dir, "fresh", "concord.db"));
    expect(db.$client.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.$client.pragma("foreign_keys", { simple: true })).toBe(1);
    const tables = db.$client.prepare("select name from sqlite_master where type = 'table' order by name").pluck().all();
    for (const t of [
      "users",
      "projects",
      "memberships",
      "datasets",
      "items",
      "checklist_items",
      "references",
      "responses",
      "judges",
      "verdicts",
      "tasks",
      "units",
      "assignments",
      "annotations",
      "jobs",
      "provider_calls",
    ]) {
      expect(tables).toContain(t);
    }
    expect(() => db.$client.prepare("insert into memberships (project_id, user_id, role) values (999, 999, 'admin')").run()).toThrow(
      /FOREIGN KEY/,
    );
    db.$client.close();
  });

  it("upgrades a database made by an older migration in place, keeping its data", () => {
    // An "old release": only the first migration in the journal.
    const oldMigrations = path.join(dir, "old-migrations");
    fs.cpSync(MIGRATIONS_DIR, oldMigrations, { recursive: true });
    const journalPath = path.join(oldMigrations, "meta", "_journal.json");
    const journal = JSON.parse(fs.readFileSync(journalPath, "utf8"));
    expect(journal.entries.length).toBeGreaterThan(1);
    journal.entries = journal.entries.slice(0, 1);
    fs.writeFileSync(journalPath, JSON.stringify(journal));

    const file = path.join(dir, "old.db");
    const old = openDatabase(file, { migrationsFolder: oldMigrations });
    old.$client.prepare("insert into users (email, name, password_hash) values ('kept@example.test', 'Kept', 'x')").run();
    const hasTasks = () => old.$client.prepare("select count(*) from sqlite_master where name = 'tasks'").pluck().get();
    expect(hasTasks()).toBe(0);
    old.$client.close();

    const upgraded = openDatabase(file);
    expect(upgraded.$client.prepare("select count(*) from sqlite_master where name = 'tasks'").pluck().get()).toBe(1);
    expect(upgraded.$client.prepare("select email from users").pluck().all()).toEqual(["kept@example.test"]);
    upgraded.$client.close();
    // Opening again is a no-op.
    openDatabase(file).$client.close();
  });

  it("refuses a file that is not SQLite with a one-line error", () => {
    const file = path.join(dir, "notes.txt");
    fs.writeFileSync(file, "These are meeting notes, not a database.\n".repeat(200));
    expect(() => openDatabase(file)).toThrow(DatabaseOpenError);
    expect(() => openDatabase(file)).toThrow(`DATABASE_URL does not point at a SQLite database: ${file}`);
  });

  it("the server exits with code 1 and one line when DATABASE_URL is not SQLite", () => {
    const file = path.join(dir, "not-a-db.bin");
    fs.writeFileSync(file, Buffer.alloc(4096, 7));
    const res = spawnSync(process.execPath, ["scripts/cli.mjs", "server"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: file, PORT: "0" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(res.status).toBe(1);
    expect(res.stderr.trim().split("\n")).toEqual([`Concord: DATABASE_URL does not point at a SQLite database: ${file}`]);
  });

  it("the server exits with code 1 and one line naming a mistyped setting, before it opens the database", () => {
    const file = path.join(dir, "never-created.db");
    const res = spawnSync(process.execPath, ["scripts/cli.mjs", "server"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: file, PORT: "0", WORKER_CONCURRENCY: "many" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(res.status).toBe(1);
    const lines = res.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Concord: Invalid environment variable WORKER_CONCURRENCY: /);
    expect(fs.existsSync(file)).toBe(false);
  });
});
