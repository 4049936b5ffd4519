/**
 * Exports: documented columns, CSV that a strict RFC 4180 reader (papaparse,
 * the same shape pandas' read_csv needs) loads with a header and equal-length
 * rows, JSONL with the same keys, and the round trip: export annotations,
 * import them into a new project, and get identical agreement figures.
 */
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { getDb } from "../../db/client";
import { runImport } from "../../app/formats/import.server";
import { COLUMNS, EXPORT_KINDS, exportToString } from "../../app/formats/export.server";
import { taskReport } from "../../app/reports/report.server";

const { file: dbFile } = useTempDatabase();
const FX = path.resolve(__dirname, "../fixtures/import");
const ROOT = path.resolve(__dirname, "../..");

const imp = (preset: string, file: string, projectSlug: string) =>
  runImport({
    databaseFile: dbFile,
    projectSlug,
    preset,
    file: path.isAbsolute(file) ? file : path.join(FX, file),
    ...(preset === "labels-wide" ? { annotators: ["rater_a", "rater_b"] } : {}),
  });
const projectId = (slug: string) => (getDb().$client.prepare("select id from projects where slug = ?").get(slug) as { id: number }).id;

function parseCsv(text: string) {
  const r = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
  expect(r.errors).toEqual([]);
  return r;
}

/**
 * A project of the caller's own (so a test runs alone): the labels-long labels,
 * the items with their responses and verdicts, and a response-satisfaction style
 * task built on the imported items, labelled by two annotators (8 annotations).
 */
async function judgedProject(slug: string): Promise<number> {
  for (const [preset, file] of [
    ["labels-long", "labels-long.csv"],
    ["items-jsonl", "items.jsonl"],
    ["responses", "responses.csv"],
    ["verdicts", "verdicts.csv"],
  ]) {
    expect((await imp(preset, file, slug)).errors).toEqual([]);
  }
  const c = getDb().$client;
  const pid = projectId(slug);
  const ds = c.prepare("select id from datasets where project_id = ? and name = 'items'").get(pid) as { id: number };
  const task = Number(
    c.prepare("insert into tasks (project_id, dataset_id, kind, name) values (?, ?, 'response-satisfaction', 'sat')").run(pid, ds.id)
      .lastInsertRowid,
  );
  const rows = c
    .prepare(
      `select r.id as response_id, ci.id as checklist_item_id, r.item_id from verdicts v join responses r on r.id = v.response_id
       join checklist_items ci on ci.id = v.checklist_item_id join items i on i.id = r.item_id join datasets d on d.id = i.dataset_id
       where d.project_id = ? order by v.id`,
    )
    .all(pid) as { response_id: number; checklist_item_id: number; item_id: number }[];
  const users = [1, 2].map((n) =>
    Number(
      c.prepare("insert into users (email, name, password_hash) values (?, ?, '!')").run(`j${n}-${slug}@x.invalid`, `J${n}`)
        .lastInsertRowid,
    ),
  );
  const human = ["Yes", "No", "No", "Yes"];
  rows.forEach((r, i) => {
    const unit = Number(
      c
        .prepare("insert into units (task_id, item_id, checklist_item_id, response_id, position) values (?, ?, ?, ?, ?)")
        .run(task, r.item_id, r.checklist_item_id, r.response_id, i).lastInsertRowid,
    );
    for (const u of users) {
      const a = Number(
        c.prepare("insert into assignments (unit_id, annotator_id, status) values (?, ?, 'submitted')").run(unit, u).lastInsertRowid,
      );
      c.prepare("insert into annotations (assignment_id, label, status) values (?, ?, 'submitted')").run(a, JSON.stringify(human[i]));
    }
  });
  return pid;
}

describe("exports", () => {
  it("annotations, agreement, judge-agreement and runs have their documented columns in CSV and JSONL", async () => {
    await imp("labels-long", "labels-long.csv", "exp");
    await imp("items-jsonl", "items.jsonl", "exp");
    await imp("responses", "responses.csv", "exp");
    await imp("verdicts", "verdicts.csv", "exp");
    // The project-wide kinds; run-results is one run's (tests/integration/run-results-export.test.ts).
    for (const what of EXPORT_KINDS) {
      const csv = await exportToString(getDb(), projectId("exp"), what, "csv");
      expect(csv.charCodeAt(0)).not.toBe(0xfeff);
      const r = parseCsv(csv);
      expect(r.meta.fields).toEqual(COLUMNS[what]);
      const jsonl = await exportToString(getDb(), projectId("exp"), what, "jsonl");
      const lines = jsonl.trim()
        ? jsonl
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
        : [];
      expect(lines.length).toBe(r.data.length);
      for (const l of lines) expect(Object.keys(l)).toEqual(COLUMNS[what]);
    }
    const ann = parseCsv(await exportToString(getDb(), projectId("exp"), "annotations", "csv")).data;
    expect(ann).toHaveLength(13);
    expect(ann[0]).toMatchObject({
      task_kind: "imported-labels",
      item: "u1",
      annotator: "Ada Lovelace",
      label: "Yes",
      status: "submitted",
    });
    const runs = parseCsv(await exportToString(getDb(), projectId("exp"), "runs", "csv")).data;
    expect(runs.filter((r) => r.judge === "judge-one")).toHaveLength(5);
    expect(runs.find((r) => r.model === "model-b")).toMatchObject({ response: "Saturn, probably.", value: "No" });
    const agr = parseCsv(await exportToString(getDb(), projectId("exp"), "agreement", "csv")).data;
    expect(agr).toHaveLength(1);
    expect(agr[0]).toMatchObject({ level: "nominal", units: "5", annotators: "3", ratings: "13" });
    expect(Number(agr[0].percent_agreement)).toBeCloseTo(11 / 15, 12);
  });

  it("round trip: export annotations, import them into a new project, identical agreement", async () => {
    await imp("labels-wide", "labels-wide.csv", "trip-a");
    const exported = path.join(path.dirname(dbFile), "annotations.csv");
    fs.writeFileSync(exported, await exportToString(getDb(), projectId("trip-a"), "annotations", "csv"));
    const back = await runImport({
      databaseFile: dbFile,
      projectSlug: "trip-b",
      preset: "labels-long",
      file: exported,
      datasetName: "labels-wide",
    });
    expect(back.errors).toEqual([]);
    expect(back.annotations).toBe(9);
    const strip = (rows: Record<string, string>[]) => rows.map(({ task_id: _a, ...rest }) => rest);
    const a = parseCsv(await exportToString(getDb(), projectId("trip-a"), "agreement", "csv")).data;
    const b = parseCsv(await exportToString(getDb(), projectId("trip-b"), "agreement", "csv")).data;
    expect(a[0].level).toBe("ordinal");
    expect(Number(a[0].krippendorff_alpha)).toBeGreaterThan(0);
    expect(strip(b)).toEqual(strip(a));
  });

  it("judge-agreement compares the human majority with the judge on the same response and checklist item", async () => {
    const pid = await judgedProject("judged");
    const out = parseCsv(await exportToString(getDb(), pid, "judge-agreement", "csv")).data;
    const row = out.find((r) => r.task === "sat")!;
    // judge: Yes, Yes, No, Yes (verdicts.csv rows 2–5 with a checklist item) vs human Yes, No, No, Yes
    expect(row).toMatchObject({ judge: "judge-one", n: "4", accuracy: "0.75", yes_yes: "2", yes_no: "0", no_yes: "1", no_no: "1" });
  });

  it("CLI: writes a CSV file, refuses bad arguments with one line and exit code 2", async () => {
    await judgedProject("cli");
    const env = { ...process.env, DATABASE_URL: dbFile };
    const out = path.join(path.dirname(dbFile), "cli.csv");
    execFileSync(process.execPath, ["scripts/cli.mjs", "export", "--project", "cli", "--what", "annotations", "--out", out], {
      cwd: ROOT,
      env,
      stdio: "pipe",
    });
    expect(parseCsv(fs.readFileSync(out, "utf8")).data).toHaveLength(13 + 8);
    let err: { status: number; stderr: Buffer } | undefined;
    try {
      execFileSync(process.execPath, ["scripts/cli.mjs", "export", "--project", "cli", "--what", "everything"], {
        cwd: ROOT,
        env,
        stdio: "pipe",
      });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err?.status).toBe(2);
    expect(err?.stderr.toString().trim()).toBe(
      "export: --what must be one of annotations, agreement, judge-agreement, runs, judge-confusion, run-results.",
    );
  });
});

describe("agreement export on the task's scale", () => {
  it("a declared scale with unused categories: the export's AC1 counts q from the scale, as the report page does", async () => {
    // Four categories declared, two in use: AC1's chance agreement pe = Σ π_k(1 − π_k)/(q − 1) with q = 4.
    const file = path.join(path.dirname(dbFile), "scale-labels.csv");
    const rows = ["unit,annotator,label"];
    const pairs: [string, string][] = [
      ["A", "A"],
      ["A", "A"],
      ["A", "B"],
      ["B", "B"],
      ["A", "A"],
      ["B", "A"],
      ["A", "A"],
      ["B", "B"],
      ["A", "A"],
      ["A", "A"],
    ];
    pairs.forEach(([x, y], i) => rows.push(`u${i + 1},rae,${x}`, `u${i + 1},sol,${y}`));
    fs.writeFileSync(file, rows.join("\n") + "\n");
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: "scale",
      preset: "labels-long",
      file,
      level: "nominal",
      categories: ["A", "B", "C", "D"],
    });
    expect(s.errors).toEqual([]);
    const agr = parseCsv(await exportToString(getDb(), projectId("scale"), "agreement", "csv")).data;
    expect(agr).toHaveLength(1);
    expect(JSON.parse(agr[0].categories)).toEqual(["A", "B", "C", "D"]);
    // Gwet (2008), two raters on every unit, written out: pa = 8/10; π_A = 14/20, π_B = 6/20, π_C = π_D = 0.
    const pa = 8 / 10;
    const pe = ((14 / 20) * (6 / 20) + (6 / 20) * (14 / 20)) / 3;
    expect(Number(agr[0].gwet_ac1)).toBeCloseTo((pa - pe) / (1 - pe), 12);
    // The report page's figure for the same task.
    const taskId = (
      getDb().$client.prepare("select t.id from tasks t join projects p on p.id = t.project_id where p.slug = 'scale'").get() as {
        id: number;
      }
    ).id;
    const report = (await taskReport(projectId("scale"), taskId, { rule: null, delta: 0.05, slug: "scale" }))!;
    const page = report.tables.iaa.rows.find((r) => r.statistic === "Gwet's AC1")!;
    expect(Number(agr[0].gwet_ac1)).toBe(page.value);
    expect(Number(agr[0].fleiss_kappa)).toBe(report.tables.iaa.rows.find((r) => r.statistic === "Fleiss' kappa")!.value);
  });
});
