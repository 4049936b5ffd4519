/**
 * npm run bench:import [-- --rows N] [--runs N] [--keep]
 *
 * Builds a long-form checklist CSV (default 100,000 rows: 10,000 items × 10
 * checklist items), then measures, each run in a fresh process of the kind
 * users run (node + tsx, like `npm run import`), alternating:
 *   floor  = papaparse streaming the file + bare prepared-statement inserts of
 *            the same logical rows (one item and one reference per item, one
 *            checklist item per row) into the same real tables, with their
 *            indexes and foreign keys, in one transaction, no validation;
 *   import = `runImport` with the `items-csv` preset, exactly what the CLI
 *            calls (validation, items, checklist items, references, content
 *            hash, one transaction).
 * Both start from a freshly migrated database file (migrating is not import
 * work). Prints the median of each, their ratio (target ≤ 2) and the import's
 * peak RSS (target < 300 MB) next to the RSS the process had before the
 * import started (node + tsx + the app's modules), which dominates it.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "100000" },
    runs: { type: "string", default: "5" },
    keep: { type: "boolean", default: false },
    child: { type: "string" },
    csv: { type: "string" },
    db: { type: "string" },
  },
});

type ChildResult = { ms: number; rowsIn: number; rssBeforeMb: number; peakRssMb: number; heapUsedMb: number };

if (values.child) {
  // One measurement in this process; prints a JSON line on stdout.
  const result = values.child === "floor" ? await floorChild(values.csv!, values.db!) : await importChild(values.csv!, values.db!);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
if (!Number.isInteger(ROWS) || ROWS < 10 || !Number.isInteger(RUNS) || RUNS < 1) {
  console.error("bench:import: --rows must be a whole number ≥ 10 and --runs ≥ 1");
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

function runChild(kind: "floor" | "import", n: number): ChildResult {
  const db = path.join(dir, `${kind}-${n}.db`);
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ["--import", "tsx", self, "--child", kind, "--csv", csv, "--db", db], {
    encoding: "utf8",
    cwd: path.resolve(path.dirname(self), ".."),
  });
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(db + suffix, { force: true });
  if (r.status !== 0) throw new Error(`bench:import: the ${kind} run failed (exit ${r.status}):\n${r.stderr}`);
  const res = JSON.parse(r.stdout.trim().split("\n").pop()!) as ChildResult;
  if (res.rowsIn !== ROWS) throw new Error(`bench:import: the ${kind} run wrote ${res.rowsIn} checklist items, not ${ROWS}`);
  return res;
}

/** `tsx scripts/import.ts` as users run it, on a fresh database; its peak RSS is read at exit by a one-line preload. */
function runCli(): { peakRssMb: number; wallMs: number } {
  const db = path.join(dir, "cli.db");
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const report = 'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss-kb="+process.resourceUsage().maxRSS+"\\n"))';
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ["--import", report, "--import", "tsx", "scripts/import.ts", "--preset", "items-csv", "--project", "bench", csv],
    {
      encoding: "utf8",
      cwd: root,
      env: { ...process.env, DATABASE_URL: db },
    },
  );
  const wallMs = performance.now() - t0;
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(db + suffix, { force: true });
  const kb = Number(/maxrss-kb=(\d+)/.exec(r.stderr)?.[1]);
  if (r.status !== 0 || !kb) throw new Error(`bench:import: the CLI run failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  return { peakRssMb: kb / 1024, wallMs };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

buildCsv();
const mb = fs.statSync(csv).size / 1e6;
const load0 = os.loadavg();
const floors: ChildResult[] = [];
const imports: ChildResult[] = [];
for (let i = 0; i < RUNS; i++) {
  floors.push(runChild("floor", i));
  imports.push(runChild("import", i));
}
const cli = runCli();
const load1 = os.loadavg();
const f = median(floors.map((r) => r.ms));
const m = median(imports.map((r) => r.ms));
const ratio = m / f;
const peak = Math.max(...imports.map((r) => r.peakRssMb));
const base = median(imports.map((r) => r.rssBeforeMb));
const floorPeak = Math.max(...floors.map((r) => r.peakRssMb));
const ms = (xs: ChildResult[]) => xs.map((x) => x.ms.toFixed(0)).join(", ");
console.log(
  `bench:import — ${ROWS.toLocaleString("en")} rows, ${mb.toFixed(1)} MB CSV (${ROWS / PER_ITEM} items × ${PER_ITEM} checklist items), ${RUNS} runs each, fresh node+tsx process per run`,
);
console.log(
  `  load average: ${load0.map((x) => x.toFixed(2)).join(" ")} → ${load1.map((x) => x.toFixed(2)).join(" ")} (${os.cpus().length} CPUs)`,
);
console.log(
  `  floor  (papaparse + bare prepared inserts into the real tables, one transaction): median ${f.toFixed(0)} ms  [runs: ${ms(floors)}]`,
);
console.log(
  `  import (items-csv via runImport, validated, hashed, one transaction):           median ${m.toFixed(0)} ms  [runs: ${ms(imports)}]`,
);
console.log(`  ratio import/floor: ${ratio.toFixed(2)}× (target ≤ 2.00×) ${ratio <= 2 ? "OK" : "OVER"}`);
console.log(
  `  peak RSS of the import process: ${peak.toFixed(0)} MB (target < 300 MB) ${peak < 300 ? "OK" : "OVER"}` +
    ` — ${base.toFixed(0)} MB before the import started (node + tsx + modules + open database); floor process peak ${floorPeak.toFixed(0)} MB`,
);
console.log(
  `  the CLI itself (npm run import's command, node + tsx, one run): peak RSS ${cli.peakRssMb.toFixed(0)} MB ${cli.peakRssMb < 300 ? "OK" : "OVER"}, ${cli.wallMs.toFixed(0)} ms wall time including start-up`,
);
if (values.keep) console.log(`  kept: ${dir}`);
else fs.rmSync(dir, { recursive: true, force: true });

// ─── Child processes ─────────────────────────────────────────────────────────

async function freshDatabase(file: string): Promise<void> {
  const { openDatabase } = await import("../db/client");
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  openDatabase(file).$client.close();
}

function usage(): Pick<ChildResult, "peakRssMb" | "heapUsedMb"> {
  return { peakRssMb: process.resourceUsage().maxRSS / 1024, heapUsedMb: process.memoryUsage().heapUsed / 1e6 };
}

async function importChild(file: string, dbFile: string): Promise<ChildResult> {
  const { runImport } = await import("../app/formats/import.server");
  await freshDatabase(dbFile);
  const rssBeforeMb = process.memoryUsage().rss / 1e6;
  const t0 = performance.now();
  const s = await runImport({ databaseFile: dbFile, projectSlug: "bench", preset: "items-csv", file });
  const ms = performance.now() - t0;
  if (s.errorCount || !s.committed) throw new Error(`import failed: ${JSON.stringify(s.errors.slice(0, 3))}`);
  return { ms, rowsIn: s.checklistItems, rssBeforeMb, ...usage() };
}

/**
 * The floor: the same logical rows into the same tables (items, references,
 * checklist_items, with their indexes and foreign keys, on a connection
 * configured as the app's), straight from papaparse's rows, no checks.
 */
async function floorChild(file: string, dbFile: string): Promise<ChildResult> {
  const Papa = (await import("papaparse")).default;
  const Database = (await import("better-sqlite3")).default;
  await freshDatabase(dbFile);
  const db = new Database(dbFile);
  db.pragma("journal_mode = WAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.pragma("synchronous = NORMAL");
  const rssBeforeMb = process.memoryUsage().rss / 1e6;
  const t0 = performance.now();
  db.exec("begin immediate");
  const projectId = db.prepare("insert into projects (slug, name) values ('bench', 'bench')").run().lastInsertRowid;
  const datasetId = db
    .prepare("insert into datasets (project_id, name, version, source) values (?, 'checklists', 1, 'bench')")
    .run(projectId).lastInsertRowid;
  const insItem = db.prepare(
    "insert into items (dataset_id, source_id, query, passage, domain, subject, task_type, language, metadata) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insRef = db.prepare("insert into \"references\" (item_id, text, provenance) values (?, ?, 'import')");
  const insCheck = db.prepare("insert into checklist_items (item_id, text, weight, position) values (?, ?, ?, ?)");
  let current: string | undefined;
  let itemId: number | bigint = 0;
  let position = 0;
  let rows = 0;
  await new Promise<void>((resolve, reject) => {
    Papa.parse(fs.createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 }) as unknown as File, {
      header: true,
      skipEmptyLines: true,
      step(res: Papa.ParseStepResult<Record<string, string>>) {
        const r = res.data;
        if (r.item_id !== current) {
          current = r.item_id;
          itemId = insItem.run(datasetId, r.item_id, r.prompt, null, r.domain, null, null, null, "{}").lastInsertRowid;
          insRef.run(itemId, r.reference);
          position = 0;
        }
        insCheck.run(itemId, r.checklist_item, Number(r.weight), position++);
        rows++;
      },
      complete: () => resolve(),
      error: (err: Error) => reject(err),
    });
  });
  db.exec("commit");
  const ms = performance.now() - t0;
  db.close();
  return { ms, rowsIn: rows, rssBeforeMb, ...usage() };
}
