/**
 * Loads the original demo content into the database named by DATABASE_URL.
 *   --if-empty  do nothing if the database already has users (used by `npm run demo`)
 *   --reset     delete the database file first (SQLite only)
 * On PostgreSQL (DATABASE_URL=postgres://…) the demo is built in a scratch
 * SQLite file and copied in with its ids by the same code as `npm run db:copy`,
 * so both dialects hold the same rows.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { databasePathFromEnv, openDatabase } from "../db/client";
import { isPostgresUrl, openPgDatabase } from "../db/client-pg";
import { copyDatabase, maskUrl } from "../db/copy";
import { DEMO_ACCOUNTS, DEMO_PROJECT, hasUsers, seedDemo, type SeedSummary } from "../seeds/demo";

const args = new Set(process.argv.slice(2));
const file = databasePathFromEnv();

const loaded = (where: string, s: SeedSummary) =>
  console.log(
    `Concord: loaded the demo into ${where}: ${s.items} items, ${s.checklistItems} checklist items, ` +
      `${s.responses} responses, ${s.verdicts} verdicts, ${s.tasks} tasks, ${s.annotations} annotations.`,
  );

function printAccounts(): void {
  const port = process.env.PORT ?? "3000";
  console.log(`\nDemo project "${DEMO_PROJECT.name}" at http://localhost:${port}/p/${DEMO_PROJECT.slug}`);
  console.log("Demo accounts (email / password / role):");
  for (const a of DEMO_ACCOUNTS) console.log(`  ${a.email.padEnd(22)} ${a.password.padEnd(20)} ${a.isSiteAdmin ? "site admin" : a.role}`);
  console.log("");
}

if (isPostgresUrl(file)) {
  const where = maskUrl(file);
  if (args.has("--reset")) {
    console.error(`Concord: --reset deletes a SQLite file; on PostgreSQL drop and create the database yourself, then seed it.`);
    process.exit(1);
  }
  try {
    const pg = await openPgDatabase(file, { max: 1 });
    const { rows } = await pg.$client.query("SELECT 1 FROM users LIMIT 1");
    await pg.$client.end();
    if (rows.length > 0) {
      if (!args.has("--if-empty")) {
        console.error(`Concord: ${where} already has data; seed a new, empty database.`);
        process.exit(1);
      }
      console.log(`Concord: ${where} already has data; the demo content was not loaded again.`);
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-seed-"));
      try {
        const scratch = path.join(dir, "demo.db");
        const db = openDatabase(scratch);
        const s = await seedDemo(db);
        db.$client.close();
        const checks = await copyDatabase({ kind: "sqlite", file: scratch }, { kind: "postgres", url: file });
        const differ = checks.filter((c) => !c.same);
        if (differ.length > 0) throw new Error(`the copy differs in ${differ.map((c) => c.table).join(", ")}`);
        loaded(where, s);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  } catch (err) {
    console.error(`Concord: ${maskUrl(String((err as Error).message ?? err))}`);
    process.exit(1);
  }
  printAccounts();
  process.exit(0);
}
if (args.has("--reset") && file !== ":memory:") {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
}

let db;
try {
  db = openDatabase(file);
} catch (err) {
  console.error(`Concord: ${(err as Error).message}`);
  process.exit(1);
}

if (hasUsers(db)) {
  if (!args.has("--if-empty")) {
    console.error(`Concord: ${file} already has data; use --reset to start over.`);
    process.exit(1);
  }
  console.log(`Concord: ${file} already has data; the demo content was not loaded again.`);
} else {
  loaded(file, await seedDemo(db));
}
db.$client.close();
printAccounts();
