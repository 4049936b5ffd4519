/**
 * The curation pages' row rules, called as functions: a checklist item must
 * belong to the item being edited, a move stays within the live checklist, and
 * a promoted response must belong to the dataset. Real temporary database with
 * the demo seed; each test works on its own item.
 */
import { and, eq, isNull } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { seedDemo } from "../../seeds/demo";
import { schema } from "../../db/client";
import { moveChecklistItem, requireChecklistItemOf, requireResponseOfDataset } from "../../app/curation/rules.server";
import { setChecklistItemRetired } from "../../app/curation/versions.server";
import { DomainError } from "../../app/errors.server";

const { db } = useTempDatabase();
let benchId: number;

const item = (sourceId: string) =>
  db()
    .select()
    .from(schema.items)
    .where(and(eq(schema.items.sourceId, sourceId), eq(schema.items.datasetId, benchId)))
    .get()!;
const liveChecklist = (itemId: number) =>
  db()
    .select({ id: schema.checklistItems.id })
    .from(schema.checklistItems)
    .where(and(eq(schema.checklistItems.itemId, itemId), isNull(schema.checklistItems.retiredAt)))
    .orderBy(schema.checklistItems.position)
    .all()
    .map((c) => c.id);

async function refusal(fn: () => Promise<unknown>): Promise<DomainError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

beforeAll(async () => {
  await seedDemo(db());
  benchId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
});

describe("checklist ownership", () => {
  it("accepts a checklist item of the item; refuses another item's beside checklistItemId", async () => {
    const a = item("cdb-002");
    const b = item("cdb-003");
    const [ofA] = liveChecklist(a.id);
    const [ofB] = liveChecklist(b.id);
    await expect(requireChecklistItemOf(a.id, ofA)).resolves.toBeUndefined();
    const err = await refusal(() => requireChecklistItemOf(a.id, ofB));
    expect([err.status, err.field, err.message]).toEqual([400, "checklistItemId", "checklistItemId: not a checklist item of this item."]);
  });
});

describe("reordering the checklist", () => {
  it("swaps a live item with its neighbour; the ends and other items' rows are refused and nothing moves", async () => {
    const it4 = item("cdb-004");
    const before = liveChecklist(it4.id);
    expect(before.length).toBeGreaterThanOrEqual(2);
    const actor = { userId: null, reason: "Reordered" };
    await moveChecklistItem(it4.id, before[1], "up", actor);
    const after = liveChecklist(it4.id);
    expect(after).toEqual([before[1], before[0], ...before.slice(2)]);

    const top = await refusal(() => moveChecklistItem(it4.id, after[0], "up", actor));
    expect([top.status, top.field, top.message]).toEqual([400, "direction", "Cannot move that item further."]);
    expect((await refusal(() => moveChecklistItem(it4.id, after[after.length - 1], "down", actor))).field).toBe("direction");
    const other = liveChecklist(item("cdb-005").id)[0];
    expect((await refusal(() => moveChecklistItem(it4.id, other, "down", actor))).field).toBe("direction");
    expect(liveChecklist(it4.id)).toEqual(after);
  });

  it("skips retired items: the neighbour of a move is the next live one, and a retired item cannot be moved", async () => {
    const it6 = item("cdb-006");
    const ids = liveChecklist(it6.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    const actor = { userId: null, reason: "test" };
    await setChecklistItemRetired(ids[1], true, actor);
    await moveChecklistItem(it6.id, ids[2], "up", actor);
    expect(liveChecklist(it6.id).slice(0, 2)).toEqual([ids[2], ids[0]]);
    expect((await refusal(() => moveChecklistItem(it6.id, ids[1], "up", actor))).message).toBe("Cannot move that item further.");
  });
});

describe("promoting a response", () => {
  it("accepts a response of the dataset; refuses one of another dataset and an unknown id beside responseId", async () => {
    const own = db()
      .select({ id: schema.responses.id })
      .from(schema.responses)
      .where(eq(schema.responses.itemId, item("cdb-007").id))
      .get()!;
    await expect(requireResponseOfDataset(benchId, own.id)).resolves.toBeUndefined();

    const projectId = db()
      .select({ projectId: schema.datasets.projectId })
      .from(schema.datasets)
      .where(eq(schema.datasets.id, benchId))
      .get()!.projectId;
    const otherSet = db().insert(schema.datasets).values({ projectId, name: "Other set" }).returning({ id: schema.datasets.id }).get().id;
    const otherItem = db()
      .insert(schema.items)
      .values({ datasetId: otherSet, sourceId: "other-1", query: "A prompt" })
      .returning({ id: schema.items.id })
      .get().id;
    const foreign = db()
      .insert(schema.responses)
      .values({ itemId: otherItem, model: "m", text: "An answer", origin: "seed", sourceKey: "other-1/m" })
      .returning({ id: schema.responses.id })
      .get().id;
    for (const id of [foreign, 999_999]) {
      const err = await refusal(() => requireResponseOfDataset(benchId, id));
      expect([err.status, err.field, err.message]).toEqual([400, "responseId", "responseId: not a response of this dataset."]);
    }
    await expect(requireResponseOfDataset(otherSet, foreign)).resolves.toBeUndefined();
  });
});
