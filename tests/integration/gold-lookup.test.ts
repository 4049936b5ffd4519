/**
 * The gold-unit lookup of the task page's "save the gold answer" form, called
 * as a function: only a gold unit of the same task is found; an ordinary unit,
 * another task's gold unit and a non-number are refused beside unitId. Real
 * temporary database; each test makes its own project and tasks.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { goldUnitOf } from "../../app/annotation/gold.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask } from "../../app/annotation/tasks.server";
import { DomainError } from "../../app/errors.server";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";

const { db } = useTempDatabase();
let seq = 0;

async function twoTasks() {
  const project = makeProject(`gold-lookup-${++seq}`);
  const { datasetId } = await makeSyntheticDataset(project.id, { items: 10 });
  const researcher = await makeUser();
  await addMember(project.id, researcher.id, "researcher");
  const annotator = await makeUser();
  await addMember(project.id, annotator.id, "annotator");
  const common = { datasetId, overlap: 1, pool: [annotator.id], goldRate: 0.3, seed: 3 };
  const make = async (name: string, kind: "response-satisfaction" | "best-of-n") =>
    (
      await createTask(project.id, researcher.id, {
        ...common,
        name,
        kind,
        ...(kind === "best-of-n" ? { n: 2, includeReference: true } : {}),
      })
    ).taskId;
  return { sat: await make("sat", "response-satisfaction"), bon: await make("bon", "best-of-n") };
}
const unitsOf = (taskId: number, isGold: boolean) =>
  db()
    .select({ id: schema.units.id, responseIds: schema.units.responseIds })
    .from(schema.units)
    .where(and(eq(schema.units.taskId, taskId), eq(schema.units.isGold, isGold)))
    .all();

async function refusal(fn: () => Promise<unknown>): Promise<DomainError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

describe("gold-unit lookup", () => {
  it("finds a gold unit of the task, with its response order for a multi-response kind", async () => {
    const t = await twoTasks();
    const [g] = unitsOf(t.bon, true);
    expect(g).toBeDefined();
    const found = await goldUnitOf({ id: t.bon, kind: "best-of-n" }, g.id);
    expect(found.kind).toBe("best-of-n");
    expect(found.responseIds).toEqual(g.responseIds);
    expect(found.responseIds).toHaveLength(2);
  });

  it("refuses an ordinary unit, another task's gold unit and a non-number, beside unitId", async () => {
    const t = await twoTasks();
    const task = { id: t.sat, kind: "response-satisfaction" };
    const ordinary = unitsOf(t.sat, false)[0].id;
    const foreignGold = unitsOf(t.bon, true)[0].id;
    for (const unitId of [ordinary, foreignGold, NaN]) {
      const err = await refusal(() => goldUnitOf(task, unitId));
      expect([err.status, err.field, err.message]).toEqual([400, "unitId", "No such gold unit in this task."]);
    }
  });

  it("refuses a task kind that is not labelled here", async () => {
    const t = await twoTasks();
    const [g] = unitsOf(t.sat, true);
    const err = await refusal(() => goldUnitOf({ id: t.sat, kind: "imported-labels" }, g.id));
    expect([err.field, err.message]).toEqual(["kind", "This task kind has no gold units."]);
  });
});
