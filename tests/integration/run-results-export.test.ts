/**
 * The run-results export (issue 42, item 2) of a C3EBench run (its tables have a breakdown by task type, unlike
 * the demo's RefineBench run that tests/api/exports.test.ts covers): run against the local fake endpoint, then
 * `npm run export -- --what run-results --run N` — its rows are every table of the results page (the protocol's
 * tables, by id), and each figure is the results page's (runResultsAll: the mean per model and task type, its n,
 * the overall mean, failed and unparsed counts), at full precision.
 */
import path from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTOCOLS } from "../../app/runs/protocols";
import { createRun } from "../../app/runs/runner.server";
import { runResultsAll } from "../../app/runs/results.server";
import { runResultRows, runResultTables } from "../../app/runs/results-export.server";
import { useTempDatabase } from "../support/db";
import { runScript } from "../support/cli";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { addProviders, codeSum, FIXTURES, importThrough, messagesOf, projectIdOf, runToEnd } from "./runs-protocol-support";

const { db, file: dbFile } = useTempDatabase();
let fake: FakeLlm;

beforeAll(async () => {
  // The model drafts; the judge scores 5–9 by the draft's code points (a spread of means per task type), and one
  // generation fails, so the failed count is not zero.
  fake = await startFakeLlm((req) => {
    const msgs = messagesOf(req.body);
    const content = msgs[msgs.length - 1]?.content ?? "";
    if (req.body.model === "target-model")
      return content.includes("bees and orchards") ? { status: 500 } : `Draft: ${content.slice(0, 30)}`;
    const candidate = content.split("[Candidate Answer]\n")[1] ?? "";
    return JSON.stringify({ score: 5 + (codeSum(candidate) % 5), analysis: { note: "fake" }, verdict: "ok" });
  });
});
afterAll(() => fake.close());

describe("run-results of a C3EBench run", () => {
  it("the command writes every table of the results page, with the page's figures at full precision", async () => {
    const datasetId = await importThrough(dbFile, "c3e", "c3ebench", path.join(FIXTURES, "c3ebench-run.jsonl"));
    const projectId = projectIdOf(db(), "c3e");
    addProviders(db(), projectId, fake.baseUrl);
    const run = await createRun(db(), projectId, {
      name: "c3e export",
      protocol: "c3ebench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { parseRetries: 0 },
    });
    const done = await runToEnd(db(), run.id);
    const results = await runResultsAll(db(), done);
    const metrics = (
      results[0] as unknown as {
        metrics: {
          model: string;
          byTask: Record<string, { mean: number; n: number }>;
          overall: number;
          n: number;
          failed: number;
          unparsed: number;
        }[];
      }
    ).metrics;

    const out = await runScript("export", ["--project", "c3e", "--what", "run-results", "--run", String(run.id)], { DATABASE_URL: dbFile });
    expect(out.code, out.err).toBe(0);
    const rows = Papa.parse<Record<string, string>>(out.out.trim(), { header: true, dynamicTyping: false }).data;
    // The same rows as the domain function's (one reader for the page, the command and the API).
    const x = (await runResultTables(db(), projectId, run.id))!;
    expect(rows.length).toBe(runResultRows(x).length);
    // Every table the page shows (Protocol.tables) has its rows, under its id.
    const pageTables = PROTOCOLS.c3ebench.tables!(results[0] as never, results[0].judge).flatMap((b) =>
      b.kind === "note" ? [] : [b.table.id],
    );
    expect([...new Set(rows.map((r) => r.table))]).toEqual(pageTables);

    expect(metrics.length).toBeGreaterThan(0);
    expect(metrics.some((m) => m.failed > 0)).toBe(true);
    for (const m of metrics) {
      for (const [task, c] of Object.entries(m.byTask)) {
        const row = rows.find((r) => r.model === m.model && r.group === task && r.metric === "Mean score")!;
        expect(row, `${m.model} ${task}`).toBeDefined();
        // Full precision: the CSV's decimal text is the number itself (JavaScript's shortest round-trip form).
        expect(Number(row.value)).toBe(c.mean);
        expect(Number(row.n)).toBe(c.n);
        expect(row.judge).toBe(results[0].judge);
      }
      const overall = rows.find((r) => r.model === m.model && r.metric === "Overall")!;
      expect([Number(overall.value), Number(overall.n), Number(overall.failed), Number(overall.unparsed)]).toEqual([
        m.overall,
        m.n,
        m.failed,
        m.unparsed,
      ]);
    }
  }, 120_000);
});
