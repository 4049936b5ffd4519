/**
 * The demo database for tests that start from it: seeded once per test run by the global setup
 * (tests/support/global-setup.ts, through the real seedDemo) and copied into each test's own file, so
 * a browser test does not spend a second or two of CPU seeding the same rows again. The tests of
 * seeding itself (demo-and-browser, seed and migrate, db:copy) still call seedDemo.
 */
import fs from "node:fs";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The seeded demo database file (closed, its WAL folded in). */
    demoDatabase: string;
  }
}

/** Writes a copy of the seeded demo database at `file` (a path of the test's own temp folder). */
export function copyDemoDatabase(file: string): void {
  fs.copyFileSync(inject("demoDatabase"), file);
}
