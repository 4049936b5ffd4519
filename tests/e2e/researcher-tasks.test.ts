/**
 * Researcher task and dataset pages in real Chromium: stale labels after a
 * curation edit go back to their annotators, who see the new text; tasks are
 * deleted with confirmation while nothing is labelled and archived once labels
 * exist; the dataset browser counts each item's checklist and responses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
let db: Db;
let benchId: number;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const pageErrors: string[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  benchId = db.select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => pageErrors.push(`${browser.page.url()}: ${e.message}`));
});

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

const taskNamed = (name: string) => db.select().from(schema.tasks).where(eq(schema.tasks.name, name)).get()!;
const accountOf = (userId: number) => {
  const email = db.select().from(schema.users).where(eq(schema.users.id, userId)).get()!.email;
  return DEMO_ACCOUNTS.find((a) => a.email === email)!;
};

/** A submitted unit of the response-satisfaction demo task, with its annotators. */
function submittedUnit(taskId: number, skipItems: number[] = []) {
  const rows = db
    .select({
      unitId: schema.units.id,
      itemId: schema.units.itemId,
      checklistItemId: schema.units.checklistItemId,
      annotatorId: schema.assignments.annotatorId,
    })
    .from(schema.units)
    .innerJoin(schema.assignments, eq(schema.assignments.unitId, schema.units.id))
    .where(and(eq(schema.units.taskId, taskId), eq(schema.assignments.status, "submitted")))
    .orderBy(asc(schema.units.position))
    .all()
    .filter((r) => !skipItems.includes(r.itemId));
  return rows[0];
}

describe("stale labels", () => {
  it("after an item edit, go back to their annotators, who see the new text", async () => {
    const { page } = browser;
    const task = taskNamed("Does the response satisfy the checklist item?");
    const unit = submittedUnit(task.id);
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/curation/${benchId}/items/${unit.itemId}`);

    // An edit without a reason: the message beside the reason field, focus on it, nothing changed.
    const prompt = page.locator('textarea[name="query"]');
    const newPrompt = `${await prompt.inputValue()}\n\nAnswer in at most 200 words.`;
    await prompt.fill(newPrompt);
    await page.getByRole("button", { name: "Save as new item version" }).click();
    await expect.poll(() => page.locator("#item-reason-error").textContent()).toBe("Say why; it goes into the changelog.");
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.getAttribute("aria-label")))
      .toBe("Reason for the item edit");
    expect(db.select().from(schema.items).where(eq(schema.items.id, unit.itemId)).get()!.version).toBe(1);

    await page.getByLabel("Reason for the item edit").fill("Word limit added");
    await page.getByRole("button", { name: "Save as new item version" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/^Item is now version 2; \d+ label\(s\)/);
    expect(await page.getByTestId("stale-labels").textContent()).toMatch(
      /submitted labels? on \d+ units? of this item judged an older version/,
    );

    // The task page counts them and sends them back.
    await page.goto(`${app.url}/p/demo/tasks/${task.id}`);
    const staleAssignments = () =>
      db.all<{ id: number; status: string }>(sql`SELECT a.id, a.status FROM assignments a JOIN units u ON u.id = a.unit_id
        WHERE u.task_id = ${task.id} AND u.item_id = ${unit.itemId}
          AND (SELECT an.stale_at FROM annotations an WHERE an.assignment_id = a.id AND an.status = 'submitted' ORDER BY an.revision DESC LIMIT 1) IS NOT NULL`);
    const before = staleAssignments();
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((a) => a.status === "submitted")).toBe(true);
    expect(await page.getByTestId("stale-labels").textContent()).toContain(`${before.length} submitted label`);
    await page.getByRole("button", { name: /^Send \d+ stale units? back to/ }).click();
    await expect
      .poll(() => page.getByRole("status").textContent())
      .toBe(
        `Sent ${before.length} stale labels on ${
          new Set(
            db
              .select({ u: schema.units.id })
              .from(schema.units)
              .where(and(eq(schema.units.taskId, task.id), eq(schema.units.itemId, unit.itemId)))
              .all()
              .map((r) => r.u),
          ).size
        } units back to their annotators.`,
      );
    expect(staleAssignments().every((a) => a.status === "pending")).toBe(true);
    await expect.poll(() => page.getByTestId("stale-labels").count()).toBe(0);
    // Every earlier revision is kept.
    const kept = db.all<{ n: number }>(
      sql`SELECT COUNT(*) AS n FROM annotations WHERE id IN (SELECT an.id FROM annotations an JOIN assignments a ON a.id = an.assignment_id WHERE a.id IN (${sql.join(
        before.map((b) => sql`${b.id}`),
        sql`, `,
      )}))`,
    )[0].n;
    expect(kept).toBeGreaterThanOrEqual(before.length);

    // The annotator finds the unit back in their queue, with the new prompt.
    const annotator = accountOf(unit.annotatorId);
    await signInAs(page, app.url, annotator.email, annotator.password);
    // Their queue marks exactly their units of the edited item as stale.
    await page.goto(`${app.url}/p/demo/tasks/${task.id}/queue`);
    const mine = db.all<{ unit_id: number }>(sql`SELECT a.unit_id FROM assignments a JOIN units u ON u.id = a.unit_id
      WHERE u.task_id = ${task.id} AND u.item_id = ${unit.itemId} AND a.annotator_id = ${unit.annotatorId} AND a.status = 'pending'
        AND EXISTS (SELECT 1 FROM annotations an WHERE an.assignment_id = a.id AND an.stale_at IS NOT NULL)`);
    expect(mine.map((m) => m.unit_id)).toContain(unit.unitId);
    const marked = await page
      .locator('li[data-stale="true"] a')
      .evaluateAll((as) => as.map((a) => Number(new URL((a as HTMLAnchorElement).href).searchParams.get("unit"))));
    expect(marked.sort((a, b) => a - b)).toEqual(mine.map((m) => m.unit_id).sort((a, b) => a - b));
    await page.goto(`${app.url}/p/demo/tasks/${task.id}/annotate?unit=${unit.unitId}`);
    await expect.poll(async () => (await page.locator("body").innerText()).includes("Answer in at most 200 words.")).toBe(true);
  }, 90_000);

  it("after a checklist edit, move the unit to the item's new version", async () => {
    const { page } = browser;
    const task = taskNamed("Does the response satisfy the checklist item?");
    const edited = db
      .select({ i: schema.items.id })
      .from(schema.items)
      .where(eq(schema.items.version, 2))
      .all()
      .map((r) => r.i);
    const unit = submittedUnit(task.id, edited);
    const old = db.select().from(schema.checklistItems).where(eq(schema.checklistItems.id, unit.checklistItemId!)).get()!;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/curation/${benchId}/items/${unit.itemId}`);
    const n = old.position + 1;
    const newText = `${old.text.replace(/\?$/, "")}, with a worked figure?`;
    await page.getByLabel(`Text of checklist item ${n}`, { exact: true }).fill(newText);
    await page.getByLabel(`Reason for editing item ${n}`, { exact: true }).fill("Ask for the figure");
    await page
      .getByRole("button", { name: "Save as new version" })
      .nth(n - 1)
      .click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/^Saved as a new version; [1-9]\d* label\(s\)/);
    const current = db
      .select()
      .from(schema.checklistItems)
      .where(and(eq(schema.checklistItems.previousId, old.id), isNull(schema.checklistItems.retiredAt)))
      .get()!;
    expect(current.text).toBe(newText);
    // Sent back from the item page.
    await page.getByRole("button", { name: "Send stale units back to their annotators" }).click();
    await expect
      .poll(() => page.getByRole("status").textContent())
      .toMatch(/^Sent \d+ stale labels? on \d+ units? back to their annotators\.$/);
    expect(db.select().from(schema.units).where(eq(schema.units.id, unit.unitId)).get()!.checklistItemId).toBe(current.id);
    const annotator = accountOf(unit.annotatorId);
    await signInAs(page, app.url, annotator.email, annotator.password);
    await page.goto(`${app.url}/p/demo/tasks/${task.id}/annotate?unit=${unit.unitId}`);
    await expect.poll(async () => (await page.locator("body").innerText()).includes("with a worked figure?")).toBe(true);
    expect(pageErrors).toEqual([]);
  }, 90_000);
});

describe("deleting and archiving tasks", () => {
  it("deletes an unlabelled task after confirmation", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/tasks/new`);
    await page.getByLabel("Name").fill("Throwaway");
    await page.getByLabel("Items to sample (blank: all)").fill("1");
    await page.getByRole("button", { name: "Create task" }).click();
    await page.waitForURL(/\/tasks\/\d+$/, { waitUntil: "commit" });
    const taskId = Number(page.url().match(/tasks\/(\d+)$/)![1]);
    expect(db.select().from(schema.units).where(eq(schema.units.taskId, taskId)).all().length).toBeGreaterThan(0);
    await page.getByText("Delete this task…").click();
    // Without the confirmation: refused, the message beside the box, focus on it.
    await page.getByRole("button", { name: "Delete task" }).click();
    await expect
      .poll(() => page.locator("#delete-confirm-error").textContent())
      .toBe("Tick the box to confirm that the task is deleted for good.");
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe("confirm");
    expect(db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()).toBeDefined();
    await page.getByLabel(/Delete “Throwaway” and its \d+ assignments? for good/).check();
    await page.getByRole("button", { name: "Delete task" }).click();
    await page.waitForURL(/\/p\/demo\/tasks$/, { waitUntil: "commit" });
    expect(db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()).toBeUndefined();
    expect(db.select().from(schema.units).where(eq(schema.units.taskId, taskId)).all()).toEqual([]);
    await expect.poll(() => page.getByTestId(`task-${taskId}`).count()).toBe(0);
  }, 90_000);

  it("refuses to delete a labelled task and archives it instead", async () => {
    const { page } = browser;
    const task = taskNamed("Are these checklist items valid criteria?");
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/tasks/${task.id}`);
    expect(await page.getByTestId("delete-refused").textContent()).toMatch(/cannot be deleted: it holds \d+ labels.*Archive it instead/);
    expect(await page.getByRole("button", { name: "Delete task" }).count()).toBe(0);
    // A forged delete is refused by the server too.
    const status = await page.evaluate(async () => {
      const body = new FormData();
      body.set("_csrf", (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value);
      body.set("intent", "delete");
      body.set("confirm", "yes");
      return (await fetch(`${location.pathname}?index`, { method: "POST", body })).status;
    });
    expect(status).toBe(400);
    expect(db.select().from(schema.tasks).where(eq(schema.tasks.id, task.id)).get()!.status).toBe("open");

    await page.getByRole("button", { name: "Archive task" }).click();
    await expect.poll(() => db.select().from(schema.tasks).where(eq(schema.tasks.id, task.id)).get()!.status).toBe("archived");
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Task archived");
    // Labels and reports are kept; annotators no longer see it.
    const labels = db.all<{ n: number }>(
      sql`SELECT COUNT(*) AS n FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id WHERE u.task_id = ${task.id}`,
    )[0].n;
    expect(labels).toBeGreaterThan(0);
    expect((await page.request.get(`${app.url}/p/demo/reports/${task.id}`)).status()).toBe(200);
    const ana = DEMO_ACCOUNTS.find((a) => a.email === "ana@concord.test")!;
    await signInAs(page, app.url, ana.email, ana.password);
    await page.goto(`${app.url}/p/demo/tasks`);
    await page.locator("h1").waitFor();
    expect(await page.getByTestId(`task-${task.id}`).count()).toBe(0);
    expect(await page.locator("[data-testid^='task-']").count()).toBeGreaterThan(0);
  }, 90_000);
});

describe("dataset browser", () => {
  it("counts each item's active checklist items and responses", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/datasets/${benchId}`);
    const rows = page.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(12);
    const expected = db.all<{ source_id: string; c: number; r: number }>(sql`
      SELECT i.source_id,
        (SELECT COUNT(*) FROM checklist_items c WHERE c.item_id = i.id AND c.retired_at IS NULL) AS c,
        (SELECT COUNT(*) FROM responses r WHERE r.item_id = i.id) AS r
      FROM items i WHERE i.dataset_id = ${benchId} ORDER BY i.source_id`);
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent!.trim())));
    expect(shown.map((cells) => [cells[0], Number(cells[4]), Number(cells[5])])).toEqual(expected.map((e) => [e.source_id, e.c, e.r]));
    // Not the same number everywhere: the demo's checklists have 5 to 11 items.
    expect(new Set(expected.map((e) => e.c)).size).toBeGreaterThan(3);
  }, 90_000);
});
