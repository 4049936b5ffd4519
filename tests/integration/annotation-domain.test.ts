/** Task creation, assignment, saving labels, idempotency, revisions, rebalancing, gold and adjudication on a real SQLite file. */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { adjudicate, adjudicationView, disagreements } from "../../app/annotation/adjudication.server";
import { blindUnit, myAssignment, myQueue, nextUnitId, saveAnnotation } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { addToPool, createTask, findTask, setGoldLabel, setTaskStatus, taskProgress } from "../../app/annotation/tasks.server";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";

const { db } = useTempDatabase();
const form = (o: Record<string, string>) => new URLSearchParams(o);

let projectId: number;
let datasetId: number;
let researcher: number;
const annotators: number[] = [];

beforeAll(async () => {
  projectId = makeProject("annot-domain").id;
  datasetId = (await makeSyntheticDataset(projectId, { items: 10 })).datasetId;
  researcher = (await makeUser()).id;
  await addMember(projectId, researcher, "researcher");
  for (let i = 0; i < 4; i++) {
    const u = await makeUser();
    await addMember(projectId, u.id, "annotator");
    annotators.push(u.id);
  }
});

const task = async (id: number) => (await findTask(projectId, id))!;
const assignmentsOf = (taskId: number) =>
  db()
    .select({
      id: schema.assignments.id,
      unitId: schema.assignments.unitId,
      annotatorId: schema.assignments.annotatorId,
      status: schema.assignments.status,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(eq(schema.units.taskId, taskId))
    .all();

describe("task creation", () => {
  it("creates units by plan and k distinct annotators per unit", async () => {
    const { taskId, units } = await createTask(projectId, researcher, {
      name: "sat",
      datasetId,
      kind: "response-satisfaction",
      overlap: 2,
      seed: 3,
      pool: annotators.slice(0, 3),
    });
    expect(units).toBe(10);
    const rows = assignmentsOf(taskId);
    expect(rows).toHaveLength(20);
    const perUnit = new Map<number, Set<number>>();
    for (const r of rows) perUnit.set(r.unitId, (perUnit.get(r.unitId) ?? new Set()).add(r.annotatorId));
    for (const s of perUnit.values()) expect(s.size).toBe(2);
  });

  it("rejects overlap larger than the pool and strangers in the pool", async () => {
    await expect(
      createTask(projectId, researcher, {
        name: "x",
        datasetId,
        kind: "checklist-appropriateness",
        overlap: 3,
        pool: annotators.slice(0, 2),
      }),
    ).rejects.toThrow(/Overlap 3/);
    const stranger = await makeUser();
    await expect(
      createTask(projectId, researcher, { name: "x", datasetId, kind: "checklist-appropriateness", overlap: 1, pool: [stranger.id] }),
    ).rejects.toThrow(/not a member/);
  });
});

describe("saving labels", () => {
  it("draft, submit, double submit with one token stores one annotation; revisions are kept", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "ca",
      datasetId,
      kind: "checklist-appropriateness",
      overlap: 2,
      pool: annotators.slice(0, 2),
    });
    const me = annotators[0];
    const unitId = (await nextUnitId(taskId, me))!;
    const t = await task(taskId);
    expect(
      await saveAnnotation({ task: t, userId: me, unitId, intent: "draft", form: form({ answer: "Yes", durationMs: "1200" }) }),
    ).toMatchObject({ ok: true, status: "draft" });
    expect(
      await saveAnnotation({ task: t, userId: me, unitId, intent: "draft", form: form({ answer: "No", durationMs: "1500" }) }),
    ).toMatchObject({ ok: true, revision: 1 });
    const submit = async () =>
      await saveAnnotation({
        task: t,
        userId: me,
        unitId,
        intent: "submit",
        form: form({ answer: "No", comment: "too vague", clientToken: "tok-1", durationMs: "2000" }),
      });
    expect(await submit()).toMatchObject({ ok: true, status: "submitted", revision: 1 });
    expect(await submit()).toMatchObject({ ok: true, duplicate: true });
    const a = (await myAssignment(taskId, unitId, me))!;
    let rows = db().select().from(schema.annotations).where(eq(schema.annotations.assignmentId, a.id)).all();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ label: "No", notes: "too vague", status: "submitted", durationMs: 2000, clientToken: "tok-1" });
    // A revision is a new row.
    expect(
      await saveAnnotation({ task: t, userId: me, unitId, intent: "submit", form: form({ answer: "Yes", clientToken: "tok-2" }) }),
    ).toMatchObject({ ok: true, revision: 2 });
    rows = db().select().from(schema.annotations).where(eq(schema.annotations.assignmentId, a.id)).all();
    expect(rows.map((r) => r.label)).toEqual(["No", "Yes"]);
    // The next unit moved on.
    expect(await nextUnitId(taskId, me)).not.toBe(unitId);
    // Closing the task freezes labels.
    await setTaskStatus(projectId, taskId, "closed");
    expect(
      await saveAnnotation({
        task: await task(taskId),
        userId: me,
        unitId,
        intent: "submit",
        form: form({ answer: "No", clientToken: "tok-3" }),
      }),
    ).toMatchObject({ ok: false, httpStatus: 409 });
    await setTaskStatus(projectId, taskId, "open");
  });

  it("rejects bad labels, unknown units and other annotators' units, storing nothing", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "wq",
      datasetId,
      kind: "writing-quality",
      overlap: 2,
      pool: annotators.slice(0, 3),
    });
    const t = await task(taskId);
    const me = annotators[0];
    const unitId = (await nextUnitId(taskId, me))!;
    const before = db().select().from(schema.annotations).all().length;
    const full = (o: Record<string, string>) =>
      form({ "score.A": "4", "score.B": "4", "score.C": "4", "score.D": "4", clientToken: `t-${Math.random()}`, ...o });
    expect(await saveAnnotation({ task: t, userId: me, unitId, intent: "submit", form: full({ "score.A": "7" }) })).toMatchObject({
      ok: false,
      httpStatus: 400,
      fieldErrors: { "score.A": expect.stringMatching(/1 to 5/) },
    });
    expect(await saveAnnotation({ task: t, userId: me, unitId, intent: "submit", form: full({ "score.B": "2" }) })).toMatchObject({
      ok: false,
      fieldErrors: { "reason.B": expect.any(String) },
    });
    expect(await saveAnnotation({ task: t, userId: me, unitId: 999999, intent: "submit", form: full({}) })).toMatchObject({
      ok: false,
      httpStatus: 404,
    });
    const others = (await myQueue(taskId, annotators[1])).map((q) => q.unitId);
    const mine = new Set((await myQueue(taskId, me)).map((q) => q.unitId));
    const notMine = others.find((u) => !mine.has(u))!;
    expect(await saveAnnotation({ task: t, userId: me, unitId: notMine, intent: "submit", form: full({}) })).toMatchObject({
      ok: false,
      httpStatus: 404,
    });
    expect(db().select().from(schema.annotations).all().length).toBe(before);
    // A valid one stores scores keyed by response id, and the shown order.
    expect(
      await saveAnnotation({ task: t, userId: me, unitId, intent: "submit", form: full({ "score.B": "1", "reason.B": "safety" }) }),
    ).toMatchObject({ ok: true });
    const a = (await myAssignment(taskId, unitId, me))!;
    const row = db().select().from(schema.annotations).where(eq(schema.annotations.assignmentId, a.id)).get()!;
    expect(row.shownOrder).toEqual(a.shownOrder);
    const bId = String(a.shownOrder![1]);
    expect((row.label as { scores: Record<string, number> }).scores[bId]).toBe(1);
    expect(row.penaltyReasons).toEqual({ [bId]: ["safety"] });
  });

  it("skip needs a reason", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "sk",
      datasetId,
      kind: "checklist-appropriateness",
      overlap: 1,
      pool: [annotators[0]],
    });
    const unitId = (await nextUnitId(taskId, annotators[0]))!;
    expect(await saveAnnotation({ task: await task(taskId), userId: annotators[0], unitId, intent: "skip", form: form({}) })).toMatchObject(
      {
        ok: false,
        fieldErrors: { skipReason: expect.any(String) },
      },
    );
    expect(
      await saveAnnotation({
        task: await task(taskId),
        userId: annotators[0],
        unitId,
        intent: "skip",
        form: form({ skipReason: "unreadable" }),
      }),
    ).toMatchObject({ ok: true, status: "skipped" });
  });
});

describe("blinding", () => {
  it("the blind view of a best-of-N unit names no model and no ids", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "bon",
      datasetId,
      kind: "best-of-n",
      overlap: 2,
      pool: annotators.slice(0, 2),
      includeReference: true,
      n: 4,
    });
    const me = annotators[0];
    const unitId = (await nextUnitId(taskId, me))!;
    const view = await blindUnit(await task(taskId), (await myAssignment(taskId, unitId, me))!);
    const text = JSON.stringify(view);
    for (const m of SYNTHETIC_MODELS) expect(text).not.toContain(m);
    expect(text).not.toMatch(/:"reference"|"reference"[,\]]/);
    expect(view.responses.map((r) => r.letter)).toEqual(["A", "B", "C", "D"]);
    expect(view.reference).toBeNull();
  });
});

describe("pool changes, gold and adjudication", () => {
  it("adding an annotator moves only work that has not started", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "rb",
      datasetId,
      kind: "checklist-appropriateness",
      overlap: 2,
      pool: annotators.slice(0, 3),
      seed: 4,
    });
    const started = new Set<number>();
    for (const me of annotators.slice(0, 3)) {
      for (const q of (await myQueue(taskId, me)).slice(0, 3)) {
        await saveAnnotation({ task: await task(taskId), userId: me, unitId: q.unitId, intent: "draft", form: form({ answer: "Yes" }) });
        started.add((await myAssignment(taskId, q.unitId, me))!.id);
      }
    }
    const before = new Map(assignmentsOf(taskId).map((a) => [a.id, a.annotatorId]));
    const { moved } = await addToPool(projectId, taskId, [annotators[3]]);
    expect(moved).toBeGreaterThan(0);
    const after = assignmentsOf(taskId);
    for (const a of after) if (started.has(a.id)) expect(a.annotatorId).toBe(before.get(a.id));
    const loads = annotators.map((p) => after.filter((a) => a.annotatorId === p).length);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    expect(after).toHaveLength(before.size);
  });

  it("gold units go to everyone, hidden; accuracy is reported per annotator", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "gold",
      datasetId,
      kind: "checklist-appropriateness",
      overlap: 1,
      pool: annotators.slice(0, 2),
      goldRate: 0.1,
    });
    const goldUnits = db()
      .select()
      .from(schema.units)
      .where(and(eq(schema.units.taskId, taskId), eq(schema.units.isGold, true)))
      .all();
    expect(goldUnits.length).toBe(3);
    for (const g of goldUnits) await setGoldLabel(taskId, g.id, "Yes");
    for (const [i, me] of annotators.slice(0, 2).entries()) {
      for (const g of goldUnits) {
        expect(await myAssignment(taskId, g.id, me)).toBeTruthy();
        await saveAnnotation({
          task: await task(taskId),
          userId: me,
          unitId: g.id,
          intent: "submit",
          form: form({ answer: i === 0 ? "Yes" : "No" }),
        });
      }
    }
    const p = await taskProgress(await task(taskId));
    const acc = new Map(p.annotators.map((a) => [a.annotatorId, a.gold]));
    expect(acc.get(annotators[0])).toEqual({ scored: 3, correct: 3 });
    expect(acc.get(annotators[1])).toEqual({ scored: 3, correct: 0 });
  });

  it("disagreements are listed and a final label is recorded with a reason", async () => {
    const { taskId } = await createTask(projectId, researcher, {
      name: "adj",
      datasetId,
      kind: "response-satisfaction",
      overlap: 2,
      pool: annotators.slice(0, 2),
    });
    const unitId = (await nextUnitId(taskId, annotators[0]))!;
    await saveAnnotation({ task: await task(taskId), userId: annotators[0], unitId, intent: "submit", form: form({ answer: "Yes" }) });
    await saveAnnotation({
      task: await task(taskId),
      userId: annotators[1],
      unitId,
      intent: "submit",
      form: form({ answer: "No", comment: "misses it" }),
    });
    const list = await disagreements(await task(taskId), researcher, "researcher");
    expect(list.map((d) => d.unitId)).toEqual([unitId]);
    // An annotator-adjudicator never sees disputes on their own units.
    expect(await disagreements(await task(taskId), annotators[0], "annotator")).toEqual([]);
    const view = (await adjudicationView(await task(taskId), unitId, researcher, "researcher"))!;
    expect(view.labels.map((l) => l.summary[0]).sort()).toEqual(["No", "Yes"]);
    expect(
      await adjudicate({ projectId, taskId, unitId, userId: researcher, role: "researcher", form: form({ answer: "No" }) }),
    ).toMatchObject({
      ok: false,
      fieldErrors: { reason: expect.any(String) },
    });
    expect(
      await adjudicate({
        projectId,
        taskId,
        unitId,
        userId: researcher,
        role: "researcher",
        form: form({ answer: "No", reason: "item 2 not met" }),
      }),
    ).toEqual({ ok: true });
    expect((await disagreements(await task(taskId), researcher, "researcher"))[0].adjudicated).toBe(true);
  });
});
