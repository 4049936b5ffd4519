/**
 * Import and export through the data-access layer, the same scenario on
 * SQLite and on PostgreSQL (issue 17): a benchmark (items with checklists and
 * references), its responses, a judge's verdicts and another tool's labels
 * are imported with the real runImport; the same benchmark again changes
 * nothing; a response whose text changed is refused with nothing written; a
 * benchmark of 2,500 items goes in whole, every checklist item under its own
 * item; the exports list what was imported. Expected values are counted from
 * the fixture files (tests/fixtures/import) and the generated file, not taken
 * from a previous run.
 */
import fs from "node:fs";
import path from "node:path";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, getDal, initDal } from "../../app/dal.server";
import { runImport } from "../../app/formats/import.server";
import { exportRows } from "../../app/formats/export.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const FX = path.resolve(__dirname, "../fixtures/import");
const dir = tempDir("concord-import-dialects-");

/** The fixture's records, counted here from the files themselves. */
const itemsJsonl = fs
  .readFileSync(path.join(FX, "items.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as { checklist: unknown[]; reference?: string | string[] });
const responseRows = fs.readFileSync(path.join(FX, "responses.csv"), "utf8").trim().split("\n").length - 1;
const verdictRows = fs.readFileSync(path.join(FX, "verdicts.csv"), "utf8").trim().split("\n").length - 1;
const labelLines = fs.readFileSync(path.join(FX, "labels-long.csv"), "utf8").trim().split("\n").slice(1);
const references = itemsJsonl.reduce(
  (n, r) => n + (r.reference === undefined ? 0 : Array.isArray(r.reference) ? r.reference.length : 1),
  0,
);
const checklist = itemsJsonl.reduce((n, r) => n + r.checklist.length, 0);

const BIG = 2500;
function bigBenchmark(): string {
  const file = path.join(dir, "big.jsonl");
  const lines: string[] = [];
  for (let i = 1; i <= BIG; i++)
    lines.push(JSON.stringify({ id: `b${i}`, prompt: `Question ${i}?`, checklist: [`Does it answer ${i}?`, `Is ${i} explained?`] }));
  fs.writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`import and export on ${dialect}`, () => {
    let url = "";
    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") url = path.join(tempDir(), "import.db");
      else {
        testPg = await startTestPg();
        url = await testPg.createDatabase("import_dialects");
      }
      process.env.DATABASE_URL = url;
      await initDal();
    });

    const rows = async (table: "items" | "checklistItems" | "references" | "responses" | "verdicts" | "annotations" | "datasets") => {
      const d = getDal();
      return Number((await d.q.select({ n: count() }).from(d.t[table]))[0].n);
    };

    it("imports a benchmark, its responses, verdicts and labels; the same file again changes nothing", async () => {
      const items = await runImport({ databaseFile: url, projectSlug: "dia", preset: "items-jsonl", file: path.join(FX, "items.jsonl") });
      expect(items.errors).toEqual([]);
      expect(items).toMatchObject({ committed: true, items: itemsJsonl.length, checklistItems: checklist, references });
      expect(items.dataset).toMatchObject({ name: "items", version: 1 });
      const d = getDal();
      const ds = (await d.q.select().from(d.t.datasets).where(eq(d.t.datasets.id, items.dataset!.id!)))[0];
      expect(ds).toMatchObject({ name: "items", version: 1 });
      expect([await rows("items"), await rows("checklistItems"), await rows("references")]).toEqual([
        itemsJsonl.length,
        checklist,
        references,
      ]);

      const responses = await runImport({
        databaseFile: url,
        projectSlug: "dia",
        preset: "responses",
        file: path.join(FX, "responses.csv"),
      });
      expect(responses.errors).toEqual([]);
      expect(await rows("responses")).toBe(responseRows);

      const verdicts = await runImport({ databaseFile: url, projectSlug: "dia", preset: "verdicts", file: path.join(FX, "verdicts.csv") });
      expect(verdicts.errors).toEqual([]);
      expect(await rows("verdicts")).toBe(verdictRows);

      const labels = await runImport({
        databaseFile: url,
        projectSlug: "dia",
        preset: "labels-long",
        file: path.join(FX, "labels-long.csv"),
      });
      expect(labels.errors).toEqual([]);
      expect(await rows("annotations")).toBe(labelLines.length);

      const again = await runImport({ databaseFile: url, projectSlug: "dia", preset: "items-jsonl", file: path.join(FX, "items.jsonl") });
      expect(again).toMatchObject({ unchanged: true, committed: true, errorCount: 0 });
      expect(await rows("datasets")).toBe(2); // the benchmark and the labels' dataset, nothing more

      // The exports: one row per label; one row per verdict (every imported response has one), and one per labelled
      // unit (the response standing for it, without verdicts).
      const project = (await d.q.select().from(d.t.projects).where(eq(d.t.projects.slug, "dia")))[0];
      const ann = await exportRows(d, project.id, "annotations");
      expect(ann).toHaveLength(labelLines.length);
      expect(ann.map((r) => `${r.item},${r.annotator},${r.label}`).sort()).toEqual(labelLines.map((l) => l).sort());
      expect(await exportRows(d, project.id, "runs")).toHaveLength(verdictRows + new Set(labelLines.map((l) => l.split(",")[0])).size);
    });

    it("refuses a response whose text changed, writing nothing", async () => {
      const changed = path.join(dir, `changed-${dialect}.csv`);
      fs.writeFileSync(
        changed,
        fs.readFileSync(path.join(FX, "responses.csv"), "utf8").replace('"Saturn, probably."', '"Jupiter, surely."'),
      );
      const before = await rows("responses");
      const s = await runImport({ databaseFile: url, projectSlug: "dia", preset: "responses", file: changed });
      expect(s.conflictCount).toBe(1);
      expect(s.committed).toBe(false);
      expect(await rows("responses")).toBe(before);
    });

    it("imports 2,500 items whole, every checklist item under its own item", async () => {
      const before = await rows("items");
      const s = await runImport({ databaseFile: url, projectSlug: "big", preset: "items-jsonl", file: bigBenchmark() });
      expect(s.errors).toEqual([]);
      expect(await rows("items")).toBe(before + BIG);
      const d = getDal();
      const { items: i, checklistItems: c } = d.t;
      const pairs = await d.q
        .select({ id: i.sourceId, text: c.text })
        .from(c)
        .innerJoin(i, eq(i.id, c.itemId))
        .where(eq(i.datasetId, s.dataset!.id!));
      expect(pairs).toHaveLength(2 * BIG);
      for (const p of pairs) expect([`Does it answer ${p.id.slice(1)}?`, `Is ${p.id.slice(1)} explained?`]).toContain(p.text);
    });
  });
}
