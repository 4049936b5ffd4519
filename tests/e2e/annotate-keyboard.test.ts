/**
 * The annotate page's keyboard and flow in real Chromium, keyboard only: Enter
 * presses the focused button or follows the focused link and submits only when
 * nothing is focused; ↑/↓ scroll, J/K and ←/→ move between units; a skip refused
 * for want of a reason puts the keyboard in the reason field (typed letters are
 * not shortcuts); a changed answer on a submitted unit is saved as a revision
 * (or knowingly discarded) before leaving; a draft typed just before moving on
 * is not lost. Without JavaScript, Skip and the guidelines still work.
 */
import Database from "better-sqlite3";
import { chromium, type Browser, type Page } from "playwright-core";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { myQueue, saveAnnotation } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { openDatabase } from "../../db/client";
import * as schema from "../../db/schema";
import { startApp, type RunningApp } from "../support/app-server";
import { CHROMIUM, CHROMIUM_ARGS } from "../support/browser";

const PASSWORD = "annotate-keys-e2e-2026";
/** Long enough that the page scrolls in a 1000 × 500 window. */
const LONG = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n");

let app: RunningApp;
let browser: Browser;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;

/**
 * Each test labels as an annotator of its own, in a queue no other test touches,
 * so any one test runs alone (`vitest run -t NAME`) as well as with the others.
 */
const ROLES = ["keys", "noJs", "skip", "revise", "draft"] as const;
type Role = (typeof ROLES)[number];
const who: Record<Role, { id: number; email: string; units: number[] }> = {} as never;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    scenario = await seedAnnotationScenario(db, {
      annotators: ROLES.length,
      items: 5 * ROLES.length,
      overlap: 1,
      password: PASSWORD,
      kinds: ["response-satisfaction"],
    });
    db.$client.prepare("update responses set text = ?").run(LONG);
    const taskId = scenario.tasks["response-satisfaction"];
    for (const [i, role] of ROLES.entries()) {
      const a = scenario.annotators[i];
      const units = (await myQueue(taskId, a.id, db)).map((q) => q.unitId);
      if (units.length < 5) throw new Error(`the tests need 5 units per annotator, got ${units.length}`);
      who[role] = { ...a, units };
    }
    // The revision test starts from its second unit submitted "No", through the app's own save.
    const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!;
    const saved = await saveAnnotation(
      { task, userId: who.revise.id, unitId: who.revise.units[1], intent: "submit", form: new Map([["answer", "No"]]) as never },
      db,
    );
    if (!saved.ok) throw new Error(`seeding the submitted "No" failed: ${JSON.stringify(saved.fieldErrors)}`);
    db.$client.close();
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function signIn(page: Page, email: string) {
  await page.goto(`${app.url}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** Reads the server's database (read-only, beside the running server). */
function query<T>(sql: string, ...args: unknown[]): T[] {
  const db = new Database(app.databaseFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
}
const assignment = (role: Role, unitId: number) =>
  query<{ status: string; skip_reason: string | null }>(
    "select status, skip_reason from assignments where unit_id = ? and annotator_id = ?",
    unitId,
    who[role].id,
  )[0];
const annotationsOf = (role: Role, unitId: number) =>
  query<{ revision: number; status: string; label: string }>(
    "select an.revision, an.status, an.label from annotations an join assignments a on a.id = an.assignment_id where a.unit_id = ? and a.annotator_id = ? order by an.revision",
    unitId,
    who[role].id,
  );

const unitUrl = (unitId: number) =>
  `${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["response-satisfaction"]}/annotate?unit=${unitId}`;
/**
 * Waits until the page shows this unit, ready for keys. The address changes
 * before the new unit is drawn, and the last unit's form (ready too) stays on
 * screen until then: a key pressed in between lands on the last unit. So wait
 * for the form of this very unit.
 */
const onUnit = async (page: Page, unitId: number) => {
  await page.waitForURL((u) => u.searchParams.get("unit") === String(unitId));
  await page.locator(`.annotate-grid[data-ready="true"]:has(input[name="unitId"][value="${unitId}"])`).waitFor();
};
/** The answer the annotator sees ticked (a key's result, before acting on it). */
const checked = (page: Page, answer: string) => page.locator(`input[name="answer"][value="${answer}"]:checked`).waitFor();
const focused = (page: Page) =>
  page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null;
    return e
      ? `${e.tagName}|${e.getAttribute("name") ?? ""}|${e.getAttribute("value") ?? ""}|${(e.textContent ?? "").trim().slice(0, 40)}`
      : "";
  });
/** The page's scroll position once it has stopped moving (unchanged over 150 ms). */
async function restingScrollY(page: Page): Promise<number> {
  let last = await page.evaluate(() => window.scrollY);
  for (let i = 0; i < 100; i++) {
    await page.waitForTimeout(150);
    const now = await page.evaluate(() => window.scrollY);
    if (now === last) return now;
    last = now;
  }
  throw new Error(`the page never stopped scrolling (last at ${last})`);
}
/** Tabs (keyboard only) until the focused element matches. */
async function tabTo(page: Page, match: RegExp) {
  for (let i = 0; i < 60; i++) {
    if (match.test(await focused(page))) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`never focused ${match}; last ${await focused(page)}`);
}

describe("annotate page: keyboard and flow", () => {
  it("Enter presses the focused button or link and submits only with nothing focused; arrows scroll; J/K and ←/→ move between units", async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 500 } });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signIn(page, who.keys.email);
    const units = who.keys.units;
    await page.goto(unitUrl(units[0]));
    await onUnit(page, units[0]);

    // Save draft, focused, Enter: a draft, still on this unit.
    await page.keyboard.press("y");
    await checked(page, "Yes");
    await tabTo(page, /^BUTTON\|intent\|draft\|/);
    await page.keyboard.press("Enter");
    await page.getByTestId("save-state").getByText("Draft saved.").waitFor();
    expect(new URL(page.url()).searchParams.get("unit")).toBe(String(units[0]));
    expect(assignment("keys", units[0]).status).toBe("draft");

    // A focused link, Enter: the link is followed and nothing is submitted.
    await tabTo(page, /^A\|\|\|Next →/);
    await page.keyboard.press("Enter");
    await onUnit(page, units[1]);
    expect(assignment("keys", units[0]).status).toBe("draft");

    // ↓ / ↑ scroll the page, on the same unit.
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowDown");
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(60);
    // Keyboard scrolling is animated: read where the page came to rest, not a point on the way.
    const down = await restingScrollY(page);
    for (let i = 0; i < 2; i++) await page.keyboard.press("ArrowUp");
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeLessThan(down);
    expect(new URL(page.url()).searchParams.get("unit")).toBe(String(units[1]));

    // J / K and → / ← move between units.
    await page.keyboard.press("j");
    await onUnit(page, units[2]);
    await page.keyboard.press("k");
    await onUnit(page, units[1]);
    await page.keyboard.press("ArrowRight");
    await onUnit(page, units[2]);
    await page.keyboard.press("ArrowLeft");
    await onUnit(page, units[1]);

    // Nothing focused, Enter: submits.
    await page.keyboard.press("n");
    await checked(page, "No");
    await page.keyboard.press("Enter");
    await onUnit(page, units[2]); // the next open unit
    expect(assignment("keys", units[1]).status).toBe("submitted");
    await context.close();
  }, 90_000);

  it("a skip refused for want of a reason puts the keyboard in the reason field; the typed reason lands there", async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signIn(page, who.skip.email);
    const units = who.skip.units;
    await page.goto(unitUrl(units[2]));
    await onUnit(page, units[2]);
    await page.keyboard.press("s");
    await expect.poll(() => focused(page)).toMatch(/^INPUT\|skipReason\|/);
    await page.keyboard.press("Enter"); // no reason yet
    await page.getByText("Say why you skip this unit.").waitFor();
    await expect.poll(() => focused(page)).toMatch(/^INPUT\|skipReason\|/);
    // Every letter of this reason is also a shortcut (y, n, c, s, g, r, j, k…).
    const reason = "Cannot judge: needs a chemistry background, sorry";
    await page.keyboard.type(reason);
    expect(await page.locator('input[name="skipReason"]').inputValue()).toBe(reason);
    expect(await page.locator('textarea[name="comment"]').inputValue()).toBe("");
    expect(await page.locator('input[name="answer"]:checked').count()).toBe(0);
    expect(await page.getByRole("dialog").count()).toBe(0);
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.searchParams.get("unit") !== String(units[2]));
    expect(assignment("skip", units[2])).toEqual({ status: "skipped", skip_reason: reason });
    await context.close();
  }, 90_000);

  it("a changed answer on a submitted unit is saved as a revision, or knowingly discarded, before leaving", async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signIn(page, who.revise.email);
    const units = who.revise.units;
    // Its second unit was submitted "No" (seeded above, in beforeAll).
    await page.goto(unitUrl(units[1]));
    await onUnit(page, units[1]);
    expect(await page.locator('input[name="answer"][value="No"]').isChecked()).toBe(true);
    await page.keyboard.press("y");
    await checked(page, "Yes");
    await page.keyboard.press("ArrowRight");
    const ask = page.getByRole("dialog", { name: "Unsaved revision" });
    await ask.waitFor();
    await expect.poll(() => focused(page)).toMatch(/Submit revision and continue/);
    await page.keyboard.press("Enter");
    await onUnit(page, units[2]); // where the annotator was going
    expect(annotationsOf("revise", units[1]).map((a) => [a.revision, a.status, JSON.parse(a.label)])).toEqual([
      [1, "submitted", "No"],
      [2, "submitted", "Yes"],
    ]);

    // Back again: change, leave, discard on purpose — the stored label stays.
    await page.keyboard.press("ArrowLeft");
    await onUnit(page, units[1]);
    expect(await page.locator('input[name="answer"][value="Yes"]').isChecked()).toBe(true);
    await page.keyboard.press("n");
    await checked(page, "No");
    await page.keyboard.press("ArrowLeft");
    await ask.waitFor();
    await page.keyboard.press("Escape"); // stay
    await expect.poll(() => ask.count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("unit")).toBe(String(units[1]));
    expect(await page.locator('input[name="answer"][value="No"]').isChecked()).toBe(true);
    await page.keyboard.press("ArrowLeft");
    await ask.waitFor();
    await tabTo(page, /Discard the change/);
    await page.keyboard.press("Enter");
    await onUnit(page, units[0]);
    expect(annotationsOf("revise", units[1])).toHaveLength(2);
    expect(JSON.parse(annotationsOf("revise", units[1])[1].label)).toBe("Yes");
    await context.close();
  }, 90_000);

  it("a draft typed just before moving on is flushed, not lost", async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signIn(page, who.draft.email);
    const units = who.draft.units;
    await page.goto(unitUrl(units[3]));
    await onUnit(page, units[3]);
    // Y then → at once, well inside the 500 ms draft delay.
    await page.keyboard.press("y");
    await page.keyboard.press("ArrowRight");
    await onUnit(page, units[4]);
    await expect
      .poll(() => annotationsOf("draft", units[3]).map((a) => [a.status, JSON.parse(a.label)]), { timeout: 10_000 })
      .toEqual([["draft", "Yes"]]);
    await page.goto(unitUrl(units[3]));
    await onUnit(page, units[3]);
    expect(await page.locator('input[name="answer"][value="Yes"]').isChecked()).toBe(true);
    await context.close();
  }, 90_000);

  it("without JavaScript, Skip (with its reason) and the guidelines still work", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signIn(page, who.noJs.email);
    const unitsB = who.noJs.units;
    await page.goto(unitUrl(unitsB[0]));
    await page.getByText(`Unit 1 of ${unitsB.length}`).waitFor();
    // Guidelines: a plain <details>.
    await page.getByText("Guidelines", { exact: true }).first().click();
    await page.getByTestId("guidelines-details").getByText("careful").waitFor();
    // Skip: a plain form; a missing reason is refused beside the field.
    await page.getByText("Skip this unit…").click();
    await page.getByRole("button", { name: "Skip", exact: true }).click();
    await page.getByText("Say why you skip this unit.").waitFor();
    await page.getByLabel("Reason for skipping").fill("Duplicate of another unit");
    await page.getByRole("button", { name: "Skip", exact: true }).click();
    await page.getByText(`Unit 2 of ${unitsB.length}`).waitFor();
    const row = query<{ status: string; skip_reason: string }>(
      "select status, skip_reason from assignments where unit_id = ? and annotator_id = ?",
      unitsB[0],
      who.noJs.id,
    )[0];
    expect(row).toEqual({ status: "skipped", skip_reason: "Duplicate of another unit" });
    const html = await page.content();
    for (const m of SYNTHETIC_MODELS) expect(html).not.toContain(m);
    await context.close();
  }, 90_000);
});

describe("task names and guidelines", () => {
  it("a researcher renames a task; a model name in the guidelines is caught before it is saved", async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    await signIn(page, "researcher@lab.test");
    const taskId = scenario.tasks["response-satisfaction"];
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${taskId}`);
    await page.getByText("Rename the task, edit its guidelines").click();
    const form = page.getByTestId("task-name-form");
    await form.getByLabel("Name (annotators see it)").fill("Round 2: does it satisfy?");
    await form.getByRole("button", { name: "Save name and guidelines" }).click();
    await page.getByRole("heading", { name: "Round 2: does it satisfy?" }).waitFor();
    expect(query<{ name: string }>("select name from tasks where id = ?", taskId)[0].name).toBe("Round 2: does it satisfy?");

    // Guidelines naming a model of the project: a warning beside the field, nothing saved.
    const before = query<{ guidelines: string }>("select guidelines from tasks where id = ?", taskId)[0].guidelines;
    const risky = `${before}\n\nNote: most answers come from ${SYNTHETIC_MODELS[0]}.`;
    if (!(await form.evaluate((d) => (d as HTMLDetailsElement).open))) await page.getByText("Rename the task, edit its guidelines").click();
    await form.getByLabel("Guidelines (markdown; annotators see them)").fill(risky);
    await form.getByRole("button", { name: "Save name and guidelines" }).click();
    const warning = form.getByRole("alert");
    await warning.waitFor();
    expect(await warning.textContent()).toContain(`"${SYNTHETIC_MODELS[0]}"`);
    expect(await warning.textContent()).toContain("no longer be blind");
    expect(await form.getByLabel("Guidelines (markdown; annotators see them)").inputValue()).toBe(risky);
    expect(query<{ guidelines: string }>("select guidelines from tasks where id = ?", taskId)[0].guidelines).toBe(before);
    // Saving anyway is a deliberate second step.
    await form.getByRole("button", { name: "Save anyway" }).click();
    await expect.poll(() => query<{ guidelines: string }>("select guidelines from tasks where id = ?", taskId)[0].guidelines).toBe(risky);
    await context.close();
  }, 90_000);
});
