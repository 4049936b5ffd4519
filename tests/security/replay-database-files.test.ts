/**
 * Issue 18, critical 1, beyond the replay provider: nothing in the app opens
 * the database file except the database connection. Every place that opens a
 * file a user names (an import, a run config, a provider's settings file, an
 * export's output) refuses the database — checked with stat() only, so the
 * refusal itself opens no descriptor — and says so without echoing content.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDatabaseFile, readJsonFile } from "../../app/files.server";
import { sniffFile } from "../../app/formats/source.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { ROOT } from "../support/app-server";
import { tempDir } from "../support/db";

let dir: string;
let file: string;
let db: Db;
beforeAll(() => {
  dir = tempDir();
  file = path.join(dir, "live.db");
  db = openDatabase(file);
  db.insert(schema.projects).values({ slug: "p", name: "P" }).run();
});
afterAll(() => db?.$client.close());

describe("the database file is never opened as input or output", () => {
  it("is recognised by path, by another path to the same file, and by its WAL companions", () => {
    expect(isDatabaseFile(file, file)).toBe(true);
    const link = path.join(dir, "alias.csv");
    fs.linkSync(file, link); // a hard link: another name, the same file
    expect(isDatabaseFile(link, file)).toBe(true);
    expect(isDatabaseFile(`${file}-wal`, file)).toBe(true);
    // A live WAL database elsewhere is recognised by its companions even when DATABASE_URL names another file.
    expect(isDatabaseFile(file, path.join(dir, "other.db"))).toBe(true);
    const csv = path.join(dir, "ok.csv");
    fs.writeFileSync(csv, "a,b\n1,2\n");
    expect(isDatabaseFile(csv, file)).toBe(false);
  });

  it("an import, a JSON config and a settings file refuse it with a clean message", () => {
    const prev = process.env.DATABASE_URL;
    process.env.DATABASE_URL = file;
    try {
      expect(() => sniffFile(file)).toThrow("This is not a text file: it is a database file.");
      expect(() => readJsonFile(file)).toThrow(/live\.db is a database file; Concord does not read it as input/);
    } finally {
      process.env.DATABASE_URL = prev;
    }
    const bad = path.join(dir, "bad.json");
    fs.writeFileSync(bad, "root:x:0:0:root:/root:/bin/bash\n");
    let message = "";
    try {
      readJsonFile(bad, { databaseFile: file });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`${bad}: not valid JSON`);
  });

  it("npm run export refuses to write over the database, which stays intact", () => {
    const r = spawnSync(process.execPath, ["scripts/cli.mjs", "export", "--project", "p", "--what", "annotations", "--out", file], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: file },
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/is a database file; choose another output file/);
    expect(
      db
        .select()
        .from(schema.projects)
        .all()
        .map((p) => p.slug),
    ).toEqual(["p"]);
    expect(fs.statSync(file).size).toBeGreaterThan(0);
  });
});
