/**
 * Labels made in another tool, imported through the labels-wide preset, give
 * on the report page and in its CSV exactly the figures app/stats computes on
 * the same matrix read straight from the file.
 */
import fs from "node:fs";
import path from "node:path";
import Papa from "papaparse";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { tempDir, useTempDatabase } from "../support/db";
import { makeUser } from "../support/factory";
import { args, get, run, signInCookie } from "../support/http";
import { schema } from "../../db/client";
import { setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { fleissKappa, gwetAC1, krippendorffAlpha, percentAgreement, seededRandom } from "../../app/stats";
import { loader as reportLoader } from "../../app/routes/p.$slug.reports.$taskId._index";
import { loader as csvLoader } from "../../app/routes/p.$slug.reports.$taskId.csv";

const { file: dbFile, db } = useTempDatabase();
const dir = tempDir();
const csvFile = path.join(dir, "three-raters.csv");
let cookie: string;
let taskId: number;
let matrix: (string | null)[][];

/** An original fixture: 40 units, three raters who mostly agree, a few cells left empty. */
function writeFixture() {
  const rand = seededRandom(2026);
  const lines = ["unit,rater_ana,rater_ben,rater_chen"];
  matrix = [];
  for (let u = 1; u <= 40; u++) {
    const truth = rand() < 0.7 ? "Yes" : "No";
    const row = [0.05, 0.1, 0.2].map((err) => {
      if (rand() < 0.08) return null; // not labelled
      return rand() < err ? (truth === "Yes" ? "No" : "Yes") : truth;
    });
    matrix.push(row);
    lines.push([`u${u}`, ...row.map((v) => v ?? "")].join(","));
  }
  fs.writeFileSync(csvFile, lines.join("\r\n") + "\r\n");
}

beforeAll(async () => {
  writeFixture();
  const summary = await runImport({
    databaseFile: dbFile,
    projectSlug: "imported",
    preset: "labels-wide",
    file: csvFile,
    annotators: ["rater_ana", "rater_ben", "rater_chen"],
  });
  expect(summary.errors).toEqual([]);
  expect(summary.committed).toBe(true);
  const project = db().select().from(schema.projects).where(eq(schema.projects.slug, "imported")).get()!;
  taskId = db().select().from(schema.tasks).where(eq(schema.tasks.projectId, project.id)).get()!.id;
  const researcher = await makeUser();
  await setMembership(project.id, researcher.id, "researcher");
  cookie = await signInCookie(researcher.email, researcher.password);
});

describe("an imported labels-wide file", () => {
  it("shows exactly the app/stats figures on the report page", async () => {
    const res = await run(reportLoader, args(get(`/p/imported/reports/${taskId}`, cookie), { slug: "imported", taskId: String(taskId) }));
    const { report } = await res.json();
    const rows = report.tables.iaa.rows as { statistic: string; value: number; n: number }[];
    const value = (label: string) => rows.find((r) => r.statistic === label)?.value;
    // Expected values: the library functions on the matrix read from the file (units × raters, empty = missing).
    expect(value("Percent agreement")).toBe(percentAgreement(matrix));
    expect(value("Fleiss' kappa")).toBe(fleissKappa(matrix).kappa);
    expect(value("Krippendorff's alpha (nominal)")).toBe(krippendorffAlpha(matrix, { level: "nominal" }).alpha);
    expect(value("Gwet's AC1")).toBe(gwetAC1(matrix).value);
    // Placeholder annotators carry the file's column names.
    expect(report.tables.annotators.rows.map((r: { annotator: string }) => r.annotator).sort()).toEqual([
      "rater_ana",
      "rater_ben",
      "rater_chen",
    ]);
  });

  it("the CSV download carries the same figures at full precision", async () => {
    const res = await run(
      csvLoader,
      args(get(`/p/imported/reports/${taskId}/csv?table=iaa`, cookie), { slug: "imported", taskId: String(taskId) }),
    );
    expect(res.headers.get("Content-Type")).toMatch(/text\/csv/);
    const parsed = Papa.parse<Record<string, string>>(await res.text(), { header: true, skipEmptyLines: true });
    const byStat = new Map(parsed.data.map((r) => [r.Statistic, Number(r.Value)]));
    expect(byStat.get("Fleiss' kappa")).toBe(fleissKappa(matrix).kappa);
    expect(byStat.get("Krippendorff's alpha (nominal)")).toBe(krippendorffAlpha(matrix, { level: "nominal" }).alpha);
    expect(byStat.get("Gwet's AC1")).toBe(gwetAC1(matrix).value);
    expect(byStat.get("Percent agreement")).toBe(percentAgreement(matrix));
  });
});
