/**
 * Annotation through the data-access layer, the same scenario on SQLite and on
 * PostgreSQL (issue 17): a checklist task is created from a synthetic dataset
 * (every checklist item of every item is a unit, each given to k = 2 distinct
 * annotators of a pool of 3, loads within one of each other); labels are saved
 * as drafts, submitted, retried under the same form token (a duplicate, nothing
 * stored) and changed under it (a new revision); two annotators submitting one
 * unit at the same moment are both stored; a disagreement is listed and
 * adjudicated; gold answers score the annotators; adding and removing an
 * annotator moves only work nobody started; a name of the project's models in a
 * task name is held back; a closed task refuses labels, a task with labels is
 * not deleted and one without is; and the annotate and queue pages answer
 * through their loaders and action. Expected values follow from the rules in
 * app/annotation (the plan, overlap, revision and gold rules), counted from the
 * scenario's own numbers, not from a previous run.
 */
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, getDal, initDal } from "../../app/dal.server";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createProject } from "../../app/projects/projects.server";
import { adjudicate, adjudicationView, disagreements } from "../../app/annotation/adjudication.server";
import { myAssignment, myQueue, nextUnitId, progress, saveAnnotation } from "../../app/annotation/annotate.server";
import { queueRows } from "../../app/annotation/queue.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { renameTask } from "../../app/annotation/task-names.server";
import {
  addToPool,
  archiveTask,
  createTask,
  deleteTask,
  findTask,
  listTasks,
  removeFromPool,
  setGoldLabel,
  setTaskStatus,
  taskProgress,
  TaskError,
} from "../../app/annotation/tasks.server";
import * as annotate from "../../app/routes/p.$slug.tasks.$taskId.annotate";
import * as queue from "../../app/routes/p.$slug.tasks.$taskId.queue";
import { args, get, post, run, signInCookie } from "../support/http";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const PASSWORD = "correct horse battery";
const MODELS = ["Zephyrion-70B", "Quasarix-9B"];
const ITEMS = 4;
const CHECKLIST = 2;
const UNITS = ITEMS * CHECKLIST; // the checklist kind's plan: every checklist item of every item
const K = 2;
const form = (o: Record<string, string>) => new URLSearchParams(o);

let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`annotation on ${dialect}`, () => {
    let projectId: number;
    let datasetId: number;
    let researcher: number;
    let taskId: number;
    const pool: number[] = [];
    const emails: string[] = [];
    let extra: number;

    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "annotation.db");
      else {
        testPg ??= await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("annotation_dialects");
      }
      await initDal();
      projectId = (await createProject({ name: "Lab", slug: "lab", description: "" })).id;
      researcher = (await createUser({ email: "rae@lab.test", name: "Rae", password: PASSWORD })).id;
      await setMembership(projectId, researcher, "researcher");
      for (const name of ["Ann", "Ben", "Cat", "Dee"]) {
        const email = `${name.toLowerCase()}@lab.test`;
        const u = await createUser({ email, name, password: PASSWORD });
        await setMembership(projectId, u.id, "annotator");
        if (name === "Dee") extra = u.id;
        else {
          pool.push(u.id);
          emails.push(email);
        }
      }
      datasetId = (await makeSyntheticDataset(projectId, { items: ITEMS, checklist: CHECKLIST, models: MODELS })).datasetId;
    });

    const assignmentsOf = async (id: number) => {
      const d = getDal();
      const { assignments: a, units: u } = d.t;
      return d.q
        .select({ id: a.id, unitId: a.unitId, annotatorId: a.annotatorId, status: a.status })
        .from(a)
        .innerJoin(u, eq(u.id, a.unitId))
        .where(eq(u.taskId, id))
        .orderBy(asc(a.id));
    };
    const task = async (id = taskId) => (await findTask(projectId, id))!;

    it("creates the units of the plan, each with k distinct annotators, loads balanced", async () => {
      const made = await createTask(projectId, researcher, {
        name: "Checklist",
        datasetId,
        kind: "checklist-appropriateness",
        overlap: K,
        seed: 7,
        pool,
      });
      taskId = made.taskId;
      expect(made.units).toBe(UNITS);
      const rows = await assignmentsOf(taskId);
      expect(rows).toHaveLength(UNITS * K);
      const perUnit = new Map<number, Set<number>>();
      for (const r of rows) perUnit.set(r.unitId, (perUnit.get(r.unitId) ?? new Set()).add(r.annotatorId));
      expect(perUnit.size).toBe(UNITS);
      for (const s of perUnit.values()) expect(s.size).toBe(K);
      const loads = pool.map((p) => rows.filter((r) => r.annotatorId === p).length);
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
      // Counts are numbers on both dialects (PostgreSQL's count(*) is a bigint).
      const [listed] = await listTasks(projectId, pool[0], false);
      expect(listed).toMatchObject({ id: taskId, total: UNITS * K, done: 0, mine: loads[0], mineDone: 0 });
      expect(await progress(taskId, pool[0])).toEqual({ mine: { done: 0, total: loads[0] }, overall: { done: 0, total: UNITS * K } });
    });

    it("a draft, a submit, its retry (a duplicate) and a changed answer under the same token (a new revision)", async () => {
      const me = pool[0];
      const unitId = (await nextUnitId(taskId, me))!;
      const t = await task();
      const save = (intent: "draft" | "submit", o: Record<string, string>) =>
        saveAnnotation({ task: t, userId: me, unitId, intent, form: form(o) });
      expect(await save("draft", { answer: "Yes", durationMs: "1000" })).toEqual({ ok: true, status: "draft", revision: 1 });
      expect((await progress(taskId, me)).mine.done).toBe(0);
      // The submit replaces the draft in place: still revision 1.
      expect(await save("submit", { answer: "Yes", comment: "fine", clientToken: "tok-1", durationMs: "2000" })).toEqual({
        ok: true,
        status: "submitted",
        revision: 1,
      });
      expect(await save("submit", { answer: "Yes", comment: "fine", clientToken: "tok-1" })).toEqual({
        ok: true,
        status: "submitted",
        duplicate: true,
        revision: 1,
      });
      expect(await save("submit", { answer: "No", comment: "misses it", clientToken: "tok-1" })).toEqual({
        ok: true,
        status: "submitted",
        revision: 2,
      });
      const d = getDal();
      const an = d.t.annotations;
      const a = (await myAssignment(taskId, unitId, me))!;
      const rows = await d.q.select().from(an).where(eq(an.assignmentId, a.id)).orderBy(asc(an.revision));
      expect(rows.map((r) => [r.revision, r.label, r.notes, r.status, r.clientToken])).toEqual([
        [1, "Yes", "fine", "submitted", "tok-1"],
        [2, "No", "misses it", "submitted", null],
      ]);
      expect(rows[0].durationMs).toBe(2000);
      expect((await progress(taskId, me)).mine.done).toBe(1);
      expect((await progress(taskId, me)).overall.done).toBe(1);
      // The queue moved on.
      expect(await nextUnitId(taskId, me)).not.toBe(unitId);
    });

    it("a writing-quality label (scores and penalty reasons as JSON) is recognised when retried", async () => {
      const me = pool[1];
      const { taskId: wq } = await createTask(projectId, researcher, {
        name: "Writing",
        datasetId,
        kind: "writing-quality",
        overlap: 1,
        pool: [me],
      });
      const unitId = (await nextUnitId(wq, me))!;
      const shown = (await myAssignment(wq, unitId, me))!.shownOrder!;
      expect(shown).toHaveLength(MODELS.length); // every response of the item, in this annotator's order
      const letters = shown.map((_, i) => String.fromCharCode(65 + i));
      const fields: Record<string, string> = { clientToken: "wq-1" };
      letters.forEach((L, i) => (fields[`score.${L}`] = i === 0 ? "2" : "5"));
      fields["reason.A"] = "accuracy";
      const t = await task(wq);
      const first = await saveAnnotation({ task: t, userId: me, unitId, intent: "submit", form: form(fields) });
      expect(first).toEqual({ ok: true, status: "submitted", revision: 1 });
      const again = await saveAnnotation({ task: t, userId: me, unitId, intent: "submit", form: form(fields) });
      expect(again).toEqual({ ok: true, status: "submitted", duplicate: true, revision: 1 });
      const d = getDal();
      const an = d.t.annotations;
      const a = (await myAssignment(wq, unitId, me))!;
      const rows = await d.q.select({ label: an.label, penaltyReasons: an.penaltyReasons }).from(an).where(eq(an.assignmentId, a.id));
      expect(rows).toEqual([
        {
          label: { scores: Object.fromEntries(shown.map((k, i) => [String(k), i === 0 ? 2 : 5])) },
          penaltyReasons: { [String(shown[0])]: ["accuracy"] },
        },
      ]);
    });

    it("two annotators submitting one unit at the same moment are both stored; their disagreement is adjudicated", async () => {
      const [x, y] = pool;
      const rows = await assignmentsOf(taskId);
      const started = new Set(rows.filter((r) => r.status !== "pending").map((r) => r.unitId));
      const unitId = [...new Set(rows.map((r) => r.unitId))].find(
        (u) =>
          !started.has(u) &&
          rows.some((r) => r.unitId === u && r.annotatorId === x) &&
          rows.some((r) => r.unitId === u && r.annotatorId === y),
      )!;
      expect(unitId).toBeDefined();
      const t = await task();
      const [rx, ry] = await Promise.all([
        saveAnnotation({ task: t, userId: x, unitId, intent: "submit", form: form({ answer: "Yes", clientToken: "x-1" }) }),
        saveAnnotation({ task: t, userId: y, unitId, intent: "submit", form: form({ answer: "No", clientToken: "y-1" }) }),
      ]);
      expect([rx, ry]).toEqual([
        { ok: true, status: "submitted", revision: 1 },
        { ok: true, status: "submitted", revision: 1 },
      ]);
      const list = await disagreements(t, researcher, "researcher");
      expect(list).toContainEqual({ unitId, labels: 2, adjudicated: false });
      // An annotator-adjudicator is never shown a unit of their own.
      expect(await adjudicationView(t, unitId, x, "annotator")).toBeNull();
      const view = (await adjudicationView(t, unitId, researcher, "researcher"))!;
      expect(view.labels.map((l) => l.annotator).sort()).toEqual(["Ann", "Ben"]);
      expect(
        await adjudicate({ projectId, taskId, unitId, userId: researcher, role: "researcher", form: form({ answer: "No" }) }),
      ).toMatchObject({
        ok: false,
        fieldErrors: { reason: "Give the reason for the final label." },
      });
      expect(
        await adjudicate({
          projectId,
          taskId,
          unitId,
          userId: researcher,
          role: "researcher",
          form: form({ answer: "No", reason: "fact 1 missing" }),
        }),
      ).toEqual({ ok: true });
      expect((await disagreements(await task(), researcher, "researcher")).find((u) => u.unitId === unitId)).toEqual({
        unitId,
        labels: 2,
        adjudicated: true,
      });
      expect((await adjudicationView(await task(), unitId, researcher, "researcher"))!.final).toMatchObject({
        reason: "fact 1 missing",
        by: "Rae",
      });
    });

    it("gold answers score each annotator", async () => {
      const rate = 0.25;
      const { taskId: g } = await createTask(projectId, researcher, {
        name: "Gold",
        datasetId,
        kind: "checklist-appropriateness",
        overlap: 1,
        pool: pool.slice(0, 2),
        goldRate: rate,
      });
      const d = getDal();
      const u = d.t.units;
      const golds = await d.q
        .select({ id: u.id })
        .from(u)
        .where(and(eq(u.taskId, g), eq(u.isGold, true)));
      expect(golds).toHaveLength(Math.round(UNITS * rate));
      for (const unit of golds) await setGoldLabel(g, unit.id, "Yes");
      const t = await task(g);
      for (const [i, me] of pool.slice(0, 2).entries())
        for (const unit of golds)
          expect(
            await saveAnnotation({
              task: t,
              userId: me,
              unitId: unit.id,
              intent: "submit",
              form: form({ answer: i === 0 ? "Yes" : "No" }),
            }),
          ).toMatchObject({
            ok: true,
          });
      const p = await taskProgress(t);
      const acc = new Map(p.annotators.map((a) => [a.annotatorId, a.gold]));
      expect(acc.get(pool[0])).toEqual({ scored: golds.length, correct: golds.length });
      expect(acc.get(pool[1])).toEqual({ scored: golds.length, correct: 0 });
      expect([p.goldUnits, p.goldAnswered]).toEqual([golds.length, golds.length]);
      await expect(setGoldLabel(g, 999_999, "Yes")).rejects.toThrow("No such gold unit in this task.");
    });

    it("adding and removing an annotator moves only work nobody has started", async () => {
      const before = await assignmentsOf(taskId);
      const startedIds = new Set(before.filter((r) => r.status !== "pending").map((r) => r.id));
      expect(startedIds.size).toBeGreaterThan(0);
      const { moved } = await addToPool(projectId, taskId, [extra]);
      expect(moved).toBeGreaterThan(0);
      const after = await assignmentsOf(taskId);
      expect(after).toHaveLength(UNITS * K);
      const owner = new Map(before.map((r) => [r.id, r.annotatorId]));
      for (const r of after) if (startedIds.has(r.id)) expect(r.annotatorId).toBe(owner.get(r.id));
      const got = after.filter((r) => r.annotatorId === extra).length;
      expect(got).toBe(moved);
      const removed = await removeFromPool(projectId, taskId, extra);
      expect(removed).toEqual({ moved: got, kept: 0, goldWithdrawn: 0, pool });
      const back = await assignmentsOf(taskId);
      expect(back.filter((r) => r.annotatorId === extra)).toHaveLength(0);
      for (const s of new Map(
        back.map((r) => [r.unitId, new Set(back.filter((x) => x.unitId === r.unitId).map((x) => x.annotatorId))]),
      ).values())
        expect(s.size).toBe(K);
    });

    it("holds back a task name naming a model; closes, archives and deletes only what may go", async () => {
      const held = await renameTask(projectId, taskId, { name: `Is ${MODELS[0]} right?`, guidelines: "", confirmed: false });
      expect(held).toMatchObject({ ok: false, warning: { names: [MODELS[0]] } });
      expect(await renameTask(projectId, taskId, { name: `Is ${MODELS[0]} right?`, guidelines: "", confirmed: true })).toEqual({
        ok: true,
        message: `Task renamed to "Is ${MODELS[0]} right?".`,
      });
      await setTaskStatus(projectId, taskId, "closed");
      const open = (await myQueue(taskId, pool[2])).find((q) => q.status === "pending")!;
      expect(
        await saveAnnotation({ task: await task(), userId: pool[2], unitId: open.unitId, intent: "submit", form: form({ answer: "Yes" }) }),
      ).toEqual({
        ok: false,
        httpStatus: 409,
        fieldErrors: { form: "This task is closed; labels can no longer change." },
      });
      await setTaskStatus(projectId, taskId, "open");
      const refused = await deleteTask(projectId, taskId).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TaskError);
      expect((refused as TaskError).message).toMatch(/^This task cannot be deleted: it holds \d+ labels \(drafts included\)\./);
      const { taskId: empty } = await createTask(projectId, researcher, {
        name: "Empty",
        datasetId,
        kind: "checklist-appropriateness",
        overlap: 1,
        pool,
      });
      expect(await deleteTask(projectId, empty)).toEqual({ units: UNITS });
      expect(await findTask(projectId, empty)).toBeUndefined();
      expect(await assignmentsOf(empty)).toEqual([]);
      await expect(setTaskStatus(projectId, empty, "closed")).rejects.toThrow("No such task.");
      // Archived: annotators no longer see it in their list; researchers do.
      const { taskId: old } = await createTask(projectId, researcher, {
        name: "Old",
        datasetId,
        kind: "checklist-appropriateness",
        overlap: 1,
        pool,
      });
      await archiveTask(projectId, old);
      expect((await listTasks(projectId, pool[0], false)).map((t) => t.id)).not.toContain(old);
      expect((await listTasks(projectId, researcher, true)).find((t) => t.id === old)?.status).toBe("archived");
    });

    it("the annotate and queue pages answer through their loaders and action", async () => {
      const me = pool[2];
      const cookie = await signInCookie(emails[2], PASSWORD);
      const params = { slug: "lab", taskId: String(taskId) };
      const base = `/p/lab/tasks/${taskId}/annotate`;
      const page = await run(annotate.loader, args(get(base, cookie), params));
      expect(page.status).toBe(200);
      const body = await page.text();
      const data = JSON.parse(body) as {
        page: { unit: { unitId: number } };
        progress: { mine: { done: number; total: number } };
        stale: boolean;
      };
      // The unit names no model (the task's name does: the researcher saved it anyway, above).
      for (const m of MODELS) expect(JSON.stringify(data.page)).not.toContain(m);
      const unitId = data.page.unit.unitId;
      expect(unitId).toBe(await nextUnitId(taskId, me));
      expect(data.stale).toBe(false);
      const mine = (await myQueue(taskId, me)).length;
      expect(data.progress.mine).toEqual({ done: 0, total: mine });
      const saved = await run(
        annotate.action,
        args(post(base, { intent: "submit", unitId: String(unitId), answer: "Yes", clientToken: "page-1" }, cookie), params),
      );
      expect(saved.status).toBe(302);
      expect(saved.headers.get("Location")).toBe(`${base}?unit=${await nextUnitId(taskId, me)}`);
      const q = await run(queue.loader, args(get(`/p/lab/tasks/${taskId}/queue`, cookie), params));
      expect(q.status).toBe(200);
      const listed = (await q.json()) as { total: number; counts: Record<string, number>; progress: { mine: { done: number } } };
      expect(listed.total).toBe(mine);
      expect(listed.counts.submitted).toBe(1);
      expect(listed.progress.mine.done).toBe(1);
      expect((await queueRows(taskId, me)).find((r) => r.unitId === unitId)).toMatchObject({ status: "submitted", stale: false });
    });
  });
}
