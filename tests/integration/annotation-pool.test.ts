/**
 * Removing an annotator from a task's pool through the task page action
 * (intent "remove-annotator"): unstarted work is handed over, started work
 * stays, k distinct annotators per unit, deterministic for the seed; refused
 * (changing nothing) when fewer than k would remain; researchers only.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { myQueue, saveAnnotation } from "../../app/annotation/annotate.server";
import { readConfig } from "../../app/annotation/config";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import * as annotate from "../../app/routes/p.$slug.tasks.$taskId.annotate";
import * as page from "../../app/routes/p.$slug.tasks.$taskId._index";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { args, get, post, run, signInCookie } from "../support/http";

const { db } = useTempDatabase();
let slug: string;
let projectId: number;
let datasetId: number;
let researcher: { id: number; cookie: string };
let outsider: { id: number; cookie: string };
const annotators: { id: number; cookie: string }[] = [];

beforeAll(async () => {
  const project = makeProject("annot-pool");
  slug = project.slug;
  projectId = project.id;
  datasetId = (await makeSyntheticDataset(project.id, { items: 12 })).datasetId;
  const r = await makeUser({ name: "Rita Researcher" });
  await addMember(project.id, r.id, "researcher");
  researcher = { id: r.id, cookie: await signInCookie(r.email, r.password) };
  for (let i = 0; i < 4; i++) {
    const u = await makeUser({ name: `Pool Annotator ${i + 1}` });
    await addMember(project.id, u.id, "annotator");
    annotators.push({ id: u.id, cookie: await signInCookie(u.email, u.password) });
  }
  const o = await makeUser();
  outsider = { id: o.id, cookie: await signInCookie(o.email, o.password) };
});

const newTask = async (name: string, seed = 17, pool = annotators.map((a) => a.id)) =>
  (await createTask(projectId, researcher.id, { name, datasetId, kind: "response-satisfaction", overlap: 2, seed, pool, goldRate: 0.2 }))
    .taskId;

const rowsOf = (taskId: number) =>
  db()
    .select({
      id: schema.assignments.id,
      unitId: schema.assignments.unitId,
      position: schema.units.position,
      isGold: schema.units.isGold,
      annotatorId: schema.assignments.annotatorId,
      status: schema.assignments.status,
      shownOrder: schema.assignments.shownOrder,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(eq(schema.units.taskId, taskId))
    .orderBy(schema.assignments.id)
    .all();
const annotationCount = () => db().select().from(schema.annotations).all().length;
const poolOfTask = async (taskId: number) => readConfig((await findTask(projectId, taskId))!.config).pool;

const remove = (taskId: number, userId: number | string, cookie = researcher.cookie) =>
  run(
    page.action,
    args(post(`/p/${slug}/tasks/${taskId}`, { intent: "remove-annotator", userId: String(userId) }, cookie), {
      slug,
      taskId: String(taskId),
    }),
  );

/** The leaving annotator starts three units: a draft, a submission, a skip. */
async function startSome(taskId: number, userId: number) {
  const task = (await findTask(projectId, taskId))!;
  const regular = new Set(
    rowsOf(taskId)
      .filter((r) => !r.isGold)
      .map((r) => r.unitId),
  );
  const [a, b, c] = (await myQueue(taskId, userId)).filter((q) => regular.has(q.unitId));
  const form = (o: Record<string, string>) => new URLSearchParams(o);
  await saveAnnotation({ task, userId, unitId: a.unitId, intent: "draft", form: form({ answer: "Yes" }) });
  await saveAnnotation({ task, userId, unitId: b.unitId, intent: "submit", form: form({ answer: "No", comment: "kept" }) });
  await saveAnnotation({ task, userId, unitId: c.unitId, intent: "skip", form: form({ skipReason: "unreadable" }) });
  return [a.unitId, b.unitId, c.unitId];
}

describe("removing an annotator from the pool", () => {
  it("an annotator gets 403 and a non-member 404; nothing changes", async () => {
    const taskId = await newTask("access");
    const before = rowsOf(taskId);
    expect((await remove(taskId, annotators[1].id, annotators[0].cookie)).status).toBe(403);
    expect((await remove(taskId, annotators[1].id, outsider.cookie)).status).toBe(404);
    expect(rowsOf(taskId)).toEqual(before);
    expect(await poolOfTask(taskId)).toHaveLength(4);
  });

  it("hands unstarted work to the rest, keeps started work, k distinct per unit, records the pool", async () => {
    const taskId = await newTask("hand-over");
    const leaving = annotators[2].id;
    const startedUnits = await startSome(taskId, leaving);
    const before = rowsOf(taskId);
    const labels = annotationCount();
    const res = await remove(taskId, leaving);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.ok).toMatch(/handed to others, 3 started kept/);
    const after = rowsOf(taskId);

    // Started work stays with the leaving annotator, untouched; labels are all kept.
    const mine = after.filter((r) => r.annotatorId === leaving);
    expect(mine.map((r) => r.unitId).sort()).toEqual([...startedUnits].sort());
    expect(mine.map((r) => r.status).sort()).toEqual(["draft", "skipped", "submitted"]);
    expect(annotationCount()).toBe(labels);

    // Every regular unit keeps k = 2 distinct annotators; loads of the remaining pool within one.
    const regular = after.filter((r) => !r.isGold);
    expect(regular).toHaveLength(before.filter((r) => !r.isGold).length);
    const perUnit = new Map<number, Set<number>>();
    for (const r of regular) perUnit.set(r.unitId, (perUnit.get(r.unitId) ?? new Set()).add(r.annotatorId));
    for (const people of perUnit.values()) expect(people.size).toBe(2);
    const remaining = annotators.map((a) => a.id).filter((id) => id !== leaving);
    const loads = remaining.map((id) => regular.filter((r) => r.annotatorId === id).length);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);

    // Some assignments changed hands.
    expect(after.filter((r) => before.find((b) => b.id === r.id)?.annotatorId !== r.annotatorId).length).toBeGreaterThan(0);

    // Unstarted gold units are withdrawn from the leaver; the others still have them.
    expect(after.filter((r) => r.isGold && r.annotatorId === leaving)).toEqual([]);
    for (const id of remaining)
      expect(after.filter((r) => r.isGold && r.annotatorId === id)).toHaveLength(
        before.filter((r) => r.isGold && r.annotatorId === id).length,
      );

    // Recorded in task config; the page lists the new pool.
    expect(await poolOfTask(taskId)).toEqual(remaining);
    const loaded = await run(
      page.loader,
      args(get(`/p/${slug}/tasks/${taskId}`, researcher.cookie), { slug, taskId: String(taskId) }),
    ).then((r) => r.json());
    expect(loaded.pool).toEqual(remaining);

    // The leaver can still finish their draft; their queue holds only their started units.
    expect((await myQueue(taskId, leaving)).map((q) => q.unitId).sort()).toEqual([...startedUnits].sort());
    const draftUnit = mine.find((r) => r.status === "draft")!.unitId;
    const open = await run(
      annotate.loader,
      args(get(`/p/${slug}/tasks/${taskId}/annotate?unit=${draftUnit}`, annotators[2].cookie), { slug, taskId: String(taskId) }),
    );
    expect(open.status).toBe(200);
  });

  it("is deterministic for the task seed: two identical tasks end identical", async () => {
    const [t1, t2] = [await newTask("det-1", 23), await newTask("det-2", 23)];
    for (const t of [t1, t2]) expect((await remove(t, annotators[0].id)).status).toBe(200);
    const shape = (t: number) =>
      rowsOf(t)
        .map((r) => [r.position, r.annotatorId])
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(shape(t2)).toEqual(shape(t1));
  });

  it("refuses, naming the field and changing nothing, when fewer than k would remain", async () => {
    const taskId = await newTask("too-few");
    expect((await remove(taskId, annotators[0].id)).status).toBe(200);
    expect((await remove(taskId, annotators[1].id)).status).toBe(200);
    const before = rowsOf(taskId);
    const config = (await findTask(projectId, taskId))!.config;
    const res = await remove(taskId, annotators[2].id);
    expect(res.status).toBe(400);
    const { error, field } = await res.json();
    expect(field).toBe("userId");
    expect(error).toMatch(/^Removing Pool Annotator 3 would leave 1 annotator in the pool, but this task has overlap k = 2/);
    expect(rowsOf(taskId)).toEqual(before);
    expect((await findTask(projectId, taskId))!.config).toEqual(config);

    // Not in the pool, or no user given: a clear 400, nothing changes.
    const gone = await remove(taskId, annotators[0].id);
    expect(gone.status).toBe(400);
    const goneBody = await gone.json();
    expect(goneBody.field).toBe("userId");
    expect(goneBody.error).toMatch(/not in this task's pool/);
    const blank = await remove(taskId, "");
    expect(blank.status).toBe(400);
    expect((await blank.json()).error).toMatch(/^userId:/);
    expect(rowsOf(taskId)).toEqual(before);
  });
});
