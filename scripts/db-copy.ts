/**
 * npm run db:copy -- --from FILE.db|postgres://… --to postgres://…|FILE.db
 *
 * Moves a Concord deployment between SQLite and PostgreSQL (either way): every
 * table, ids kept, in one transaction on the target, which must be a new or
 * empty database. Each table is then checked on both sides (row count and a
 * hash of its rows) and the checks are printed. Exit codes: 0 copied and
 * equal, 1 a table differs, 2 bad command line or a target with rows (nothing
 * written).
 */
import { parseArgs } from "node:util";
import { isPostgresUrl } from "../db/client-pg";
import { CopyError, copyDatabase, maskUrl, type Side } from "../db/copy";

const USAGE = "usage: npm run db:copy -- --from FILE.db|postgres://… --to postgres://…|FILE.db";

function fail(message: string): never {
  console.error(`db:copy: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({ options: { from: { type: "string" }, to: { type: "string" }, help: { type: "boolean", default: false } } }));
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.from || !values.to) fail(`--from and --to are required.\n${USAGE}`);
const side = (v: string): Side =>
  isPostgresUrl(v) ? { kind: "postgres", url: v } : { kind: "sqlite", file: v.startsWith("file:") ? v.slice("file:".length) : v };
const from = side(values.from);
const to = side(values.to);
if (from.kind === to.kind) fail("copy between SQLite and PostgreSQL: one side a file, the other a postgres:// URL.");
const name = (s: Side) => (s.kind === "postgres" ? maskUrl(s.url) : s.file);

try {
  const checks = await copyDatabase(from, to, (line) => console.error(line));
  console.log(`Copied ${name(from)} → ${name(to)}`);
  console.log("table\tsource rows\ttarget rows\tequal");
  for (const c of checks) console.log(`${c.table}\t${c.source}\t${c.target}\t${c.same ? "yes" : "NO"}`);
  const bad = checks.filter((c) => !c.same);
  if (bad.length) {
    console.error(`db:copy: ${bad.length} table(s) differ after the copy: ${bad.map((c) => c.table).join(", ")}`);
    process.exit(1);
  }
} catch (err) {
  if (err instanceof CopyError) fail(err.message);
  // Driver errors may carry the connection string: say what failed without it.
  fail(`the copy failed and nothing was written: ${maskUrl(String((err as Error).message ?? err))}`);
}
