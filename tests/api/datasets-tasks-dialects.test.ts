/**
 * The domain functions behind the datasets and tasks endpoints on SQLite and PostgreSQL: item details in keyset
 * pages (every item of the dataset once, in id order, none of another dataset whose ids interleave; each page's
 * items equal to the item page's one-item read), a dataset's versions with numeric counts, the Tasks list for a
 * researcher and an annotator, close/reopen and the refusal of an archived task.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, initDal, type Dal } from "../../app/dal.server";
import { datasetWithVersions, itemDetailOf, itemDetails } from "../../app/benchmark/datasets.server";
import { taskList, taskView } from "../../app/annotation/task-view.server";
import { archiveTask, createTask, findTask, setTaskStatus } from "../../app/annotation/tasks.server";
import { DomainError } from "../../app/errors";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const ITEMS = 30;
let testPg: TestPg | undefined;

afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

type Ids = { projectId: number; bench: number; benchV2: number; noise: number; rhea: number; ana: number; ben: number };

/** Two datasets whose items interleave by id, the first with a checklist, references, responses and verdicts; a v2. */
async function seed(d: Dal): Promise<Ids> {
  const t = d.t;
  return d.tx(async (q) => {
    const [rhea, ana, ben] = await q
      .insert(t.users)
      .values([
        { email: "rhea@x.test", name: "Rhea", passwordHash: "x" },
        { email: "ana@x.test", name: "Ana", passwordHash: "x" },
        { email: "ben@x.test", name: "Ben", passwordHash: "x" },
      ])
      .returning({ id: t.users.id });
    const [project] = await q.insert(t.projects).values({ slug: "p", name: "P" }).returning({ id: t.projects.id });
    await q.insert(t.memberships).values([
      { projectId: project.id, userId: rhea.id, role: "researcher" },
      { projectId: project.id, userId: ana.id, role: "annotator" },
      { projectId: project.id, userId: ben.id, role: "annotator" },
    ]);
    const [bench, noise, benchV2] = await q
      .insert(t.datasets)
      .values([
        { projectId: project.id, name: "bench", version: 1 },
        { projectId: project.id, name: "noise", version: 1 },
        { projectId: project.id, name: "bench", version: 2 },
      ])
      .returning({ id: t.datasets.id });
    const [judge] = await q
      .insert(t.judges)
      .values({ projectId: project.id, name: "judge-a", provider: "x", model: "m" })
      .returning({ id: t.judges.id });
    for (let i = 1; i <= ITEMS; i++) {
      const [item] = await q
        .insert(t.items)
        .values({ datasetId: bench.id, sourceId: `b${i}`, query: `Q${i}`, domain: i % 2 ? "odd" : "even" })
        .returning({ id: t.items.id });
      // An item of another dataset between two of this one's.
      await q.insert(t.items).values({ datasetId: noise.id, sourceId: `n${i}`, query: `N${i}` });
      const checklist = await q
        .insert(t.checklistItems)
        .values([
          { itemId: item.id, text: `C${i}.2`, position: 1 },
          { itemId: item.id, text: `C${i}.1`, position: 0 },
        ])
        .returning({ id: t.checklistItems.id });
      await q.insert(t.references).values([
        { itemId: item.id, text: `R${i} old`, version: 1, isCurrent: false },
        { itemId: item.id, text: `R${i}`, version: 2, isCurrent: true },
      ]);
      const [resp] = await q
        .insert(t.responses)
        .values([
          { itemId: item.id, model: "zeta", turn: 1, text: `Z${i}`, origin: "import", sourceKey: `z${i}` },
          { itemId: item.id, model: "alpha", turn: 1, text: `A${i}`, origin: "import", sourceKey: `a${i}` },
        ])
        .returning({ id: t.responses.id });
      await q.insert(t.verdicts).values([
        { responseId: resp.id, judgeId: judge.id, checklistItemId: checklist[0].id, value: "Yes" },
        { responseId: resp.id, judgeId: judge.id, checklistItemId: checklist[1].id, value: null, parseStatus: "failed" },
      ]);
    }
    return { projectId: project.id, bench: bench.id, benchV2: benchV2.id, noise: noise.id, rhea: rhea.id, ana: ana.id, ben: ben.id };
  });
}

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`datasets and tasks on ${dialect}`, () => {
    let ids: Ids;
    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "datasets-tasks.db");
      else {
        testPg = await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("datasets_tasks_dialects");
      }
      ids = await seed(await initDal());
    });

    it("item details in keyset pages: each item of the dataset once, in id order, as the one-item read gives it", async () => {
      const seen: Awaited<ReturnType<typeof itemDetails>> = [];
      let after = 0;
      for (;;) {
        const page = await itemDetails(ids.bench, { afterId: after, limit: 7 });
        if (page.length === 0) break;
        seen.push(...page);
        after = page[page.length - 1].item.id;
      }
      expect(seen.map((s) => s.item.sourceId)).toEqual(Array.from({ length: ITEMS }, (_, i) => `b${i + 1}`));
      for (const s of seen) expect(await itemDetailOf(ids.bench, s.item.id)).toEqual(s);
      const first = seen[0];
      expect(first.checklist.map((c) => c.text)).toEqual(["C1.1", "C1.2"]);
      expect(first.references.map((r) => [r.text, r.isCurrent])).toEqual([
        ["R1", true],
        ["R1 old", false],
      ]);
      expect(first.responses.map((r) => r.model)).toEqual(["alpha", "zeta"]);
      const zeta = first.responses[1].id;
      expect(first.judges).toEqual(["judge-a"]);
      expect(first.verdicts).toEqual({
        [zeta]: { "judge-a": { [first.checklist[1].id]: "Yes", [first.checklist[0].id]: "unparsed" } },
      });
      // Another dataset's item is not one of this dataset's.
      const noise = await itemDetails(ids.noise, { afterId: 0, limit: 1 });
      expect(await itemDetailOf(ids.bench, noise[0].item.id)).toBeNull();
    });

    it("a dataset with its versions, counts as numbers", async () => {
      const ds = await datasetWithVersions(ids.projectId, ids.bench);
      expect(ds).toMatchObject({ items: ITEMS, checklistItems: 2 * ITEMS, responses: 2 * ITEMS, verdicts: 2 * ITEMS, domains: 2 });
      expect(ds!.versions.map((v) => [v.id, v.version, v.items])).toEqual([
        [ids.bench, 1, ITEMS],
        [ids.benchV2, 2, 0],
      ]);
      expect(await datasetWithVersions(ids.projectId + 1000, ids.bench)).toBeUndefined();
    });

    it("the Tasks list per role, the task's view, close/reopen, and an archived task refused", async () => {
      const { taskId } = await createTask(ids.projectId, ids.rhea, {
        name: "Sat",
        datasetId: ids.bench,
        kind: "response-satisfaction",
        plan: "paper",
        overlap: 1,
        seed: 3,
        pool: [ids.ana],
      });
      const researcher = await taskList(ids.projectId, ids.rhea, "researcher");
      expect(researcher.researcher).toBe(true);
      expect(researcher.tasks.map((t) => [t.id, t.overall.total, t.mine.total])).toEqual([[taskId, ITEMS, 0]]);
      expect((await taskList(ids.projectId, ids.ana, "annotator")).tasks.map((t) => [t.id, t.mine])).toEqual([
        [taskId, { done: 0, total: ITEMS }],
      ]);
      expect((await taskList(ids.projectId, ids.ben, "annotator")).tasks).toEqual([]);

      const task = (await findTask(ids.projectId, taskId))!;
      const view = await taskView(ids.projectId, task);
      expect(view.progress).toMatchObject({ total: ITEMS, done: 0, annotators: [{ name: "Ana", total: ITEMS, pending: ITEMS }] });
      expect(view.pool).toEqual([ids.ana]);

      await setTaskStatus(ids.projectId, taskId, "closed");
      expect((await findTask(ids.projectId, taskId))!.status).toBe("closed");
      await setTaskStatus(ids.projectId, taskId, "open");
      expect((await findTask(ids.projectId, taskId))!.status).toBe("open");
      await archiveTask(ids.projectId, taskId);
      const refused = await setTaskStatus(ids.projectId, taskId, "closed").catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DomainError);
      expect((refused as DomainError).status).toBe(409);
      expect((await findTask(ids.projectId, taskId))!.status).toBe("archived");
      await expect(setTaskStatus(ids.projectId, taskId + 1000, "closed")).rejects.toThrow("No such task.");
    });
  });
}
