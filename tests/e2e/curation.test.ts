/**
 * Reference optimisation end to end in real Chromium: the maintainer creates a
 * blind pairwise task from the curation page, two annotators prefer a model
 * output over the hidden reference with the keyboard, and the maintainer
 * promotes it in one action; the item's reference history shows why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asc, eq } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
let db: Db;
let writingId: number;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const annotators = DEMO_ACCOUNTS.filter((a) => a.role === "annotator").slice(0, 2);

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  writingId = db.select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Writing")).get()!.id;
  browser = await launchBrowser();
});

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

describe("promoting a preferred model output to reference", () => {
  it("runs from task creation to the new reference version", async () => {
    const { page } = browser;
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));

    // 1. The maintainer creates the blind comparison task.
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/curation/${writingId}`);
    await page.getByText("Create a reference-optimisation task").click();
    for (const m of ["Halberd-34B", "Quillon-8B"]) await page.getByLabel(m).uncheck();
    await page.getByLabel("Allow ties").check();
    // Only the first two annotators.
    await page.getByLabel(DEMO_ACCOUNTS.find((a) => a.email === "chen@concord.test")!.name).uncheck();
    await page.getByRole("button", { name: "Create task" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/^Created task \d+ with 8 blind comparisons\.$/);
    const taskId = Number((await page.getByRole("status").textContent())!.match(/task (\d+)/)![1]);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/login$/, { waitUntil: "commit" });

    // 2. Both annotators open the first unit and pick the model output (1–2 keys, Enter).
    const firstUnit = db.select().from(schema.units).where(eq(schema.units.taskId, taskId)).orderBy(asc(schema.units.position)).get()!;
    const modelResponse = firstUnit.responseIds!.find((k) => k !== "reference") as number;
    for (const a of annotators) {
      const user = db.select().from(schema.users).where(eq(schema.users.email, a.email)).get()!;
      const assignment = db
        .select()
        .from(schema.assignments)
        .where(eq(schema.assignments.unitId, firstUnit.id))
        .all()
        .find((x) => x.annotatorId === user.id)!;
      const key = String(assignment.shownOrder!.indexOf(modelResponse) + 1);
      await signInAs(page, app.url, a.email, a.password);
      const res = await page.goto(`${app.url}/p/demo/tasks/${taskId}/annotate?unit=${firstUnit.id}`);
      await page.locator('.annotate-grid[data-ready="true"]').waitFor();
      // The HTML as served (with the loader data Remix embeds) and the hydrated page.
      const html = (await res!.text()) + (await page.content());
      for (const model of ["Orrery", "Halberd", "Quillon"]) expect(html).not.toContain(model);
      // Which of the two is the reference is not in the page or its data (the guidelines may say one might be).
      expect(html).not.toMatch(/"reference"(?!\s*:)/); // as a value, e.g. a shown-order entry
      expect(html).not.toMatch(/data-[a-z-]*="reference"/);
      await page.keyboard.press(key);
      await page.keyboard.press("Enter");
      await expect
        .poll(() => db.select().from(schema.assignments).where(eq(schema.assignments.id, assignment.id)).get()!.status)
        .toBe("submitted");
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(/\/login$/, { waitUntil: "commit" });
    }

    // 3. The maintainer sees the candidate and promotes it.
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/curation/${writingId}`);
    const refText = db.select().from(schema.responses).where(eq(schema.responses.id, modelResponse)).get()!.text;
    const row = page
      .getByTestId("candidates")
      .locator("tbody tr")
      .filter({ hasText: refText.slice(0, 80) })
      .filter({ hasText: `task ${taskId}` });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain("2 for it · 0 for the reference");
    await row.getByLabel("Reason").fill("Both annotators preferred the Orrery draft");
    await row.getByRole("button", { name: "Promote to reference" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/^Promoted to reference version 2;/);
    await expect.poll(() => row.textContent()).toContain("promoted");

    // 4. The item's reference history tells who, why and which annotations.
    await row.getByRole("link").first().click();
    await page.waitForURL(/\/items\/\d+$/, { waitUntil: "commit" });
    const history = page.locator("table").filter({ hasText: "Source" }).locator("tbody tr");
    await expect.poll(() => history.count()).toBe(2);
    const top = (await history.first().textContent())!;
    expect(top).toContain("v2");
    expect(top).toContain(`promoted (response ${modelResponse})`);
    expect(top).toContain("Rhea Researcher");
    expect(top).toContain("Both annotators preferred the Orrery draft");
    expect(top).toMatch(/annotations \d+, \d+/);
    expect(await page.getByLabel("Reference text").inputValue()).toBe(refText);
    expect(errors, errors.slice(0, 3).join("\n")).toEqual([]);
  });
});
