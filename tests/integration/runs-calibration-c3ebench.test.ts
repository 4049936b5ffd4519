/**
 * C3EBench calibration end to end: a file in RAVEL's released format (fields
 * infer_id, task_type, sub_task, instruction, input, reference; original text
 * written here) imported through the `c3ebench` preset, run with two models
 * against the local fake endpoint, a calibration task on the judge's own 1–10
 * scale (reference = 6), human scores submitted through the annotate route,
 * and every corrected mean recomputed here from the texts and the formulas:
 *
 *   per model and task type t: θ_t = mean of the writings' scores;
 *   corrected = raw + Σ_{labelled writings} a·(y − f)/π, a = 1/I_t,
 *   y = the mean of the writing's annotators' scores, f = the judge's score,
 *   π = k/N_t (k instructions drawn of the N_t of type t);
 *   SE² = Σ_{drawn instructions} (1 − π)·Z², Z = that instruction's a·(y − f)/π
 *   (one writing per model per instruction); overall: a = 1/I over all types;
 *   the interval: rectifierCI's definition by hand (tests/support/rectifier-by-hand), strata = task types.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { calibrationReport, CalibrationError, createCalibrationTask } from "../../app/runs/calibration.server";
import { createRun } from "../../app/runs/runner.server";
import { runResultsAll } from "../../app/runs/results.server";
import * as annotate from "../../app/routes/p.$slug.tasks.$taskId.annotate";
import * as results from "../../app/routes/p.$slug.runs.$runId.results";
import * as agreement from "../../app/routes/p.$slug.reports.$taskId._index";
import * as runPage from "../../app/routes/p.$slug.runs.$runId._index";
import { useTempDatabase } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { addMember, makeUser } from "../support/factory";
import { args, get, post, run, signInCookie } from "../support/http";
import { rectifierByHand } from "../support/rectifier-by-hand";
import { addProviders, codeSum, importThrough, mean, messagesOf, projectIdOf, runToEnd } from "./runs-protocol-support";

const { db, file: dbFile } = useTempDatabase();
let fake: FakeLlm;
let tmp: string;

/** Four instructions of each released task type, in the released field structure. */
function writeFixture(file: string) {
  const lines: Record<string, unknown>[] = [];
  const topics = ["a lighthouse keeper", "a night market", "an old bicycle", "the first snow"];
  topics.forEach((topic, k) => {
    lines.push({
      infer_id: `cloze_t${k}`,
      task_type: "cloze",
      sub_task: "narrative",
      instruction: `Fill the blank in this passage about ${topic}.`,
      input: { prefix: `It began with ${topic}. `, suffix: " And then the evening came." },
      reference: `Nobody had expected ${topic} to matter.`,
    });
    lines.push({
      infer_id: `condition_t${k}`,
      task_type: "condition",
      sub_task: "essay",
      instruction: `Expand the outline into an essay on ${topic}.`,
      input: {
        genre: "essay",
        brief: `On ${topic}`,
        condition: `1. memory 2. change 3. ${topic}`,
        audience: "general readers",
        word: "300",
      },
      reference: `An essay that remembers ${topic} and how it changed.`,
    });
    lines.push({
      infer_id: `edit_t${k}`,
      task_type: "edit",
      sub_task: "story",
      instruction: `Revise the draft about ${topic} as the critique asks.`,
      input: { content: `The draft says ${topic} was nice.`, critique: "Show, do not tell." },
      reference: `The revised story lets ${topic} speak for itself.`,
    });
    lines.push({
      infer_id: `end2end_t${k}`,
      task_type: "end2end",
      sub_task: "poem",
      instruction: `Write a short poem about ${topic}.`,
      input: { genre: "poem", brief: `A poem about ${topic}`, audience: "children", word: "80" },
      reference: `A poem in which ${topic} is seen anew.`,
    });
  });
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return lines;
}

const MODELS = ["target-model", "target-model-b"];
/** The writing each model returns, and the judge's score of a writing: 2 + (code-point sum mod 8). */
const writing = (model: string, prompt: string) => `${model === "target-model" ? "Plain" : "Ornate"} writing for: ${prompt.slice(0, 48)}`;
const judgeScore = (text: string) => 2 + (codeSum(text) % 8);
/** What the two annotators score a writing (1–10): the human rating differs from the judge's. */
const human = [(text: string) => 1 + (codeSum(text) % 10), (text: string) => 1 + ((codeSum(text) * 7 + 3) % 10)];

function script(req: { body: Record<string, unknown> }) {
  const msgs = messagesOf(req.body);
  const content = msgs[msgs.length - 1]?.content ?? "";
  if (MODELS.includes(String(req.body.model))) return writing(String(req.body.model), content);
  const candidate = content.split("[Candidate Answer]\n")[1] ?? "";
  return JSON.stringify({ score: judgeScore(candidate), analysis: { note: "fake" }, verdict: "ok" });
}

beforeAll(async () => {
  fake = await startFakeLlm(script);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "c3e-cal-"));
});
afterAll(async () => {
  await fake.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("C3EBench calibration on the judge's 1–10 scale", () => {
  it("human scores through the annotate route correct every per-task-type and overall mean, design-weighted; the results page shows them", async () => {
    const file = path.join(tmp, "c3e.jsonl");
    const recs = writeFixture(file);
    const datasetId = await importThrough(dbFile, "c3e-cal", "c3ebench", file);
    const projectId = projectIdOf(db(), "c3e-cal");
    addProviders(db(), projectId, fake.baseUrl);
    db()
      .insert(schema.providers)
      .values({
        projectId,
        name: "target-b",
        kind: "openai-compatible",
        baseUrl: fake.baseUrl,
        apiKey: "sk-test",
        model: "target-model-b",
        settings: { timeoutMs: 10_000, maxRetries: 0 },
        concurrency: 8,
      })
      .run();
    const created = await createRun(db(), projectId, {
      name: "c3e cal",
      protocol: "c3ebench",
      datasetId,
      models: [{ provider: "target" }, { provider: "target-b" }],
      judges: [{ provider: "judge" }],
    });
    const done = await runToEnd(db(), created.id);
    expect(done.status).toBe("completed");

    const people: { id: number; cookie: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const u = await makeUser();
      await addMember(projectId, u.id, "annotator");
      people.push({ id: u.id, cookie: await signInCookie(u.email, u.password) });
    }
    const lead = await makeUser();
    await addMember(projectId, lead.id, "researcher");
    const leadCookie = await signInCookie(lead.email, lead.password);

    // Checklist plans are refused with a clear message.
    await expect(
      createCalibrationTask(db(), { runId: done.id, projectId, plan: { kind: "e4" }, seed: 1, overlap: 1, pool: [people[0].id] }),
    ).rejects.toThrow(CalibrationError);
    await expect(
      createCalibrationTask(db(), {
        runId: done.id,
        projectId,
        plan: { kind: "responses", perStratum: 2 },
        seed: 1,
        overlap: 1,
        pool: [people[0].id],
      }),
    ).rejects.toThrow(/C3EBench runs are calibrated by "stratified".*"responses" is a checklist plan/);

    // The run page refuses a checklist plan beside the plan field, and offers the stratified plan by default.
    const refused = await run(
      runPage.action,
      args(
        post(
          `/p/c3e-cal/runs/${done.id}`,
          { intent: "calibrate", plan: "e4", perStratum: "2", seed: "1", overlap: "1", pool: String(people[0].id) },
          leadCookie,
        ),
        { slug: "c3e-cal", runId: String(done.id) },
      ),
    );
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toMatch(/C3EBench runs are calibrated by \\"stratified\\"/);

    // 2 of the 4 instructions of each task type (π = 1/2), every model's writing in the unit, two annotators each.
    const cal = await createCalibrationTask(db(), {
      runId: done.id,
      projectId,
      plan: { kind: "stratified", perStratum: 2 },
      seed: 6,
      overlap: 2,
      pool: people.map((p) => p.id),
      minLabelsPerModel: 8,
    });
    expect(cal).toMatchObject({ units: 8, assignments: 16, warnings: [] });
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, cal.taskId)).get()!;
    expect(task.kind).toBe("writing-quality");
    expect(task.name).toBe(`Judge calibration #${task.id}`);
    const units = db().select().from(schema.units).where(eq(schema.units.taskId, task.id)).all();
    const items = new Map(
      db()
        .select()
        .from(schema.items)
        .where(eq(schema.items.datasetId, datasetId))
        .all()
        .map((i) => [i.id, i]),
    );
    const responses = db().select().from(schema.responses).where(eq(schema.responses.runId, done.id)).all();
    const TYPE: Record<string, string> = { cloze: "Cloze", condition: "Expand", edit: "Edit", end2end: "End2End" };
    const typeOfItem = (itemId: number) => TYPE[recs.find((r) => r.infer_id === items.get(itemId)!.sourceId)!.task_type as string];
    for (const t of Object.values(TYPE)) expect(units.filter((u) => typeOfItem(u.itemId) === t)).toHaveLength(2);
    for (const u of units) expect((u.responseIds ?? []).length).toBe(2);

    // Labelling through the annotate route, blind: texts and letters only, the judge's scale with the reference as 6.
    const params = { slug: "c3e-cal", taskId: String(task.id) };
    const at = (q = "") => `/p/c3e-cal/tasks/${task.id}/annotate${q}`;
    const scoresBy = new Map<string, number[]>(); // writing text → the scores it got
    for (const [k, p] of people.entries()) {
      const mine = db()
        .select({ unitId: schema.assignments.unitId })
        .from(schema.assignments)
        .where(eq(schema.assignments.annotatorId, p.id))
        .all()
        .map((a) => a.unitId)
        .filter((id) => units.some((u) => u.id === id))
        .sort((a, b) => a - b);
      expect(mine).toHaveLength(8);
      // The second annotator leaves the last unit unlabelled: its writings' human score is the first annotator's alone.
      for (const unitId of k === 1 ? mine.slice(0, -1) : mine) {
        const page = (await (await run(annotate.loader, args(get(at(`?unit=${unitId}`), p.cookie), params))).json()).page;
        const shown = JSON.stringify(page);
        for (const secret of ["target-model", "judge-model", "target-b"]) expect(shown).not.toContain(secret);
        expect(page.rules.scale).toEqual({ max: 10, reference: 6, penaltyBelow: 4 });
        expect(page.unit.reference).toMatch(/^(Nobody had expected|An essay that remembers|The revised story|A poem in which)/);
        const form: Record<string, string> = { intent: "submit", unitId: String(unitId), clientToken: `c3e-${k}-${unitId}` };
        for (const r of page.unit.responses as { letter: string; text: string }[]) {
          const score = human[k](r.text);
          form[`score.${r.letter}`] = String(score);
          if (score < 4) form[`reason.${r.letter}`] = "fluency";
          scoresBy.set(r.text, [...(scoresBy.get(r.text) ?? []), score]);
        }
        if (k === 0 && unitId === mine[0]) {
          // The scale is the task's: 11 is refused, a 3 without a penalty reason is refused; nothing is stored.
          const L = page.unit.responses[0].letter;
          const bad = await run(
            annotate.action,
            args(post(at(), { ...form, [`score.${L}`]: "11", clientToken: "bad-1" }, p.cookie), params),
          );
          expect(bad.status).toBe(400);
          expect(JSON.stringify(await bad.json())).toMatch(/from 1 to 10/);
          const noReason = await run(
            annotate.action,
            args(post(at(), { ...form, [`score.${L}`]: "3", [`reason.${L}`]: "", clientToken: "bad-2" }, p.cookie), params),
          );
          expect(noReason.status).toBe(400);
          expect(JSON.stringify(await noReason.json())).toMatch(/A score below 4 needs a penalty reason/);
        }
        const res = await run(annotate.action, args(post(at(), form, p.cookie), params));
        expect(res.status, `unit ${unitId}`).toBeLessThan(400);
      }
    }
    expect(
      db()
        .select()
        .from(schema.annotations)
        .all()
        .filter((a) => a.status === "submitted"),
    ).toHaveLength(15);

    // Expected values, from the texts and the formulas above.
    const report = (await calibrationReport(db(), done.id, task.id))!;
    expect(report.human).toMatchObject({ units: 8, valued: 8, unlabelled: 0 });
    const drawnItems = new Set(units.map((u) => u.itemId));
    const pi = 2 / 4;
    const clip = (x: number) => Math.min(10, Math.max(1, x));
    const resultsM = ((await runResultsAll(db(), done))[0] as any).metrics;
    for (const model of MODELS) {
      const mine = responses.filter((r) => r.model === model);
      expect(mine).toHaveLength(16);
      for (const t of [...Object.values(TYPE), null]) {
        const pop = mine.filter((r) => t === null || typeOfItem(r.itemId) === t);
        const a = 1 / pop.length;
        const raw = mean(pop.map((r) => judgeScore(r.text)));
        const zs = pop.filter((r) => drawnItems.has(r.itemId)).map((r) => (a * (mean(scoresBy.get(r.text)!) - judgeScore(r.text))) / pi);
        expect(zs).toHaveLength(t === null ? 8 : 2);
        const unclipped = raw + zs.reduce((x, y) => x + y, 0);
        const se = Math.sqrt(zs.reduce((x, z) => x + (1 - pi) * z * z, 0));
        const m = report.metrics.find(
          (x) => x.model === model && x.metric === (t === null ? "Mean score (overall)" : `Mean score (${t})`),
        )!;
        expect(m.raw, `${model} ${t}`).toBeCloseTo(raw, 12);
        // The raw value is the results page's mean.
        const rm = resultsM.find((x: any) => x.model === model);
        expect(m.raw).toBeCloseTo(t === null ? rm.overall : rm.byTask[t].mean, 12);
        expect(m.corrected, `${model} ${t}`).toMatchObject({
          n: zs.length,
          se: expect.closeTo(se, 12),
          unclipped: expect.closeTo(unclipped, 12),
          estimate: expect.closeTo(clip(unclipped), 12),
          clipped: clip(unclipped) !== unclipped,
        });
        // The interval by hand (tests/support/rectifier-by-hand, rectifierCI's definition): strata = task types, each
        // with bounds [Σ a·(1 − f), Σ a·(10 − f)] over its writings of this model (a human score lies in 1–10) and
        // its drawn writings as clusters, z = a·(y − f)/π.
        const hand = rectifierByHand(
          (t === null ? Object.values(TYPE) : [t]).map((tt) => {
            const cell = pop.filter((r) => typeOfItem(r.itemId) === tt);
            return {
              bounds: [
                cell.reduce((x, r) => x + a * (1 - judgeScore(r.text)), 0),
                cell.reduce((x, r) => x + a * (10 - judgeScore(r.text)), 0),
              ] as [number, number],
              clusters: cell
                .filter((r) => drawnItems.has(r.itemId))
                .map((r) => ({ z: (a * (mean(scoresBy.get(r.text)!) - judgeScore(r.text))) / pi, pi })),
            };
          }),
        );
        expect(hand.estimate).toBeCloseTo(unclipped - raw, 12);
        expect(m.corrected!.ci[0]).toBeCloseTo(clip(raw + hand.ci[0]), 12);
        expect(m.corrected!.ci[1]).toBeCloseTo(clip(raw + hand.ci[1]), 12);
        expect(m.corrected!.ci[1] - m.corrected!.ci[0]).toBeGreaterThan(0);
        expect(m.corrected!.ci[0]).toBeGreaterThanOrEqual(1);
        expect(m.corrected!.ci[1]).toBeLessThanOrEqual(10);
      }
    }
    // The human scores differ from the judge's, so the correction is not zero somewhere.
    expect(report.metrics.some((m) => Math.abs(m.corrected!.estimate - m.raw) > 0.1)).toBe(true);

    // The results page carries the task's corrected means with its scale and rule.
    const page = await (
      await run(results.loader, args(get(`/p/c3e-cal/runs/${done.id}/results`, leadCookie), { slug: "c3e-cal", runId: String(done.id) }))
    ).json();
    const shown = page.calibration.find((c: any) => c.report?.taskId === task.id);
    expect(shown.report.scale).toMatch(/1–10, the reference = 6/);
    expect(shown.report.metrics).toHaveLength(report.metrics.length);
    expect(
      shown.report.metrics.find((x: any) => x.metric === "Mean score (overall)" && x.model === "target-model").corrected.estimate,
    ).toBeCloseTo(report.metrics.find((x) => x.metric === "Mean score (overall)" && x.model === "target-model")!.corrected!.estimate, 12);

    // The run page lists the task and sends the researcher to those tables.
    const overview = await (
      await run(runPage.loader, args(get(`/p/c3e-cal/runs/${done.id}`, leadCookie), { slug: "c3e-cal", runId: String(done.id) }))
    ).json();
    expect(overview.scoreCalibration).toEqual([{ taskId: task.id, name: task.name }]);
    expect(overview.calibration.map((c: any) => c.taskId)).not.toContain(task.id);

    // The task's agreement report reads its 1–10 scale (a 7 is one of its categories).
    const rep = await run(
      agreement.loader,
      args(get(`/p/c3e-cal/reports/${task.id}`, leadCookie), { slug: "c3e-cal", taskId: String(task.id) }),
    );
    expect(rep.status).toBe(200);
  });
});
