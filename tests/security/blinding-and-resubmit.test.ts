/**
 * Issue 18, "Also": (1) an adjudicator who is also an annotator on the task sees
 * other annotators' labels only on units they have submitted or are not assigned;
 * (2) a resubmit with the same form token and a changed answer is stored as a
 * new revision, never dropped. Real SQLite file, the app's own domain functions.
 */
import { and, asc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { adjudicationView, disagreements } from "../../app/annotation/adjudication.server";
import { myAssignment, saveAnnotation } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask, findTask, setAdjudicators } from "../../app/annotation/tasks.server";
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
  projectId = makeProject("blinding").id;
  datasetId = (await makeSyntheticDataset(projectId, { items: 4 })).datasetId;
  researcher = (await makeUser()).id;
  await addMember(projectId, researcher, "researcher");
  for (let i = 0; i < 3; i++) {
    const u = await makeUser();
    await addMember(projectId, u.id, "annotator");
    annotators.push(u.id);
  }
});

const unitsOf = (taskId: number) =>
  db()
    .select({ id: schema.units.id })
    .from(schema.units)
    .where(eq(schema.units.taskId, taskId))
    .orderBy(asc(schema.units.id))
    .all()
    .map((u) => u.id);

describe("adjudication and the adjudicator's own blinding", () => {
  it("a researcher in the pool sees a disputed unit's labels only after submitting their own", async () => {
    const [a, b] = annotators;
    const { taskId } = await createTask(projectId, researcher, {
      name: "pooled researcher",
      datasetId,
      kind: "response-satisfaction",
      overlap: 3,
      pool: [researcher, a, b],
      seed: 1,
    });
    const task = (await findTask(projectId, taskId))!;
    const unit = unitsOf(taskId)[0];
    await saveAnnotation({ task, userId: a, unitId: unit, intent: "submit", form: form({ answer: "Yes" }) });
    await saveAnnotation({ task, userId: b, unitId: unit, intent: "submit", form: form({ answer: "No" }) });

    // Assigned, not yet labelled: the dispute is not listed and its labels are not shown.
    expect((await disagreements(task, researcher, "researcher")).map((d) => d.unitId)).not.toContain(unit);
    expect(await adjudicationView(task, unit, researcher, "researcher")).toBeNull();
    // A draft is not enough.
    await saveAnnotation({ task, userId: researcher, unitId: unit, intent: "draft", form: form({ answer: "Yes" }) });
    expect(await adjudicationView(task, unit, researcher, "researcher")).toBeNull();

    await saveAnnotation({ task, userId: researcher, unitId: unit, intent: "submit", form: form({ answer: "Yes" }) });
    expect((await disagreements(task, researcher, "researcher")).map((d) => d.unitId)).toContain(unit);
    expect(await adjudicationView(task, unit, researcher, "researcher")).not.toBeNull();
  });

  it("an annotator-adjudicator sees disputes only on units not assigned to them, even before they start", async () => {
    const [a, b, c] = annotators;
    const { taskId } = await createTask(projectId, researcher, {
      name: "annotator adjudicator",
      datasetId,
      kind: "response-satisfaction",
      overlap: 2,
      pool: [a, b, c],
      seed: 2,
    });
    await setAdjudicators(projectId, taskId, [a, c]);
    const task = (await findTask(projectId, taskId))!;
    // A unit labelled (in disagreement) by two people while the third has it pending or not at all.
    const assignees = (unitId: number) =>
      db()
        .select({ annotatorId: schema.assignments.annotatorId })
        .from(schema.assignments)
        .where(eq(schema.assignments.unitId, unitId))
        .all()
        .map((r) => r.annotatorId);
    const unit = unitsOf(taskId).find((u) => assignees(u).includes(b))!;
    const [first, second] = assignees(unit);
    await saveAnnotation({ task, userId: first, unitId: unit, intent: "submit", form: form({ answer: "Yes" }) });
    await saveAnnotation({ task, userId: second, unitId: unit, intent: "submit", form: form({ answer: "No" }) });
    const [assigned, free] = assignees(unit).includes(a) ? [a, c] : [c, a];
    expect(await adjudicationView(task, unit, assigned, "annotator")).toBeNull();
    expect(await adjudicationView(task, unit, free, "annotator")).not.toBeNull();
  });

  it("an annotator-adjudicator who has not started an assigned unit does not see its labels", async () => {
    const [a, b, c] = annotators;
    const { taskId } = await createTask(projectId, researcher, {
      name: "pending adjudicator",
      datasetId,
      kind: "response-satisfaction",
      overlap: 3,
      pool: [a, b, c],
      seed: 4,
    });
    await setAdjudicators(projectId, taskId, [c]);
    const task = (await findTask(projectId, taskId))!;
    const unit = unitsOf(taskId)[0];
    await saveAnnotation({ task, userId: a, unitId: unit, intent: "submit", form: form({ answer: "Yes" }) });
    await saveAnnotation({ task, userId: b, unitId: unit, intent: "submit", form: form({ answer: "No" }) });
    expect((await disagreements(task, c, "annotator")).map((d) => d.unitId)).not.toContain(unit);
    expect(await adjudicationView(task, unit, c, "annotator")).toBeNull();
    // The researcher (not in the pool) does see it.
    expect(await adjudicationView(task, unit, researcher, "researcher")).not.toBeNull();
  });
});

describe("resubmitting a used form", () => {
  it("the same token and answer is a retry; a changed answer is a new revision, not dropped", async () => {
    const [a, b] = annotators;
    const { taskId } = await createTask(projectId, researcher, {
      name: "resubmit",
      datasetId,
      kind: "response-satisfaction",
      overlap: 2,
      pool: [a, b],
      seed: 3,
    });
    const task = (await findTask(projectId, taskId))!;
    const unit = unitsOf(taskId)[0];
    const submit = async (answer: string, comment = "") =>
      await saveAnnotation({ task, userId: a, unitId: unit, intent: "submit", form: form({ answer, comment, clientToken: "form-1" }) });
    expect(await submit("Yes")).toMatchObject({ ok: true, revision: 1 });
    expect(await submit("Yes")).toMatchObject({ ok: true, duplicate: true, revision: 1 });
    // Back button, another answer, same form.
    const changed = await submit("No", "changed my mind");
    expect(changed).toMatchObject({ ok: true, status: "submitted", revision: 2 });
    expect(changed).not.toHaveProperty("duplicate");
    const rows = db()
      .select({ revision: schema.annotations.revision, label: schema.annotations.label, notes: schema.annotations.notes })
      .from(schema.annotations)
      .where(eq(schema.annotations.assignmentId, (await myAssignment(taskId, unit, a))!.id))
      .orderBy(asc(schema.annotations.revision))
      .all();
    expect(rows).toEqual([
      { revision: 1, label: "Yes", notes: null },
      { revision: 2, label: "No", notes: "changed my mind" },
    ]);
    // The assignment stays submitted with the new answer current.
    const a1 = db()
      .select({ status: schema.assignments.status })
      .from(schema.assignments)
      .where(and(eq(schema.assignments.unitId, unit), eq(schema.assignments.annotatorId, a)))
      .get();
    expect(a1?.status).toBe("submitted");
  });
});
