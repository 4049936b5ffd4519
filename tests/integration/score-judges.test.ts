/**
 * Issue 41: score judges meta-evaluated on their own scale, through the real import presets, the
 * report engine (the judges page's figures), its CSV, `npm run export` and `npm run judge-agreement`.
 *
 * The data (tests/fixtures/judge/stories.ts): 8 prompts × 4 systems, two workers' 1–5 Relevance per
 * story, three judges — averaged scores with 0 and −1, a 1–10 judge, and a judge with many ties.
 * Every expected figure is computed in this file from those rows (the definitions written out
 * below), never read from the code under test.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { runImport } from "../../app/formats/import.server";
import { judgeReportFor } from "../../app/reports/report.server";
import { IMPORT_MAPPINGS, JUDGES, STORIES, W1, W2, writeStoryFiles } from "../fixtures/judge/stories";

const { file: dbFile, db } = useTempDatabase();
const dir = tempDir();
const files = writeStoryFiles(dir);

async function importStories(slug: string) {
  const steps = [
    { preset: "items-csv", file: files.items, mapping: IMPORT_MAPPINGS.items },
    { preset: "responses", file: files.stories, mapping: IMPORT_MAPPINGS.stories },
    { preset: "labels-long", file: files.ratings, mapping: IMPORT_MAPPINGS.ratings, level: "interval" as const },
    { preset: "verdicts", file: files.verdicts, mapping: IMPORT_MAPPINGS.verdicts },
  ];
  const out = [];
  for (const s of steps) {
    const r = await runImport({ databaseFile: dbFile, projectSlug: slug, ...s });
    expect(r.errors, s.preset).toEqual([]);
    out.push(r);
  }
  const c = db().$client;
  const projectId = (c.prepare("select id from projects where slug = ?").get(slug) as { id: number }).id;
  const taskId = (c.prepare("select id from tasks where project_id = ? and kind = 'imported-labels'").get(projectId) as { id: number }).id;
  return { projectId, taskId, verdicts: out[3] };
}

/** Out of the humans' 1–5 scale, per judge, counted here from the fixture. */
const outOfScale = (j: string) => JUDGES[j].filter((x) => x < 1 || x > 5).length;

describe("item 1: numeric judge scores on an interval task are kept", () => {
  let projectId = 0;
  let taskId = 0;
  let summary: Awaited<ReturnType<typeof importStories>>["verdicts"];
  beforeAll(async () => {
    ({ projectId, taskId, verdicts: summary } = await importStories("stories"));
  });

  it("fractional, zero and negative scores are stored as scores, none unparsed; the out-of-scale ones counted per judge in a warning", () => {
    expect(W1).toHaveLength(STORIES.length);
    expect(W2).toHaveLength(STORIES.length);
    expect(summary.verdicts).toBe(3 * STORIES.length);
    const c = db().$client;
    const rows = c
      .prepare(
        "select j.name as judge, v.score, v.parse_status as status from verdicts v join judges j on j.id = v.judge_id where j.project_id = ? order by v.id",
      )
      .all(projectId) as { judge: string; score: number | null; status: string }[];
    for (const j of Object.keys(JUDGES)) {
      const mine = rows.filter((r) => r.judge === j);
      expect(mine.map((r) => r.status)).toEqual(STORIES.map(() => "ok"));
      expect(mine.map((r) => r.score)).toEqual(JUDGES[j]);
    }
    // avg-judge: 0, −1, 0 (three); ten-judge: its scores above 5 (20); tie-judge: none.
    expect([outOfScale("avg-judge"), outOfScale("ten-judge"), outOfScale("tie-judge")]).toEqual([3, 20, 0]);
    const messages = summary.warnings.map((w) => w.message);
    expect(messages).toContain(
      'judge "avg-judge": 3 scores outside the human scale 1–5 (the first, 0, at row 8); kept as scores, in every figure',
    );
    expect(messages).toContain(
      `judge "ten-judge": 20 scores outside the human scale 1–5 (the first, 7, at row ${2 + STORIES.length}); kept as scores, in every figure`,
    );
    expect(messages.filter((m) => m.includes("tie-judge"))).toEqual([]);
  });

  it("the judges page's n is every scored story for every judge (none dropped)", async () => {
    const report = (await judgeReportFor(projectId, taskId, { rule: "mean", delta: 0.05 }))!;
    const rows = report.tables.judges.rows;
    for (const j of Object.keys(JUDGES)) {
      const row = rows.find((r) => r.judge === j)!;
      expect([row.judge, row.n, row.unparsed]).toEqual([j, STORIES.length, 0]);
    }
  });

  it("unit-verdicts on a labels-wide interval task: every score kept, n = every scored unit, the same warning", async () => {
    const labels = await runImport({
      databaseFile: dbFile,
      projectSlug: "stories-wide",
      preset: "labels-wide",
      file: files.labelsWide,
      annotators: ["w1", "w2"],
      mapping: { unit: "Story ID" },
      level: "interval",
    });
    expect(labels.errors).toEqual([]);
    const v = await runImport({
      databaseFile: dbFile,
      projectSlug: "stories-wide",
      preset: "unit-verdicts",
      file: files.verdictsLong,
      mapping: { unit: "Story ID", verdict: "Relevance" },
    });
    expect(v.errors).toEqual([]);
    expect(v.verdicts).toBe(3 * STORIES.length);
    expect(v.warnings.map((w) => w.message)).toContain(
      'judge "avg-judge": 3 scores outside the human scale 1–5 (the first, 0, at row 8); kept as scores, in every figure',
    );
    const c = db().$client;
    const pid = (c.prepare("select id from projects where slug = 'stories-wide'").get() as { id: number }).id;
    const tid = (c.prepare("select id from tasks where project_id = ?").get(pid) as { id: number }).id;
    const report = (await judgeReportFor(pid, tid, { rule: "mean", delta: 0.05 }))!;
    for (const j of Object.keys(JUDGES))
      expect(report.tables.judges.rows.find((r) => r.judge === j)).toMatchObject({ n: STORIES.length, unparsed: 0 });
  });
});
