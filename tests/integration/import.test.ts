/**
 * Import through every preset on the project's own small fixtures
 * (tests/fixtures/import, original content), the malformed files, stability
 * on re-import, and the public files in ../shared/data when present.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { getDb, schema } from "../../db/client";
import { runImport, type ImportOptions } from "../../app/formats/import.server";
import { formatProblem } from "../../app/formats/problems";
import { eq } from "drizzle-orm";

const { file: dbFile } = useTempDatabase();
const FX = path.resolve(__dirname, "../fixtures/import");
const SHARED = path.resolve(__dirname, "../../../shared/data");

const imp = (preset: string, file: string, o: Partial<ImportOptions> = {}) =>
  runImport({ databaseFile: dbFile, projectSlug: "imp", preset, file: path.isAbsolute(file) ? file : path.join(FX, file), ...o });

function tableCounts() {
  const c = getDb().$client;
  const n = (t: string) => (c.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n;
  return Object.fromEntries(
    [
      "projects",
      "datasets",
      "items",
      "checklist_items",
      "references",
      "responses",
      "judges",
      "verdicts",
      "tasks",
      "units",
      "users",
      "assignments",
      "annotations",
    ].map((t) => [t, n(t)]),
  );
}

describe("generic presets", () => {
  it("items-jsonl: nested checklists, weighted or not, references; weight sums warn", async () => {
    const s = await imp("items-jsonl", "items.jsonl");
    expect(s.errors).toEqual([]);
    expect(s).toMatchObject({ items: 3, checklistItems: 6, references: 3, committed: true, unchanged: false });
    expect(s.warnings).toHaveLength(1);
    expect(formatProblem(s.warnings[0])).toBe('row 3, field "weight": checklist weights of item "q3" sum to 0.9, not 1');
    const q1 = getDb().select().from(schema.items).where(eq(schema.items.sourceId, "q1")).get()!;
    expect(q1.domain).toBe("Astronomy");
    expect(q1.metadata).toEqual({ source_note: "written for Concord tests" });
    const cl = getDb().select().from(schema.checklistItems).where(eq(schema.checklistItems.itemId, q1.id)).all();
    expect(cl.map((c) => [c.text, c.weight, c.position])).toEqual([
      ["Does the response name Jupiter?", 0.7, 0],
      ["Does the response avoid naming a second planet as the largest?", 0.3, 1],
    ]);
  });

  it("re-importing the same file changes nothing; a changed file makes a new version", async () => {
    const before = tableCounts();
    const again = await imp("items-jsonl", "items.jsonl");
    expect(again).toMatchObject({ unchanged: true, dataset: { name: "items", version: 1 } });
    expect(tableCounts()).toEqual(before);
    const tmp = path.join(path.dirname(dbFile), "items.jsonl");
    fs.writeFileSync(tmp, fs.readFileSync(path.join(FX, "items.jsonl"), "utf8").replace("Jupiter", "Jupiter (the gas giant)"));
    const changed = await imp("items-jsonl", tmp);
    expect(changed).toMatchObject({ unchanged: false, committed: true, dataset: { name: "items", version: 2 } });
    expect(tableCounts().items).toBe(before.items + 3);
  });

  it("items-csv: long form with a BOM, CRLF line ends and a quoted newline", async () => {
    const s = await imp("items-csv", "items.csv", { projectSlug: "csvp" });
    expect(s.errors).toEqual([]);
    expect(s).toMatchObject({ items: 2, checklistItems: 3, references: 2 });
    const c1 = getDb().select().from(schema.items).where(eq(schema.items.sourceId, "c1")).get()!;
    expect(c1.query).toBe("Write a haiku about rain.\r\nKeep it to three lines.");
    const texts = getDb()
      .select()
      .from(schema.checklistItems)
      .where(eq(schema.checklistItems.itemId, c1.id))
      .all()
      .map((c) => c.text);
    expect(texts).toEqual(["Does the response have three lines?", 'Does it mention "rain"?']);
  });

  it("a mapping names the prompt and checklist columns", async () => {
    const tmp = path.join(path.dirname(dbFile), "mapped.jsonl");
    fs.writeFileSync(tmp, '{"key": "m1", "ask": "Say hi.", "crit": ["Does it say hi?"], "area": "Chat"}\n');
    const s = await imp("items-jsonl", tmp, {
      projectSlug: "mapped",
      mapping: { id: "key", prompt: "ask", checklist: "crit", domain: "area" },
    });
    expect(s.errors).toEqual([]);
    expect(s).toMatchObject({ items: 1, checklistItems: 1 });
  });

  it("responses and verdicts attach to the imported items", async () => {
    // The items of this test's own project, so it runs alone too.
    const projectSlug = "attach";
    expect((await imp("items-jsonl", "items.jsonl", { projectSlug })).errors).toEqual([]);
    const r = await imp("responses", "responses.csv", { projectSlug, datasetName: "items" });
    expect(r.errors).toEqual([]);
    expect(r.responses).toBe(3);
    const v = await imp("verdicts", "verdicts.csv", { projectSlug });
    expect(v.errors).toEqual([]);
    expect(v.verdicts).toBe(5);
    const rows = getDb().select().from(schema.verdicts).all();
    expect(rows.map((x) => x.value).sort()).toEqual(["8", "No", "Yes", "Yes", "Yes"]);
    expect(rows.find((x) => x.value === "8")!.checklistItemId).toBeNull();
    const before = tableCounts();
    expect((await imp("verdicts", "verdicts.csv", { projectSlug })).unchanged).toBe(true);
    expect(tableCounts()).toEqual(before);
  });

  it("labels-long: placeholder annotators, submitted annotations, inferred level", async () => {
    const s = await imp("labels-long", "labels-long.csv", { projectSlug: "labels" });
    expect(s.errors).toEqual([]);
    expect(s).toMatchObject({ items: 5, annotations: 13 });
    const task = getDb().select().from(schema.tasks).where(eq(schema.tasks.kind, "imported-labels")).get()!;
    expect(task.config).toMatchObject({ level: "nominal" });
    expect(task.overlap).toBe(3);
    const ada = getDb().select().from(schema.users).where(eq(schema.users.email, "ada-lovelace@imported.concord.invalid")).get()!;
    expect(ada).toMatchObject({ name: "Ada Lovelace", disabled: true, passwordHash: "!" });
    const members = getDb().select().from(schema.memberships).where(eq(schema.memberships.userId, ada.id)).all();
    expect(members).toEqual([]);
    const labels = getDb()
      .select()
      .from(schema.annotations)
      .all()
      .map((a) => a.label);
    expect(new Set(labels)).toEqual(new Set(["Yes", "No"]));
    const before = tableCounts();
    expect((await imp("labels-long", "labels-long.csv", { projectSlug: "labels" })).unchanged).toBe(true);
    expect(tableCounts()).toEqual(before);
  });

  it("labels-wide: one column per annotator, blanks are missing, numbers are ordinal", async () => {
    const s = await imp("labels-wide", "labels-wide.csv", { projectSlug: "wide", annotators: ["rater_a", "rater_b"] });
    expect(s.errors).toEqual([]);
    expect(s).toMatchObject({ items: 5, annotations: 9 });
    const task = getDb().select().from(schema.tasks).where(eq(schema.tasks.name, "labels-wide")).get()!;
    expect(task.config).toMatchObject({ level: "ordinal" });
    const interval = await imp("labels-wide", "labels-wide.csv", {
      projectSlug: "wide2",
      level: "interval",
      annotators: ["rater_a", "rater_b"],
    });
    expect(interval.committed).toBe(true);
  });
});

describe("public-layout presets on original fixtures", () => {
  it("refinebench", async () => {
    const s = await imp("refinebench", "refinebench-mini.json", { projectSlug: "rb" });
    expect(s).toMatchObject({ items: 2, checklistItems: 3, references: 2, errorCount: 0 });
    const it2 = getDb().select().from(schema.items).where(eq(schema.items.sourceId, "rb-toy-2")).get()!;
    expect(it2).toMatchObject({ domain: "Law", subject: "Contracts", taskType: "free-form" });
    expect(it2.passage).toContain("grounding");
  });

  it("fb-bench then fb-bench-judgments (是/否 → Yes/No)", async () => {
    const s = await imp("fb-bench", "fb-bench-mini.json", { projectSlug: "fb" });
    expect(s).toMatchObject({ items: 3, checklistItems: 6, references: 1, errorCount: 0 });
    expect(s.warnings.map(formatProblem)).toEqual([
      expect.stringMatching(/row 2, field "weight": checklist weights of item "fb-[0-9a-f]+" sum to 0.8, not 1/),
    ]);
    const j = await imp("fb-bench-judgments", "fb-judgment-mini.jsonl", { projectSlug: "fb" });
    expect(j).toMatchObject({ responses: 2, verdicts: 6, errorCount: 0 });
    const values = getDb()
      .select({ v: schema.verdicts.value })
      .from(schema.verdicts)
      .innerJoin(schema.judges, eq(schema.judges.id, schema.verdicts.judgeId))
      .where(eq(schema.judges.name, "toy-judge"))
      .all();
    expect(values.map((x) => x.v).sort()).toEqual(["1", "1", "No", "Yes", "Yes", "Yes"]);
  });

  it("fb-bench-judgments before the benchmark: a clear refusal", async () => {
    const s = await imp("fb-bench-judgments", "fb-judgment-mini.jsonl", { projectSlug: "fb-empty" });
    expect(s.committed).toBe(false);
    expect(formatProblem(s.errors[0])).toMatch(
      /row 1, field "item": unknown item "fb-[0-9a-f]+": it is not in this project; import the benchmark first/,
    );
  });

  it("c3ebench", async () => {
    const s = await imp("c3ebench", "ravel-mini.jsonl", { projectSlug: "c3" });
    expect(s).toMatchObject({ items: 2, references: 2, errorCount: 0 });
    const cloze = getDb().select().from(schema.items).where(eq(schema.items.sourceId, "cloze_en_0")).get()!;
    expect(cloze.passage).toBe("## Morning\n\nThe kettle sings\n[fill in the blank]\nand the day begins.");
    expect(cloze).toMatchObject({ taskType: "cloze", language: "en" });
  });

  it("llmbar: dataset then judge results in both orders onto the same version", async () => {
    const a = await imp("llmbar", "LLMBar/Toy/dataset.json", { projectSlug: "bar" });
    expect(a).toMatchObject({ items: 3, responses: 6, dataset: { name: "LLMBar Toy", version: 1 } });
    const b = await imp("llmbar", "LLMBar/Toy/evaluators/ToyJudge/Plain/result.json", { projectSlug: "bar" });
    expect(b).toMatchObject({ verdicts: 6, errorCount: 0, dataset: { name: "LLMBar Toy", version: 1 } });
    const judges = getDb()
      .select({ name: schema.judges.name })
      .from(schema.judges)
      .all()
      .map((j) => j.name);
    expect(judges).toEqual(expect.arrayContaining(["ToyJudge/Plain", "ToyJudge/Plain (swapped)"]));
  });
});

describe("malformed files: a specific message each, and the database unchanged", () => {
  const cases: [string, string, string, RegExp][] = [
    ["missing column", "labels-long", "bad/missing-column.csv", /^row 1, field "label": missing column "label"/],
    ["wrong type", "items-csv", "bad/wrong-type.csv", /^row 2, field "weight": expected a number, got "heavy"$/],
    ["duplicate IDs", "items-jsonl", "bad/duplicate-ids.jsonl", /^row 3, field "id": duplicate ID "d1" \(first seen at row 1\)$/],
    [
      "truncated JSON line",
      "items-jsonl",
      "bad/truncated.jsonl",
      /^row 2: the JSON on this line is cut off before it ends \(truncated line at the end of the file\)$/,
    ],
    ["unbalanced quote", "labels-long", "bad/unbalanced-quote.csv", /^row 2: a quoted field is never closed \(unbalanced quote\)/],
    ["0-byte file", "labels-long", "bad/empty.csv", /^file: The file is empty \(0 bytes\)\.$/],
    ["header only", "labels-long", "bad/header-only.csv", /^file: The file has a header row but no data rows\.$/],
    ["non-UTF-8 text", "labels-long", "bad/latin1.csv", /^row 2: not UTF-8 text$/],
    ["binary file", "labels-long", "bad/workbook.csv", /^file: This is not a text file: it looks like a ZIP archive/],
  ];
  for (const [what, preset, file, message] of cases) {
    it(what, async () => {
      const before = tableCounts();
      for (const dryRun of [true, false]) {
        const s = await imp(preset, file, { projectSlug: "bad-project", dryRun });
        expect(s.committed).toBe(false);
        expect(s.errorCount).toBeGreaterThan(0);
        expect(formatProblem(s.errors[0])).toMatch(message);
      }
      expect(tableCounts()).toEqual(before);
    });
  }

  it("the non-UTF-8 refusal names the byte and line", async () => {
    const { readCsv } = await import("../../app/formats/source.server");
    await expect(readCsv(path.join(FX, "bad/latin1.csv"), { row: () => {}, problem: () => {} })).rejects.toThrow(
      /not UTF-8 text \(byte 0xE9 at byte 28, line 2\)/,
    );
  });

  it("a dry run shows counts and problems and writes nothing", async () => {
    const before = tableCounts();
    const s = await imp("items-jsonl", "items.jsonl", { projectSlug: "dry-run-only", dryRun: true });
    expect(s).toMatchObject({ items: 3, checklistItems: 6, committed: false, dryRun: true, errorCount: 0, warningCount: 1 });
    expect(tableCounts()).toEqual(before);
  });
});

describe("public data in ../shared/data", () => {
  const present = fs.existsSync(SHARED);
  if (!present) {
    it.skip("skipped: ../shared/data is not present (the public files are not part of the repository)", () => {});
    return;
  }
  const D = (p: string) => path.join(SHARED, p);
  it("every file imports through its preset", async () => {
    const o = { projectSlug: "public" };
    const rb = await imp("refinebench", D("refinebench-page/static/data/refinebench_samples.json"), o);
    expect(rb).toMatchObject({ items: 109, checklistItems: 1016, errorCount: 0 });
    const fb = await imp("fb-bench", D("FB-Bench/data/feedback-benchmark/fb_bench_dataset_v3.json"), o);
    expect(fb).toMatchObject({ items: 591, checklistItems: 1596, references: 194, errorCount: 0, warningCount: 0 });
    for (const f of fs.readdirSync(D("FB-Bench/data/feedback-benchmark/model_judgment"), { recursive: true }) as string[]) {
      if (!f.endsWith(".jsonl")) continue;
      const j = await imp("fb-bench-judgments", D(`FB-Bench/data/feedback-benchmark/model_judgment/${f}`), o);
      expect(j).toMatchObject({ responses: 591, verdicts: 1596 + 591, errorCount: 0 });
    }
    const ravel = D("RAVEL-Reasoning-Agents-Text-Eval/english_dataset");
    for (const f of (fs.readdirSync(ravel, { recursive: true }) as string[]).filter((f) => f.endsWith(".jsonl"))) {
      const s = await imp("c3ebench", path.join(ravel, f), o);
      expect(s.errorCount, f).toBe(0);
      expect(s.items).toBeGreaterThan(90);
    }
    const bar = D("LLMBar/Dataset");
    const files = (fs.readdirSync(bar, { recursive: true }) as string[]).filter((f) => /(dataset|result)\.json$/.test(f)).sort();
    for (const f of files) {
      const s = await imp("llmbar", path.join(bar, f), o);
      expect(s.errorCount, f).toBe(0);
      if (f.endsWith("result.json")) expect(s.verdicts, f).toBe(2 * s.items);
    }
    const before = tableCounts();
    expect((await imp("refinebench", D("refinebench-page/static/data/refinebench_samples.json"), o)).unchanged).toBe(true);
    expect(tableCounts()).toEqual(before);
  }, 120_000);
});
