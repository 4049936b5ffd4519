/**
 * npm run bench:import [-- --rows N] [--runs N] [--keep]
 *
 * Builds a long-form checklist CSV (default 100,000 rows: 10,000 items × 10
 * checklist items), then measures, each run in a fresh process of the kind
 * users run (node + tsx, like `npm run import`), alternating:
 *   floor  = papaparse streaming the file + bare inserts of the same logical
 *            rows (one item and one reference per item, one checklist item per
 *            row) into the same real tables, with their indexes and foreign
 *            keys, in one transaction of the data-access layer, no validation
 *            (see floorChild);
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
import { median } from "./bench-median";

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
    ["--import", report, "scripts/cli.mjs", "import", "--preset", "items-csv", "--project", "bench", csv],
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
 * configured as the app's), straight from papaparse's rows, no checks, in one
 * transaction of the data-access layer. The file is parsed first: a transaction
 * awaits nothing but its queries (app/dal.server.ts). The rows are written
 * FLOOR_ITEMS items at a time, three statements (items, their references, their
 * checklist items), each with one parameter, the rows as JSON that SQLite unpacks
 * (json_each): through the layer a statement costs time per parameter, and so
 * the floor costs what its bare prepared inserts of one row each did (the same
 * median within noise at 100,000 rows), where one layer statement per row cost
 * half as much again.
 */
async function floorChild(file: string, dbFile: string): Promise<ChildResult> {
  const Papa = (await import("papaparse")).default;
  const { sql } = await import("drizzle-orm");
  const { openDatabase } = await import("../db/client");
  const { dalOf } = await import("../app/dal.server");
  await freshDatabase(dbFile);
  const db = openDatabase(dbFile);
  const d = dalOf(db);
  const FLOOR_ITEMS = 50;
  const rssBeforeMb = process.memoryUsage().rss / 1e6;
  const t0 = performance.now();
  type ParsedItem = { sourceId: string; prompt: string; reference: string; domain: string; checks: [text: string, weight: number][] };
  const parsed: ParsedItem[] = [];
  await new Promise<void>((resolve, reject) => {
    Papa.parse(fs.createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 }) as unknown as File, {
      header: true,
      skipEmptyLines: true,
      step(res: Papa.ParseStepResult<Record<string, string>>) {
        const r = res.data;
        if (r.item_id !== parsed.at(-1)?.sourceId)
          parsed.push({ sourceId: r.item_id, prompt: r.prompt, reference: r.reference, domain: r.domain, checks: [] });
        parsed.at(-1)!.checks.push([r.checklist_item, Number(r.weight)]);
      },
      complete: () => resolve(),
      error: (err: Error) => reject(err),
    });
  });
  let rows = 0;
  await d.tx(async (q) => {
    const [project] = await d.rows<{ id: number }>(sql`insert into projects (slug, name) values ('bench', 'bench') returning id`, q);
    const [dataset] = await d.rows<{ id: number }>(
      sql`insert into datasets (project_id, name, version, source) values (${project.id}, 'checklists', 1, 'bench') returning id`,
      q,
    );
    for (let i = 0; i < parsed.length; i += FLOOR_ITEMS) {
      const chunk = parsed.slice(i, i + FLOOR_ITEMS);
      const items = chunk.map((it) => [it.sourceId, it.prompt, it.domain]);
      // Ids are given in the rows' order (json_each's, by key); RETURNING's own order is unspecified.
      const ids = (
        await d.rows<{ id: number }>(
          sql`insert into items (dataset_id, source_id, query, passage, domain, subject, task_type, language, metadata)
            select ${dataset.id}, value->>0, value->>1, null, value->>2, null, null, null, '{}' from json_each(${JSON.stringify(items)}) order by key returning id`,
          q,
        )
      )
        .map((r) => r.id)
        .sort((a, b) => a - b);
      const refs = chunk.map((it, k) => [ids[k], it.reference]);
      await d.rows(
        sql`insert into "references" (item_id, text, provenance) select value->>0, value->>1, 'import' from json_each(${JSON.stringify(refs)}) order by key`,
        q,
      );
      const checks = chunk.flatMap((it, k) => it.checks.map(([text, weight], position) => [ids[k], text, weight, position]));
      await d.rows(
        sql`insert into checklist_items (item_id, text, weight, position)
          select value->>0, value->>1, value->>2, value->>3 from json_each(${JSON.stringify(checks)}) order by key`,
        q,
      );
      rows += checks.length;
    }
  });
  const ms = performance.now() - t0;
  db.$client.close();
  return { ms, rowsIn: rows, rssBeforeMb, ...usage() };
}
