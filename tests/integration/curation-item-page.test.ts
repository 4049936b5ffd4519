/**
 * What the curation item page shows and how its forms are read, called as
 * functions: an item is found only through a dataset of the project; an edited
 * checklist item's old version is not listed as retired; references and the
 * history come newest first with their authors; only the project's providers
 * are offered; a blank passage, domain or subject is none; the weights form
 * gives one weight per checklist item and a blank one is refused beside it.
 * Real temporary database with the demo seed; each test works on its own item.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { DEMO_ACCOUNTS, seedDemo } from "../../seeds/demo";
import { schema } from "../../db/client";
import { findItemOfDataset, itemCurationView } from "../../app/curation/itemPage.server";
import {
  CurationError,
  editChecklistItem,
  reweightChecklist,
  setChecklistItemRetired,
  setReference,
} from "../../app/curation/versions.server";
import { ItemAction } from "../../app/forms/curation.server";

const { db } = useTempDatabase();
let projectId: number;
let benchId: number;
let writingId: number;
let userId: number;

const item = (sourceId: string, datasetId = benchId) =>
  db()
    .select()
    .from(schema.items)
    .where(and(eq(schema.items.sourceId, sourceId), eq(schema.items.datasetId, datasetId)))
    .get()!;
const dataset = (id: number) => db().select().from(schema.datasets).where(eq(schema.datasets.id, id)).get()!;

beforeAll(async () => {
  await seedDemo(db());
  projectId = db().select().from(schema.projects).where(eq(schema.projects.slug, "demo")).get()!.id;
  benchId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
  writingId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Writing")).get()!.id;
  const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
  userId = db().select().from(schema.users).where(eq(schema.users.email, researcher.email)).get()!.id;
});

describe("finding the item", () => {
  it("finds an item only through its own dataset of the project", async () => {
    const it2 = item("cdb-002");
    const found = await findItemOfDataset(projectId, benchId, it2.id, db());
    expect([found.dataset?.id, found.item?.id]).toEqual([benchId, it2.id]);
    // The item asked for under another dataset of the project: no item.
    expect(await findItemOfDataset(projectId, writingId, it2.id, db())).toEqual({
      dataset: expect.objectContaining({ id: writingId }),
      item: null,
    });
    // The dataset asked for under a project that does not own it: no dataset, no item.
    const other = db().insert(schema.projects).values({ slug: "other-page-test", name: "Other" }).returning().get();
    expect(await findItemOfDataset(other.id, benchId, it2.id, db())).toEqual({ dataset: null, item: null });
  });
});

describe("the page's data", () => {
  it("lists live items in order; retired lists a retired item but not the version an edit replaced", async () => {
    const it7 = item("cdb-007");
    const view0 = await itemCurationView(projectId, dataset(benchId), it7, db());
    expect(view0.active.length).toBeGreaterThanOrEqual(3);
    const [first, second] = view0.active;
    const edited = await editChecklistItem(first.id, { text: `${first.text} (reworded)` }, { userId, reason: "clearer wording" }, db());
    await setChecklistItemRetired(second.id, true, { userId, reason: "out of scope" }, db());

    const view = await itemCurationView(projectId, dataset(benchId), item("cdb-007"), db());
    expect(view.active.map((c) => c.id)).toEqual([edited.id, ...view0.active.slice(2).map((c) => c.id)]);
    expect(view.active[0].text).toBe(`${first.text} (reworded)`);
    expect(view.retired.map((c) => c.id)).toEqual([second.id]);
    expect(view.weighted).toBe(view0.weighted);
    // The history: newest event first, with who made it and why.
    expect(view.history.slice(0, 2).map((h) => [h.action, h.reason, h.by])).toEqual([
      ["retire", "out of scope", expect.any(String)],
      ["edit", "clearer wording", expect.any(String)],
    ]);
    expect(view.history[0].id).toBeGreaterThan(view.history[1].id);
  });

  it("shows references newest version first with their authors, the stale labels and only this project's providers", async () => {
    const it8 = item("cdb-008");
    const before = (await itemCurationView(projectId, dataset(benchId), it8, db())).references;
    const r = await setReference(it8.id, "A new reference answer.", { userId, reason: "better answer", provenance: "edited" }, db());
    const other = db().insert(schema.projects).values({ slug: "other-providers-test", name: "Other" }).returning().get();
    db().insert(schema.providers).values({ projectId: other.id, name: "Not ours", kind: "replay", model: "x" }).run();
    db().insert(schema.providers).values({ projectId, name: "AAA first by name", kind: "replay", model: "y" }).run();

    const view = await itemCurationView(projectId, dataset(benchId), item("cdb-008"), db());
    expect(view.references.map((x) => x.id)).toEqual([r.id, ...before.map((x) => x.id)]);
    expect(view.references[0]).toMatchObject({
      text: "A new reference answer.",
      isCurrent: true,
      version: r.version,
      reason: "better answer",
    });
    expect(view.references[0].by).toEqual(expect.any(String));
    expect(view.references.filter((x) => x.isCurrent)).toHaveLength(1);
    expect(view.stale.assignments).toBeGreaterThanOrEqual(0);
    const names = view.providers.map((p) => p.name);
    expect(names[0]).toBe("AAA first by name");
    expect(names).not.toContain("Not ours");
    expect([...names].sort()).toEqual(names);
  });
});

describe("reading the item page's forms", () => {
  it("a blank passage, domain or subject is none; a filled one is kept", () => {
    const blank = ItemAction.parse({ intent: "edit-item", query: "Q", passage: "  ", domain: " ", reason: "r" });
    expect(blank).toMatchObject({ query: "Q", passage: null, domain: null, subject: null });
    const filled = ItemAction.parse({
      intent: "edit-item",
      query: "Q",
      passage: " text ",
      domain: " math ",
      subject: "algebra",
      reason: "r",
    });
    expect(filled).toMatchObject({ passage: " text ", domain: "math", subject: "algebra" });
  });

  it("the weights form gives one weight per checklist item; a blank weight is refused beside its field and nothing changes", async () => {
    const it9 = item("cdb-009");
    const live = (await itemCurationView(projectId, dataset(benchId), it9, db())).active;
    const fields = Object.fromEntries(live.map((c, i) => [`weight-${c.id}`, String(i + 1)]));
    const parsed = ItemAction.parse({ intent: "reweight", reason: "weigh", ...fields, other: "ignored" });
    if (parsed.intent !== "reweight") throw new Error("parsed as another intent");
    expect(parsed.weights).toEqual(Object.fromEntries(live.map((c, i) => [c.id, i + 1])));
    await reweightChecklist(it9.id, parsed.weights, { userId, reason: parsed.reason }, db());
    const total = live.reduce((s, _c, i) => s + i + 1, 0);
    const after = await itemCurationView(projectId, dataset(benchId), item("cdb-009"), db());
    expect(after.weighted).toBe(true);
    after.active.forEach((c, i) => expect(c.weight).toBeCloseTo((i + 1) / total, 9));

    const blank = ItemAction.parse({ intent: "reweight", reason: "weigh", ...fields, [`weight-${live[0].id}`]: "" });
    if (blank.intent !== "reweight") throw new Error("parsed as another intent");
    expect(Number.isNaN(blank.weights[live[0].id])).toBe(true);
    let err: unknown;
    try {
      await reweightChecklist(it9.id, blank.weights, { userId, reason: "weigh" }, db());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CurationError);
    expect((err as CurationError).field).toBe(`weight-${live[0].id}`);
    const unchanged = (await itemCurationView(projectId, dataset(benchId), item("cdb-009"), db())).active;
    expect(unchanged.map((c) => c.weight)).toEqual(after.active.map((c) => c.weight));
  });
});
