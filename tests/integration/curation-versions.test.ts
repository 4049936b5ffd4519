/**
 * Curation keeps history: edits create versions, what was judged keeps
 * pointing at its version and is marked stale, weights are re-normalised,
 * frozen releases are read-only, and the release carries a changelog.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { useTempDatabase } from "../support/db";
import { seedDemo } from "../../seeds/demo";
import { schema } from "../../db/client";
import {
  addChecklistItem,
  CurationError,
  editChecklistItem,
  editItem,
  freezeDataset,
  promoteResponse,
  reorderChecklist,
  reweightChecklist,
  setChecklistItemRetired,
  setReference,
  startNextVersion,
} from "../../app/curation/versions.server";
import { releaseChangelog, releaseLines } from "../../app/curation/release.server";

const { db } = useTempDatabase();
let maintainer: number;
let benchId: number;

const item = (sourceId: string) =>
  db()
    .select()
    .from(schema.items)
    .where(and(eq(schema.items.sourceId, sourceId), eq(schema.items.datasetId, benchId)))
    .get()!;
const activeChecklist = (itemId: number) =>
  db()
    .select()
    .from(schema.checklistItems)
    .where(and(eq(schema.checklistItems.itemId, itemId), isNull(schema.checklistItems.retiredAt)))
    .orderBy(schema.checklistItems.position)
    .all();

beforeAll(async () => {
  await seedDemo(db());
  maintainer = db().select().from(schema.users).where(eq(schema.users.email, "rhea@concord.test")).get()!.id;
  benchId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
});

describe("checklist item edits", () => {
  it("create a new version; labels and verdicts keep the old one and are marked stale", async () => {
    const it1 = item("cdb-001");
    const old = activeChecklist(it1.id)[0];
    const unitIds = db()
      .select({ id: schema.units.id })
      .from(schema.units)
      .where(eq(schema.units.checklistItemId, old.id))
      .all()
      .map((u) => u.id);
    expect(unitIds.length).toBeGreaterThan(0);
    const verdictsBefore = db().select().from(schema.verdicts).where(eq(schema.verdicts.checklistItemId, old.id)).all();

    const { id, stale } = await editChecklistItem(
      old.id,
      { text: old.text.replace("?", " under the Restatement?") },
      { userId: maintainer, reason: "Name the legal source" },
    );

    const fresh = db().select().from(schema.checklistItems).where(eq(schema.checklistItems.id, id)).get()!;
    expect(fresh).toMatchObject({ version: 2, previousId: old.id, position: old.position, retiredAt: null });
    expect(db().select().from(schema.checklistItems).where(eq(schema.checklistItems.id, old.id)).get()!.retiredAt).not.toBeNull();
    // Verdicts still point at the version they judged, and every one is stale.
    const verdictsAfter = db().select().from(schema.verdicts).where(eq(schema.verdicts.checklistItemId, old.id)).all();
    expect(verdictsAfter).toHaveLength(verdictsBefore.length);
    expect(verdictsAfter.every((v) => v.staleAt !== null)).toBe(true);
    expect(stale.verdicts).toBe(verdictsBefore.length);
    // Annotations on units of the old version are stale; the units still name the old version.
    const staleAnnotations = db()
      .select({ id: schema.annotations.id, checklistItemId: schema.units.checklistItemId })
      .from(schema.annotations)
      .innerJoin(schema.assignments, eq(schema.assignments.id, schema.annotations.assignmentId))
      .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
      .where(isNotNull(schema.annotations.staleAt))
      .all();
    expect(staleAnnotations.length).toBe(stale.annotations);
    expect(stale.annotations).toBeGreaterThan(0);
    expect(new Set(staleAnnotations.map((a) => a.checklistItemId))).toEqual(new Set([old.id]));
    // Nothing else went stale.
    const otherStale = db()
      .select()
      .from(schema.verdicts)
      .where(and(isNotNull(schema.verdicts.staleAt), eq(schema.verdicts.checklistItemId, activeChecklist(it1.id)[1].id)))
      .all();
    expect(otherStale).toHaveLength(0);
  });

  it("need a reason, and refuse a no-op edit", async () => {
    const c = activeChecklist(item("cdb-002").id)[0];
    await expect(editChecklistItem(c.id, { text: "Does the response x?" }, { userId: maintainer, reason: "  " })).rejects.toThrow(
      /Say why/,
    );
    await expect(editChecklistItem(c.id, { text: c.text }, { userId: maintainer, reason: "none" })).rejects.toThrow("Nothing changed.");
  });

  it("retire, reorder, add and reweight; weights re-normalise to 1", async () => {
    const it3 = item("cdb-003");
    const list = activeChecklist(it3.id);
    await setChecklistItemRetired(list[0].id, true, { userId: maintainer, reason: "Judged inappropriate by annotators" });
    expect(activeChecklist(it3.id)).toHaveLength(list.length - 1);
    const reversed = activeChecklist(it3.id)
      .map((c) => c.id)
      .reverse();
    await reorderChecklist(it3.id, reversed, { userId: maintainer, reason: "Most important first" });
    expect(activeChecklist(it3.id).map((c) => c.id)).toEqual(reversed);
    await expect(reorderChecklist(it3.id, reversed.slice(1), { userId: maintainer, reason: "x" })).rejects.toThrow(/exactly once/);

    const weights = Object.fromEntries(reversed.map((id, i) => [id, i + 1]));
    const stored = await reweightChecklist(it3.id, weights, { userId: maintainer, reason: "Weight by importance" });
    const total = reversed.reduce((s, _, i) => s + i + 1, 0);
    reversed.forEach((id, i) => expect(stored[id]).toBeCloseTo((i + 1) / total, 12));
    expect(Object.values(stored).reduce((s, w) => s + w, 0)).toBeCloseTo(1, 12);

    // Adding a weighted item re-normalises again; retiring one does too.
    await addChecklistItem(
      it3.id,
      { text: "Does the response mention the store's inspection log?", weight: 0.5 },
      { userId: maintainer, reason: "Missing criterion" },
    );
    const sum = activeChecklist(it3.id).reduce((s, c) => s + (c.weight ?? 0), 0);
    expect(sum).toBeCloseTo(1, 12);
    await setChecklistItemRetired(reversed[0], true, { userId: maintainer, reason: "Duplicate" });
    expect(activeChecklist(it3.id).reduce((s, c) => s + (c.weight ?? 0), 0)).toBeCloseTo(1, 12);
    await expect(reweightChecklist(it3.id, {}, { userId: maintainer, reason: "x" })).rejects.toThrow(/weight of 0 or more/);
  });
});

describe("items and references", () => {
  it("editing an item's prompt bumps its version and makes its labels and verdicts stale", async () => {
    const it4 = item("cdb-004");
    const { version, stale } = await editItem(
      it4.id,
      { query: it4.query + " Give the answer to two decimal places." },
      { userId: maintainer, reason: "State the precision" },
    );
    expect(version).toBe(2);
    expect(stale.verdicts).toBeGreaterThan(0);
    expect(item("cdb-004").version).toBe(2);
    // Changing only the subject is not a change to what was judged.
    expect((await editItem(it4.id, { subject: "Buffers" }, { userId: maintainer, reason: "Finer subject" })).stale).toEqual({
      annotations: 0,
      verdicts: 0,
    });
  });

  it("promoting a response keeps the reference history with who, why and the justifying annotations", async () => {
    const it5 = item("cdb-005");
    const response = db().select().from(schema.responses).where(eq(schema.responses.itemId, it5.id)).all()[0];
    const before = db().select().from(schema.references).where(eq(schema.references.itemId, it5.id)).all();
    const { version } = await promoteResponse(response.id, {
      userId: maintainer,
      reason: "Annotators preferred it 3 to 0",
      justification: [11, 12, 13],
    });
    const history = db()
      .select()
      .from(schema.references)
      .where(eq(schema.references.itemId, it5.id))
      .orderBy(schema.references.version)
      .all();
    expect(history).toHaveLength(before.length + 1);
    expect(history.filter((r) => r.isCurrent)).toHaveLength(1);
    expect(history.at(-1)).toMatchObject({
      version,
      text: response.text,
      isCurrent: true,
      provenance: "promoted",
      promotedFromResponseId: response.id,
      createdBy: maintainer,
      reason: "Annotators preferred it 3 to 0",
      justification: [11, 12, 13],
    });
    expect(history[0]).toMatchObject({ isCurrent: false, provenance: "seed" });
    await expect(setReference(it5.id, response.text, { userId: maintainer, reason: "again" })).rejects.toThrow(
      /already the current reference/,
    );
  });
});

describe("reports after an edit", () => {
  it("say how many labels and verdicts judged an older version", async () => {
    const { signInCookie, args, get, run } = await import("../support/http");
    const { loader } = await import("../../app/routes/p.$slug.reports.$taskId._index");
    const cookie = await signInCookie("rhea@concord.test", "demo-research-2026");
    // This test's own edits (it does not rely on the tests above having run): a checklist item of cdb-007 reworded,
    // cdb-008's prompt changed. Both make labels and verdicts on those items stale.
    const c7 = activeChecklist(item("cdb-007").id)[0];
    await editChecklistItem(c7.id, { text: c7.text.replace("?", " in plain words?") }, { userId: maintainer, reason: "Clearer wording" });
    const i8 = item("cdb-008");
    await editItem(i8.id, { query: i8.query + " Answer in one paragraph." }, { userId: maintainer, reason: "State the length" });
    const staleOf = async (kind: string) => {
      const task = db()
        .select()
        .from(schema.tasks)
        .where(eq(schema.tasks.kind, kind as "response-satisfaction"))
        .get()!;
      const res = await run(loader, args(get(`/p/demo/reports/${task.id}`, cookie), { slug: "demo", taskId: String(task.id) }));
      return (await res.json()).stale as { labels: number; verdicts: number };
    };
    // Expected: the rows the edits above marked stale, counted straight from the tables.
    const staleLabels = (kind: string) =>
      db()
        .select({ id: schema.annotations.id })
        .from(schema.annotations)
        .innerJoin(schema.assignments, eq(schema.assignments.id, schema.annotations.assignmentId))
        .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
        .innerJoin(schema.tasks, eq(schema.tasks.id, schema.units.taskId))
        .where(
          and(
            eq(schema.tasks.kind, kind as "response-satisfaction"),
            isNotNull(schema.annotations.staleAt),
            eq(schema.annotations.status, "submitted"),
          ),
        )
        .all().length;
    const appropriateness = await staleOf("checklist-appropriateness");
    expect(appropriateness.labels).toBe(staleLabels("checklist-appropriateness"));
    expect(appropriateness.labels).toBeGreaterThan(0);
    const satisfaction = await staleOf("response-satisfaction");
    expect(satisfaction.labels).toBe(staleLabels("response-satisfaction"));
    expect(satisfaction.verdicts).toBeGreaterThan(0);
    // The annotations export marks the same labels.
    const { exportRows } = await import("../../app/formats/export.server");
    const projectId = db().select().from(schema.projects).get()!.id;
    const rows = await exportRows(db(), projectId, "annotations");
    const marked = rows.filter((r) => r.stale_at != null && r.status === "submitted");
    expect(marked.length).toBe(
      staleLabels("checklist-appropriateness") +
        staleLabels("response-satisfaction") +
        staleLabels("writing-quality") +
        staleLabels("best-of-n"),
    );
    expect(String(marked[0].stale_at)).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});

describe("releases", () => {
  // The history this release carries, made here on items no other test edits (so these tests do not depend on the ones
  // above having run): a checklist item reworded (cdb-009), weights set (cdb-010), the prompt edited twice (cdb-011), a
  // response promoted to reference (cdb-012); then version 1 is frozen.
  beforeAll(async () => {
    const by = (reason: string) => ({ userId: maintainer, reason });
    const c9 = activeChecklist(item("cdb-009").id)[0];
    await editChecklistItem(c9.id, { text: c9.text.replace("?", " for a first-year student?") }, by("Name the audience"));
    const i10 = item("cdb-010").id;
    await reweightChecklist(i10, Object.fromEntries(activeChecklist(i10).map((c, i) => [c.id, i + 1])), by("Weight by importance"));
    const i11 = item("cdb-011");
    await editItem(i11.id, { query: i11.query + " Show your working." }, by("Ask for the steps"));
    await editItem(i11.id, { query: item("cdb-011").query + " Use SI units." }, by("Fix the units"));
    const r12 = db()
      .select()
      .from(schema.responses)
      .where(eq(schema.responses.itemId, item("cdb-012").id))
      .all()[0];
    await promoteResponse(r12.id, { userId: maintainer, reason: "Annotators preferred it 2 to 1", justification: [21, 22] });
    await freezeDataset(benchId, by("v1 release for the paper"));
  });

  it("a frozen version is read-only; the next version copies the current benchmark", async () => {
    const it6 = item("cdb-006");
    const c = activeChecklist(it6.id)[0];
    await expect(editChecklistItem(c.id, { text: "Does the response do X?" }, { userId: maintainer, reason: "x" })).rejects.toThrow(
      CurationError,
    );
    await expect(editChecklistItem(c.id, { text: "Does the response do X?" }, { userId: maintainer, reason: "x" })).rejects.toThrow(
      /frozen as a release/,
    );

    const next = await startNextVersion(benchId, { userId: maintainer, reason: "Start v2" });
    expect(next.version).toBe(2);
    const v1 = await releaseLines(benchId);
    const v2 = await releaseLines(next.id);
    expect(v2).toEqual(v1);
    await expect(startNextVersion(benchId, { userId: maintainer, reason: "again" })).rejects.toThrow(/Version 2 already exists/);
  });

  it("the release JSONL has the current checklist and reference; the changelog says what changed and why", async () => {
    const lines = await releaseLines(benchId);
    const l10 = lines.find((l) => l.id === "cdb-010")!;
    expect(l10.checklist.reduce((s, c) => s + (c.weight ?? 0), 0)).toBeCloseTo(1, 12);
    expect(lines.find((l) => l.id === "cdb-011")!.item_version).toBe(3);
    expect(lines.find((l) => l.id === "cdb-012")!.reference).toBe(
      db()
        .select()
        .from(schema.responses)
        .where(eq(schema.responses.itemId, item("cdb-012").id))
        .all()[0].text,
    );
    const log = await releaseChangelog(benchId);
    expect(log).toMatch(/^# Concord Demo Bench — version 1\n/);
    expect(log).toContain("Released ");
    expect(log).toContain("· cdb-009 · Checklist item edited (v1 → v2)");
    expect(log).toContain("Rhea Researcher: Name the audience");
    expect(log).toContain("· cdb-012 · A model response was promoted to reference (v2), justified by 2 annotation(s): 21, 22");
    expect(log).toContain("Version 1 frozen as a release — Rhea Researcher: v1 release for the paper");
  });
});
