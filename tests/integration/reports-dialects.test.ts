/**
 * The agreement report on SQLite and on PostgreSQL (issue 17): the same
 * labels, imported with the real labels-long preset, give the same report on
 * both dialects, figure for figure (every table, every interval: the bootstrap
 * is seeded), and its headline figures equal an independent computation here:
 * percent agreement is the mean over units of the share of agreeing annotator
 * pairs, Fleiss' kappa (Fleiss 1971) is (P̄ − P̄e) / (1 − P̄e) from the label
 * counts per unit. The project overview's counts and the stale counts agree too.
 */
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, first, getDal, initDal } from "../../app/dal.server";
import { runImport } from "../../app/formats/import.server";
import { listTasks, staleCounts } from "../../app/reports/load.server";
import { clearReportCache, taskReport } from "../../app/reports/report.server";
import { datasetSummaries, projectCounts } from "../../app/projects/projects.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const ANNOTATORS = ["Ada Lovelace", "Grace Hopper", "Alan Turing"];
const UNITS = 40;
/** A fixed, uneven pattern of Yes/No (no randomness: the same file every run). */
const labelOf = (u: number, a: number) => ((u * 7 + a * 3 + (u % 4 === 0 ? a : 0)) % 5 < 3 ? "Yes" : "No");

const dir = tempDir("concord-reports-dialects-");
const file = path.join(dir, "labels.csv");
const lines = ["unit,annotator,label"];
for (let u = 1; u <= UNITS; u++) for (let a = 0; a < ANNOTATORS.length; a++) lines.push(`u${u},${ANNOTATORS[a]},${labelOf(u, a)}`);
fs.writeFileSync(file, lines.join("\n") + "\n");

/** Percent agreement and Fleiss' kappa, computed from the file's labels. */
function expected() {
  let agree = 0;
  let pBar = 0;
  const totals = { Yes: 0, No: 0 };
  const m = ANNOTATORS.length;
  for (let u = 1; u <= UNITS; u++) {
    const n = { Yes: 0, No: 0 };
    for (let a = 0; a < m; a++) n[labelOf(u, a)]++;
    totals.Yes += n.Yes;
    totals.No += n.No;
    const pairsAgreeing = (n.Yes * (n.Yes - 1) + n.No * (n.No - 1)) / 2;
    agree += pairsAgreeing / ((m * (m - 1)) / 2);
    pBar += (n.Yes * (n.Yes - 1) + n.No * (n.No - 1)) / (m * (m - 1));
  }
  pBar /= UNITS;
  const py = totals.Yes / (UNITS * m);
  const pe = py * py + (1 - py) * (1 - py);
  return { percent: agree / UNITS, fleiss: (pBar - pe) / (1 - pe) };
}

let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

const seen: Record<string, unknown> = {};

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`reports on ${dialect}`, () => {
    let url = "";
    beforeAll(async () => {
      await closeDal();
      closeDb();
      clearReportCache();
      if (dialect === "sqlite") url = path.join(tempDir(), "reports.db");
      else {
        testPg = await startTestPg();
        url = await testPg.createDatabase("reports_dialects");
      }
      process.env.DATABASE_URL = url;
      await initDal();
    });

    it("imported labels give the independent figures, and the same report as on SQLite", async () => {
      const result = await runImport({ databaseFile: url, projectSlug: "rep", preset: "labels-long", file });
      expect(result.errors).toEqual([]);
      const d = getDal();
      const project = first(await d.q.select().from(d.t.projects).where(eq(d.t.projects.slug, "rep")))!;
      const tasks = await listTasks(project.id);
      expect(tasks).toHaveLength(1);
      expect(tasks[0]).toMatchObject({ units: UNITS, annotations: UNITS * ANNOTATORS.length });
      const report = (await taskReport(project.id, tasks[0].id, { rule: null, delta: 0.05, slug: "rep" }))!;
      const iaa = report.tables.iaa.rows;
      const value = (label: string) => iaa.find((r) => String(r.statistic).startsWith(label))?.value as number;
      const want = expected();
      expect(value("Percent agreement")).toBeCloseTo(want.percent, 12);
      expect(value("Fleiss")).toBeCloseTo(want.fleiss, 12);
      expect(report.counts).toMatchObject({ subjects: UNITS, annotations: UNITS * ANNOTATORS.length, annotators: 3 });
      const overview = { summaries: await datasetSummaries(project.id), counts: await projectCounts(project.id) };
      const stale = await staleCounts(tasks[0].id);
      expect(stale).toEqual({ labels: 0, verdicts: 0 });
      const snapshot = JSON.parse(
        JSON.stringify({ tasks, report, overview: { ...overview, summaries: overview.summaries.map((s) => ({ ...s, frozenAt: null })) } }),
      );
      if (dialect === "sqlite") seen.sqlite = snapshot;
      else if (seen.sqlite) expect(snapshot).toEqual(seen.sqlite);
    });
  });
}
