/**
 * Researcher forms in real Chromium: the new-task form shows only the chosen
 * kind's settings; every error appears beside its field, in a sentence (never
 * zod's "Too small: expected …"), and focus moves to the first field in error;
 * the gold-answer form shows the unit's content beside its controls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
let db: Db;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const pageErrors: string[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => pageErrors.push(e.message));
  await signInAs(browser.page, app.url, researcher.email, researcher.password);
});

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

const focusedName = () => browser.page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? null);

describe("new-task form", () => {
  it("shows only the settings of the chosen kind, and says what hiding the reference does", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/tasks/new`);
    const kind = page.getByLabel("Kind");
    // Checklist appropriateness: no models, no sampling plan choice, no best-of-N settings.
    await kind.selectOption({ label: "Checklist appropriateness" });
    await expect.poll(() => page.locator('input[name="models"]').count()).toBe(0);
    expect(await page.locator('select[name="plan"]').count()).toBe(0);
    expect(
      await page.locator('input[name="n"], input[name="allowTies"], input[name="includeReference"], input[name="penaltyReasons"]').count(),
    ).toBe(0);
    expect(await page.locator('input[name="showReference"]').count()).toBe(1);
    // Best-of-N: its own settings, the reference option worded by what it does.
    await kind.selectOption({ label: "Best-of-N / pairwise" });
    await expect.poll(() => page.locator('input[name="n"]').count()).toBe(1);
    expect(await page.locator('input[name="allowTies"]').count()).toBe(1);
    expect(await page.locator('input[name="showReference"], input[name="penaltyReasons"], select[name="strata"]').count()).toBe(0);
    const include = page.locator("label", { has: page.locator('input[name="includeReference"]') });
    expect(await include.textContent()).toMatch(/reference answer as one of the compared responses.*cannot tell which one it is/);
    // Response satisfaction: the plan decides which sampling settings show.
    await kind.selectOption({ label: "Response satisfaction" });
    const plan = page.getByLabel("Sampling plan");
    await expect.poll(() => plan.count()).toBe(1);
    expect(await page.locator('input[name="responsesPerItem"], input[name="perStratum"]').count()).toBe(0);
    await plan.selectOption("all-items-of-sampled-responses");
    await expect.poll(() => page.locator('input[name="responsesPerItem"]').count()).toBe(1);
    await plan.selectOption("stratified");
    await expect.poll(() => page.locator('input[name="perStratum"]').count()).toBe(1);
    expect(await page.locator('input[name="responsesPerItem"]').count()).toBe(0);
    // Writing quality: penalty reasons, no Yes/No reference option.
    await kind.selectOption({ label: "Writing quality" });
    await expect.poll(() => page.locator('input[name="penaltyReasons"]').count()).toBe(1);
    expect(await page.locator('input[name="showReference"], input[name="n"]').count()).toBe(0);
  });

  it("shows seed −3 and items 0 beside their fields in sentences, focus on the first", async () => {
    const { page } = browser;
    const before = db.select().from(schema.tasks).all().length;
    await page.goto(`${app.url}/p/demo/tasks/new`);
    await page.getByLabel("Name").fill("Bad settings");
    await page.getByLabel("Seed").fill("-3");
    await page.getByLabel("Items to sample (blank: all)").fill("0");
    await page.getByRole("button", { name: "Create task" }).click();
    const seedError = page.locator("#seed-error");
    await expect.poll(() => seedError.textContent()).toBe("Seed must be 0 or more.");
    expect(await page.locator("#itemLimit-error").textContent()).toBe("Items to sample must be more than 0.");
    // Each message sits under its own field and is tied to it for assistive technology.
    expect(await page.getByLabel("Seed").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("Seed").getAttribute("aria-describedby")).toBe("seed-error");
    expect(await page.getByLabel("Items to sample (blank: all)").getAttribute("aria-describedby")).toBe("itemLimit-error");
    const seedBox = (await page.getByLabel("Seed").boundingBox())!;
    const errBox = (await seedError.boundingBox())!;
    expect(errBox.y).toBeGreaterThan(seedBox.y);
    expect(errBox.y - (seedBox.y + seedBox.height)).toBeLessThan(40);
    // The first field in error has focus; the summary repeats both.
    await expect.poll(focusedName).toBe("seed");
    const summary = (await page.getByTestId("error-summary").textContent())!;
    expect(summary).toContain("Seed must be 0 or more.");
    expect(summary).toContain("Items to sample must be more than 0.");
    const body = (await page.locator("body").textContent())!;
    expect(body).not.toMatch(/Too (small|big)|expected number|Invalid input/);
    expect(db.select().from(schema.tasks).all().length).toBe(before);

    // Typing at the focused field fixes it; the next error (gold rate) gets focus.
    await page.keyboard.press("Control+A");
    await page.keyboard.type("7");
    await page.getByLabel("Items to sample (blank: all)").fill("");
    await page.getByLabel("Gold rate (0–0.5)").fill("0.9");
    await page.getByRole("button", { name: "Create task" }).click();
    await expect.poll(() => page.locator("#goldRate-error").textContent()).toBe("Gold rate must be 0.5 or less.");
    expect(await page.locator("#seed-error").count()).toBe(0);
    await expect.poll(focusedName).toBe("goldRate");
    expect(await page.getByLabel("Seed").inputValue()).toBe("7");
  });

  it("shows an error the form has no field for (no annotator in the pool)", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/tasks/new`);
    await page.getByLabel("Name").fill("Nobody");
    for (const box of await page.locator('input[name="pool"]').all()) await box.uncheck();
    await page.getByRole("button", { name: "Create task" }).click();
    await expect.poll(() => page.locator("#pool-error").textContent()).toBe("Choose at least one annotator.");
    expect(await page.getByTestId("error-summary").textContent()).toContain("Choose at least one annotator.");
  });
});

describe("gold answers", () => {
  it("are entered beside the unit's item, checklist item and response", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/tasks/new`);
    await page.getByLabel("Name").fill("Gold check");
    await page.getByLabel("Kind").selectOption({ label: "Response satisfaction" });
    await page.getByLabel("Gold rate (0–0.5)").fill("0.2");
    await page.getByRole("button", { name: "Create task" }).click();
    await page.waitForURL(/\/tasks\/\d+$/, { waitUntil: "commit" });
    const taskId = Number(page.url().match(/tasks\/(\d+)$/)![1]);
    const gold = db
      .select()
      .from(schema.units)
      .where(and(eq(schema.units.taskId, taskId), eq(schema.units.isGold, true)))
      .all();
    expect(gold.length).toBeGreaterThan(0);
    const unit = gold[0];
    const item = db.select().from(schema.items).where(eq(schema.items.id, unit.itemId)).get()!;
    const check = db.select().from(schema.checklistItems).where(eq(schema.checklistItems.id, unit.checklistItemId!)).get()!;
    const response = db
      .select()
      .from(schema.responses)
      .where(inArray(schema.responses.id, [unit.responseId!]))
      .get()!;
    const section = page.getByTestId(`gold-unit-${unit.id}`);
    await section.waitFor();
    const content = section.getByTestId("gold-content");
    const text = (await content.innerText()).replace(/\s+/g, " ");
    expect(text).toContain(item.query.replace(/\s+/g, " ").slice(0, 120));
    expect(text).toContain(check.text);
    expect(text).toContain(response.text.replace(/\s+/g, " ").slice(0, 120));
    // The controls sit beside the content, not below it.
    const select = section.getByLabel(`Known answer of unit ${unit.id}`);
    const c = (await content.boundingBox())!;
    const s = (await select.boundingBox())!;
    expect(s.x).toBeGreaterThan(c.x + c.width - 1);
    expect(s.y).toBeLessThan(c.y + c.height);

    // Saving without an answer: the error beside the select, focus on it; nothing stored.
    await section.getByRole("button", { name: "Save answer" }).click();
    await expect.poll(() => section.locator(".field-error").textContent()).toBe("Choose Yes or No as the known answer.");
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.getAttribute("aria-label")))
      .toBe(`Known answer of unit ${unit.id}`);
    expect(db.select().from(schema.units).where(eq(schema.units.id, unit.id)).get()!.goldLabel).toBeNull();
    await select.selectOption("Yes");
    await section.getByRole("button", { name: "Save answer" }).click();
    await expect.poll(() => db.select().from(schema.units).where(eq(schema.units.id, unit.id)).get()!.goldLabel).toBe('"Yes"');
    await expect.poll(() => section.textContent()).toContain("answer set");
    expect(pageErrors).toEqual([]);
  });
});
