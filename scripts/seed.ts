/**
 * Loads the original demo content into the database named by DATABASE_URL.
 *   --if-empty  do nothing if the database already has users (used by `npm run demo`)
 *   --reset     delete the database file first
 */
import fs from "node:fs";
import { databasePathFromEnv, openDatabase } from "../db/client";
import { DEMO_ACCOUNTS, DEMO_PROJECT, hasUsers, seedDemo } from "../seeds/demo";

const args = new Set(process.argv.slice(2));
const file = databasePathFromEnv();
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
  const s = await seedDemo(db);
  console.log(
    `Concord: loaded the demo into ${file}: ${s.items} items, ${s.checklistItems} checklist items, ` +
      `${s.responses} responses, ${s.verdicts} verdicts, ${s.tasks} tasks, ${s.annotations} annotations.`,
  );
}
db.$client.close();

const port = process.env.PORT ?? "3000";
console.log(`\nDemo project "${DEMO_PROJECT.name}" at http://localhost:${port}/p/${DEMO_PROJECT.slug}`);
console.log("Demo accounts (email / password / role):");
for (const a of DEMO_ACCOUNTS) console.log(`  ${a.email.padEnd(22)} ${a.password.padEnd(20)} ${a.isSiteAdmin ? "site admin" : a.role}`);
console.log("");
