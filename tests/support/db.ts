/**
 * A real, temporary SQLite file per test file. Call useTempDatabase() at the
 * top of a test file, before anything opens the database.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { closeDb, getDb, type Db } from "../../db/client";

export function tempDir(prefix = "concord-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function useTempDatabase(): { file: string; db: () => Db } {
  const dir = tempDir();
  const file = path.join(dir, "test.db");
  closeDb();
  process.env.DATABASE_URL = file;
  afterAll(() => {
    closeDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { file, db: () => getDb() };
}
