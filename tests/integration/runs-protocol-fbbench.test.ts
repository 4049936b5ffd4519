/**
 * FB-Bench end to end on data in the released format (fb_bench_dataset_v3.json
 * field names): imported with the `fb-bench` preset, run against the local
 * fake endpoint, every reported number recomputed here from the file itself.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { createRun } from "../../app/runs/runner.server";
import { runResultsAll } from "../../app/runs/results.server";
import { calibrationReport, createCalibrationTask } from "../../app/runs/calibration.server";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { addMember, makeUser } from "../support/factory";
import { eq } from "drizzle-orm";
import { useTempDatabase } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import {
  addProviders,
  codeSum,
  FIXTURES,
  hasShared,
  importThrough,
  mean,
  messagesOf,
  projectIdOf,
  runToEnd,
  SHARED,
} from "./runs-protocol-support";

const { db, file: dbFile } = useTempDatabase();
let fake: FakeLlm;

type Rec = {
  bench_type: string;
  task_type: string;
  user_query: string;
  origin_first_response: string;
  feedback: string;
  error_type: string[] | null;
  feedback_type: string[];
  checklist: (string | [string, number])[];
};

/** Judge 1 says 是 to a criterion when the code-point sum of its text is even; it fails (HTTP 500) on the len() question. Judge 2 says 是 to everything. */
const met = (text: string) => codeSum(text) % 2 === 0;
function script(req: { body: Record<string, unknown> }) {
  const msgs = messagesOf(req.body);
  const last = msgs[msgs.length - 1]?.content ?? "";
  if (last.includes("### 检查清单")) {
    if (req.body.model === "judge-model" && last.includes("len([1, 2, 3])")) return { status: 500 };
    const section = last.split("### 检查清单\n")[1].split("\n\n### 输出格式")[0];
    const lines = section.split("\n").map((l) => l.match(/^(\d+): (.*)$/)!);
    return lines.map((m) => `${m[1]}: ${req.body.model === "judge-model-2" || met(m[2]) ? "是" : "否"}`).join("\n");
  }
  return "好的，我重新核对了一遍。";
}

/** The paper's scores (§3.3), computed from the records: EC Σw·r; RM 1 if any (or all) criterion met; ×100; overall the mean of the two. */
function expected(recs: Rec[], rule: "any" | "all", judge: (t: string) => boolean = met) {
  const scored = recs.map((r) => {
    const texts = r.checklist.map((c) => (typeof c === "string" ? c : c[0]));
    const hits = texts.map(judge);
    const ec = r.bench_type === "Error Correction";
    const score = ec
      ? r.checklist.reduce((s, c, i) => s + (hits[i] ? (c as [string, number])[1] : 0), 0)
      : (rule === "any" ? hits.some(Boolean) : hits.every(Boolean))
        ? 1
        : 0;
    return { r, ec, score: 100 * score };
  });
  const ec = scored.filter((s) => s.ec).map((s) => s.score);
  const rm = scored.filter((s) => !s.ec).map((s) => s.score);
  const groups = (pick: (s: (typeof scored)[number]) => string[]) => {
    const m: Record<string, number[]> = {};
    for (const s of scored) for (const k of pick(s)) (m[k] ??= []).push(s.score);
    return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { mean: mean(v), n: v.length }]));
  };
  return {
    ec: { mean: mean(ec), n: ec.length },
    rm: { mean: mean(rm), n: rm.length },
    overall: (mean(ec) + mean(rm)) / 2,
    byTask: groups((s) => [s.r.task_type]),
    byFeedbackType: groups((s) => s.r.feedback_type ?? []),
    byDeficiencyType: groups((s) => (s.ec ? (s.r.error_type ?? []) : [])),
  };
}

function expectScores(actual: any, exp: ReturnType<typeof expected>) {
  expect(actual.errorCorrection.n).toBe(exp.ec.n);
  expect(actual.errorCorrection.mean).toBeCloseTo(exp.ec.mean, 9);
  expect(actual.responseMaintenance.n).toBe(exp.rm.n);
  expect(actual.responseMaintenance.mean).toBeCloseTo(exp.rm.mean, 9);
  expect(actual.overall).toBeCloseTo(exp.overall, 9);
  for (const k of ["byTask", "byFeedbackType", "byDeficiencyType"] as const) {
    expect(Object.keys(actual[k]).sort()).toEqual(Object.keys(exp[k]).sort());
    for (const [g, c] of Object.entries(exp[k])) {
      expect(actual[k][g].n, `${k} ${g}`).toBe(c.n);
      expect(actual[k][g].mean, `${k} ${g}`).toBeCloseTo(c.mean, 9);
    }
  }
}

const TEMPERATURE: Record<string, number> = { "Text Creation": 0.7, "Text Translation": 0.7, "Knowledge Q&A": 0.1 }; // Appendix A.2.1; 0 otherwise

beforeAll(async () => {
  fake = await startFakeLlm(script);
});
afterAll(() => fake.close());

describe("FB-Bench on the released format", () => {
  it("imports through the preset, shows the model its first response, scores EC and RM by their rules, fills every breakdown, counts the failed judge call", async () => {
    const file = path.join(FIXTURES, "fb-bench-run.json");
    const recs = JSON.parse(fs.readFileSync(file, "utf8")) as Rec[];
    const datasetId = await importThrough(dbFile, "fb", "fb-bench", file);
    const projectId = projectIdOf(db(), "fb");
    addProviders(db(), projectId, fake.baseUrl);
    fake.requests.length = 0;
    const run = await createRun(db(), projectId, {
      name: "fb any",
      protocol: "fb-bench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }, { provider: "judge2" }],
      settings: {},
    });
    // The settings used are recorded with the run, the paper's defaults filled in.
    expect(run.config.settings).toMatchObject({
      maintenanceRule: "any",
      temperatureByTask: TEMPERATURE,
      otherTasksTemperature: 0,
      targetSampling: { max_tokens: 4096 },
      judgeSampling: { temperature: 0, max_tokens: 4096 },
    });
    const done = await runToEnd(db(), run.id);
    expect(done.status).toBe("completed-with-errors"); // one judge call is scripted to fail (500, no retries); the rest succeed

    // Every generation is user(query) → assistant(origin_first_response) → user(feedback), at the task's temperature.
    const gens = fake.requests.filter((r) => r.body.model === "target-model");
    expect(gens).toHaveLength(recs.length);
    for (const rec of recs) {
      const g = gens.find((r) => messagesOf(r.body)[0].content === rec.user_query)!;
      expect(messagesOf(g.body)).toEqual([
        { role: "user", content: rec.user_query },
        { role: "assistant", content: rec.origin_first_response },
        { role: "user", content: rec.feedback },
      ]);
      expect(g.body.temperature).toBe(TEMPERATURE[rec.task_type] ?? 0);
      expect(g.body.max_tokens).toBe(4096);
      // The judge sees the first response verbatim ($$, $& and $' included).
      const j = fake.requests.find((r) => r.body.model === "judge-model-2" && messagesOf(r.body)[0].content.includes(rec.user_query))!;
      expect(messagesOf(j.body)[0].content).toContain(
        `### 模型的初始回复\n${rec.origin_first_response}\n\n### 用户反馈\n${rec.feedback}\n`,
      );
    }

    const results = await runResultsAll(db(), done);
    expect(results.map((r) => r.judge)).toHaveLength(2); // every judge of the run
    const [j1, j2] = results.map((r) => (r as any).metrics[0]);
    const failing = recs.filter((r) => r.user_query.includes("len([1, 2, 3])"));
    expect(failing).toHaveLength(1);
    expectScores(
      j1,
      expected(
        recs.filter((r) => !failing.includes(r)),
        "any",
      ),
    );
    expect(j1).toMatchObject({ rule: "any", failed: 1, unparsed: 0 });
    expectScores(
      j2,
      expected(recs, "any", () => true),
    );
    expect(j2).toMatchObject({ failed: 0, unparsed: 0 });
    expect(j2.errorCorrection.mean).toBeCloseTo(100, 9);

    // Calibration: a census of whole responses, every unit labelled Yes by a human — the corrected
    // EC, RM and Overall are then the human scores exactly (each weight set sums to 1: 100), with no sampling error.
    const annotator = await makeUser();
    await addMember(projectId, annotator.id, "annotator");
    const cal = await createCalibrationTask(db(), {
      runId: run.id,
      projectId,
      plan: { kind: "responses", perStratum: 1000 },
      seed: 1,
      overlap: 1,
      pool: [annotator.id],
    });
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, cal.taskId)).get()!;
    for (const u of db().select().from(schema.units).where(eq(schema.units.taskId, cal.taskId)).all())
      expect(
        await saveAnnotation(
          {
            task,
            userId: annotator.id,
            unitId: u.id,
            intent: "submit",
            form: new URLSearchParams({ answer: "Yes", clientToken: `u${u.id}` }),
          },
          db(),
        ),
      ).toMatchObject({ ok: true });
    const report = (await calibrationReport(db(), run.id, cal.taskId))!;
    const row = (name: string) => report.metrics.find((m) => m.metric === name)!;
    expect(row("Error correction").raw).toBeCloseTo(j1.errorCorrection.mean, 9);
    expect(row("Response maintenance (rule: any)").raw).toBeCloseTo(j1.responseMaintenance.mean, 9);
    for (const name of ["Error correction", "Response maintenance (rule: any)", "Overall (rule: any)"])
      expect(row(name).corrected, name).toMatchObject({ estimate: expect.closeTo(100, 9), se: 0, ci: [100, 100] });

    // The maintenance rule changes RM (and only RM).
    const all = await createRun(db(), projectId, {
      name: "fb all",
      protocol: "fb-bench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { maintenanceRule: "all" },
    });
    const allRes = ((await runResultsAll(db(), await runToEnd(db(), all.id)))[0] as any).metrics[0];
    const expAll = expected(
      recs.filter((r) => !failing.includes(r)),
      "all",
    );
    expectScores(allRes, expAll);
    expect(allRes.responseMaintenance.mean).not.toBeCloseTo(j1.responseMaintenance.mean, 6);
  });

  it("refuses items that did not come through the fb-bench preset (no origin_first_response)", async () => {
    const projectId = projectIdOf(db(), "fb");
    const ds = db().insert(schema.datasets).values({ projectId, name: "bare", source: "test" }).returning().get();
    const item = db()
      .insert(schema.items)
      .values({ datasetId: ds.id, sourceId: "b1", query: "q", metadata: { feedback: "f" } })
      .returning()
      .get();
    db().insert(schema.checklistItems).values({ itemId: item.id, text: "c", position: 0 }).run();
    await expect(
      createRun(db(), projectId, {
        name: "bad",
        protocol: "fb-bench",
        datasetId: ds.id,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
      }),
    ).rejects.toThrow(
      /FB-Bench .* cannot run on this data: item b1: no bench_type, origin_first_response \(import FB-Bench with the fb-bench preset\)/,
    );
  });

  it.skipIf(!hasShared("FB-Bench"))(
    "on the real fb_bench_dataset_v3.json: EC and RM items scored by their rules, breakdowns filled",
    async () => {
      const file = path.join(SHARED, "FB-Bench/data/feedback-benchmark/fb_bench_dataset_v3.json");
      const recs = JSON.parse(fs.readFileSync(file, "utf8")) as Rec[];
      const datasetId = await importThrough(dbFile, "fbreal", "fb-bench", file);
      const projectId = projectIdOf(db(), "fbreal");
      addProviders(db(), projectId, fake.baseUrl);
      const items = db()
        .select()
        .from(schema.items)
        .all()
        .filter((i) => i.datasetId === datasetId);
      const bench = (i: (typeof items)[number]) => (i.metadata as Record<string, unknown>).bench_type;
      const chosen = [
        ...items.filter((i) => bench(i) === "Error Correction").slice(0, 4),
        ...items.filter((i) => bench(i) === "Response Maintenance").slice(0, 4),
      ].filter((i) => !i.query.includes("len([1, 2, 3])"));
      const run = await createRun(db(), projectId, {
        name: "fb real",
        protocol: "fb-bench",
        datasetId,
        itemIds: chosen.map((i) => i.id),
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
      });
      const done = await runToEnd(db(), run.id);
      const m = ((await runResultsAll(db(), done))[0] as any).metrics[0];
      const mine = chosen.map((i) =>
        recs.find(
          (r) => r.user_query === i.query && r.origin_first_response === (i.metadata as Record<string, unknown>).origin_first_response,
        )!,
      );
      expect(mine.every(Boolean)).toBe(true);
      expectScores(m, expected(mine, "any"));
      expect(m.failed).toBe(0);
    },
  );
});
