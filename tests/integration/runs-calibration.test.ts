/**
 * Calibration from a run page assigns its units at once, through the
 * annotation module's planner: every unit to `overlap` distinct annotators of
 * the chosen pool, loads balanced, the same seed giving the same plan. The
 * chosen annotators can label immediately (their queue and the annotate page
 * see the units; a submit is stored), the blinding holds (no model or verdict
 * in what they receive), and the labels feed the run's PPI-corrected scores.
 */
import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { DEMO_ACCOUNTS, DEMO_RUN_NAME, seedDemo } from "../../seeds/demo";
import { annotatePageData, myQueue, saveAnnotation } from "../../app/annotation/annotate.server";
import { calibratedScores, createCalibrationTask } from "../../app/runs/calibration.server";
import { action as runAction, loader as runLoader } from "../../app/routes/p.$slug.runs.$runId._index";
import { useTempDatabase } from "../support/db";
import { adjudicate } from "../../app/annotation/adjudication.server";
import { calibrationReport, calibrationWarnings } from "../../app/runs/calibration.server";
import { createRun, Worker } from "../../app/runs/runner.server";
import { startFakeLlm } from "../support/fake-llm";
import { addMember, makeUser } from "../support/factory";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";
import { args, get, post, run, signInCookie } from "../support/http";
import { type HandStratum, rectifierByHand } from "../support/rectifier-by-hand";

const { db } = useTempDatabase();
let cookie: string;
let runId: number;
let projectId: number;
let annotators: { id: number; name: string }[];

beforeAll(async () => {
  await seedDemo(db());
  const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
  cookie = await signInCookie(researcher.email, researcher.password);
  const r = db().select().from(schema.runs).where(eq(schema.runs.name, DEMO_RUN_NAME)).get()!;
  runId = r.id;
  projectId = r.projectId;
  const emails = DEMO_ACCOUNTS.filter((a) => a.role === "annotator").map((a) => a.email);
  annotators = db()
    .select({ id: schema.users.id, name: schema.users.name })
    .from(schema.users)
    .where(inArray(schema.users.email, emails))
    .all();
});

function assignmentsOf(taskId: number) {
  return db()
    .select({ unitId: schema.assignments.unitId, annotatorId: schema.assignments.annotatorId })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(eq(schema.units.taskId, taskId))
    .all();
}

describe("calibration tasks from a run", () => {
  it("the run page creates the task with every unit assigned to k of the chosen annotators, balanced", async () => {
    const page = await (await run(runLoader, args(get(`/p/demo/runs/${runId}`, cookie), { slug: "demo", runId: String(runId) }))).json();
    expect(page.members.filter((m: { role: string }) => m.role === "annotator")).toHaveLength(annotators.length);
    const form = new URLSearchParams({ intent: "calibrate", plan: "stratified", perStratum: "4", seed: "7", overlap: "2" });
    const pool = annotators.slice(0, 3).map((a) => a.id);
    const body: Record<string, string> = Object.fromEntries(form);
    const req = post(`/p/demo/runs/${runId}`, body, cookie);
    // post() takes one value per field; the pool is a repeated field, so rebuild the body with it.
    const fd = new URLSearchParams(await req.text());
    for (const id of pool) fd.append("pool", String(id));
    const res = await run(
      runAction,
      args(new Request(req.url, { method: "POST", headers: req.headers, body: fd }), { slug: "demo", runId: String(runId) }),
    );
    const data = await res.json();
    expect(res.status, JSON.stringify(data)).toBe(200);
    expect(data.ok).toMatch(/can be labelled now/);
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, data.taskId)).get()!;
    expect(task.kind).toBe("response-satisfaction");
    expect((task.config as { pool: number[] }).pool).toEqual(pool);
    const units = db().select().from(schema.units).where(eq(schema.units.taskId, task.id)).all();
    expect(units.length).toBeGreaterThan(0);
    const rows = assignmentsOf(task.id);
    expect(rows).toHaveLength(units.length * 2);
    for (const u of units) {
      const who = rows.filter((r) => r.unitId === u.id).map((r) => r.annotatorId);
      expect(new Set(who).size).toBe(2);
      expect(who.every((id) => pool.includes(id))).toBe(true);
    }
    const loads = pool.map((id) => rows.filter((r) => r.annotatorId === id).length);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
  });

  it("is deterministic for a seed, and refuses a pool smaller than the overlap or a non-member", async () => {
    const pool = annotators.map((a) => a.id);
    const a = await createCalibrationTask(db(), {
      runId,
      projectId,
      plan: { kind: "stratified", perStratum: 3 },
      seed: 11,
      overlap: 2,
      pool,
    });
    const b = await createCalibrationTask(db(), {
      runId,
      projectId,
      plan: { kind: "stratified", perStratum: 3 },
      seed: 11,
      overlap: 2,
      pool,
    });
    const shape = (taskId: number) => {
      const units = db().select().from(schema.units).where(eq(schema.units.taskId, taskId)).all();
      const pos = new Map(units.map((u) => [u.id, `${u.responseId}/${u.checklistItemId}`]));
      return assignmentsOf(taskId)
        .map((r) => `${pos.get(r.unitId)}→${r.annotatorId}`)
        .sort();
    };
    expect(shape(b.taskId)).toEqual(shape(a.taskId));
    await expect(
      createCalibrationTask(db(), { runId, projectId, plan: { kind: "e4" }, seed: 1, overlap: 3, pool: pool.slice(0, 2) }),
    ).rejects.toThrow(/overlap: 3 annotators per unit needs a pool of at least 3/);
    await expect(
      createCalibrationTask(db(), { runId, projectId, plan: { kind: "e4" }, seed: 1, overlap: 1, pool: [999999] }),
    ).rejects.toThrow(/pool: user 999999 is not a member/);
    // Default pool: the project's annotators.
    const d = await createCalibrationTask(db(), { runId, projectId, plan: { kind: "e4" }, seed: 2, overlap: 1 });
    expect(d.pool.sort()).toEqual(annotators.map((x) => x.id).sort());
  });

  it("an assigned annotator can label at once, blind to model and verdict, and the labels feed the PPI scores", async () => {
    const pool = annotators.map((a) => a.id);
    const { taskId } = await createCalibrationTask(db(), {
      runId,
      projectId,
      plan: { kind: "stratified", perStratum: 3 },
      seed: 5,
      overlap: 2,
      pool,
    });
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!;
    const judgeNames = db()
      .select({ name: schema.judges.name })
      .from(schema.judges)
      .all()
      .map((j) => j.name);
    for (const annotator of annotators) {
      const queue = await myQueue(taskId, annotator.id, db());
      expect(queue.length).toBeGreaterThan(0);
      for (const q of queue) {
        const page = (await annotatePageData(task, q.unitId, annotator.id, db()))!;
        expect(page).not.toBeNull();
        const shown = JSON.stringify(page);
        for (const secret of ["Quillon-8B", "Orrery-70B", ...judgeNames]) expect(shown).not.toContain(secret);
        const form = new URLSearchParams({ answer: "Yes", clientToken: `cal-${annotator.id}-${q.unitId}` });
        const saved = await saveAnnotation({ task, userId: annotator.id, unitId: q.unitId, intent: "submit", form }, db());
        expect(saved).toMatchObject({ ok: true });
      }
    }
    const scores = await calibratedScores(db(), runId, taskId);
    expect(scores.map((s) => s.model).sort()).toEqual(["Orrery-70B", "Quillon-8B"]);
    expect(scores.every((s) => s.corrected !== null && s.corrected.n >= 2)).toBe(true);
    // The intervals: Wilson's score interval written out here (Wilson 1927) for the raw share at the number of
    // judged units; the corrected share's by hand (tests/support/rectifier-by-hand) from the judge's verdicts, the
    // drawn units and their inclusion probabilities read here: strata model × turn (× condition), a = 100/N_model,
    // bounds [−Σ a·f, Σ a·(1 − f)], every drawn unit labelled Yes by its two annotators (y = 1), z = a·(1 − f)/π.
    const runRow = db().select().from(schema.runs).where(eq(schema.runs.id, runId)).get()!;
    const judgeId = (runRow.config as { judges: { judgeId: number }[] }).judges[0].judgeId;
    const resp = new Map(
      db()
        .select()
        .from(schema.responses)
        .where(eq(schema.responses.runId, runId))
        .all()
        .map((r) => [r.id, r]),
    );
    const verdicts = db()
      .select()
      .from(schema.verdicts)
      .where(eq(schema.verdicts.runId, runId))
      .all()
      .filter(
        (v) =>
          v.judgeId === judgeId &&
          v.checklistItemId !== null &&
          (v.value === "Yes" || v.value === "No") &&
          v.parseStatus !== "failed" &&
          v.parseStatus !== "unparsed",
      );
    const inclusion = (task.config as { inclusion: number[] }).inclusion;
    const drawnPi = new Map(
      db()
        .select()
        .from(schema.units)
        .where(eq(schema.units.taskId, taskId))
        .all()
        .map((u) => [`${u.responseId}/${u.checklistItemId}`, inclusion[u.position]]),
    );
    const byHand = (model: string) => {
      const mine = verdicts.filter((v) => resp.get(v.responseId)!.model === model);
      const a = 100 / mine.length;
      const strata = new Map<string, HandStratum>();
      for (const v of mine) {
        const r = resp.get(v.responseId)!;
        const key = `${r.turn}/${String((r.metadata as Record<string, unknown>)?.condition ?? "")}`;
        const s = strata.get(key) ?? { bounds: [0, 0], clusters: [] };
        const f = v.value === "Yes" ? 1 : 0;
        s.bounds[0] -= a * f;
        s.bounds[1] += a * (1 - f);
        const pi = drawnPi.get(`${v.responseId}/${v.checklistItemId}`);
        if (pi !== undefined) s.clusters.push({ z: (a * (1 - f)) / pi, pi });
        strata.set(key, s);
      }
      const raw = mine.reduce((t, v) => t + a * (v.value === "Yes" ? 1 : 0), 0);
      const h = rectifierByHand([...strata.values()]);
      return { estimate: raw + h.estimate, ci: h.ci.map((x) => Math.min(100, Math.max(0, raw + x))) };
    };
    const z = 1.96; // the app's 95% quantile, as in wilsonCI
    const wilson = (p: number, n: number) => {
      const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
      const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
      return [100 * (centre - half), 100 * (centre + half)];
    };
    for (const s of scores) {
      const yes = Math.round((s.raw.mean * s.raw.n) / 100);
      expect(s.raw.mean).toBeCloseTo((100 * yes) / s.raw.n, 9);
      const [lo, hi] = wilson(yes / s.raw.n, s.raw.n);
      expect(s.raw.ci[0]).toBeCloseTo(lo, 9);
      expect(s.raw.ci[1]).toBeCloseTo(hi, 9);
      const c = s.corrected!;
      const hand = byHand(s.model);
      expect(c.estimate).toBeCloseTo(Math.min(100, hand.estimate), 9);
      expect(c.ci[0]).toBeCloseTo(hand.ci[0], 9);
      expect(c.ci[1]).toBeCloseTo(hand.ci[1], 9);
      // A sample, not a census: the interval has width, whatever the labels.
      expect(c.exact).toBe(false);
      expect(c.ci[1] - c.ci[0]).toBeGreaterThan(1);
      for (const x of [...s.raw.ci, ...c.ci]) {
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(100);
      }
    }
  });
});

// ─── The estimate itself, on a run whose judge is wrong in a known way ────────
//
// RefineBench self-refinement, 4 problems × 3 checklist items × 2 turns; the
// judge answers Yes, Yes, No to every response, so Acc_t = 66.7 and Pass_t = 0
// by the judge. Expected values below are computed in the test from the units
// drawn and the labels given, with the formulas written out here.

describe("calibrated headline metrics", () => {
  it("majority rule with splits excluded or adjudicated, design weights, every RefineBench metric, clipped intervals, neutral name, min-label warning", async () => {
    const fake = await startFakeLlm(refineScript(() => "Q1: Yes\nQ2: Yes\nQ3: No"));
    try {
      const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 4, checklist: 3 });
      const [a, b, lead] = [await makeUser(), await makeUser(), await makeUser()];
      await addMember(fx.project.id, a.id, "annotator");
      await addMember(fx.project.id, b.id, "annotator");
      await addMember(fx.project.id, lead.id, "researcher");
      const run = await createRun(db(), fx.project.id, {
        name: "tiny-model vs judge-model",
        protocol: "refinebench",
        datasetId: fx.dataset.id,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
        settings: { setting: "self-refinement", maxTurns: 2 },
      });
      await new Worker(db(), { concurrency: 4, pollMs: 10, untilIdle: true, runId: run.id }).start().done;
      const projectId = fx.project.id;
      const units = (taskId: number) => db().select().from(schema.units).where(eq(schema.units.taskId, taskId)).all();
      const checklistText = new Map(
        db()
          .select()
          .from(schema.checklistItems)
          .all()
          .map((c) => [c.id, c.text]),
      );
      const label = async (taskId: number, unitId: number, userId: number, answer: "Yes" | "No") => {
        const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!;
        expect(
          await saveAnnotation(
            {
              task,
              userId,
              unitId,
              intent: "submit",
              form: new URLSearchParams({ answer, clientToken: `t-${taskId}-${unitId}-${userId}` }),
            },
            db(),
          ),
        ).toMatchObject({ ok: true });
      };
      const point3 = (u: { checklistItemId: number | null }) => /point 3/.test(checklistText.get(u.checklistItemId!) ?? "");
      const metric = (r: Awaited<ReturnType<typeof calibrationReport>>, name: string) => r!.metrics.find((m) => m.metric === name)!;

      // A census (π = 1), two annotators: they agree except on item 3, where one says No — a 1–1 split.
      const census = await createCalibrationTask(db(), {
        runId: run.id,
        projectId,
        plan: { kind: "uniform", size: 1000 },
        seed: 3,
        overlap: 2,
        pool: [a.id, b.id],
      });
      const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, census.taskId)).get()!;
      expect(task.name).toBe(`Judge calibration #${task.id}`); // neutral: no run or model name
      expect(census.units).toBe(24);
      for (const u of units(census.taskId)) {
        await label(census.taskId, u.id, a.id, "Yes");
        await label(census.taskId, u.id, b.id, point3(u) ? "No" : "Yes");
      }
      const excl = (await calibrationReport(db(), run.id, census.taskId, { splits: "exclude" }))!;
      expect(excl.human).toEqual({ units: 24, valued: 16, unlabelled: 0, splitDropped: 8, adjudicated: 0 });
      // Item 3 units dropped: the labelled ones agree with the judge, so no correction is made.
      expect(metric(excl, "Acc_1").raw).toBeCloseTo(200 / 3, 9);
      expect(metric(excl, "Acc_1").corrected).toMatchObject({ estimate: expect.closeTo(200 / 3, 9), se: 0, n: 8, exact: false });
      // SE 0 (no labelled unit differs from the judge) but 4 of the stratum's 12 units unlabelled: not a zero-width interval.
      const exclCi = metric(excl, "Acc_1").corrected!.ci;
      expect(exclCi[1] - exclCi[0]).toBeGreaterThan(5);
      expect(metric(excl, "Pass_1").corrected).toBeNull();
      expect(metric(excl, "Pass_1").note).toMatch(/needs whole-response labels/);
      // Adjudicated "Yes": every unit now has a human value, and a census gives the human metric exactly.
      for (const u of units(census.taskId).filter(point3))
        expect(
          await adjudicate(
            {
              projectId,
              taskId: census.taskId,
              unitId: u.id,
              userId: lead.id,
              role: "researcher",
              form: new URLSearchParams({ answer: "Yes", reason: "re-read" }),
            },
            db(),
          ),
        ).toEqual({ ok: true });
      const adj = (await calibrationReport(db(), run.id, census.taskId, { splits: "adjudicate" }))!;
      expect(adj.human).toEqual({ units: 24, valued: 24, unlabelled: 0, splitDropped: 0, adjudicated: 8 });
      // Whatever the rule in use, the report says what each rule drops: the 8 splits left out, or none once adjudicated.
      for (const r of [adj, (await calibrationReport(db(), run.id, census.taskId))!])
        expect(r.humanByRule).toEqual({
          exclude: { units: 24, valued: 16, unlabelled: 0, splitDropped: 8, adjudicated: 0 },
          adjudicate: { units: 24, valued: 24, unlabelled: 0, splitDropped: 0, adjudicated: 8 },
        });
      // Before adjudication (the exclude report above was taken then): both rules dropped the 8 splits.
      expect(excl.humanByRule.adjudicate).toEqual({ units: 24, valued: 16, unlabelled: 0, splitDropped: 8, adjudicated: 0 });
      for (const t of [1, 2])
        expect(metric(adj, `Acc_${t}`).corrected).toMatchObject({ estimate: expect.closeTo(100, 9), se: 0, ci: [100, 100], n: 12 });

      // Whole responses, 2 of the 4 per turn (π = 1/2): one annotator says Yes to everything.
      const whole = await createCalibrationTask(db(), {
        runId: run.id,
        projectId,
        plan: { kind: "responses", perStratum: 2 },
        seed: 9,
        overlap: 1,
        pool: [a.id],
      });
      expect(whole.units).toBe(12);
      for (const u of units(whole.taskId)) await label(whole.taskId, u.id, a.id, "Yes");
      const w = (await calibrationReport(db(), run.id, whole.taskId))!;
      expect(w.weighting).toMatch(/inclusion probability/);
      // Difference estimator: raw + Σ a·(y − f)/π, SE² = Σ (1 − π)·(a·(y − f)/π)², π = 2/4.
      // Acc_t: a = 100/(4·3); y − f = 1 on the two item-3 units of the turn. Pass_t: a = 100/4; y − f = 1 on both responses.
      const accSe = Math.sqrt(2 * 0.5 * (100 / 12 / 0.5) ** 2);
      const passSe = Math.sqrt(2 * 0.5 * (100 / 4 / 0.5) ** 2);
      // The intervals by hand (rectifierCI's definition). The largest possible error S = Σ a = 100; each sampled
      // response's error share x = a/(π·S) = 1/6 (Acc_t) or 1/2 (Pass_t), the same for both, so V = 0 and n* =
      // n/(1 − π) = 4. Acc_t: the harsh share p⁺ = 1/3 gets Wilson(1/3, n = 4); the lenient one, 0 of 4, Wilson's
      // upper limit z²/(4 + z²); L = p⁺ − √((p⁺ − l⁺)² + u⁻²), the correction kept above −Σ a·f = −200/3.
      // Pass_t: p⁺ = 1 (Wilson's lower limit of 4/4 is 4/(4 + z²)); the judge said No to every response, so
      // nothing was too lenient (p⁻ = 0 exactly): [100·4/(4 + z²), 100].
      const z = 1.96;
      const wilsonLower = (p: number, n: number) =>
        (p + (z * z) / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
      const accLower = 1 / 3 - Math.sqrt((1 / 3 - wilsonLower(1 / 3, 4)) ** 2 + ((z * z) / (4 + z * z)) ** 2);
      for (const t of [1, 2]) {
        const acc = metric(w, `Acc_${t}`).corrected!;
        expect(acc.estimate).toBeCloseTo(200 / 3 + (2 * (100 / 12)) / 0.5, 9);
        expect(acc.se).toBeCloseTo(accSe, 9);
        expect(acc.ci[0]).toBeCloseTo(200 / 3 + Math.max(-200 / 3, 100 * accLower), 9);
        expect(acc.ci[1]).toBe(100); // the correction's bound Σ a·(1 − f) = 100/3: the metric's top
        const pass = metric(w, `Pass_${t}`);
        expect(pass.raw).toBe(0);
        expect(pass.corrected!.estimate).toBeCloseTo((2 * (100 / 4)) / 0.5, 9);
        expect(pass.corrected!.se).toBeCloseTo(passSe, 9);
        expect(pass.corrected!.ci).toEqual([expect.closeTo((100 * 4) / (4 + z * z), 9), 100]);
      }

      // A plan that cannot reach the minimum says so when it is created.
      const small = await createCalibrationTask(db(), {
        runId: run.id,
        projectId,
        plan: { kind: "e4" },
        seed: 1,
        overlap: 1,
        pool: [a.id],
        minLabelsPerModel: 10,
      });
      expect(small.warnings).toEqual(["tiny-model: this plan draws 4 units, fewer than the minimum of 10 labelled units per model"]);
      // One unit per stratum: no spread can be estimated in any stratum; the plan says so when it is created, and the
      // report (the results page) and the run page's warnings say it again, with the numbers.
      const thin = await createCalibrationTask(db(), {
        runId: run.id,
        projectId,
        plan: { kind: "stratified", perStratum: 1 },
        seed: 1,
        overlap: 1,
        pool: [a.id],
      });
      const thinWarning =
        "2 strata with fewer than 2 units drawn (tiny-model, turn 1: 1 of 12; tiny-model, turn 2: 1 of 12): an interval needs at " +
        "least 2 labelled units per stratum, so until then the whole range of those strata stands inside the intervals of the " +
        "metrics that include them";
      expect(thin.warnings).toEqual([
        "tiny-model: this plan draws 2 units, fewer than the minimum of 10 labelled units per model",
        thinWarning,
      ]);
      expect((await calibrationReport(db(), run.id, thin.taskId))!.warnings).toEqual([thinWarning]);
      expect(await calibrationWarnings(db(), run.id, thin.taskId)).toEqual([thinWarning]);
      expect((await calibrationReport(db(), run.id, whole.taskId))!.warnings).toEqual([]);
      // Labelled (Yes): each turn's Acc_t has one labelled unit, too few for a corrected value; the share of Yes over
      // both turns has two, one per stratum, so each stratum's correction enters with its whole range
      // [−Σ a·f, Σ a·(1 − f)] = [−16a, 8a], a = 100/24: from 0 to 100, the metric's whole range.
      for (const u of units(thin.taskId)) await label(thin.taskId, u.id, a.id, "Yes");
      const tr = (await calibrationReport(db(), run.id, thin.taskId))!;
      for (const t of [1, 2]) expect(metric(tr, `Acc_${t}`)).toMatchObject({ corrected: null, note: "needs ≥ 2 labelled units" });
      const [share] = await calibratedScores(db(), run.id, thin.taskId);
      expect(share.corrected).toMatchObject({ n: 2, bounded: 2, exact: false, ci: [0, 100] });
    } finally {
      await fake.close();
    }
  });
  it("whole responses are clusters: a response's same-direction errors enter the variance as one draw; a corrected point outside the range is clipped and flagged", async () => {
    // The judge says No to items 2 and 3 on Problems 0 and 1, Yes to everything on Problems 2 and 3; the human
    // says Yes to everything. So a sampled response of Problem 0 or 1 carries two errors in the same direction.
    const fake = await startFakeLlm(
      refineScript((prompt) => (/Problem [01]\?/.test(prompt) ? "Q1: Yes\nQ2: No\nQ3: No" : "Q1: Yes\nQ2: Yes\nQ3: Yes")),
    );
    try {
      const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 4, checklist: 3 });
      const a = await makeUser();
      await addMember(fx.project.id, a.id, "annotator");
      const run = await createRun(db(), fx.project.id, {
        name: "cluster run",
        protocol: "refinebench",
        datasetId: fx.dataset.id,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
        settings: { setting: "self-refinement", maxTurns: 1 },
      });
      await new Worker(db(), { concurrency: 4, pollMs: 10, untilIdle: true, runId: run.id }).start().done;
      const responses = new Map(
        db()
          .select()
          .from(schema.responses)
          .where(eq(schema.responses.runId, run.id))
          .all()
          .map((r) => [r.id, r]),
      );
      const problemOf = new Map(
        db()
          .select()
          .from(schema.items)
          .where(eq(schema.items.datasetId, fx.dataset.id))
          .all()
          .map((i) => [i.id, i.query]),
      );
      const errorsOf = (rid: number) => (/Problem [01]\?/.test(problemOf.get(responses.get(rid)!.itemId)!) ? 2 : 0);
      // Raw Acc_1 by the judge: (1/3 + 1/3 + 1 + 1)/4 · 100.
      const raw = ((1 / 3 + 1 / 3 + 1 + 1) / 4) * 100;
      let sawCluster = false;
      let sawClip = false;
      for (let seed = 1; seed <= 40 && !(sawCluster && sawClip); seed++) {
        const t = await createCalibrationTask(db(), {
          runId: run.id,
          projectId: fx.project.id,
          plan: { kind: "responses", perStratum: 2 },
          seed,
          overlap: 1,
          pool: [a.id],
        });
        const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, t.taskId)).get()!;
        const us = db().select().from(schema.units).where(eq(schema.units.taskId, t.taskId)).all();
        for (const u of us)
          expect(
            await saveAnnotation(
              {
                task,
                userId: a.id,
                unitId: u.id,
                intent: "submit",
                form: new URLSearchParams({ answer: "Yes", clientToken: `c-${t.taskId}-${u.id}` }),
              },
              db(),
            ),
          ).toMatchObject({ ok: true });
        const sampled = [...new Set(us.map((u) => u.responseId!))];
        expect(sampled).toHaveLength(2);
        // By hand: π = 2/4; a = 100/(4·3) per pair; Z_r = errors_r · a/π per sampled response (its pairs summed);
        // estimate = raw + Σ Z_r; SE² = Σ (1 − π)·Z_r². The per-pair form would give Σ errors_r·(1 − π)·(a/π)² instead.
        const pi = 0.5;
        const aw = 100 / 12;
        const Z = sampled.map((r) => (errorsOf(r) * aw) / pi);
        const unclipped = raw + Z.reduce((x, y) => x + y, 0);
        const se = Math.sqrt(Z.reduce((x, z) => x + (1 - pi) * z * z, 0));
        const perPairSe = Math.sqrt(sampled.reduce((x, r) => x + errorsOf(r) * (1 - pi) * (aw / pi) ** 2, 0));
        const acc = (await calibrationReport(db(), run.id, t.taskId))!.metrics.find((m) => m.metric === "Acc_1")!;
        expect(acc.raw).toBeCloseTo(raw, 9);
        expect(acc.corrected!.se).toBeCloseTo(se, 9);
        expect(acc.corrected!.unclipped).toBeCloseTo(unclipped, 9);
        expect(acc.corrected!.estimate).toBeCloseTo(Math.min(100, unclipped), 9);
        // The interval by hand (tests/support/rectifier-by-hand): one stratum, bounds [−Σ a·f, Σ a·(1 − f)] =
        // [−8a, 4a]; the sampled responses are its clusters, z = Z_r.
        const hand = rectifierByHand([{ bounds: [-8 * aw, 4 * aw], clusters: Z.map((z) => ({ z, pi })) }]);
        const clip = (x: number) => Math.min(100, Math.max(0, x));
        expect(acc.corrected!.ci[0]).toBeCloseTo(clip(raw + hand.ci[0]), 9);
        expect(acc.corrected!.ci[1]).toBeCloseTo(clip(raw + hand.ci[1]), 9);
        expect(acc.corrected!.ci[1] - acc.corrected!.ci[0]).toBeGreaterThan(1);
        expect(acc.corrected!.estimate).toBeGreaterThanOrEqual(acc.corrected!.ci[0]);
        expect(acc.corrected!.estimate).toBeLessThanOrEqual(acc.corrected!.ci[1]);
        if (sampled.some((r) => errorsOf(r) === 2)) {
          sawCluster = true;
          expect(se).toBeGreaterThan(perPairSe); // same-direction errors in one response: the cluster SE is the larger
        }
        if (unclipped > 100 + 1e-9) {
          sawClip = true;
          expect(acc.corrected!.clipped).toBe(true);
          expect(acc.note).toMatch(/clipped to the metric's range \(the difference estimate is 133\.3\)/);
        } else expect(acc.corrected!.clipped).toBe(false);
      }
      expect(sawCluster && sawClip).toBe(true);
    } finally {
      await fake.close();
    }
  });
});
