/**
 * In real Chromium, on the demo project: the blinding warning covers every text of a
 * task kind's settings that annotators read (the Likert question and its anchors,
 * writing quality's penalty reasons), beside the field, which takes focus, and nothing
 * is saved until "Save anyway"; an annotator of several projects lands, after sign-in,
 * on My tasks across those projects (one project: straight to its task list).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask } from "../../app/annotation/tasks.server";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { modelOfProject } from "../support/factory";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
let db: Db;
let projectId: number;
/** The task Ana (annotator of the demo project) also has in a second project. */
let otherTaskId = 0;
const account = (email: string) => DEMO_ACCOUNTS.find((a) => a.email === email)!;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const ana = account("ana@concord.test");
const ben = account("ben@concord.test");
const pageErrors: string[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    // A second project where Ana is an annotator too, with one task of hers.
    const other = seeded.insert(schema.projects).values({ slug: "second", name: "Second Lab" }).returning({ id: schema.projects.id }).get();
    const anaId = seeded.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, ana.email)).get()!.id;
    const rheaId = seeded.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, researcher.email)).get()!.id;
    seeded.insert(schema.memberships).values({ projectId: other.id, userId: anaId, role: "annotator" }).run();
    seeded.insert(schema.memberships).values({ projectId: other.id, userId: rheaId, role: "researcher" }).run();
    const { datasetId } = await makeSyntheticDataset(other.id, { items: 2, checklist: 1 }, seeded);
    otherTaskId = (
      await createTask(
        other.id,
        rheaId,
        { name: "Second lab: satisfaction", datasetId, kind: "response-satisfaction", overlap: 1, pool: [anaId] },
        seeded,
      )
    ).taskId;
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  projectId = db.select({ id: schema.projects.id }).from(schema.projects).where(eq(schema.projects.slug, "demo")).get()!.id;
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => pageErrors.push(e.message));
  // Five test processes may share two cores: waiting is not what these tests measure.
  browser.page.setDefaultTimeout(60_000);
  browser.page.setDefaultNavigationTimeout(60_000);
}, 120_000);

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

const focused = () => browser.page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? null);
/** A model whose responses are in the demo project (annotators must never read its name). */
const demoModel = () => modelOfProject(db, projectId);
const tasksNamed = (name: string) =>
  db
    .select({ id: schema.tasks.id, config: schema.tasks.config })
    .from(schema.tasks)
    .where(and(eq(schema.tasks.projectId, projectId), eq(schema.tasks.name, name)))
    .all();

async function newTaskOfKind(title: string) {
  const { page } = browser;
  await page.goto(`${app.url}/p/demo/tasks/new`);
  const kind = page.locator('select[name="kind"]');
  // The kind's own fields appear once the page's script owns the select.
  await hydrated(kind, 60_000);
  await kind.selectOption({ label: title });
}

describe("the blinding warning covers the texts of a kind's settings", () => {
  it("a Likert question or anchor naming a model is held back beside its field, which takes focus", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    const model = demoModel();
    expect(model).toBeTruthy();
    const name = "Convincingness, round four";
    await newTaskOfKind("Likert 1–7 with rationale");
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Question (annotators answer it for each response)").fill(`Is this as convincing as ${model} usually is?`);
    await page.getByLabel("Anchor of 1").fill("Not at all");
    await page.getByLabel("Anchor of 7").fill(`Like ${model.toLowerCase()}`);
    await page.getByRole("button", { name: "Create task", exact: true }).click();
    const question = page.locator('.field-error[data-field="settings.question"]');
    await expect.poll(() => question.textContent()).toContain(`"${model}"`);
    expect(await question.textContent()).toMatch(/Annotators see this text.*no longer be blind/);
    expect(await page.locator('.field-error[data-field="settings.highAnchor"]').textContent()).toContain(`"${model}"`);
    // The neutral fields carry no warning; the first field in error has the keyboard.
    expect(await page.locator('.field-error[data-field="name"]').count()).toBe(0);
    expect(await page.locator('.field-error[data-field="settings.lowAnchor"]').count()).toBe(0);
    await expect.poll(focused).toBe("settings.question");
    expect(tasksNamed(name)).toHaveLength(0);
    // Saving anyway creates the task with the question as written.
    await page.getByRole("button", { name: "Save anyway" }).click();
    await page.waitForURL(/\/p\/demo\/tasks\/\d+$/);
    const saved = tasksNamed(name);
    expect(saved).toHaveLength(1);
    expect((saved[0].config as { question?: string }).question).toBe(`Is this as convincing as ${model} usually is?`);
  });

  it("a writing-quality penalty reason naming a model is held back beside the penalty reasons", async () => {
    const { page } = browser;
    const model = demoModel();
    const name = "Writing, round four";
    await newTaskOfKind("Writing quality");
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Penalty reasons (comma-separated)").fill(`too long, sounds like ${model}`);
    await page.getByRole("button", { name: "Create task", exact: true }).click();
    const reasons = page.locator('.field-error[data-field="penaltyReasons"]');
    await expect.poll(() => reasons.textContent()).toContain(`"${model}"`);
    await expect.poll(focused).toBe("penaltyReasons");
    expect(tasksNamed(name)).toHaveLength(0);
    // Neutral reasons go through without a warning.
    await page.getByLabel("Penalty reasons (comma-separated)").fill("too long, off topic");
    await page.getByRole("button", { name: "Create task", exact: true }).click();
    await page.waitForURL(/\/p\/demo\/tasks\/\d+$/);
    expect(tasksNamed(name)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });
});

describe("where an annotator lands after signing in", () => {
  it("an annotator of several projects lands on My tasks across them, each a click from labelling", async () => {
    const { page } = browser;
    await signInAs(page, app.url, ana.email, ana.password);
    await page.waitForURL((u) => u.pathname === "/projects");
    await page.getByRole("heading", { level: 1, name: "My tasks" }).waitFor();
    const list = page.getByTestId("my-tasks");
    // Her tasks of both projects, each naming its project.
    const other = list.getByTestId(`my-task-${otherTaskId}`);
    expect(await other.textContent()).toContain("Second Lab");
    const hers = db.$client
      .prepare("select count(*) as n from assignments a join units u on u.id = a.unit_id where u.task_id = ?")
      .get(otherTaskId) as { n: number };
    expect(hers.n).toBeGreaterThan(0);
    expect(await other.getByRole("progressbar").getAttribute("aria-valuemax")).toBe(String(hers.n));
    const demoTasks = db
      .select({ id: schema.tasks.id })
      .from(schema.tasks)
      .innerJoin(schema.units, eq(schema.units.taskId, schema.tasks.id))
      .innerJoin(schema.assignments, eq(schema.assignments.unitId, schema.units.id))
      .innerJoin(schema.users, eq(schema.users.id, schema.assignments.annotatorId))
      .where(and(eq(schema.tasks.projectId, projectId), eq(schema.users.email, ana.email)))
      .groupBy(schema.tasks.id)
      .all();
    expect(demoTasks.length).toBeGreaterThan(0);
    for (const t of demoTasks) expect(await list.getByTestId(`my-task-${t.id}`).textContent()).toContain("Concord Demo");
    // Work left comes first; one click opens the unit to label.
    expect(await list.locator("[data-testid^='my-task-']").first().getByRole("link", { name: "Continue labelling" }).count()).toBe(1);
    await other.getByRole("link", { name: "Continue labelling" }).click();
    await page.waitForURL((u) => u.pathname === `/p/second/tasks/${otherTaskId}/annotate`);
    await page.locator('.annotate-grid[data-ready="true"]').waitFor();
  });

  it("an annotator of one project still goes straight to their tasks there", async () => {
    const { page } = browser;
    await signInAs(page, app.url, ben.email, ben.password);
    await page.waitForURL((u) => u.pathname === "/p/demo/tasks");
    await page.getByRole("heading", { name: "My tasks" }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});
