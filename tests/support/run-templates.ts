/**
 * What a whole test run makes once and every test file copies: the seeded demo database (tests/support/demo.ts) and
 * an initdb'd PostgreSQL data directory (tests/support/pg.ts). They live in one folder the global setup makes and
 * removes (tests/support/global-setup.ts) and names in CONCORD_TEST_TEMPLATES, which the test files' processes
 * inherit; outside a test run (the benchmarks use tests/support/pg.ts) there is none.
 */
import fs from "node:fs";
import path from "node:path";

/** The run's templates folder, or null outside a test run. */
export function runTemplatesDir(): string | null {
  const dir = process.env.CONCORD_TEST_TEMPLATES;
  return dir && fs.existsSync(dir) ? dir : null;
}

/**
 * `name` in the run's templates folder, made by `make` if no test file has made it yet: made under a name of this
 * process's own and renamed whole, so nobody copies half of one. Two files that race here each make one; the second
 * rename either replaces an equal file or (a folder) fails, and that copy is dropped. Null outside a test run.
 */
export async function runTemplate(name: string, make: (at: string) => void | Promise<void>): Promise<string | null> {
  const dir = runTemplatesDir();
  if (!dir) return null;
  const target = path.join(dir, name);
  if (fs.existsSync(target)) return target;
  const mine = `${target}.${process.pid}.tmp`;
  await make(mine);
  try {
    fs.renameSync(mine, target);
  } catch {
    fs.rmSync(mine, { recursive: true, force: true });
  }
  return fs.existsSync(target) ? target : null;
}
