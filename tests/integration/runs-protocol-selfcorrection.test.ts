/**
 * Self-Correction Bench end to end: items with an injected error, a golden
 * answer and their dataset, imported through the `items-jsonl` preset (the
 * injected error and dataset land in the item's metadata), run in the three
 * conditions against the local fake endpoint; accuracy, its CI and the blind
 * spot (§3.2, Eq. 2) recomputed here from the replies.
 *
 * The paper's data is not among the real files this project tests against, so
 * the fixture follows the paper's description of an item (§4, Table 1,
 * Appendix D): one JSON object per line with `id`, `question`, `answer` (the
 * golden answer; `items-jsonl` stores it as the reference), `dataset` (SCLI5,
 * GSM8K-SC or PRM800K-SC: it picks the wrong-answer or wrong-reasoning judge
 * prompt of D.2) and `injected_error` (a wrong answer for SCLI5, reasoning
 * steps with one mistake for the others). `items-jsonl` keeps the fields it does
 * not map (`injected_error`, `dataset`) in the item's metadata, where the
 * protocol reads them (metadata `injected_error`, `dataset`).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRun } from "../../app/runs/runner.server";
import { runResultsAll } from "../../app/runs/results.server";
import { calibrationReport, createCalibrationTask } from "../../app/runs/calibration.server";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { schema } from "../../db/client";
import { addMember, makeUser } from "../support/factory";
import { eq } from "drizzle-orm";
import { tempDir, useTempDatabase } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { addProviders, codeSum, FIXTURES, importThrough, mean, messagesOf, projectIdOf, runToEnd } from "./runs-protocol-support";

const { db, file: dbFile } = useTempDatabase();
let fake: FakeLlm;

type Rec = { id: string; question: string; answer: string; dataset: string; injected_error: string };
type Cond = "internal" | "external" | "internal-wait";

/** Whether the fake target corrects the error, by condition (the test's own rule). */
function corrects(cond: Cond, question: string): boolean {
  if (cond === "external") return !question.startsWith("How many days");
  if (cond === "internal-wait") return !question.includes("heavier");
  return codeSum(question) % 2 === 0;
}

function script(req: { body: Record<string, unknown> }) {
  const msgs = messagesOf(req.body);
  if (req.body.model === "target-model") {
    const question = msgs[0].content.split("\n")[0];
    const cond: Cond = !req.body.continue_final_message
      ? "external"
      : msgs[msgs.length - 1].content.endsWith(" Wait")
        ? "internal-wait"
        : "internal";
    return corrects(cond, question) ? " — no, let me redo it: the answer is the golden one." : " So that settles it.";
  }
  const prompt = msgs[msgs.length - 1].content;
  if (prompt.includes("Tom reads 10 pages") && prompt.includes("<response_from_model>")) return { status: 500 };
  const completion =
    (prompt.match(/<(?:completion|response)_from_model>\n([\s\S]*?)\n<\/(?:completion|response)_from_model>/) ?? [])[1] ?? "";
  const ok = completion.includes("the answer is");
  return prompt.includes("<response_from_model>")
    ? JSON.stringify({ is_correct_answer: ok, is_correct_critique: ok })
    : JSON.stringify({ is_correct_answer: ok, is_correct_reasoning: ok, is_backtracking: ok, is_admitting_mistake: ok });
}

beforeAll(async () => {
  fake = await startFakeLlm(script);
});
afterAll(() => fake.close());

describe("Self-Correction Bench", () => {
  it("three conditions, the paper's judge prompts with the output schema as structured output, accuracy ± 1.96·SEM and the blind spot per dataset", async () => {
    const file = path.join(FIXTURES, "self-correction-run.jsonl");
    const recs = fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
    const datasetId = await importThrough(dbFile, "sc", "items-jsonl", file);
    const projectId = projectIdOf(db(), "sc");
    addProviders(db(), projectId, fake.baseUrl);
    fake.requests.length = 0;
    const run = await createRun(db(), projectId, {
      name: "sc",
      protocol: "self-correction",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
    });
    expect(run.config.settings).toMatchObject({
      targetSampling: { temperature: 0, max_tokens: 1024 },
      conditions: ["internal", "external", "internal-wait"],
    });
    const done = await runToEnd(db(), run.id);

    const judgeReqs = fake.requests.filter((r) => r.body.model === "judge-model");
    expect(judgeReqs).toHaveLength(recs.length * 3);
    for (const r of judgeReqs) {
      const [sys, user] = messagesOf(r.body);
      expect(sys).toEqual({ role: "system", content: "You are a helpful assistant that follow instructions. Output in JSON format." });
      expect(user.content).not.toMatch(/Output JSON/); // Figures 14 and 16 ask for nothing more
      expect((r.body.response_format as { type: string }).type).toBe("json_schema");
    }
    // The injected error is the open start of the model's own reply (internal), or follows the question (external), verbatim.
    const gsm2 = recs.find((r) => r.id === "gsm-2")!;
    const internal = fake.requests.find(
      (r) =>
        r.body.model === "target-model" &&
        r.body.continue_final_message &&
        messagesOf(r.body)[0].content === gsm2.question &&
        !messagesOf(r.body)[1].content.endsWith(" Wait"),
    )!;
    expect(messagesOf(internal.body)).toEqual([
      { role: "user", content: gsm2.question },
      { role: "assistant", content: gsm2.injected_error },
    ]);
    const ext = judgeReqs.find(
      (r) =>
        messagesOf(r.body)[1].content.startsWith("<question_and_user_reasoning>") && messagesOf(r.body)[1].content.includes(gsm2.question),
    )!;
    expect(
      messagesOf(ext.body)[1].content.startsWith(
        `<question_and_user_reasoning>\n${gsm2.question}\n${gsm2.injected_error}\n</question_and_user_reasoning>\n<golden_answer>\n${gsm2.answer}\n</golden_answer>`,
      ),
    ).toBe(true);

    const m = ((await runResultsAll(db(), done))[0] as any).metrics[0];
    const failedOne = (r: Rec, c: Cond) => r.id === "gsm-3" && c === "external";
    const blind: number[] = [];
    for (const dataset of ["GSM8K-SC", "SCLI5"]) {
      const cell = m.datasets.find((d: any) => d.dataset === dataset);
      const p: Record<string, number> = {};
      for (const c of ["internal", "external", "internal-wait"] as Cond[]) {
        const rows = recs.filter((r) => r.dataset === dataset && !failedOne(r, c));
        const xs: number[] = rows.map((r) => (corrects(c, r.question) ? 1 : 0));
        const mu = mean(xs);
        const sd = Math.sqrt(xs.reduce((s: number, x) => s + (x - mu) ** 2, 0) / (xs.length - 1));
        expect(cell.byCondition[c].n, `${dataset} ${c}`).toBe(xs.length);
        expect(cell.byCondition[c].mean).toBeCloseTo(mu, 12);
        expect(cell.byCondition[c].sem).toBeCloseTo(sd / Math.sqrt(xs.length), 12); // the paper's SEM
        // The interval is Wilson's score interval (stays in [0, 1]): centre (p + z²/2n)/(1 + z²/n), half z/(1 + z²/n)·√(p(1−p)/n + z²/4n²).
        const nn = xs.length;
        const z = 1.96;
        const centre = (mu + (z * z) / (2 * nn)) / (1 + (z * z) / nn);
        const half = (z / (1 + (z * z) / nn)) * Math.sqrt((mu * (1 - mu)) / nn + (z * z) / (4 * nn * nn));
        expect(cell.byCondition[c].ci[0]).toBeCloseTo(Math.max(0, centre - half), 12);
        expect(cell.byCondition[c].ci[1]).toBeCloseTo(Math.min(1, centre + half), 12);
        expect(cell.byCondition[c].failed).toBe(recs.filter((r) => r.dataset === dataset && failedOne(r, c)).length);
        p[c] = mu;
      }
      const b = p.external > 0 ? 1 - p.internal / p.external : 0; // Eq. 2
      expect(cell.blindSpot.value).toBeCloseTo(b, 12);
      blind.push(b);
    }
    expect(m.macro.blindSpot).toBeCloseTo(mean(blind), 12);

    // Calibration: every reply labelled "reaches the golden answer" by a human, in a census — the corrected
    // accuracies are 1, so every blind spot (Eq. 2) is 0; the raw values are the judge's, as in the results.
    const annotator = await makeUser();
    await addMember(projectId, annotator.id, "annotator");
    const cal = await createCalibrationTask(db(), {
      runId: run.id,
      projectId,
      plan: { kind: "uniform", size: 1000 },
      seed: 1,
      overlap: 1,
      pool: [annotator.id],
    });
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, cal.taskId)).get()!;
    expect(task.guidelines).toMatch(/correct answer/);
    for (const u of db().select().from(schema.units).where(eq(schema.units.taskId, cal.taskId)).all()) {
      expect(u.checklistItemId).toBeNull();
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
    }
    const report = (await calibrationReport(db(), run.id, cal.taskId))!;
    for (const dataset of ["GSM8K-SC", "SCLI5"]) {
      const b = report.metrics.find((x) => x.metric === "Blind spot" && x.group === dataset)!;
      expect(b.raw).toBeCloseTo(m.datasets.find((d: any) => d.dataset === dataset).blindSpot.value, 12);
      expect(b.corrected).toMatchObject({ estimate: 0, se: 0 });
      expect(report.metrics.find((x) => x.metric === "Accuracy (internal)" && x.group === dataset)!.corrected).toMatchObject({
        estimate: expect.closeTo(1, 12),
        ci: [1, 1],
      });
    }
    expect(report.metrics.find((x) => x.metric === "Blind spot (macro average)")).toMatchObject({
      raw: expect.closeTo(m.macro.blindSpot, 12),
      corrected: { estimate: 0 },
    });
  });

  it("refuses to start on items without an injected error, and on template continuation without a chat template", async () => {
    const dir = tempDir();
    const file = path.join(dir, "no-error.jsonl");
    fs.writeFileSync(file, `${JSON.stringify({ id: "plain-1", question: "What is 2 + 2?", answer: "4", dataset: "SCLI5" })}\n`);
    const datasetId = await importThrough(dbFile, "sc-bad", "items-jsonl", file);
    const projectId = projectIdOf(db(), "sc-bad");
    addProviders(db(), projectId, fake.baseUrl, { continueMode: "template" });
    await expect(
      createRun(db(), projectId, {
        name: "bad",
        protocol: "self-correction",
        datasetId,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
      }),
    ).rejects.toThrow(
      /Self-Correction Bench .* cannot run on this data: item plain-1: no injected error \(metadata "injected_error"\); model target-model: continueMode "template" needs the model's chatTemplate/,
    );
  });
});
