/**
 * A real, temporary SQLite file per test file. Call useTempDatabase() at the
 * top of a test file, before anything opens the database.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, onTestFinished } from "vitest";
import { closeDb, getDb, type Db } from "../../db/client";
import { madeTempDirs } from "./temp-dirs";

/**
 * A fresh temporary directory, removed after the test file (made at file or
 * describe level) or after the test (made inside a test).
 */
export function tempDir(prefix = "concord-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // Also removed at the end of the file by tests/support/setup.ts if still there: made in a hook, where the
  // afterAll below registers nothing.
  madeTempDirs.add(dir);
  const remove = () => {
    fs.rmSync(dir, { recursive: true, force: true });
    madeTempDirs.delete(dir);
  };
  try {
    onTestFinished(remove); // inside a test
  } catch {
    try {
      afterAll(remove); // at file or describe level
    } catch {
      // Outside vitest (a script using the helper): the caller cleans up.
    }
  }
  return dir;
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
