/**
 * Memoised reports are never stale: task_data_versions and project_verdict_versions
 * (kept by the triggers of migration 0003) change with every report input, whoever
 * writes it, and the report pages show the new figures on the next request.
 */
import fs from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { nextUnitId, saveAnnotation } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import { judgeReportFor, taskReport } from "../../app/reports/report.server";
import { MIGRATIONS_DIR, openDatabase, schema } from "../../db/client";
import { tempDir, useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";

const { db } = useTempDatabase();
const form = (o: Record<string, string>) => new URLSearchParams(o);

let projectId: number;
let datasetId: number;
let taskId: number;
const annotators: number[] = [];

const dataVersion = () =>
  db().select({ v: schema.taskDataVersions.version }).from(schema.taskDataVersions).where(eq(schema.taskDataVersions.taskId, taskId)).get()!
    .v;
const verdictVersion = () =>
  db()
    .select({ v: schema.projectVerdictVersions.version })
    .from(schema.projectVerdictVersions)
    .where(eq(schema.projectVerdictVersions.projectId, projectId))
    .get()!.v;
const report = async () => (await taskReport(projectId, taskId, { rule: "majority", delta: 0.05, slug: "fresh" }))!;
const judges = async () => (await judgeReportFor(projectId, taskId, { rule: "majority", delta: 0.05 }))!;
const submit = async (who: number, unitId: number, answer: "Yes" | "No", intent: "submit" | "draft" = "submit") =>
  await saveAnnotation({
    task: (await findTask(projectId, taskId))!,
    userId: who,
    unitId,
    intent,
    form: form({ answer, durationMs: "1500" }),
  });

beforeAll(async () => {
  projectId = makeProject("fresh").id;
  datasetId = (await makeSyntheticDataset(projectId, { items: 6 })).datasetId;
  const researcher = await makeUser();
  await addMember(projectId, researcher.id, "researcher");
  for (let i = 0; i < 2; i++) {
    const u = await makeUser();
    await addMember(projectId, u.id, "annotator");
    annotators.push(u.id);
  }
  taskId = (
    await createTask(projectId, researcher.id, {
      name: "fresh",
      datasetId,
      kind: "response-satisfaction",
      overlap: 2,
      seed: 4,
      pool: annotators,
    })
  ).taskId;
  // Both annotators label every unit "Yes".
  for (const who of annotators) {
    for (let u = await nextUnitId(taskId, who); u != null; u = await nextUnitId(taskId, who))
      expect(await submit(who, u, "Yes")).toMatchObject({ ok: true, status: "submitted" });
  }
});

describe("task_data_versions", () => {
  it("moves with each submitted label and not with drafts", async () => {
    const before = dataVersion();
    expect(before).toBeGreaterThanOrEqual(12); // 6 units × 2 annotators, one bump per submitted label
    const units = db().select({ id: schema.units.id }).from(schema.units).where(eq(schema.units.taskId, taskId)).all();
    // A revision is a submit on a submitted unit: a new revision row, one bump.
    expect(await submit(annotators[0], units[0].id, "No")).toMatchObject({ ok: true, revision: 2 });
    expect(dataVersion()).toBe(before + 1);
    // A draft row (inserted directly, as an autosave would) changes no figure and no version.
    const asg = db()
      .select({ id: schema.assignments.id })
      .from(schema.assignments)
      .where(eq(schema.assignments.unitId, units[1].id))
      .all()[0];
    db().insert(schema.annotations).values({ assignmentId: asg.id, revision: 9, label: "No", status: "draft" }).run();
    expect(dataVersion()).toBe(before + 1);
  });

  it("a memoised agreement report shows a revised label on the next request", async () => {
    const first = await report();
    const agreeBefore = first.tables.iaa.rows.find((r) => r.statistic === "Percent agreement")!.value as number;
    const units = db().select({ id: schema.units.id }).from(schema.units).where(eq(schema.units.taskId, taskId)).all();
    expect(await submit(annotators[1], units[2].id, "No")).toMatchObject({ ok: true, status: "submitted" });
    const after = (await report()).tables.iaa.rows.find((r) => r.statistic === "Percent agreement")!.value as number;
    expect(after).toBeLessThan(agreeBefore);
  });

  it("changes when a label is changed by hand in SQL (stale marking, fixes), or an item's domain is edited", async () => {
    const v0 = dataVersion();
    db().run(sql`UPDATE annotations SET stale_at = unixepoch() WHERE status = 'submitted' AND id = (SELECT MIN(id) FROM annotations)`);
    expect(dataVersion()).toBe(v0 + 1);
    const domainsBefore = (await report()).tables.breakdowns.rows.filter((r) => r.dimension === "Domain").map((r) => r.value);
    expect(domainsBefore).not.toContain("Renamed domain");
    db().run(sql`UPDATE items SET domain = 'Renamed domain' WHERE dataset_id = ${datasetId}`);
    expect(dataVersion()).toBeGreaterThan(v0 + 1);
    const domainsAfter = (await report()).tables.breakdowns.rows.filter((r) => r.dimension === "Domain").map((r) => r.value);
    expect(domainsAfter).toEqual(["Renamed domain"]);
  });
});

describe("project_verdict_versions", () => {
  it("a memoised judge report shows a judge added by a run, and its new verdicts, on the next request", async () => {
    expect((await judges()).judges).toEqual([]);
    const v0 = verdictVersion();
    const judge = db()
      .insert(schema.judges)
      .values({ projectId, name: "late-judge", provider: "replay", model: "Late-1B" })
      .returning()
      .get();
    expect(verdictVersion()).toBe(v0 + 1);
    expect((await judges()).judges).toEqual([]); // a judge without verdicts on labelled units is not listed
    const units = db()
      .select({ responseId: schema.units.responseId, checklistItemId: schema.units.checklistItemId })
      .from(schema.units)
      .where(eq(schema.units.taskId, taskId))
      .all();
    for (const u of units)
      db()
        .insert(schema.verdicts)
        .values({ judgeId: judge.id, responseId: u.responseId!, checklistItemId: u.checklistItemId, value: "Yes", parseStatus: "ok" })
        .run();
    expect(verdictVersion()).toBe(v0 + 1 + units.length);
    const page = await judges();
    expect(page.judges.map((j) => j.name)).toEqual(["late-judge"]);
    // 6 units, of which 2 were revised above into a Yes/No tie: no majority label, so n = 4.
    expect(page.tables.judges.rows[0].n).toBe(units.length - 2);
  });
});

describe("the counters' rows", () => {
  it("exist for tasks and projects made before the migration (backfilled) and after it (a trigger)", () => {
    // A database at migration 0002, with a task, then brought up to date.
    const dir = tempDir();
    const before = path.join(dir, "migrations-0002");
    fs.mkdirSync(path.join(before, "meta"), { recursive: true });
    const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_DIR, "meta", "_journal.json"), "utf8")) as {
      entries: { idx: number; tag: string }[];
    };
    const old = journal.entries.filter((e) => e.idx <= 2);
    for (const e of old) fs.copyFileSync(path.join(MIGRATIONS_DIR, `${e.tag}.sql`), path.join(before, `${e.tag}.sql`));
    fs.writeFileSync(path.join(before, "meta", "_journal.json"), JSON.stringify({ ...journal, entries: old }));
    const file = path.join(dir, "old.db");
    const early = openDatabase(file, { migrationsFolder: before });
    early.run(sql`INSERT INTO projects (slug, name) VALUES ('old', 'Old')`);
    early.run(sql`INSERT INTO datasets (project_id, name) VALUES (1, 'd')`);
    early.run(sql`INSERT INTO tasks (project_id, dataset_id, kind, name) VALUES (1, 1, 'response-satisfaction', 'old task')`);
    early.$client.close();
    const now = openDatabase(file);
    expect(now.select().from(schema.taskDataVersions).all()).toEqual([{ taskId: 1, version: 0 }]);
    expect(now.select().from(schema.projectVerdictVersions).all()).toEqual([{ projectId: 1, version: 0 }]);
    now.run(sql`INSERT INTO tasks (project_id, dataset_id, kind, name) VALUES (1, 1, 'best-of-n', 'new task')`);
    expect(now.select().from(schema.taskDataVersions).all()).toEqual([
      { taskId: 1, version: 0 },
      { taskId: 2, version: 0 },
    ]);
    // Deleting a task deletes its counter.
    now.run(sql`DELETE FROM tasks WHERE id = 2`);
    expect(now.select().from(schema.taskDataVersions).all()).toEqual([{ taskId: 1, version: 0 }]);
    now.$client.close();
  });
});
