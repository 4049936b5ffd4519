/**
 * Curation through the data-access layer, the same scenario on SQLite and on
 * PostgreSQL (issue 17): the dataset browser (a case-insensitive search, a
 * search for "50%" that means the text, counts as numbers), an item's detail,
 * a checklist edit that marks the labels and verdicts of the old version
 * stale, sending those labels back (the unit moves to the new version),
 * a new reference that stales only the labels of tasks that show it (a task
 * config read as JSON on both dialects) and whole-response scores, weights,
 * order, the item page's flags, promotion, freezing, the next version, the
 * release and its changelog, and the back-check and drafting against a local
 * OpenAI-compatible endpoint with every call logged through the provider's
 * shared limits. Expected values follow from the rules in
 * app/curation/versions.server.ts and the rows made here, not from a previous run.
 */
import os from "node:os";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, initDal, type Dal } from "../../app/dal.server";
import { browseItems, findDataset, itemDetail } from "../../app/benchmark/browse.server";
import {
  CurationError,
  editChecklistItem,
  editItem,
  freezeDataset,
  promoteResponse,
  reorderChecklist,
  reweightChecklist,
  setReference,
  startNextVersion,
} from "../../app/curation/versions.server";
import { requeueStale, staleSummary } from "../../app/curation/requeue.server";
import { findItemOfDataset, itemCurationView } from "../../app/curation/itemPage.server";
import { releaseChangelog, releaseLines } from "../../app/curation/release.server";
import { draftChecklist, runBackCheck } from "../../app/curation/assist.server";
import { lastUserText, startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();

let testPg: TestPg | undefined;
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
  await fake?.close();
});

type Ids = {
  projectId: number;
  datasetId: number;
  ada: number;
  q1: number;
  q2: number;
  q3: number;
  c1: number;
  c2: number;
  c3: number;
  r1: number;
  u1: number;
  appropriatenessTask: number;
};

/** A project with a three-item dataset, labels on q1's checklist and response, and a judge's verdicts. */
async function seed(d: Dal): Promise<Ids> {
  const t = d.t;
  return d.tx(async (q) => {
    const [ada, ann1, ann2] = await q
      .insert(t.users)
      .values([
        { email: "ada@bench.test", name: "Ada", passwordHash: "x" },
        { email: "ann1@bench.test", name: "Ann One", passwordHash: "x" },
        { email: "ann2@bench.test", name: "Ann Two", passwordHash: "x" },
      ])
      .returning({ id: t.users.id });
    const [project] = await q.insert(t.projects).values({ slug: "bench", name: "Bench" }).returning({ id: t.projects.id });
    const [ds] = await q.insert(t.datasets).values({ projectId: project.id, name: "Geo Bench" }).returning({ id: t.datasets.id });
    const [q1, q2, q3] = await q
      .insert(t.items)
      .values([
        { datasetId: ds.id, sourceId: "g-001", query: "What is the capital of France?", domain: "Geo" },
        { datasetId: ds.id, sourceId: "g-002", query: "What is 50% of 80?", domain: "Math" },
        { datasetId: ds.id, sourceId: "g-003", query: "Name a river in Spain.", domain: "Geo" },
      ])
      .returning({ id: t.items.id });
    const [c1, c2, c3] = await q
      .insert(t.checklistItems)
      .values([
        { itemId: q1.id, text: "Does the response name Paris?", position: 0 },
        { itemId: q1.id, text: "Does the response mention the Seine?", position: 1 },
        { itemId: q1.id, text: "Is the response one sentence long?", position: 2 },
      ])
      .returning({ id: t.checklistItems.id });
    await q.insert(t.references).values([
      { itemId: q1.id, text: "Paris.", provenance: "seed" },
      { itemId: q2.id, text: "40.", provenance: "seed" },
    ]);
    const [r1] = await q
      .insert(t.responses)
      .values([
        { itemId: q1.id, model: "model-a", text: "The capital of France is Paris.", origin: "seed", sourceKey: "g-001/model-a" },
        { itemId: q2.id, model: "model-a", text: "40", origin: "seed", sourceKey: "g-002/model-a" },
      ])
      .returning({ id: t.responses.id });
    const [judge] = await q
      .insert(t.judges)
      .values({ projectId: project.id, name: "j", provider: "test", model: "m" })
      .returning({ id: t.judges.id });
    await q.insert(t.verdicts).values([
      { judgeId: judge.id, responseId: r1.id, checklistItemId: c1.id, value: "Yes" },
      { judgeId: judge.id, responseId: r1.id, checklistItemId: null, value: "8", score: 8 },
    ]);
    const [appropriateness, shows, hides] = await q
      .insert(t.tasks)
      .values([
        { projectId: project.id, datasetId: ds.id, kind: "checklist-appropriateness", name: "Valid?", config: {} },
        { projectId: project.id, datasetId: ds.id, kind: "response-satisfaction", name: "Sat (ref)", config: { showReference: true } },
        { projectId: project.id, datasetId: ds.id, kind: "response-satisfaction", name: "Sat", config: {} },
      ])
      .returning({ id: t.tasks.id });
    const units = await q
      .insert(t.units)
      .values([
        { taskId: appropriateness.id, itemId: q1.id, checklistItemId: c1.id, position: 0 },
        { taskId: appropriateness.id, itemId: q1.id, checklistItemId: c2.id, position: 1 },
        { taskId: appropriateness.id, itemId: q1.id, checklistItemId: c3.id, position: 2 },
        { taskId: shows.id, itemId: q1.id, responseId: r1.id },
        { taskId: hides.id, itemId: q1.id, responseId: r1.id },
      ])
      .returning({ id: t.units.id });
    // Appropriateness: both annotators accept c1 and c3 and reject c2; each satisfaction task has one label.
    const labels: [number, number, string][] = [
      [units[0].id, ann1.id, "Yes"],
      [units[0].id, ann2.id, "Yes"],
      [units[1].id, ann1.id, "No"],
      [units[1].id, ann2.id, "No"],
      [units[2].id, ann1.id, "Yes"],
      [units[2].id, ann2.id, "Yes"],
      [units[3].id, ann1.id, "Yes"],
      [units[4].id, ann2.id, "Yes"],
    ];
    for (const [unitId, annotatorId, label] of labels) {
      const [a] = await q.insert(t.assignments).values({ unitId, annotatorId, status: "submitted" }).returning({ id: t.assignments.id });
      await q.insert(t.annotations).values({ assignmentId: a.id, label, status: "submitted" });
    }
    return {
      projectId: project.id,
      datasetId: ds.id,
      ada: ada.id,
      q1: q1.id,
      q2: q2.id,
      q3: q3.id,
      c1: c1.id,
      c2: c2.id,
      c3: c3.id,
      r1: r1.id,
      u1: units[0].id,
      appropriatenessTask: appropriateness.id,
    };
  });
}

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`curation on ${dialect}`, () => {
    let ids: Ids;
    let d: Dal;
    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "curation.db");
      else {
        testPg = await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("curation_dialects");
      }
      d = await initDal();
      ids = await seed(d);
    });

    it("browses and shows an item: case-insensitive search, LIKE wildcards as text, numeric counts", async () => {
      const ds = await findDataset(ids.projectId, ids.datasetId);
      expect(ds?.name).toBe("Geo Bench");
      expect(await findDataset(ids.projectId + 1000, ids.datasetId)).toBeUndefined();
      // "PARIS" is found in g-001's checklist, whatever the case.
      const paris = await browseItems(ids.datasetId, { q: "PARIS", domain: "", page: 1 });
      expect(paris.total).toBe(1);
      expect(paris.rows.map((r) => [r.sourceId, r.checklistCount, r.responseCount])).toEqual([["g-001", 3, 1]]);
      // "50%" is the text 50%, not "50" followed by anything.
      expect((await browseItems(ids.datasetId, { q: "50%", domain: "", page: 1 })).rows.map((r) => r.sourceId)).toEqual(["g-002"]);
      const all = await browseItems(ids.datasetId, { q: "", domain: "Geo", page: 1 });
      expect([all.total, all.pages, all.rows.map((r) => r.sourceId)]).toEqual([2, 1, ["g-001", "g-003"]]);
      expect(all.domains).toEqual([
        { domain: "Geo", n: 2 },
        { domain: "Math", n: 1 },
      ]);
      const detail = await itemDetail(ids.datasetId, ids.q1);
      expect(detail?.checklist.map((c) => c.id)).toEqual([ids.c1, ids.c2, ids.c3]);
      expect(detail?.judges).toEqual(["j"]);
      expect(detail?.verdicts).toEqual({ [ids.r1]: { j: { [String(ids.c1)]: "Yes", whole: "8" } } });
      expect(detail?.references.map((r) => [r.version, r.isCurrent])).toEqual([[1, true]]);
      expect(await itemDetail(ids.datasetId + 1000, ids.q1)).toBeNull();
    });

    it("an edit stales the old version's labels and verdicts; sending them back moves the unit to the new version", async () => {
      const edited = await editChecklistItem(
        ids.c1,
        { text: "Does the response name Paris, France?" },
        { userId: ids.ada, reason: "precise" },
      );
      // Two labels on c1's unit, one verdict on c1.
      expect(edited.stale).toEqual({ annotations: 2, verdicts: 1 });
      await expect(
        editChecklistItem(edited.id, { text: "Does the response name Paris, France?" }, { userId: ids.ada, reason: "x" }),
      ).rejects.toThrow("Nothing changed.");
      expect(await staleSummary(ids.projectId, { itemId: ids.q1 })).toEqual({ assignments: 2, units: 1, inClosedTasks: 0 });
      expect(await requeueStale(ids.projectId, { itemId: ids.q1 })).toEqual({ assignments: 2, units: 1, moved: 1 });
      const u = d.t.units;
      expect(await d.q.select({ ck: u.checklistItemId }).from(u).where(eq(u.id, ids.u1))).toEqual([{ ck: edited.id }]);
      const a = d.t.assignments;
      expect((await d.q.select({ s: a.status }).from(a).where(eq(a.unitId, ids.u1))).map((r) => r.s)).toEqual(["pending", "pending"]);
      // Nothing stale is left submitted, so a second call sends nothing back.
      expect(await requeueStale(ids.projectId, { itemId: ids.q1 })).toEqual({ assignments: 0, units: 0, moved: 0 });
      ids.c1 = edited.id;
    });

    it("a new reference stales the labels of the task that shows it and the whole-response scores only", async () => {
      const r = await setReference(ids.q1, "Paris is the capital of France.", { userId: ids.ada, reason: "fuller" });
      // The satisfaction task with showReference: one label; the one without it and the appropriateness task: none.
      // The whole-response score of r1: one verdict (the checklist verdict on c1 was already stale).
      expect([r.version, r.stale]).toEqual([2, { annotations: 1, verdicts: 1 }]);
      await expect(setReference(ids.q1, " Paris is the capital of France. ", { userId: ids.ada, reason: "again" })).rejects.toThrow(
        /already the current reference/,
      );
    });

    it("weights, order and the item page: flags, live and retired checklist, references newest first", async () => {
      const stored = await reweightChecklist(ids.q1, { [ids.c1]: 1, [ids.c2]: 1, [ids.c3]: 2 }, { userId: ids.ada, reason: "weigh" });
      expect(stored).toEqual({ [ids.c1]: 0.25, [ids.c2]: 0.25, [ids.c3]: 0.5 });
      await reorderChecklist(ids.q1, [ids.c3, ids.c1, ids.c2], { userId: ids.ada, reason: "most important first" });
      await expect(reorderChecklist(ids.q1, [ids.c3, ids.c1], { userId: ids.ada, reason: "x" })).rejects.toThrow(/exactly once/);
      const { dataset, item } = await findItemOfDataset(ids.projectId, ids.datasetId, ids.q1);
      const view = await itemCurationView(ids.projectId, dataset!, item!);
      expect(view.active.map((c) => [c.id, c.position, c.weight])).toEqual([
        [ids.c3, 0, 0.5],
        [ids.c1, 1, 0.25],
        [ids.c2, 2, 0.25],
      ]);
      // The version the edit replaced is history, not a retired item.
      expect(view.retired).toEqual([]);
      expect(view.weighted).toBe(true);
      // Both annotators rejected c2.
      expect(view.flags.filter((f) => f.kind === "inappropriate").map((f) => f.checklistItemId)).toEqual([ids.c2]);
      expect(view.references.map((r) => [r.version, r.isCurrent, r.by])).toEqual([
        [2, true, "Ada"],
        [1, false, null],
      ]);
      expect(view.history.map((h) => h.action)).toEqual(["reorder", "reweight", "edit", "edit"]);
      expect(view.stale).toEqual({ assignments: 1, units: 1, inClosedTasks: 0 });
    });

    it("an item edit, a promotion, freezing, the next version and the release", async () => {
      const e = await editItem(ids.q2, { query: "What is 50% of 80? Give a number." }, { userId: ids.ada, reason: "ask for a number" });
      // g-002 has a response but no verdicts and no units.
      expect(e).toEqual({ version: 2, stale: { annotations: 0, verdicts: 0 } });
      const p = await promoteResponse(ids.r1, { userId: ids.ada, reason: "annotators preferred it", justification: [7] });
      expect(p.version).toBe(3);
      await freezeDataset(ids.datasetId, { userId: ids.ada, reason: "v1" });
      await expect(editItem(ids.q2, { subject: "Percent" }, { userId: ids.ada, reason: "x" })).rejects.toThrow(CurationError);
      await expect(editItem(ids.q2, { subject: "Percent" }, { userId: ids.ada, reason: "x" })).rejects.toThrow(/frozen as a release/);
      const next = await startNextVersion(ids.datasetId, { userId: ids.ada, reason: "v2" });
      expect(next.version).toBe(2);
      await expect(startNextVersion(ids.datasetId, { userId: ids.ada, reason: "again" })).rejects.toThrow(/Version 2 already exists/);
      const v1 = await releaseLines(ids.datasetId);
      expect(await releaseLines(next.id)).toEqual(v1);
      expect(v1.map((l) => [l.id, l.item_version, l.reference, l.reference_version])).toEqual([
        ["g-001", 1, "The capital of France is Paris.", 3],
        ["g-002", 2, "40.", 1],
        ["g-003", 1, null, null],
      ]);
      expect(v1[0].checklist).toEqual([
        { text: "Is the response one sentence long?", weight: 0.5, version: 1 },
        { text: "Does the response name Paris, France?", weight: 0.25, version: 2 },
        { text: "Does the response mention the Seine?", weight: 0.25, version: 1 },
      ]);
      expect(v1[0].metadata).toEqual({});
      const log = await releaseChangelog(ids.datasetId);
      expect(log).toMatch(/^# Geo Bench — version 1\n\nReleased \d{4}-\d{2}-\d{2}T/);
      // The edits above on version 1: checklist edit, reference, reweight, reorder, item edit, promotion, freeze.
      expect(log).toContain("## Changes (7)");
      expect(log).toContain(
        '· g-001 · Checklist item edited (v1 → v2): "Does the response name Paris?" → "Does the response name Paris, France?" — Ada: precise',
      );
      expect(log).toContain("· g-001 · A model response was promoted to reference (v3), justified by 1 annotation(s): 7 — Ada");
      expect(log).toContain("· g-002 · Item edited (v1 → v2): query — Ada: ask for a number");
      expect(log).toContain("Version 1 frozen as a release — Ada: v1");
      ids.datasetId = next.id;
    });

    it("back-checks and drafts against the endpoint, every call logged as done through the shared limits", async () => {
      const [provider] = await d.tx((q) =>
        q
          .insert(d.t.providers)
          .values({
            projectId: ids.projectId,
            name: "judge",
            kind: "openai-compatible",
            baseUrl: fake.baseUrl,
            model: "judge-x",
            concurrency: 1,
            settings: { maxRetries: 0, timeoutMs: 5000 },
          })
          .returning({ id: d.t.providers.id }),
      );
      // The version-2 copy of g-001 has three checklist items: the judge answers the second No.
      fake.setScript(() => "Q1: Yes\nQ2: No\nQ3: Yes");
      const summary = await runBackCheck({ projectId: ids.projectId, datasetId: ids.datasetId, providerId: provider.id, userId: ids.ada });
      expect(summary).toEqual({ items: 3, checked: 1, flagged: 1, unparsed: 0, failedCalls: [] });
      expect(lastUserText(fake.requests.at(-1)!.body)).toContain("The capital of France is Paris.");
      const ev = d.t.curationEvents;
      const events = await d.q
        .select({ after: ev.after, reason: ev.reason })
        .from(ev)
        .where(and(eq(ev.datasetId, ids.datasetId), eq(ev.action, "back-check")));
      expect(events).toHaveLength(1);
      expect(events[0].reason).toBe("Back-check of reference v3: 1 item(s) answered No");
      expect(Object.values((events[0].after as { answers: Record<string, string> }).answers)).toEqual(["Yes", "No", "Yes"]);

      const items = d.t.items;
      const [g1] = await d.q
        .select({ id: items.id })
        .from(items)
        .where(and(eq(items.datasetId, ids.datasetId), eq(items.sourceId, "g-001")));
      fake.setScript(() => "['Does the response name Paris?', 'Does the response say it is the capital?']");
      const draft = await draftChecklist({ projectId: ids.projectId, itemId: g1.id, providerId: provider.id });
      expect(draft.ok && draft.items).toEqual(["Does the response name Paris?", "Does the response say it is the capital?"]);

      const pc = d.t.providerCalls;
      const calls = await d.q
        .select({ state: pc.state, status: pc.status, owner: pc.owner })
        .from(pc)
        .where(eq(pc.providerId, provider.id))
        .orderBy(asc(pc.id));
      const owner = `curation-${os.hostname()}-${process.pid}`;
      expect(calls).toEqual([
        { state: "done", status: 200, owner },
        { state: "done", status: 200, owner },
      ]);
    });
  });
}
