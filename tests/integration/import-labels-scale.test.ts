/**
 * A declared scale (`--categories` on `npm run import`, the Import page's "Scale" field) is
 * stored with the imported-labels task, and the report's Gwet's AC1 counts its categories
 * (q = 5 on a 1–5 scale where only 2, 3 and 4 were used), not the labels seen.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { makeUser } from "../support/factory";
import { args, get, run, signInCookie } from "../support/http";
import { setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { seededRandom } from "../../app/stats";
import { loader as reportLoader } from "../../app/routes/p.$slug.reports.$taskId._index";

const { file: dbFile, db } = useTempDatabase();
const dir = tempDir();
const csvFile = path.join(dir, "likert.csv");
let matrix: (number | null)[][];
let cookie: string;

/**
 * Gwet's AC1 written out from K. L. Gwet (2008), Br. J. Math. Stat. Psychol. 61, eqs. for r raters
 * with missing ratings: pa over units with two or more ratings, pi_k over units with any, and
 * pe = sum_k pi_k (1 - pi_k) / (q - 1). Independent of app/stats.
 */
function ac1(rows: (number | null)[][], scale: number[]): number {
  const q = scale.length;
  let paSum = 0;
  let paUnits = 0;
  let rated = 0;
  const pi = new Array(q).fill(0);
  for (const row of rows) {
    const given = row.filter((v): v is number => v !== null);
    const r = given.length;
    const counts = scale.map((k) => given.filter((v) => v === k).length);
    if (r >= 2) {
      paSum += counts.reduce((s, c) => s + c * (c - 1), 0) / (r * (r - 1));
      paUnits++;
    }
    if (r >= 1) {
      rated++;
      counts.forEach((c, k) => (pi[k] += c / r));
    }
  }
  const pa = paSum / paUnits;
  const pe = pi.reduce((s, p) => s + (p / rated) * (1 - p / rated), 0) / (q - 1);
  return (pa - pe) / (1 - pe);
}

beforeAll(async () => {
  // An original fixture: 40 units rated 2–4 on a 1–5 scale by three raters who mostly agree; a few cells empty.
  const rand = seededRandom(15);
  const lines = ["unit,rater_1,rater_2,rater_3,comment"];
  matrix = [];
  for (let u = 1; u <= 40; u++) {
    const truth = 2 + Math.floor(rand() * 3);
    const row = [0.15, 0.25, 0.35].map((err) =>
      rand() < 0.05 ? null : rand() < err ? Math.min(4, Math.max(2, truth + (rand() < 0.5 ? -1 : 1))) : truth,
    );
    matrix.push(row);
    lines.push([`u${u}`, ...row.map((v) => v ?? ""), u % 7 === 0 ? "re-read" : ""].join(","));
  }
  fs.writeFileSync(csvFile, lines.join("\n") + "\n");
  const u = await makeUser();
  for (const [slug, categories] of [
    ["declared", ["1", "2", "3", "4", "5"]],
    ["undeclared", undefined],
  ] as const) {
    // Nominal (the codes name categories): the report gives Gwet's AC1 there.
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: slug,
      preset: "labels-wide",
      file: csvFile,
      annotators: ["rater_1", "rater_2", "rater_3"],
      level: "nominal",
      categories: categories && [...categories],
    });
    expect(s.errors).toEqual([]);
    expect(s.committed).toBe(true);
    await setMembership(
      (db().$client.prepare("select id from projects where slug = ?").get(slug) as { id: number }).id,
      u.id,
      "researcher",
    );
  }
  cookie = await signInCookie(u.email, u.password);
});

const taskOf = (slug: string) =>
  db().$client.prepare("select t.id, t.config from tasks t join projects p on p.id = t.project_id where p.slug = ?").get(slug) as {
    id: number;
    config: string;
  };

async function reportAC1(slug: string): Promise<number> {
  const taskId = String(taskOf(slug).id);
  const res = await run(reportLoader, args(get(`/p/${slug}/reports/${taskId}`, cookie), { slug, taskId }));
  expect(res.status).toBe(200);
  const { report } = await res.json();
  const rows = report.tables.iaa.rows as { statistic: string; value: number }[];
  return rows.find((r) => r.statistic === "Gwet's AC1")!.value;
}

describe("a declared scale", () => {
  it("is stored in the task's config, in order, as labels (numbers)", () => {
    expect(JSON.parse(taskOf("declared").config)).toMatchObject({ categories: [1, 2, 3, 4, 5], level: "nominal", levelSource: "given" });
    expect(JSON.parse(taskOf("undeclared").config).categories).toBeUndefined();
  });

  it("without --level, the level is inferred from the scale, and the summary says so", async () => {
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: "inferred",
      preset: "labels-wide",
      file: csvFile,
      annotators: ["rater_1", "rater_2", "rater_3"],
      categories: ["1", "2", "3", "4", "5"],
      dryRun: true,
    });
    expect(s.errors).toEqual([]);
    expect(s.level).toEqual({
      level: "ordinal",
      source: "inferred",
      reason:
        "inferred from the declared scale (--categories): 5 whole numbers, read as a rating scale; import with --level nominal if they are category codes",
    });
  });

  it("gives the report's AC1 with q = 5, the scale's categories, not the 3 in use", async () => {
    expect(new Set(matrix.flat().filter((v) => v !== null))).toEqual(new Set([2, 3, 4]));
    const declared = await reportAC1("declared");
    const q5 = ac1(matrix, [1, 2, 3, 4, 5]);
    const q3 = ac1(matrix, [2, 3, 4]);
    expect(Math.abs(q5 - q3)).toBeGreaterThan(0.01); // the fixture tells the two apart
    expect(declared).toBeCloseTo(q5, 12);
    // Without a declared scale the report counts the categories in use.
    expect(await reportAC1("undeclared")).toBeCloseTo(q3, 12);
  });

  it("refuses labels outside it by row, column and reason, and writes nothing", async () => {
    const before = db().$client.prepare("select count(*) as n from annotations").get();
    const s = await runImport({
      databaseFile: dbFile,
      projectSlug: "narrow",
      preset: "labels-wide",
      file: csvFile,
      annotators: ["rater_1", "rater_2", "rater_3"],
      categories: ["2", "3"],
    });
    expect(s.committed).toBe(false);
    const firstFour = matrix.findIndex((row) => row.includes(4));
    const col = matrix[firstFour].indexOf(4);
    expect(s.errors[0]).toEqual({
      row: firstFour + 2,
      field: `rater_${col + 1}`,
      message: '"4" is not a category of the declared scale (2, 3)',
    });
    expect(db().$client.prepare("select count(*) as n from annotations").get()).toEqual(before);
  });

  it("bad scales are refused before the file is read", async () => {
    const imp = (categories: string[], extra: object = {}) =>
      runImport({
        databaseFile: dbFile,
        projectSlug: "bad-scale",
        preset: "labels-wide",
        file: csvFile,
        annotators: ["rater_1"],
        categories,
        ...extra,
      });
    await expect(imp(["1"])).rejects.toThrow("--categories: the scale needs at least two categories.");
    await expect(imp(["1", "", "3"])).rejects.toThrow(
      "--categories: the scale has an empty category (two commas in a row, or one at an end).",
    );
    await expect(imp(["yes", "Yes"])).rejects.toThrow('--categories: the scale names "yes" twice (as "Yes").');
    await expect(imp(["low", "high"], { level: "ordinal" })).rejects.toThrow("--categories must all be numbers for --level ordinal.");
    await expect(
      runImport({ databaseFile: dbFile, projectSlug: "bad-scale", preset: "responses", file: csvFile, categories: ["1", "2"] }),
    ).rejects.toThrow("--categories declares the scale of labels; the responses preset imports no labels.");
  });
});
