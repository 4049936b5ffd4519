/**
 * npm run bench:import [-- --rows N]
 *
 * Builds a long-form checklist CSV (default 100,000 rows: 10,000 items × 10
 * checklist items), then measures in the same process:
 *   floor  = papaparse streaming the file + bare prepared-statement inserts of
 *            the same rows into one table, in one transaction;
 *   import = `items-csv` through the real importer (validation, items,
 *            checklist items, references, content hash, one transaction).
 * Prints both times, their ratio (target ≤ 2) and the peak RSS (target < 300 MB).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { runImport } from "../app/formats/import.server";
import { readCsv } from "../app/formats/source.server";

const { values } = parseArgs({ options: { rows: { type: "string", default: "100000" }, keep: { type: "boolean", default: false } } });
const ROWS = Number(values.rows);
if (!Number.isInteger(ROWS) || ROWS < 10) {
  console.error("bench:import: --rows must be a whole number ≥ 10");
  process.exit(2);
}
const PER_ITEM = 10;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-import-"));
const csv = path.join(dir, "checklists.csv");

function buildCsv() {
  const fd = fs.openSync(csv, "w");
  fs.writeSync(fd, "item_id,prompt,reference,domain,checklist_item,weight\n");
  let buf = "";
  for (let r = 0; r < ROWS; r++) {
    const item = Math.floor(r / PER_ITEM);
    const k = r % PER_ITEM;
    buf += `bench-${item},"Prompt number ${item}: explain, in detail, topic ${item % 97}.\nSecond line of the prompt.",Reference answer ${item},Domain ${item % 11},Does the response cover point ${k} of item ${item}?,0.1\n`;
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = "";
    }
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
}

async function floor(): Promise<number> {
  const file = path.join(dir, "floor.db");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("create table rows (item_id text, prompt text, reference text, domain text, checklist_item text, weight real)");
  const ins = db.prepare("insert into rows values (?, ?, ?, ?, ?, ?)");
  const t0 = performance.now();
  db.exec("begin");
  await readCsv(csv, {
    row: (r) => void ins.run(r.item_id, r.prompt, r.reference, r.domain, r.checklist_item, Number(r.weight)),
    problem: (p) => {
      throw new Error(`floor: ${p.message}`);
    },
  });
  db.exec("commit");
  const ms = performance.now() - t0;
  db.close();
  return ms;
}

async function importOnce(n: number): Promise<number> {
  const file = path.join(dir, `import-${n}.db`);
  const t0 = performance.now();
  const s = await runImport({ databaseFile: file, projectSlug: "bench", preset: "items-csv", file: csv });
  const ms = performance.now() - t0;
  if (s.errorCount || s.checklistItems !== ROWS) throw new Error(`import failed: ${JSON.stringify(s.errors.slice(0, 3))}`);
  return ms;
}

buildCsv();
const mb = fs.statSync(csv).size / 1e6;
// Migrating a fresh database is not import work: do it once outside the timing.
const floors: number[] = [];
const imports: number[] = [];
for (let i = 0; i < 3; i++) {
  floors.push(await floor());
  fs.rmSync(path.join(dir, "floor.db"), { force: true });
  imports.push(await importOnce(i));
}
const best = (xs: number[]) => Math.min(...xs);
const peakMb = process.resourceUsage().maxRSS / 1024;
const ratio = best(imports) / best(floors);
console.log(`bench:import — ${ROWS.toLocaleString("en")} rows, ${mb.toFixed(1)} MB CSV (${ROWS / PER_ITEM} items × ${PER_ITEM} checklist items)`);
console.log(`  floor  (papaparse + bare prepared inserts, one transaction): ${best(floors).toFixed(0)} ms  [runs: ${floors.map((x) => x.toFixed(0)).join(", ")}]`);
console.log(`  import (items-csv, validated, one transaction):              ${best(imports).toFixed(0)} ms  [runs: ${imports.map((x) => x.toFixed(0)).join(", ")}]`);
console.log(`  ratio import/floor: ${ratio.toFixed(2)}× (target ≤ 2.00×) ${ratio <= 2 ? "OK" : "OVER"}`);
console.log(`  peak RSS: ${peakMb.toFixed(0)} MB (target < 300 MB) ${peakMb < 300 ? "OK" : "OVER"}`);
if (!values.keep) fs.rmSync(dir, { recursive: true, force: true });
