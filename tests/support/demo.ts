/**
 * The demo database for tests that start from it: seeded once per test run (through the real seedDemo,
 * by the first test that asks) and copied into each test's own file, so a browser test does not spend a
 * second or two of CPU seeding the same rows again. The tests of seeding itself (demo-and-browser, seed
 * and migrate, db:copy) still call seedDemo.
 */
import fs from "node:fs";
import { runTemplate } from "./run-templates";

/** Writes a copy of the seeded demo database at `file` (a path of the test's own temp folder). */
export async function copyDemoDatabase(file: string): Promise<void> {
  const template = await runTemplate("demo.db", async (at) => {
    // Loaded here, by the one test that seeds, not by every file that copies.
    const [{ openDatabase }, { seedDemo }] = await Promise.all([import("../../db/client"), import("../../seeds/demo")]);
    const db = openDatabase(at);
    await seedDemo(db);
    db.$client.close();
  });
  if (!template) throw new Error("copyDemoDatabase runs inside a vitest run (tests/support/global-setup.ts makes its folder)");
  fs.copyFileSync(template, file);
}
