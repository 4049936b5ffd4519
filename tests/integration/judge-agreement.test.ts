/**
 * Judge–human agreement on a team's own files, from import to export: the command
 * (`npm run judge-agreement`, no database) and the app (labels-wide / labels-long and
 * unit-verdicts imports, the judge page's loader and CSV, `npm run export -- --what
 * judge-agreement|judge-confusion`) give identical figures on the same files
 * (tests/fixtures/judge; the scikit-learn reference values are in
 * tests/unit/judge/judgeAgreement.test.ts and repeated here where asserted).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { makeUser } from "../support/factory";
import { args, get, run, signInCookie } from "../support/http";
import { setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { exportToString } from "../../app/formats/export.server";
import { judgeAgreementFor } from "../../app/reports/report.server";
import type { JudgeAgreementResult } from "../../app/reports/judgeAgreement";
import { loader as judgesLoader } from "../../app/routes/p.$slug.reports.$taskId.judges";
import { loader as csvLoader } from "../../app/routes/p.$slug.reports.$taskId.csv";

const { file: dbFile, db } = useTempDatabase();
const ROOT = path.resolve(__dirname, "../..");
const FX = path.join(ROOT, "tests/fixtures/judge");
const dir = tempDir();

/** The command as `npm run judge-agreement` runs it: scripts/judge-agreement-cli.mjs, the cached esbuild bundle. */
function cli(argv: string[]) {
  const r = spawnSync(process.execPath, ["scripts/judge-agreement-cli.mjs", ...argv], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** The same command from its TypeScript sources through tsx (`npx tsx scripts/judge-agreement.ts`). */
function cliFromSources(argv: string[]) {
  const r = spawnSync("npx", ["tsx", "scripts/judge-agreement.ts", ...argv], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function cliJson(argv: string[]): JudgeAgreementResult & Record<string, unknown> {
  const r = cli([...argv, "--format", "json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}
const WIDE = [
  "--labels",
  path.join(FX, "labels-wide.csv"),
  "--annotators",
  "ann_1,ann_2,ann_3",
  "--verdicts",
  path.join(FX, "verdicts.csv"),
];
const NUMERIC = ["--labels", path.join(FX, "labels-numeric.json"), "--verdicts", path.join(FX, "verdicts-numeric.jsonl")];
const c = () => db().$client;
const projectId = (slug: string) => (c().prepare("select id from projects where slug = ?").get(slug) as { id: number }).id;
const taskOf = (slug: string) =>
  (c().prepare("select t.id from tasks t join projects p on p.id = t.project_id where p.slug = ?").get(slug) as { id: number }).id;
const csvRows = (text: string) => {
  const r = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
  expect(r.errors).toEqual([]);
  return r.data;
};
/** The figures compared between the command and the app (judge order, every key of the issue). */
const figures = (r: JudgeAgreementResult) => ({
  reference: r.reference,
  labels: r.labels,
  unitsWithoutMajority: r.unitsWithoutMajority,
  judges: r.judges.map(({ perAnnotator: _p, ...j }) => j),
  humans: r.humans,
});

beforeAll(async () => {
  const labels = await runImport({
    databaseFile: dbFile,
    projectSlug: "pairwise",
    preset: "labels-wide",
    file: path.join(FX, "labels-wide.csv"),
    annotators: ["ann_1", "ann_2", "ann_3"],
  });
  expect(labels.errors).toEqual([]);
  expect(labels.annotations).toBe(40); // 14 units × 3 annotators, two cells blank; prompt and notes are not annotators
  expect(labels.warnings.map((w) => w.message)).toEqual(["columns ignored (not among --annotators): prompt, notes"]);
  const verdicts = await runImport({
    databaseFile: dbFile,
    projectSlug: "pairwise",
    preset: "unit-verdicts",
    file: path.join(FX, "verdicts.csv"),
  });
  expect(verdicts.errors).toEqual([]);
  expect(verdicts.verdicts).toBe(26);
  const numLabels = await runImport({
    databaseFile: dbFile,
    projectSlug: "numeric",
    preset: "labels-long",
    file: path.join(FX, "labels-numeric.json"),
    level: "nominal",
  });
  expect(numLabels.errors).toEqual([]);
  const numVerdicts = await runImport({
    databaseFile: dbFile,
    projectSlug: "numeric",
    preset: "unit-verdicts",
    file: path.join(FX, "verdicts-numeric.jsonl"),
  });
  expect(numVerdicts.errors).toEqual([]);
});

describe("the command and the app give identical figures", () => {
  for (const [reference, unparsed] of [
    ["majority", "count-as-wrong"],
    ["majority", "exclude"],
    ["majority", "as:tie"],
    ["each", "count-as-wrong"],
    ["each", "exclude"],
    ["each", "as:B"],
  ] as const) {
    it(`pairwise with ties, --reference ${reference} --unparsed ${unparsed}`, async () => {
      const fromFiles = cliJson([...WIDE, "--reference", reference, "--unparsed", unparsed]);
      const app = (await judgeAgreementFor(projectId("pairwise"), taskOf("pairwise"), { reference, unparsed }))!;
      expect(app.result).not.toBeNull();
      expect(figures(app.result!)).toEqual(figures(fromFiles));
      // The export carries the same numbers, one row per judge.
      const rows = csvRows(await exportToString(db(), projectId("pairwise"), "judge-agreement", "csv", { reference, unparsed }));
      expect(rows.map((r) => r.judge)).toEqual(["judge-steady", "judge-wobbly"]);
      rows.forEach((row, i) => {
        const j = fromFiles.judges[i];
        expect(row).toMatchObject({
          reference,
          unparsed_policy: unparsed,
          n: String(j.n),
          unparsed: String(j.unparsed),
          unparsed_compared: String(j.unparsedCompared),
          missing: String(j.missing),
        });
        expect(Number(row.accuracy_ci_high)).toBe(j.accuracyCI![1]);
        expect(Number(row.cohen_kappa_ci_low)).toBe(j.cohenKappaCI![0]);
        expect(Number(row.accuracy)).toBe(j.accuracy);
        expect(Number(row.accuracy_ci_low)).toBe(j.accuracyCI![0]);
        expect(Number(row.cohen_kappa)).toBe(j.cohenKappa);
        expect(Number(row.cohen_kappa_ci_high)).toBe(j.cohenKappaCI![1]);
        expect(Number(row.macro_precision)).toBe(j.macroPrecision);
        expect(Number(row.macro_recall)).toBe(j.macroRecall);
        expect(Number(row.macro_f1)).toBe(j.macroF1);
        expect(Number(row.macro_f1_ci_low)).toBe(j.macroF1CI![0]);
      });
    });
  }

  it("npm run judge-agreement (the cached esbuild bundle) prints exactly what tsx prints from the sources", () => {
    for (const argv of [
      [...WIDE, "--format", "json"],
      [...WIDE, "--reference", "each"],
      [...NUMERIC, "--level", "ordinal", "--format", "json"],
      ["--labels", path.join(FX, "labels-wide.csv")],
    ]) {
      const bundled = cli(argv);
      expect(bundled).toEqual(cliFromSources(argv));
    }
    expect(cli(["--labels", path.join(FX, "labels-wide.csv")]).code).toBe(2);
  }, 180_000);

  it("the figures are scikit-learn's (majority, count-as-wrong, --missing-as unparsed; see tests/unit/judge)", () => {
    // tests/unit/judge computes them with judge-wobbly's empty verdict (u02) as an unparsed output.
    const r = cliJson([...WIDE, "--missing-as", "unparsed"]);
    expect(r.labels).toEqual(["A", "B", "tie"]);
    expect(r.unitsWithoutMajority).toBe(2);
    expect(r.ignoredColumns).toEqual(["prompt", "notes"]);
    const [steady, wobbly] = r.judges;
    // accuracy_score, cohen_kappa_score, precision_recall_fscore_support(average="macro") in scikit-learn 1.2.1.
    expect(steady.accuracy).toBeCloseTo(0.6666666666666666, 12);
    expect(steady.cohenKappa).toBeCloseTo(0.49473684210526314, 12);
    expect(steady.macroF1).toBeCloseTo(0.6666666666666665, 12);
    expect([wobbly.n, wobbly.unparsed, wobbly.missing]).toEqual([10, 3, 2]);
    expect(wobbly.macroRecall).toBeCloseTo(0.45833333333333326, 12);
  });

  it("numeric human labels (a JSON array) against string verdicts (JSONL): same figures, in the app too", async () => {
    const fromFiles = cliJson(NUMERIC);
    expect(fromFiles.labels).toEqual(["0", "1", "2"]);
    expect(fromFiles.judges[0].accuracy).toBeCloseTo(0.6666666666666666, 12);
    const app = (await judgeAgreementFor(projectId("numeric"), taskOf("numeric"), { reference: "majority", unparsed: "count-as-wrong" }))!;
    expect(figures(app.result!)).toEqual(figures(fromFiles));
  });

  it("judge-confusion: the confusion matrix, per-label figures on the diagonal", async () => {
    const r = cliJson([...WIDE, "--missing-as", "unparsed"]);
    const rows = csvRows(await exportToString(db(), projectId("pairwise"), "judge-confusion", "csv", { missing: "unparsed" }));
    const wobbly = rows.filter((x) => x.judge === "judge-wobbly");
    expect(wobbly).toHaveLength(16); // (A, B, tie, (unparsed))²
    // B → (unparsed): u12 "I cannot decide" and u02's empty verdict, counted as unparsed.
    expect(wobbly.find((x) => x.human_label === "B" && x.judge_label === "(unparsed)")!.count).toBe("2");
    expect(wobbly.every((x) => x.missing_policy === "unparsed")).toBe(true);
    const diag = rows.filter((x) => x.judge === "judge-steady" && x.human_label === x.judge_label);
    expect(diag.map((x) => [x.human_label, Number(x.precision), Number(x.recall), Number(x.support)])).toEqual(
      Object.entries(r.judges[0].perLabel).map(([l, m]) => [l, m.precision, m.recall, m.support]),
    );
  });
});

describe("unparsed verdicts are kept", () => {
  it("empty and out-of-set verdicts are stored with parse status unparsed, never dropped", () => {
    const rows = c()
      .prepare(
        "select j.name, v.value, v.parse_status from verdicts v join judges j on j.id = v.judge_id join projects p on p.id = j.project_id where p.slug = 'pairwise' and v.parse_status != 'ok' order by v.id",
      )
      .all();
    expect(rows).toEqual([
      { name: "judge-wobbly", value: null, parse_status: "unparsed" },
      { name: "judge-wobbly", value: "Unsure", parse_status: "unparsed" },
      { name: "judge-wobbly", value: "I cannot decide", parse_status: "unparsed" },
    ]);
  });

  it("a verdict on an unknown unit is refused with its row and field, nothing written", async () => {
    const file = path.join(dir, "bad-verdicts.csv");
    fs.writeFileSync(file, "unit,judge,verdict\nu01,judge-late,A\nu99,judge-late,B\n");
    const s = await runImport({ databaseFile: dbFile, projectSlug: "pairwise", preset: "unit-verdicts", file });
    expect(s.committed).toBe(false);
    expect(s.errors).toEqual([
      { row: 3, field: "unit", message: 'unknown unit "u99": it is not in this project\'s imported labels; import the labels first' },
    ]);
    expect(c().prepare("select count(*) as n from judges where name = 'judge-late'").get()).toEqual({ n: 0 });
  });
});

describe("labels-wide columns and level", () => {
  it("without --annotators the import is refused, naming the columns found; --annotators all takes them all, and says so", async () => {
    await expect(
      runImport({
        databaseFile: dbFile,
        projectSlug: "wide-all",
        preset: "labels-wide",
        file: path.join(FX, "labels-wide.csv"),
        dryRun: true,
      }),
    ).rejects.toThrow(
      'labels-wide needs its annotator columns named: the file\'s columns besides the unit are "prompt", "ann_1", "ann_2", "ann_3", "notes"; give --annotators COL,COL (or --annotators all to take every one of them).',
    );
    expect(c().prepare("select count(*) as n from projects where slug = 'wide-all'").get()).toEqual({ n: 0 });
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: "wide-all",
      preset: "labels-wide",
      file: path.join(FX, "labels-wide.csv"),
      dryRun: true,
      annotators: ["all"],
    });
    expect(s.errors).toEqual([]);
    expect(s.warnings.map((w) => w.message)).toEqual([
      "--annotators all: every column other than the unit became an annotator (prompt, ann_1, ann_2, ann_3, notes)",
    ]);
  });

  it("an annotator column not in the file is refused", async () => {
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: "wide-bad",
      preset: "labels-wide",
      file: path.join(FX, "labels-wide.csv"),
      annotators: ["ann_1", "ann_9"],
    });
    expect(s.committed).toBe(false);
    expect(s.errors[0]).toMatchObject({ row: 1, field: "ann_9" });
  });

  it("numeric labels: the inferred level is stated, --level sets it", async () => {
    const inferred = await runImport({
      databaseFile: dbFile,
      projectSlug: "lvl",
      preset: "labels-long",
      file: path.join(FX, "labels-numeric.json"),
      dryRun: true,
    });
    expect(inferred.warnings.map((w) => w.message)).toEqual([
      'level "ordinal" inferred: every label is a number (3 distinct: 0, 1, 2), whole numbers, at most 10 values; if the numbers are category codes, import with --level nominal (the Label level select on the Import page)',
    ]);
    const given = await runImport({
      databaseFile: dbFile,
      projectSlug: "lvl",
      preset: "labels-long",
      file: path.join(FX, "labels-numeric.json"),
      dryRun: true,
      level: "nominal",
    });
    expect(given.warnings).toEqual([]);
  });
});

describe("the judge page", () => {
  let cookie: string;
  beforeAll(async () => {
    const u = await makeUser();
    await setMembership(projectId("pairwise"), u.id, "researcher");
    await setMembership(projectId("numeric"), u.id, "researcher");
    cookie = await signInCookie(u.email, u.password);
  });

  it("answers 200 with out-of-set verdicts, for every reference and unparsed policy; its CSV has the command's numbers", async () => {
    const taskId = String(taskOf("pairwise"));
    for (const q of ["", "?reference=each&unparsed=exclude", "?reference=adjudicated&unparsed=as:tie", "?unparsed=as:Nonsense"]) {
      const res = await run(judgesLoader, args(get(`/p/pairwise/reports/${taskId}/judges${q}`, cookie), { slug: "pairwise", taskId }));
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.agreement.applicable).toBe(true);
      // judge-wobbly: "Unsure" and "I cannot decide" unparsed; its empty CSV cell (u02) missing, not in n.
      expect(body.agreement.result.judges.map((j: { unparsed: number }) => j.unparsed)).toEqual([0, 2]);
      expect(body.agreement.result.judges.map((j: { missingVerdicts: number }) => j.missingVerdicts)).toEqual([0, 1]);
      if (q.includes("Nonsense")) expect(body.agreement.note).toMatch(/not one of the human labels \(A, B, tie\)/);
    }
    const res = await run(
      csvLoader,
      args(get(`/p/pairwise/reports/${taskId}/csv?table=agreement-judges&reference=majority&unparsed=count-as-wrong`, cookie), {
        slug: "pairwise",
        taskId,
      }),
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    // The export's columns (issue 12), in this order, and the export's figures for the same reference and policy.
    expect(text.split("\n")[0]).toBe(
      "judge,reference,unparsed_policy,n,unparsed,accuracy,accuracy_ci_low,accuracy_ci_high,cohen_kappa,cohen_kappa_ci_low,cohen_kappa_ci_high,macro_precision,macro_recall,macro_f1,unparsed_compared,missing,missing_policy",
    );
    const all = csvRows(text);
    const r = cliJson(WIDE);
    const rows = all.filter((x) => !x.judge.startsWith("Humans"));
    const exported = csvRows(
      await exportToString(db(), projectId("pairwise"), "judge-agreement", "csv", { reference: "majority", unparsed: "count-as-wrong" }),
    );
    expect(rows).toEqual(exported.map((e) => Object.fromEntries(Object.keys(rows[0]).map((k) => [k, e[k]]))));
    expect(
      rows.map((x) => [
        x.judge,
        x.reference,
        x.unparsed_policy,
        Number(x.n),
        Number(x.unparsed),
        Number(x.accuracy),
        Number(x.accuracy_ci_low),
        Number(x.cohen_kappa_ci_high),
        Number(x.macro_f1),
      ]),
    ).toEqual(
      r.judges.map((j) => [
        j.judge,
        "majority",
        "count-as-wrong",
        j.n,
        j.unparsed,
        j.accuracy,
        j.accuracyCI![0],
        j.cohenKappaCI![1],
        j.macroF1,
      ]),
    );
    // The human baseline row, as the command's `humans`.
    const humans = all.find((x) => x.judge.startsWith("Humans"))!;
    expect([Number(humans.n), Number(humans.accuracy), Number(humans.cohen_kappa)]).toEqual([
      r.humans!.n,
      r.humans!.accuracy,
      r.humans!.cohenKappa,
    ]);
    // The command's JSON carries the intervals the page shows beside AC1 and the macro averages.
    for (const j of r.judges)
      for (const k of ["ac1CI", "macroPrecisionCI", "macroRecallCI", "macroF1CI"] as const) expect(j[k]).toHaveLength(2);
  });

  it("an ordinal scale (--level ordinal): quadratic-weighted kappa on the page, as scikit-learn", async () => {
    await runImport({
      databaseFile: dbFile,
      projectSlug: "ordinal",
      preset: "labels-long",
      file: path.join(FX, "labels-numeric.json"),
      level: "ordinal",
    });
    await runImport({
      databaseFile: dbFile,
      projectSlug: "ordinal",
      preset: "unit-verdicts",
      file: path.join(FX, "verdicts-numeric.jsonl"),
    });
    const u = await makeUser();
    await setMembership(projectId("ordinal"), u.id, "researcher");
    const ck = await signInCookie(u.email, u.password);
    const taskId = String(taskOf("ordinal"));
    const res = await run(judgesLoader, args(get(`/p/ordinal/reports/${taskId}/judges`, ck), { slug: "ordinal", taskId }));
    expect(res.status).toBe(200);
    const rows = ((await res.json()).agreement.tables["agreement-judges"].rows as { judge: string; weightedKappa: number }[]).filter(
      (x) => !x.judge.startsWith("Humans"),
    );
    // cohen_kappa_score(y_true, y_pred, weights="quadratic", labels=[0, 1, 2]), unparsed pairs left out (scikit-learn 1.2.1).
    expect(rows[0].weightedKappa).toBeCloseTo(0.5227272727272727, 12);
    expect(rows[1].weightedKappa).toBeCloseTo(0.8888888888888888, 12);
    // The command gives the same with --level ordinal.
    const r = cliJson([...NUMERIC, "--level", "ordinal"]);
    expect(r.judges.map((j) => j.weightedKappa)).toEqual(rows.map((x) => x.weightedKappa));
  });

  it("numeric human labels with string verdicts: the older judge tables answer too (out-of-set counted as unparsed)", async () => {
    const taskId = String(taskOf("numeric"));
    const res = await run(judgesLoader, args(get(`/p/numeric/reports/${taskId}/judges`, cookie), { slug: "numeric", taskId }));
    expect(res.status).toBe(200);
    const body = await res.json();
    const judges = body.report.tables.judges.rows as { judge: string; n: number; unparsed: number; accuracy: number }[];
    const wobbly = judges.find((j) => j.judge === "judge-wobbly")!;
    expect([wobbly.n, wobbly.unparsed]).toEqual([7, 3]); // the older table leaves unparsed verdicts out (= exclude)
    expect(wobbly.accuracy).toBeCloseTo(0.8571428571428571, 12); // scikit-learn accuracy_score under exclude
  });
});

describe("labels linked to imported responses (a response column)", () => {
  it("labels-long with unit = item and a response column meet the verdicts preset's verdicts on those responses", async () => {
    const IMPORT = path.join(ROOT, "tests/fixtures/import");
    for (const [preset, file] of [
      ["items-jsonl", "items.jsonl"],
      ["responses", "responses.csv"],
    ]) {
      const s = await runImport({ databaseFile: dbFile, projectSlug: "linked", preset, file: path.join(IMPORT, file) });
      expect(s.errors).toEqual([]);
    }
    const labels = path.join(dir, "linked-labels.csv");
    fs.writeFileSync(
      labels,
      "unit,model,annotator,label\nq1,model-a,rae,good\nq1,model-a,sol,good\nq1,model-b,rae,bad\nq1,model-b,sol,good\nq2,model-a,rae,good\nq2,model-a,sol,good\n",
    );
    const l = await runImport({ databaseFile: dbFile, projectSlug: "linked", preset: "labels-long", file: labels });
    expect(l.errors).toEqual([]);
    expect(l.annotations).toBe(6);
    const verdicts = path.join(dir, "linked-verdicts.csv");
    fs.writeFileSync(
      verdicts,
      "judge,item,response,value\nrater-bot,q1,model-a#1,good\nrater-bot,q1,model-b#1,bad\nrater-bot,q2,model-a#1,meh\n",
    );
    const v = await runImport({ databaseFile: dbFile, projectSlug: "linked", preset: "verdicts", file: verdicts });
    expect(v.errors).toEqual([]);
    const task = (
      c()
        .prepare("select t.id from tasks t join projects p on p.id = t.project_id where p.slug = 'linked' and t.kind = 'imported-labels'")
        .get() as { id: number }
    ).id;
    const units = c()
      .prepare(
        "select u.response_id, r.model from units u join responses r on r.id = u.response_id where u.task_id = ? order by u.position",
      )
      .all(task);
    expect(units).toEqual([
      { response_id: expect.any(Number), model: "model-a" },
      { response_id: expect.any(Number), model: "model-b" },
      { response_id: expect.any(Number), model: "model-a" },
    ]);
    const r = (await judgeAgreementFor(projectId("linked"), task, { reference: "majority", unparsed: "count-as-wrong" }))!.result!;
    // Majority: q1/model-a good, q1/model-b none (1–1), q2/model-a good; the judge: good, —, "meh" (outside {bad, good}).
    expect(r.unitsWithoutMajority).toBe(1);
    expect(r.judges.map((j) => [j.judge, j.n, j.unparsed, j.accuracy])).toEqual([["rater-bot", 2, 1, 0.5]]);
  });

  it("an unknown response is refused with its row", async () => {
    const labels = path.join(dir, "linked-bad.csv");
    fs.writeFileSync(labels, "unit,response,annotator,label\nq1,model-z,rae,good\n");
    const l = await runImport({ databaseFile: dbFile, projectSlug: "linked", preset: "labels-long", file: labels });
    expect(l.committed).toBe(false);
    expect(l.errors[0]).toMatchObject({
      row: 2,
      field: "response",
      message: 'unknown response "model-z" for item "q1"; import the responses first',
    });
  });
});

describe("real files: LLMBar's MT-Bench subset and GPT-4's verdicts (read when /work/shared/data is present)", () => {
  const RESULT = "/work/shared/data/LLMBar/Dataset/Processed/MT-Bench/evaluators/GPT-4/Vanilla_NoRules/result.json";
  it.skipIf(!fs.existsSync(RESULT))('a gold label (1 or 2, a JSON number) against the judge\'s winner ("1" or "2", a string)', () => {
    // The upstream fields as they are: label (number) and results[0]["swap = False"].winner (string).
    const doc = JSON.parse(fs.readFileSync(RESULT, "utf8")) as { label: number; results: Record<string, { winner: string }>[] }[];
    const labels = path.join(dir, "llmbar-labels.json");
    const verdicts = path.join(dir, "llmbar-verdicts.jsonl");
    fs.writeFileSync(labels, JSON.stringify(doc.map((r, i) => ({ unit: `mt-${i}`, annotator: "gold", label: r.label }))));
    fs.writeFileSync(
      verdicts,
      doc
        .map((r, i) => JSON.stringify({ unit: `mt-${i}`, judge: "GPT-4/Vanilla_NoRules", verdict: r.results[0]["swap = False"].winner }))
        .join("\n"),
    );
    const r = cliJson(["--labels", labels, "--verdicts", verdicts]);
    const j = r.judges[0];
    expect([j.n, j.unparsed]).toEqual([200, 0]);
    // LLMBar's statistics.json: "correct_False": "159 / 200 = 79.5%". Kappa: scikit-learn 1.2.1
    // cohen_kappa_score(label, int(winner)) on the same 200 records = 0.5899179835967194.
    expect(j.accuracy).toBe(0.795);
    expect(j.cohenKappa).toBeCloseTo(0.5899179835967194, 12);
  });
});

describe("--map names other columns", () => {
  it("long labels and verdicts with their own column names", () => {
    const labels = path.join(dir, "mapped-labels.csv");
    const verdicts = path.join(dir, "mapped-verdicts.csv");
    fs.writeFileSync(labels, "case,coder,choice\nc1,x,A\nc1,y,A\nc2,x,B\nc2,y,B\nc3,x,tie\nc3,y,A\n");
    fs.writeFileSync(verdicts, "case,grader,pick\nc1,g,A\nc2,g,A\nc3,g,tie\n");
    const r = cliJson([
      "--labels",
      labels,
      "--verdicts",
      verdicts,
      "--map",
      "unit=case",
      "--map",
      "label=choice",
      "--map",
      "judge=grader",
      "--map",
      "verdict=pick",
    ]);
    expect(r.annotatorColumns).toEqual(["x", "y"]); // "coder" is an alias of annotator
    expect(r.unitsWithoutMajority).toBe(1);
    expect(r.judges[0]).toMatchObject({ judge: "g", n: 2, accuracy: 0.5 });
  });
});

describe("bad input to the command", () => {
  it.each([
    [
      ["--labels", path.join(FX, "labels-wide.csv"), "--verdicts", path.join(FX, "verdicts.csv")],
      /^judge-agreement: LABELS labels-wide\.csv: missing column "annotator".*needs --annotators COL,COL naming them; its columns are: unit, prompt, ann_1, ann_2, ann_3, notes$/,
    ],
    [
      [...WIDE.slice(0, 2), "--annotators", "ann_1,ann_7", ...WIDE.slice(4)],
      /^judge-agreement: LABELS labels-wide\.csv: --annotators names "ann_7", not in the file/,
    ],
    [[...WIDE, "--unparsed", "as:Maybe"], /^judge-agreement: --unparsed as:Maybe: "Maybe" is not one of the human labels \(A, B, tie\)\.$/],
    [[...WIDE, "--unparsed", "drop"], /^judge-agreement: --unparsed must be count-as-wrong, exclude or as:LABEL, not "drop"\.$/],
    [[...WIDE.slice(0, 4), "--verdicts", path.join(FX, "nope.csv")], /^judge-agreement: VERDICTS nope\.csv: no such file\.$/],
  ])("%# exits 2 with one line on stderr", (argv, message) => {
    const r = cli(argv as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
  });
});

describe("the verdicts preset on responses with imported labels (unparsed verdicts)", () => {
  const IMPORT = path.join(ROOT, "tests/fixtures/import");
  beforeAll(async () => {
    for (const [preset, file] of [
      ["items-jsonl", "items.jsonl"],
      ["responses", "responses.csv"],
    ]) {
      expect(
        (await runImport({ databaseFile: dbFile, projectSlug: "linked-unparsed", preset, file: path.join(IMPORT, file) })).errors,
      ).toEqual([]);
    }
    const labels = path.join(dir, "unparsed-labels.csv");
    // q1's two responses are labelled; q2's response is not.
    fs.writeFileSync(
      labels,
      "unit,response,annotator,label\nq1,model-a,rae,good\nq1,model-a,sol,good\nq1,model-b,rae,bad\nq1,model-b,sol,bad\n",
    );
    expect((await runImport({ databaseFile: dbFile, projectSlug: "linked-unparsed", preset: "labels-long", file: labels })).errors).toEqual(
      [],
    );
  });

  it("an empty or out-of-set verdict on a labelled response is stored as unparsed with its raw output; other empty verdicts are refused by row and field", async () => {
    const bad = path.join(dir, "unparsed-verdicts-bad.csv");
    fs.writeFileSync(
      bad,
      "judge,item,response,checklist_item,value,raw\n" +
        "bot-two,q1,model-a#1,,,I cannot decide.\n" + // row 2: labelled response, empty: unparsed
        "bot-two,q2,model-a#1,,,\n" + // row 3: a response nobody labelled, empty: refused
        "bot-two,q1,model-b#1,1,,\n", // row 4: a checklist verdict, empty: refused
    );
    const refused = await runImport({ databaseFile: dbFile, projectSlug: "linked-unparsed", preset: "verdicts", file: bad });
    expect(refused.committed).toBe(false);
    expect(refused.errors.map((e) => [e.row, e.field])).toEqual([
      [3, "value"],
      [4, "value"],
    ]);
    expect(c().prepare("select count(*) as n from judges where name = 'bot-two'").get()).toEqual({ n: 0 });

    const good = path.join(dir, "unparsed-verdicts.csv");
    fs.writeFileSync(
      good,
      "judge,item,response,checklist_item,value,raw\n" +
        "bot-two,q1,model-a#1,,,I cannot decide.\n" +
        "bot-two,q1,model-b#1,, Unsure ,Unsure.\n" +
        "bot-two,q1,model-a#1,1,Yes,names Jupiter\n" + // a checklist verdict on the same response: not a label, kept as ok
        "bot-three,q1,model-a#1,,good,good\n" +
        "bot-three,q1,model-b#1,,bad,bad\n",
    );
    const s = await runImport({ databaseFile: dbFile, projectSlug: "linked-unparsed", preset: "verdicts", file: good });
    expect(s.errors).toEqual([]);
    expect(s.verdicts).toBe(5);
    const stored = c()
      .prepare(
        `select j.name as judge, r.model, v.checklist_item_id is not null as checklist, v.value, v.score, v.raw_output as raw, v.parse_status as status
         from verdicts v join judges j on j.id = v.judge_id join responses r on r.id = v.response_id
         where j.project_id = ? order by j.name, r.model, v.checklist_item_id`,
      )
      .all(projectId("linked-unparsed"));
    expect(stored).toEqual([
      { judge: "bot-three", model: "model-a", checklist: 0, value: "good", score: null, raw: "good", status: "ok" },
      { judge: "bot-three", model: "model-b", checklist: 0, value: "bad", score: null, raw: "bad", status: "ok" },
      { judge: "bot-two", model: "model-a", checklist: 0, value: null, score: null, raw: "I cannot decide.", status: "unparsed" },
      { judge: "bot-two", model: "model-a", checklist: 1, value: "Yes", score: 1, raw: "names Jupiter", status: "ok" },
      { judge: "bot-two", model: "model-b", checklist: 0, value: "Unsure", score: null, raw: "Unsure.", status: "unparsed" },
    ]);
    // The judge page counts them: bot-two has two unparsed verdicts (count-as-wrong keeps them in n), bot-three none.
    const task = (
      c()
        .prepare(
          "select t.id from tasks t join projects p on p.id = t.project_id where p.slug = 'linked-unparsed' and t.kind = 'imported-labels'",
        )
        .get() as { id: number }
    ).id;
    const r = (await judgeAgreementFor(projectId("linked-unparsed"), task, { reference: "majority", unparsed: "count-as-wrong" }))!.result!;
    expect(r.judges.map((j) => [j.judge, j.n, j.unparsed, j.accuracy])).toEqual([
      ["bot-three", 2, 0, 1],
      ["bot-two", 2, 2, 0],
    ]);
  });
});

describe("npm run export (a real process: scripts/export.ts) with --reference, --unparsed and --what judge-confusion", () => {
  let cookie: string;
  beforeAll(async () => {
    const u = await makeUser();
    await setMembership(projectId("pairwise"), u.id, "researcher");
    cookie = await signInCookie(u.email, u.password);
  });
  const exportCli = (argv: string[]) => {
    const r = spawnSync(process.execPath, ["scripts/cli.mjs", "export", "--project", "pairwise", ...argv], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: dbFile },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    return csvRows(r.stdout);
  };
  const pageCsv = async (table: string, q: string) => {
    const taskId = String(taskOf("pairwise"));
    const res = await run(
      csvLoader,
      args(get(`/p/pairwise/reports/${taskId}/csv?table=${table}&${q}`, cookie), { slug: "pairwise", taskId }),
    );
    expect(res.status).toBe(200);
    return csvRows(await res.text());
  };

  it("judge-agreement: the page's CSV figures for the same --reference and --unparsed", async () => {
    for (const [reference, unparsed] of [
      ["each", "exclude"],
      ["adjudicated", "as:tie"],
    ] as const) {
      const exported = exportCli(["--what", "judge-agreement", "--reference", reference, "--unparsed", unparsed]);
      const page = (await pageCsv("agreement-judges", `reference=${reference}&unparsed=${unparsed}`)).filter(
        (x) => !x.judge.startsWith("Humans"),
      );
      expect(exported.map((e) => [e.reference, e.unparsed_policy])).toEqual([
        [reference, unparsed],
        [reference, unparsed],
      ]);
      expect(page).toEqual(exported.map((e) => Object.fromEntries(Object.keys(page[0]).map((k) => [k, e[k]]))));
      // And the command's figures on the files (adjudicated is app-only: no adjudication in the files, so the majority).
      if (reference === "each") {
        const r = cliJson([...WIDE, "--reference", reference, "--unparsed", unparsed]);
        expect(
          exported.map((e) => [e.judge, Number(e.n), Number(e.accuracy), Number(e.accuracy_ci_low), Number(e.cohen_kappa_ci_high)]),
        ).toEqual(r.judges.map((j) => [j.judge, j.n, j.accuracy, j.accuracyCI![0], j.cohenKappaCI![1]]));
      }
    }
  }, 120_000);

  it("judge-confusion: the page's confusion and per-label CSVs, cell by cell", async () => {
    const exported = exportCli(["--what", "judge-confusion", "--reference", "majority", "--unparsed", "count-as-wrong"]);
    const wobbly = exported.filter((x) => x.judge === "judge-wobbly");
    // The page's confusion matrix of judge-wobbly (the second judge): rows reference, one column per judge label.
    const matrix = await pageCsv("agreement-confusion-1", "reference=majority&unparsed=count-as-wrong");
    const cells = matrix.flatMap((row) =>
      Object.entries(row)
        .filter(([k]) => k !== "Reference \\ Judge" && k !== "Total")
        .map(([judgeLabel, count]) => [row["Reference \\ Judge"], judgeLabel, count]),
    );
    // Every page cell is the export's; the export also has the (never filled) "(unparsed)" reference row.
    expect(cells).toEqual(wobbly.filter((x) => x.human_label !== "(unparsed)").map((x) => [x.human_label, x.judge_label, x.count]));
    expect(wobbly.filter((x) => x.human_label === "(unparsed)").every((x) => x.count === "0")).toBe(true);
    const perLabel = await pageCsv("agreement-per-label", "reference=majority&unparsed=count-as-wrong");
    const diagonal = exported.filter((x) => x.human_label === x.judge_label);
    expect(perLabel.map((x) => [x.Judge, x.Label, x.Precision, x.Recall, x.F1, x.Support])).toEqual(
      diagonal.map((x) => [x.judge, x.human_label, x.precision, x.recall, x.f1, x.support]),
    );
    // --unparsed exclude: no "(unparsed)" class, fewer pairs.
    const excluded = exportCli(["--what", "judge-confusion", "--unparsed", "exclude"]).filter((x) => x.judge === "judge-wobbly");
    expect(excluded).toHaveLength(9);
    expect(excluded.reduce((a, x) => a + Number(x.count), 0)).toBe(7);
  }, 120_000);
});

describe("unparsed verdicts on units without a reference (app, export and command agree)", () => {
  it("unparsed counts them all; unparsed_compared and n only the units with a majority", async () => {
    const labels = path.join(dir, "split-labels.csv");
    const verdicts = path.join(dir, "split-verdicts.csv");
    // s1, s2: a majority; s3: a 1–1 split. The judge's unparsed outputs: s2 ("maybe") and s3 (empty).
    fs.writeFileSync(labels, "unit,annotator,label\ns1,x,Yes\ns1,y,Yes\ns2,x,No\ns2,y,No\ns3,x,Yes\ns3,y,No\n");
    fs.writeFileSync(verdicts, "unit,judge,verdict\ns1,j,Yes\ns2,j,maybe\ns3,j,\n");
    expect((await runImport({ databaseFile: dbFile, projectSlug: "split", preset: "labels-long", file: labels })).errors).toEqual([]);
    expect((await runImport({ databaseFile: dbFile, projectSlug: "split", preset: "unit-verdicts", file: verdicts })).errors).toEqual([]);
    // s3's empty CSV cell is a missing verdict: --missing-as unparsed counts it as unparsed, as here.
    const asUnparsed = ["--labels", labels, "--verdicts", verdicts, "--missing-as", "unparsed"];
    const cliRow = cliJson(asUnparsed).judges[0];
    expect([cliRow.n, cliRow.unparsed, cliRow.unparsedCompared]).toEqual([2, 2, 1]);
    const options = { reference: "majority", unparsed: "count-as-wrong", missing: "unparsed" } as const;
    const app = (await judgeAgreementFor(projectId("split"), taskOf("split"), options))!.result!;
    expect(figures(app)).toEqual(figures(cliJson(asUnparsed)));
    const row = csvRows(await exportToString(db(), projectId("split"), "judge-agreement", "csv", { missing: "unparsed" }))[0];
    expect([row.n, row.unparsed, row.unparsed_compared, row.ties_excluded]).toEqual(["2", "2", "1", "1"]);
    // The page's table says both.
    const t = (await judgeAgreementFor(projectId("split"), taskOf("split"), options))!.tables["agreement-judges"];
    expect(t.rows[0]).toMatchObject({ judge: "j", n: 2, unparsed: 2, unparsedCompared: 1 });
  });
});

describe("labels-wide with a response column (labels linked to imported responses)", () => {
  it("the units judge those responses, and the report matches the verdicts preset's verdicts by response", async () => {
    const IMPORT = path.join(ROOT, "tests/fixtures/import");
    for (const [preset, file] of [
      ["items-jsonl", "items.jsonl"],
      ["responses", "responses.csv"],
    ]) {
      expect((await runImport({ databaseFile: dbFile, projectSlug: "wide-linked", preset, file: path.join(IMPORT, file) })).errors).toEqual(
        [],
      );
    }
    const labels = path.join(dir, "wide-linked.csv");
    // Two annotator columns, an extra note column (ignored), the response each row labels.
    fs.writeFileSync(labels, "unit,response,rae,sol,note\nq1,model-a,good,good,clear\nq1,model-b,bad,bad,\nq2,model-a,good,bad,split\n");
    const l = await runImport({
      databaseFile: dbFile,
      projectSlug: "wide-linked",
      preset: "labels-wide",
      file: labels,
      annotators: ["rae", "sol"],
    });
    expect(l.errors).toEqual([]);
    expect(l.annotations).toBe(6);
    expect(l.warnings.map((w) => w.message)).toEqual(["columns ignored (not among --annotators): note"]);
    const verdicts = path.join(dir, "wide-linked-verdicts.csv");
    fs.writeFileSync(verdicts, "judge,item,response,value\nbot,q1,model-a#1,good\nbot,q1,model-b#1,good\nbot,q2,model-a#1,bad\n");
    expect((await runImport({ databaseFile: dbFile, projectSlug: "wide-linked", preset: "verdicts", file: verdicts })).errors).toEqual([]);
    const task = (
      c()
        .prepare(
          "select t.id from tasks t join projects p on p.id = t.project_id where p.slug = 'wide-linked' and t.kind = 'imported-labels'",
        )
        .get() as { id: number }
    ).id;
    // Each unit is the imported response its row names (not a stand-in response of its own).
    const units = c()
      .prepare(
        "select i.source_id as item, r.model from units u join responses r on r.id = u.response_id join items i on i.id = u.item_id where u.task_id = ? order by u.position",
      )
      .all(task);
    expect(units).toEqual([
      { item: "q1", model: "model-a" },
      { item: "q1", model: "model-b" },
      { item: "q2", model: "model-a" },
    ]);
    const r = (await judgeAgreementFor(projectId("wide-linked"), task, { reference: "majority", unparsed: "count-as-wrong" }))!.result!;
    // Majority: good, bad, none (1–1); the judge: good, good, bad → 1 of 2 right, q2 left out.
    expect(r.unitsWithoutMajority).toBe(1);
    expect(r.judges.map((j) => [j.judge, j.n, j.accuracy, j.confusion])).toEqual([
      ["bot", 2, 0.5, { bad: { bad: 0, good: 1 }, good: { bad: 0, good: 1 } }],
    ]);
    // Reference each: all six annotator labels, the judge's verdict on each response.
    const each = (await judgeAgreementFor(projectId("wide-linked"), task, { reference: "each", unparsed: "count-as-wrong" }))!.result!;
    expect(each.judges.map((j) => [j.n, j.accuracy])).toEqual([[6, 3 / 6]]);
  });
});
