/**
 * Issue 36, item 11: judge-agreement input handling, through the real commands (`npm run
 * judge-agreement`, `npm run agreement`, `npm run export`) and the judge page's loader.
 *
 * - Missing vs unparsed: in CSV an empty cell, NA or N/A verdict is missing (pandas' to_csv writes
 *   a missing value as an empty cell, R's write.csv as NA); in JSONL null is missing and "" is an
 *   unparsed (empty) answer. Missing verdicts are counted (`missing`) and left out of n;
 *   `--missing-as unparsed` (the page's `missing` select, the export's --missing-as) counts them as
 *   unparsed instead.
 * - `--labels-map` / `--verdicts-map`: labels keyed `idx`, verdicts keyed `unit`, read together.
 * - `npm run agreement` warns (stderr and `warnings`) on a token that is not a number among numbers.
 * - AC1: both commands print their definition, and each value is its definition's.
 *
 * The fixtures are written here with the field names of LLMBar's files (a gold `label`-style column,
 * the judge's `winner` "1"/"2"); every expected figure is computed in this file from the rows below
 * (Cohen 1960 for kappa, Gwet 2008 eqs. 20–30 for AC1), not read from the code under test.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { makeUser } from "../support/factory";
import { args, get, run, signInCookie } from "../support/http";
import { runScript } from "../support/cli";
import { setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { exportToString } from "../../app/formats/export.server";
import { judgeAgreementFor } from "../../app/reports/report.server";
import type { JudgeAgreementResult } from "../../app/reports/judgeAgreement";
import { loader as judgesLoader } from "../../app/routes/p.$slug.reports.$taskId.judges";
import { loader as csvLoader } from "../../app/routes/p.$slug.reports.$taskId.csv";

const { file: dbFile, db } = useTempDatabase();
const ROOT = path.resolve(__dirname, "../..");
const dir = tempDir();

/** A command as `npm run NAME` runs it: scripts/NAME-cli.mjs (the cached esbuild bundle). */
function cmd(name: "judge-agreement" | "agreement", argv: string[]) {
  const r = spawnSync(process.execPath, [`scripts/${name}-cli.mjs`, ...argv], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function judgeJson(argv: string[]): JudgeAgreementResult & Record<string, unknown> {
  const r = cmd("judge-agreement", [...argv, "--format", "json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

// ─── The data: 14 units, one gold label each (u11 has none), one judge's winner ─────────────

const UNITS = Array.from({ length: 14 }, (_, i) => `u${String(i + 1).padStart(2, "0")}`);
// null = no gold label (NA in the CSV, null in the JSONL).
const GOLD: (string | null)[] = ["1", "2", "1", "2", "1", "2", "1", "2", "1", "2", null, "1", "2", "1"];
// The judge's winner as each file writes it: CSV cells, JSONL values.
const WINNER_CSV = ["1", "2", "2", "2", "NA", "1", "1", "N/A", "1", "", "2", "Unsure", "2", "1"];
const WINNER_JSONL: (string | null)[] = ["1", "2", "2", "2", null, "1", "1", "N/A", "1", "", "2", "Unsure", "2", "1"];

const labelsCsv = write("labels.csv", "idx,gold,notes\n" + UNITS.map((u, i) => `${u},${GOLD[i] ?? "NA"},note ${i}`).join("\n") + "\n");
const verdictsCsv = write("verdicts.csv", "unit,judge,winner\n" + UNITS.map((u, i) => `${u},gpt-4,${WINNER_CSV[i]}`).join("\n") + "\n");
// pandas' DataFrame.to_json(orient="records", lines=True): a missing value is null.
const labelsJsonl = write(
  "labels.jsonl",
  UNITS.map((u, i) => JSON.stringify({ idx: u, gold: GOLD[i] === null ? null : Number(GOLD[i]) })).join("\n") + "\n",
);
const verdictsJsonl = write(
  "verdicts.jsonl",
  UNITS.map((u, i) => JSON.stringify({ case_id: u, judge: "gpt-4", winner: WINNER_JSONL[i] })).join("\n") + "\n",
);
const CSV_ARGS = ["--labels", labelsCsv, "--annotators", "gold", "--verdicts", verdictsCsv, "--labels-map", "unit=idx"];
const JSONL_ARGS = [
  "--labels",
  labelsJsonl,
  "--annotators",
  "gold",
  "--verdicts",
  verdictsJsonl,
  "--labels-map",
  "unit=idx",
  "--verdicts-map",
  "unit=case_id",
];

// ─── Independent computations ─────────────────────────────────────────────────────────────

const UNPARSED = "(unparsed)";
/** The compared (gold, verdict) pairs: a unit with a gold label and a verdict; `missing` and `unparsed` say which verdicts are which. */
function pairs(winners: (string | null)[], isMissing: (w: string | null) => boolean, missingAs: "missing" | "unparsed") {
  const out: [string, string][] = [];
  let missing = 0;
  UNITS.forEach((_, i) => {
    const g = GOLD[i];
    if (g === null) return;
    const w = winners[i];
    if (isMissing(w) && missingAs === "missing") {
      missing++;
      return;
    }
    out.push([g, w === "1" || w === "2" ? w : UNPARSED]);
  });
  return { pairs: out, missing };
}
/** Accuracy and Cohen's (1960) kappa: p_o and p_e = Σ_k p_gold(k)·p_judge(k) over every class either side used. */
function accuracyKappa(p: [string, string][]) {
  const n = p.length;
  const po = p.filter(([a, b]) => a === b).length / n;
  const classes = [...new Set(p.flat())];
  const pe = classes.reduce((s, k) => s + (p.filter(([a]) => a === k).length / n) * (p.filter(([, b]) => b === k).length / n), 0);
  return { n, accuracy: po, kappa: (po - pe) / (1 - pe) };
}
/**
 * Gwet's AC1 (Gwet 2008, eqs. 20–30) for rows of ratings (null = no rating) on q categories:
 * π_k = (1/n) Σ_i r_ik / r_i over the n units with a rating; pa = mean over units with r_i ≥ 2 of
 * Σ_k r_ik (r_ik − 1) / (r_i (r_i − 1)); pe = Σ_k π_k (1 − π_k) / (q − 1); AC1 = (pa − pe) / (1 − pe).
 */
function gwetAC1(rows: (string | null)[][], categories: string[]) {
  const q = categories.length;
  const pi = new Array(q).fill(0);
  let n = 0;
  let pa = 0;
  let n2 = 0;
  for (const row of rows) {
    const r = row.filter((x) => x !== null).length;
    if (r === 0) continue;
    n++;
    const counts = categories.map((c) => row.filter((x) => x === c).length);
    counts.forEach((c, k) => (pi[k] += c / r));
    if (r >= 2) {
      n2++;
      pa += counts.reduce((s, c) => s + c * (c - 1), 0) / (r * (r - 1));
    }
  }
  const pe = pi.reduce((s, x) => s + (x / n) * (1 - x / n), 0) / (q - 1);
  return (pa / n2 - pe) / (1 - pe);
}

// ─── The commands ─────────────────────────────────────────────────────────────────────────

describe("npm run judge-agreement: missing is not unparsed", () => {
  const csvMissing = (w: string | null) => w === "" || w === "NA" || w === "N/A";
  it("CSV: empty, NA and N/A verdicts are missing (counted, out of n); --missing-as unparsed counts them as unparsed", () => {
    const r = judgeJson(CSV_ARGS);
    expect(r.missingPolicy).toBe("missing");
    expect(r.labels).toEqual(["1", "2"]); // u11's gold NA is not a label
    expect(r.units).toBe(13);
    const j = r.judges[0];
    const want = pairs(WINNER_CSV, csvMissing, "missing");
    const fig = accuracyKappa(want.pairs);
    // u05 NA, u08 N/A, u10 empty: missing; u12 "Unsure": unparsed (count-as-wrong keeps it in n).
    expect([j.n, j.missing, j.missingVerdicts, j.unparsed, j.unparsedCompared]).toEqual([fig.n, want.missing, 3, 1, 1]);
    expect([j.n, j.missing]).toEqual([10, 3]);
    expect(j.accuracy).toBeCloseTo(fig.accuracy, 12);
    expect(j.cohenKappa).toBeCloseTo(fig.kappa, 12);
    expect(Object.keys(j.confusion)).toEqual(["1", "2", UNPARSED]);

    const u = judgeJson([...CSV_ARGS, "--missing-as", "unparsed"]);
    expect(u.missingPolicy).toBe("unparsed");
    const uj = u.judges[0];
    const uwant = pairs(WINNER_CSV, csvMissing, "unparsed");
    const ufig = accuracyKappa(uwant.pairs);
    expect([uj.n, uj.missing, uj.missingVerdicts, uj.unparsed]).toEqual([13, 0, 3, 4]);
    expect(uj.n).toBe(ufig.n);
    expect(uj.accuracy).toBeCloseTo(ufig.accuracy, 12);
    expect(uj.cohenKappa).toBeCloseTo(ufig.kappa, 12);

    // The table says what was done with them.
    const t = cmd("judge-agreement", CSV_ARGS);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/^Missing verdicts \(CSV: an empty cell, NA or N\/A; JSON: null\): left out of n and counted as missing/m);
    expect(t.stdout).toMatch(/^judge +n +unparsed +compared +missing /m);
    expect(t.stdout).toMatch(/^gpt-4 +10 +1 +1 +3 /m);
  });

  it('JSONL (as pandas writes it): null is missing, "" is an unparsed empty answer, and the text "N/A" is a verdict', () => {
    const r = judgeJson(JSONL_ARGS);
    const j = r.judges[0];
    const want = pairs(WINNER_JSONL, (w) => w === null, "missing");
    const fig = accuracyKappa(want.pairs);
    // u05 null: missing; u08 "N/A", u10 "", u12 "Unsure": unparsed.
    expect([j.n, j.missing, j.missingVerdicts, j.unparsed]).toEqual([12, 1, 1, 3]);
    expect([j.n, j.missing]).toEqual([fig.n, want.missing]);
    expect(j.accuracy).toBeCloseTo(fig.accuracy, 12);
    expect(j.cohenKappa).toBeCloseTo(fig.kappa, 12);
    const u = judgeJson([...JSONL_ARGS, "--missing-as", "unparsed"]).judges[0];
    expect([u.n, u.missing, u.unparsed]).toEqual([13, 0, 4]);
    expect(u.accuracy).toBeCloseTo(accuracyKappa(pairs(WINNER_JSONL, (w) => w === null, "unparsed").pairs).accuracy, 12);
  });

  it("--missing-as takes missing or unparsed", () => {
    const r = cmd("judge-agreement", [...CSV_ARGS, "--missing-as", "wrong"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('judge-agreement: --missing-as must be "missing" or "unparsed", not "wrong".');
  });
});

describe("npm run judge-agreement: a mapping per file", () => {
  it("labels keyed idx and verdicts keyed unit: --map applies to both files and fails; --labels-map maps the labels only", () => {
    const both = cmd("judge-agreement", ["--labels", labelsCsv, "--annotators", "gold", "--verdicts", verdictsCsv, "--map", "unit=idx"]);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe("");
    expect(both.stderr.trim()).toBe(
      'judge-agreement: VERDICTS verdicts.csv: --map unit=idx: column "idx" is not in the header (unit, judge, winner)',
    );
    expect(judgeJson(CSV_ARGS).judges[0].n).toBe(10);
  });

  it("--verdicts-map names the verdicts' own column and wins over --map for that file", () => {
    // JSONL_ARGS: --labels-map unit=idx, --verdicts-map unit=case_id.
    expect(judgeJson(JSONL_ARGS).judges[0].n).toBe(12);
    const r = judgeJson([
      "--labels",
      labelsJsonl,
      "--annotators",
      "gold",
      "--verdicts",
      verdictsJsonl,
      "--map",
      "unit=idx",
      "--verdicts-map",
      "unit=case_id",
    ]);
    expect(r.judges[0].n).toBe(12);
    const bad = cmd("judge-agreement", [...JSONL_ARGS.slice(0, 6), "--labels-map", "unit=idx", "--verdicts-map", "unit=idx"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'judge-agreement: VERDICTS verdicts.jsonl: --verdicts-map unit=idx: column "idx" is not in the header (case_id, judge, winner)',
    );
  });
});

describe("npm run agreement: warnings on ratings that are not numbers", () => {
  it("banana among 0/1/2: a warning with its row and column on stderr and in the JSON's warnings; the run still answers", () => {
    const file = write("banana.csv", "item,r1,r2\nx1,0,0\nx2,1,1\nx3,2,2\nx4,1,banana\nx5,2,1\nx6,0,0\n");
    const r = cmd("agreement", ["--input", file, "--raters", "r1,r2", "--format", "json"]);
    expect(r.code).toBe(0);
    const warning =
      'data row 4, column "r2": "banana" is not a number, among numbers (0, 1, 2); read as a category of its own (1 cell). If it means "no rating", add it to --missing; if it is a typo, fix the file';
    expect(r.stderr).toBe(`agreement: warning: ${warning}\n`);
    const out = JSON.parse(r.stdout);
    expect(out.warnings).toEqual([warning]);
    expect(out.categories).toEqual(["0", "1", "2", "banana"]);
    // The same file without the banana: no warning.
    const clean = write("clean.csv", "item,r1,r2\nx1,0,0\nx2,1,1\nx3,2,2\nx4,1,NA\nx5,2,1\nx6,0,0\n");
    const c = cmd("agreement", ["--input", clean, "--raters", "r1,r2", "--format", "json"]);
    expect([c.code, c.stderr]).toEqual([0, ""]);
    expect(JSON.parse(c.stdout).warnings).toEqual([]);
  });

  it("a value outside --categories is refused with its row and column; 1.0 (pandas' float column) is the category 1", () => {
    const pandas = write("pandas.csv", "item,r1,r2\nx1,0.0,0\nx2,1.0,1\nx3,2.0,2\nx4,,1\nx5,2.0,1\nx6,1.0,0\n");
    const ok = cmd("agreement", ["--input", pandas, "--raters", "r1,r2", "--categories", "0,1,2", "--format", "json"]);
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    expect(JSON.parse(ok.stdout).categories).toEqual([0, 1, 2]);
    // Without --categories, 1.0 and 1 are one category too (before, "1.0" and "1" were two).
    const out = JSON.parse(cmd("agreement", ["--input", pandas, "--raters", "r1,r2", "--format", "json"]).stdout);
    expect(out.categories).toEqual([0, 1, 2]);
    expect(out.percentAgreement).toBeCloseTo(3 / 5, 12);
    const outside = write("outside.csv", "item,r1,r2\nx1,0,0\nx2,1,3\n");
    const r = cmd("agreement", ["--input", outside, "--raters", "r1,r2", "--categories", "0,1,2"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('agreement: data row 2, column "r2": "3" is not one of --categories (0, 1, 2)');
  });
});

describe("AC1: each command prints its definition, and each value is its definition's", () => {
  it("on complete two-rater data both commands give the same AC1; with missing ratings each follows the definition it prints", () => {
    // The units where the judge gave a parsed verdict and there is a gold label: complete pairs.
    const complete = UNITS.map((u, i) => [u, GOLD[i], WINNER_CSV[i]] as const).filter(([, g, w]) => g !== null && (w === "1" || w === "2"));
    expect(complete).toHaveLength(9);
    const ac1Complete = gwetAC1(
      complete.map(([, g, w]) => [g, w]),
      ["1", "2"],
    );
    // npm run judge-agreement: --unparsed exclude leaves exactly those 9 pairs (the missing verdicts are out of n).
    const j = judgeJson([...CSV_ARGS, "--unparsed", "exclude"]);
    expect(j.judges[0].n).toBe(9);
    expect(j.judges[0].ac1).toBeCloseTo(ac1Complete, 12);
    expect(j.ac1Definition).toBe(
      "Gwet's AC1 (Gwet 2008, eqs. 20-30) on the compared (reference, judge) pairs, two ratings each; a unit without a verdict is left out (not counted in the category shares pi_k); q = 2 (the label set: the human labels)",
    );
    // npm run agreement on the same 9 units as two rater columns.
    const pairsFile = write("pairs.csv", "item,gold,judge\n" + complete.map(([u, g, w]) => `${u},${g},${w}`).join("\n") + "\n");
    const a = cmd("agreement", ["--input", pairsFile, "--raters", "gold,judge", "--format", "json"]);
    expect([a.code, a.stderr]).toEqual([0, ""]);
    const aj = JSON.parse(a.stdout);
    expect(aj.gwetAC1).toBeCloseTo(ac1Complete, 12);
    expect(aj.gwetAC1).toBeCloseTo(j.judges[0].ac1!, 12);
    expect(aj.ac1Definition).toBe(
      "Gwet's AC1 (Gwet 2008, eqs. 20-30) over every rating of a unit; a unit with one rating counts in the category shares pi_k, units with two or more in the agreement pa; q = 2 (the categories in the file)",
    );

    // All 14 units, a missing rating written NA (and "Unsure" as NA too): the two definitions part.
    const all = write(
      "all.csv",
      "item,gold,judge\n" +
        UNITS.map((u, i) => `${u},${GOLD[i] ?? "NA"},${WINNER_CSV[i] === "1" || WINNER_CSV[i] === "2" ? WINNER_CSV[i] : "NA"}`).join("\n") +
        "\n",
    );
    const rows = UNITS.map((_, i) => [GOLD[i], WINNER_CSV[i] === "1" || WINNER_CSV[i] === "2" ? WINNER_CSV[i] : null]);
    const everyRating = gwetAC1(rows, ["1", "2"]);
    const b = JSON.parse(cmd("agreement", ["--input", all, "--raters", "gold,judge", "--format", "json"]).stdout);
    expect(b.gwetAC1).toBeCloseTo(everyRating, 12);
    expect(everyRating).not.toBeCloseTo(ac1Complete, 3);
    // The table prints it too.
    expect(cmd("agreement", ["--input", all, "--raters", "gold,judge"]).stdout).toContain(`gwetAC1: ${b.ac1Definition}`);
    expect(cmd("judge-agreement", [...CSV_ARGS, "--unparsed", "exclude"]).stdout).toContain(`AC1: ${j.ac1Definition}`);
  });
});

// ─── The app: the same files imported, the judge page's choice, the export's option ─────────

/**
 * The verdicts file without u11's line: the import refuses a verdict on a unit nobody labelled (u11's
 * gold is NA), where the command reads it and leaves it out (verdictsWithoutLabels).
 */
const withoutU11 = (file: string) =>
  write(
    `app-${path.basename(file)}`,
    fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => !line.includes("u11"))
      .join("\n"),
  );

describe("the judge page, its CSV and npm run export read missing verdicts as the command does", () => {
  let cookie: string;
  let projectId = 0;
  let taskId = 0;
  beforeAll(async () => {
    const labels = await runImport({
      databaseFile: dbFile,
      projectSlug: "missing",
      preset: "labels-wide",
      file: labelsCsv,
      annotators: ["gold"],
      mapping: { unit: "idx" },
    });
    expect(labels.errors).toEqual([]);
    const verdicts = await runImport({
      databaseFile: dbFile,
      projectSlug: "missing",
      preset: "unit-verdicts",
      file: withoutU11(verdictsCsv),
    });
    expect(verdicts.errors).toEqual([]);
    const c = db().$client;
    projectId = (c.prepare("select id from projects where slug = 'missing'").get() as { id: number }).id;
    taskId = (c.prepare("select id from tasks where project_id = ?").get(projectId) as { id: number }).id;
    const u = await makeUser();
    await setMembership(projectId, u.id, "researcher");
    cookie = await signInCookie(u.email, u.password);
  });
  const figures = (r: JudgeAgreementResult) => ({
    labels: r.labels,
    missingPolicy: r.missingPolicy,
    judges: r.judges.map(({ perAnnotator: _p, ...j }) => j),
  });

  it("the page's loader: missing=missing (default) and missing=unparsed give the command's figures", async () => {
    for (const [q, argv] of [
      ["", CSV_ARGS],
      ["?missing=unparsed", [...CSV_ARGS, "--missing-as", "unparsed"]],
    ] as const) {
      const res = await run(
        judgesLoader,
        args(get(`/p/missing/reports/${taskId}/judges${q}`, cookie), { slug: "missing", taskId: String(taskId) }),
      );
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.missing).toBe(q ? "unparsed" : "missing");
      expect(figures(body.agreement.result)).toEqual(figures(judgeJson([...argv])));
    }
    const app = (await judgeAgreementFor(projectId, taskId, { reference: "majority", unparsed: "count-as-wrong" }))!.result!;
    expect([app.judges[0].n, app.judges[0].missing, app.judges[0].unparsed]).toEqual([10, 3, 1]);
  });

  it("the page's CSV and npm run export --missing-as carry the policy and the counts", async () => {
    const csv = await run(
      csvLoader,
      args(get(`/p/missing/reports/${taskId}/csv?table=agreement-judges&missing=unparsed`, cookie), {
        slug: "missing",
        taskId: String(taskId),
      }),
    );
    expect(csv.status).toBe(200);
    const page = Papa.parse<Record<string, string>>(await csv.text(), { header: true, skipEmptyLines: true }).data;
    expect(page[0]).toMatchObject({ judge: "gpt-4", n: "13", unparsed: "4", missing: "0", missing_policy: "unparsed" });

    for (const [flag, n, missing, unparsed] of [
      ["missing", "10", "3", "1"],
      ["unparsed", "13", "0", "4"],
    ] as const) {
      const r = await runScript("export", ["--project", "missing", "--what", "judge-agreement", "--missing-as", flag], {
        DATABASE_URL: dbFile,
      });
      expect([r.code, r.err]).toEqual([0, ""]);
      const row = Papa.parse<Record<string, string>>(r.out, { header: true, skipEmptyLines: true }).data[0];
      expect(row).toMatchObject({ judge: "gpt-4", n, missing, unparsed, missing_verdicts: "3", missing_policy: flag });
      // The in-process export gives the same row.
      const inProcess = Papa.parse<Record<string, string>>(
        await exportToString(db(), projectId, "judge-agreement", "csv", { missing: flag }),
        { header: true, skipEmptyLines: true },
      ).data[0];
      expect(inProcess).toEqual(row);
    }
    const bad = await runScript("export", ["--project", "missing", "--what", "judge-agreement", "--missing-as", "nope"], {
      DATABASE_URL: dbFile,
    });
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe('export: --missing-as must be "missing" or "unparsed", not "nope".');
  }, 60_000);

  it('an imported JSONL verdict: null is missing, "" is unparsed, as the command reads the file', async () => {
    const labels = await runImport({
      databaseFile: dbFile,
      projectSlug: "missing-jsonl",
      preset: "labels-wide",
      file: labelsJsonl,
      annotators: ["gold"],
      mapping: { unit: "idx" },
    });
    expect(labels.errors).toEqual([]);
    const verdicts = await runImport({
      databaseFile: dbFile,
      projectSlug: "missing-jsonl",
      preset: "unit-verdicts",
      file: withoutU11(verdictsJsonl),
      mapping: { unit: "case_id" },
    });
    expect(verdicts.errors).toEqual([]);
    const c = db().$client;
    const pid = (c.prepare("select id from projects where slug = 'missing-jsonl'").get() as { id: number }).id;
    const tid = (c.prepare("select id from tasks where project_id = ?").get(pid) as { id: number }).id;
    for (const missing of ["missing", "unparsed"] as const) {
      const app = (await judgeAgreementFor(pid, tid, { reference: "majority", unparsed: "count-as-wrong", missing }))!.result!;
      expect(figures(app)).toEqual(figures(judgeJson([...JSONL_ARGS, "--missing-as", missing])));
    }
  });
});
