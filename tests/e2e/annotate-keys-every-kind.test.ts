/**
 * The annotate page's keys mean the same on every task kind, in real Chromium: J/K and
 * ←/→ move between units and ↑/↓ scroll the page — with nothing focused and also on a
 * focused radio button, whose native arrows would silently change the answer (the
 * answer clicked stays the answer); where several responses are shown (writing quality,
 * best-of-N) H/L move between them and tabbing or clicking into a card makes it the
 * focused one; the shortcut sheet says all of this.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { myQueue } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { createTask } from "../../app/annotation/tasks.server";
import { openDatabase } from "../../db/client";
import * as schema from "../../db/schema";
import { startApp, type RunningApp } from "../support/app-server";
import { CHROMIUM, CHROMIUM_ARGS } from "../support/browser";

const PASSWORD = "annotate-kinds-keys-2026";
/** Long enough that the page scrolls in a 1000 × 500 window. */
const LONG = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n");

type Kind = "checklist-appropriateness" | "response-satisfaction" | "writing-quality" | "best-of-n" | "likert-7";
/** Per kind: the radio an annotator clicks (the answer), and whether several responses are shown. */
const KINDS: { kind: Kind; radio: string; multi: boolean }[] = [
  { kind: "checklist-appropriateness", radio: 'input[name="answer"][value="Yes"]', multi: false },
  { kind: "response-satisfaction", radio: 'input[name="answer"][value="No"]', multi: false },
  { kind: "writing-quality", radio: 'input[name="score.B"][value="3"]', multi: true },
  { kind: "best-of-n", radio: 'input[name="best"][value="B"]', multi: true },
  { kind: "likert-7", radio: 'input[name="score"][value="4"]', multi: false },
];

let app: RunningApp;
let browser: Browser;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;
const tasks: Record<string, number> = {};
const units: Record<string, number[]> = {};

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    scenario = await seedAnnotationScenario(db, {
      annotators: 1,
      items: 3,
      overlap: 1,
      password: PASSWORD,
      kinds: ["checklist-appropriateness", "response-satisfaction", "writing-quality", "best-of-n"],
    });
    Object.assign(tasks, scenario.tasks);
    const datasetId = db.select({ id: schema.datasets.id }).from(schema.datasets).get()!.id;
    tasks["likert-7"] = (
      await createTask(
        scenario.projectId,
        scenario.researcher.id,
        {
          name: "likert-7 task",
          datasetId,
          kind: "likert-7",
          overlap: 1,
          pool: [scenario.annotators[0].id],
          itemLimit: 2,
          settings: { question: "How convincing is it?", lowAnchor: "Not at all", highAnchor: "Fully" },
        },
        db,
      )
    ).taskId;
    db.$client.prepare("update responses set text = ?").run(LONG);
    db.$client.prepare("update items set query = ?").run(`Answer this.\n\n${LONG}`);
    for (const { kind } of KINDS) {
      units[kind] = (await myQueue(tasks[kind], scenario.annotators[0].id, db)).map((q) => q.unitId);
      if (units[kind].length < 2) throw new Error(`${kind}: the test needs 2 units, got ${units[kind].length}`);
    }
    db.$client.close();
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const unitUrl = (kind: Kind, unitId: number) => `${app.url}/p/${scenario.slug}/tasks/${tasks[kind]}/annotate?unit=${unitId}`;
/** Waits until the page shows this very unit, ready for keys (the last unit's form stays on screen until it is drawn). */
const onUnit = async (page: Page, unitId: number) => {
  await page.waitForURL((u) => u.searchParams.get("unit") === String(unitId));
  await page.locator(`.annotate-grid[data-ready="true"]:has(input[name="unitId"][value="${unitId}"])`).waitFor();
};
const scrollY = (page: Page) => page.evaluate(() => window.scrollY);
/** The checked radios of the form, as name=value (what the annotator has answered). */
const answers = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement>('form input[type="radio"]:checked')].map((r) => `${r.name}=${r.value}`).sort(),
  );
const focusedCard = (page: Page) => page.evaluate(() => document.querySelector(".response-card.focused")?.id ?? null);

describe("annotate page: the same keys on every kind", () => {
  for (const { kind, radio, multi } of KINDS) {
    it(`${kind}: J/K and ←/→ move between units and ↑/↓ scroll, also on a focused radio button${multi ? "; H/L move between responses" : ""}`, async () => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 500 } });
      context.setDefaultTimeout(60_000);
      context.setDefaultNavigationTimeout(60_000);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${app.url}/login`);
      await page.getByLabel("Email").fill(scenario.annotators[0].email);
      await page.getByLabel("Password").fill(PASSWORD);
      await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Sign in" }).click()]);
      const [first, second] = units[kind];
      await page.goto(unitUrl(kind, first));
      await onUnit(page, first);
      expect(await page.evaluate(() => document.documentElement.scrollHeight - window.innerHeight)).toBeGreaterThan(200);

      // Nothing focused: J/K and →/← move between units.
      await page.keyboard.press("j");
      await onUnit(page, second);
      await page.keyboard.press("k");
      await onUnit(page, first);
      await page.keyboard.press("ArrowRight");
      await onUnit(page, second);
      await page.keyboard.press("ArrowLeft");
      await onUnit(page, first);

      // The annotator clicks an answer: the radio button has the keyboard now.
      await page.locator(radio).click();
      const answered = await answers(page);
      expect(answered, await page.locator(radio).evaluate((e) => e.outerHTML)).toHaveLength(1);
      expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).type)).toBe("radio");
      if (multi) expect(await focusedCard(page)).toBe("response-B"); // the card of the clicked control
      await page.getByTestId("save-state").getByText("Draft saved.").waitFor();

      // ↓ / ↑ on the focused radio scroll the page and leave the answer alone (from the top: the click scrolled to it).
      await page.evaluate(() => window.scrollTo(0, 0));
      await expect.poll(() => scrollY(page)).toBe(0);
      for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowDown");
      await expect.poll(() => scrollY(page)).toBeGreaterThanOrEqual(120);
      const down = await scrollY(page);
      await page.keyboard.press("ArrowUp");
      await expect.poll(() => scrollY(page)).toBeLessThan(down);
      expect(await answers(page)).toEqual(answered);
      expect(new URL(page.url()).searchParams.get("unit")).toBe(String(first));

      // → on the focused radio: the next unit, the answer of this one as clicked.
      await page.keyboard.press("ArrowRight");
      await onUnit(page, second);
      expect(await answers(page)).toEqual([]);
      await page.keyboard.press("ArrowLeft");
      await onUnit(page, first);
      expect(await answers(page)).toEqual(answered);

      // J / K from a focused radio button too; ← from one goes back.
      await page.locator(radio).focus();
      await page.keyboard.press("j");
      await onUnit(page, second);
      await page.keyboard.press("ArrowLeft");
      await onUnit(page, first);
      await page.locator(radio).focus();
      await page.keyboard.press("ArrowLeft"); // the first unit: nowhere to go back to, and the answer stays
      await page.waitForTimeout(300);
      expect(new URL(page.url()).searchParams.get("unit")).toBe(String(first));
      expect(await answers(page)).toEqual(answered);

      if (multi) {
        // H / L move between the responses shown side by side; J / K still move between units.
        await page.locator("h2").first().click(); // nothing interactive focused
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        const before = await focusedCard(page);
        await page.keyboard.press("l");
        await expect.poll(() => focusedCard(page)).not.toBe(before);
        const after = await focusedCard(page);
        expect(after! > before!).toBe(true);
        await page.keyboard.press("h");
        await expect.poll(() => focusedCard(page)).toBe(before);
        expect(new URL(page.url()).searchParams.get("unit")).toBe(String(first));
      }

      // The shortcut sheet says so.
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.keyboard.press("?");
      const sheet = page.getByRole("dialog", { name: "Keyboard shortcuts" });
      await sheet.waitFor();
      const text = (await sheet.textContent())!;
      expect(text).toContain("J / K, → / ←Next / previous unit");
      expect(text).toContain("↓ / ↑Scroll the page");
      expect(text).toContain("they never change an answer");
      if (multi) expect(text).toContain("L / HNext / previous response");
      else expect(text).not.toContain("Next / previous response");
      await page.keyboard.press("Escape");
      await sheet.waitFor({ state: "detached" });
      expect(errors).toEqual([]);
      await context.close();
    }, 90_000);
  }
});
