/**
 * The demo database for tests that start from it: seeded once per test run (through the real seedDemo,
 * by the first test that asks) and copied into each test's own file, so a browser test does not spend a
 * second or two of CPU seeding the same rows again. The tests of seeding itself (demo-and-browser, seed
 * and migrate, db:copy) still call seedDemo. The folder comes from the global setup
 * (tests/support/global-setup.ts), which removes it at the end of the run.
 */
import fs from "node:fs";
import path from "node:path";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder the seeded demo database is kept in for the run. */
    demoDir: string;
  }
}

/** Writes a copy of the seeded demo database at `file` (a path of the test's own temp folder). */
export async function copyDemoDatabase(file: string): Promise<void> {
  const template = path.join(inject("demoDir"), "demo.db");
  if (!fs.existsSync(template)) {
    // Seeded under a name of this process's own and renamed whole, so no test copies half a file; two test
    // files that race here each seed one, and the second rename replaces an equal database.
    // Loaded here, by the one test that seeds, not by every file that copies.
    const [{ openDatabase }, { seedDemo }] = await Promise.all([import("../../db/client"), import("../../seeds/demo")]);
    const tmp = `${template}.${process.pid}.tmp`;
    const db = openDatabase(tmp);
    await seedDemo(db);
    db.$client.close();
    fs.renameSync(tmp, template);
  }
  fs.copyFileSync(template, file);
}
