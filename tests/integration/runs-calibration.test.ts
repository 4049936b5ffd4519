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
import { args, get, post, run, signInCookie } from "../support/http";

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
  annotators = db().select({ id: schema.users.id, name: schema.users.name }).from(schema.users).where(inArray(schema.users.email, emails)).all();
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
    const res = await run(runAction, args(new Request(req.url, { method: "POST", headers: req.headers, body: fd }), { slug: "demo", runId: String(runId) }));
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

  it("is deterministic for a seed, and refuses a pool smaller than the overlap or a non-member", () => {
    const pool = annotators.map((a) => a.id);
    const a = createCalibrationTask(db(), { runId, projectId, plan: { kind: "stratified", perStratum: 3 }, seed: 11, overlap: 2, pool });
    const b = createCalibrationTask(db(), { runId, projectId, plan: { kind: "stratified", perStratum: 3 }, seed: 11, overlap: 2, pool });
    const shape = (taskId: number) => {
      const units = db().select().from(schema.units).where(eq(schema.units.taskId, taskId)).all();
      const pos = new Map(units.map((u) => [u.id, `${u.responseId}/${u.checklistItemId}`]));
      return assignmentsOf(taskId).map((r) => `${pos.get(r.unitId)}→${r.annotatorId}`).sort();
    };
    expect(shape(b.taskId)).toEqual(shape(a.taskId));
    expect(() => createCalibrationTask(db(), { runId, projectId, plan: { kind: "e4" }, seed: 1, overlap: 3, pool: pool.slice(0, 2) })).toThrow(/overlap: 3 annotators per unit needs a pool of at least 3/);
    expect(() => createCalibrationTask(db(), { runId, projectId, plan: { kind: "e4" }, seed: 1, overlap: 1, pool: [999999] })).toThrow(/pool: user 999999 is not a member/);
    // Default pool: the project's annotators.
    const d = createCalibrationTask(db(), { runId, projectId, plan: { kind: "e4" }, seed: 2, overlap: 1 });
    expect(d.pool.sort()).toEqual(annotators.map((x) => x.id).sort());
  });

  it("an assigned annotator can label at once, blind to model and verdict, and the labels feed the PPI scores", () => {
    const pool = annotators.map((a) => a.id);
    const { taskId } = createCalibrationTask(db(), { runId, projectId, plan: { kind: "stratified", perStratum: 3 }, seed: 5, overlap: 2, pool });
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!;
    const judgeNames = db().select({ name: schema.judges.name }).from(schema.judges).all().map((j) => j.name);
    for (const annotator of annotators) {
      const queue = myQueue(taskId, annotator.id, db());
      expect(queue.length).toBeGreaterThan(0);
      for (const q of queue) {
        const page = annotatePageData(task, q.unitId, annotator.id, db())!;
        expect(page).not.toBeNull();
        const shown = JSON.stringify(page);
        for (const secret of ["Quillon-8B", "Orrery-70B", ...judgeNames]) expect(shown).not.toContain(secret);
        const form = new URLSearchParams({ answer: "Yes", clientToken: `cal-${annotator.id}-${q.unitId}` });
        const saved = saveAnnotation({ task, userId: annotator.id, unitId: q.unitId, intent: "submit", form }, db());
        expect(saved).toMatchObject({ ok: true });
      }
    }
    const scores = calibratedScores(db(), runId, taskId);
    expect(scores.map((s) => s.model).sort()).toEqual(["Orrery-70B", "Quillon-8B"]);
    expect(scores.every((s) => s.corrected !== null && s.corrected.n >= 2)).toBe(true);
  });
});
