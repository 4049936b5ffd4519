/**
 * What an annotator sees, in real Chromium against the production build: model
 * text shown as written (four lines stay four lines, runs of spaces kept, code
 * verbatim, `$\sqrt{2}$` typeset by KaTeX from our own stylesheet and fonts, dollar
 * amounts left alone), a one-key raw view with the exact characters, the
 * reference in a sticky column on a wide screen, the page opening at the top,
 * key hints inline, the queue (snippets, status filter, stale mark), "Nothing
 * left" pointing to the next task with work, and annotators landing on My tasks.
 * Nothing added here may carry a model name.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { myQueue, saveAnnotation } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { findTask } from "../../app/annotation/tasks.server";
import { openDatabase } from "../../db/client";
import { startApp, type RunningApp } from "../support/app-server";
import { CHROMIUM, CHROMIUM_ARGS } from "../support/browser";

const PASSWORD = "annotate-text-e2e-2026";
/** Four lines; the second has a run of spaces; math on the third; money on the fourth. */
const POEM = "Line one of four\nLine two  has  double spaces\nLine three: $\\sqrt{2}$ is irrational\nLine four costs $5 and $10";
const CODE = "  if x:\n      print(x)   # $not math$\n";
const QUERY = `Solve for x and explain.\n\n\`\`\`\n${CODE}\`\`\`\n\n$$\\int_0^1 x\\,dx$$`;

let app: RunningApp;
let browser: Browser;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;
let units: number[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    scenario = await seedAnnotationScenario(db, {
      annotators: 1,
      items: 3,
      overlap: 1,
      password: PASSWORD,
      kinds: ["response-satisfaction", "writing-quality"],
    });
    db.$client.prepare("update items set query = ?").run(QUERY);
    db.$client.prepare("update responses set text = ?").run(POEM);
    // The annotator has done the whole response-satisfaction task: all submitted but one
    // skipped; then the text of one unit changed after labelling (its label is stale).
    const me = scenario.annotators[0].id;
    const taskId = scenario.tasks["response-satisfaction"];
    const task = (await findTask(scenario.projectId, taskId, db))!;
    units = (await myQueue(taskId, me, db)).map((q) => q.unitId);
    for (const [i, unitId] of units.entries()) {
      const form = i === 2 ? new URLSearchParams({ skipReason: "Text unreadable" }) : new URLSearchParams({ answer: "Yes" });
      const r = await saveAnnotation({ task, userId: me, unitId, intent: i === 2 ? "skip" : "submit", form }, db);
      if (!r.ok) throw new Error(JSON.stringify(r));
    }
    db.$client
      .prepare(
        "update annotations set stale_at = unixepoch() where assignment_id = (select id from assignments where unit_id = ? and annotator_id = ?)",
      )
      .run(units[1], me);
    db.$client.close();
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function signIn(page: Page) {
  await page.goto(`${app.url}/login`);
  await page.getByLabel("Email").fill(scenario.annotators[0].email);
  await page.getByLabel("Password").fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Sign in" }).click()]);
}

async function assertNoModelNames(page: Page) {
  const served = await page
    .context()
    .request.get(page.url())
    .then((r) => r.text());
  for (const html of [await page.content(), served]) for (const m of SYNTHETIC_MODELS) expect(html, `model name ${m}`).not.toContain(m);
}

/** The top of each named line's first character, as laid out. */
async function lineTops(page: Page, scope: string, starts: string[]) {
  return page.evaluate(
    ({ scope, starts }) => {
      const root = document.querySelector(scope)!;
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      const tops: Record<string, number> = {};
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (const s of starts) {
          const at = n.textContent!.indexOf(s);
          if (at >= 0 && tops[s] == null) {
            const range = document.createRange();
            range.setStart(n, at);
            range.setEnd(n, at + 1);
            tops[s] = range.getBoundingClientRect().top;
          }
        }
      }
      return starts.map((s) => tops[s]);
    },
    { scope, starts },
  );
}

const ready = (page: Page) => page.locator('.annotate-grid[data-ready="true"]').waitFor();

describe("annotate page: text as written", () => {
  it("an annotator lands on My tasks", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await page.waitForURL((u) => u.pathname === `/p/${scenario.slug}/tasks`);
    await page.getByRole("heading", { name: "My tasks" }).waitFor();
    // The project's overview is not an annotator's page: it leads to the same list.
    await page.goto(`${app.url}/p/${scenario.slug}`);
    await page.waitForURL((u) => u.pathname === `/p/${scenario.slug}/tasks`);
    await assertNoModelNames(page);
    await context.close();
  }, 90_000);

  it("shows four lines as four lines, math with KaTeX (local CSS and fonts), code verbatim, and the exact characters on R", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const assets: { url: string; status: number }[] = [];
    page.on("response", (r) => assets.push({ url: r.url(), status: r.status() }));
    await signIn(page);
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["response-satisfaction"]}/annotate?unit=${units[0]}`);
    await ready(page);
    const response = 'section[aria-label="Response"]';

    // Four lines, each below the previous one.
    const tops = await lineTops(page, response, ["Line one", "Line two", "Line three", "Line four"]);
    expect(tops.every((t) => typeof t === "number")).toBe(true);
    for (let i = 1; i < 4; i++) expect(tops[i]).toBeGreaterThan(tops[i - 1] + 5);
    expect(await page.locator(`${response} .md p`).count()).toBe(1);
    // Runs of spaces are kept.
    expect(await page.locator(`${response} .md p`).evaluate((p) => (p as HTMLElement).innerText)).toContain("Line two  has  double spaces");

    // $\sqrt{2}$ is typeset by KaTeX; "$5 and $10" stays money.
    const math = page.locator(`${response} .katex`);
    expect(await math.count()).toBe(1);
    expect(await math.locator("annotation").textContent()).toBe("\\sqrt{2}");
    expect(await page.locator(`${response} .katex-html`).isVisible()).toBe(true);
    expect(await page.locator(`${response} .md p`).textContent()).toContain("costs $5 and $10");
    // KaTeX's stylesheet is ours (the MathML copy is visually hidden by it), and so are its fonts.
    expect(await page.locator(`${response} .katex-mathml`).evaluate((e) => getComputedStyle(e).position)).toBe("absolute");
    await page.evaluate(async () => {
      await document.fonts.ready;
      return true;
    });
    const sheets = await page.locator('link[rel="stylesheet"]').evaluateAll((ls) => ls.map((l) => (l as HTMLLinkElement).href));
    expect(sheets.some((h) => /katex/i.test(h))).toBe(true);
    for (const h of sheets) expect(new URL(h).origin).toBe(new URL(app.url).origin);
    const fonts = assets.filter((a) => /KaTeX_/.test(a.url));
    expect(fonts.length).toBeGreaterThan(0);
    for (const f of fonts) {
      expect(new URL(f.url).origin).toBe(new URL(app.url).origin);
      expect(f.status).toBe(200);
    }

    // The problem: code verbatim (no math inside it), display math typeset.
    const problem = 'section[aria-label="Problem"]';
    expect(await page.locator(`${problem} pre code`).textContent()).toBe(CODE);
    expect(await page.locator(`${problem} .katex-display`).count()).toBe(1);

    // R: the exact characters, everywhere; R again: formatted.
    await page.keyboard.press("r");
    await page.locator('.annotate-grid[data-raw="true"]').waitFor();
    expect(await page.locator(`${response} pre.raw-text`).textContent()).toBe(POEM);
    expect(await page.locator(`${problem} pre.raw-text`).first().textContent()).toBe(QUERY);
    expect(await page.locator(`${response} .katex`).count()).toBe(0);
    expect(await page.getByTestId("raw-toggle").getAttribute("aria-pressed")).toBe("true");
    await page.keyboard.press("r");
    await page.locator('.annotate-grid[data-raw="false"]').waitFor();
    expect(await page.locator(`${response} .katex`).count()).toBe(1);

    // Key hints sit inline in their label, not as a bar of their own.
    const kbd = page.locator('label.field:has(textarea[name="comment"]) kbd');
    const textarea = page.locator('textarea[name="comment"]');
    const [k, t, label] = await Promise.all([
      kbd.boundingBox(),
      textarea.boundingBox(),
      page.locator('label.field:has(textarea[name="comment"]) .label-text').boundingBox(),
    ]);
    expect(k!.width).toBeLessThan(40);
    expect(k!.y + k!.height).toBeLessThanOrEqual(t!.y);
    expect(Math.abs(k!.y + k!.height / 2 - (label!.y + label!.height / 2))).toBeLessThan(6);
    await assertNoModelNames(page);
    await context.close();
  }, 90_000);

  it("on a wide screen the reference stays in a sticky column beside the responses; the page opens at the top", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 600 } });
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["writing-quality"]}/annotate`);
    await ready(page);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    const reference = page.getByTestId("reference");
    const [ref, card] = await Promise.all([reference.boundingBox(), page.locator(".response-card").first().boundingBox()]);
    expect(ref!.x + ref!.width).toBeLessThanOrEqual(card!.x);
    expect(await page.locator(".problem-column").evaluate((e) => getComputedStyle(e).position)).toBe("sticky");
    // Scrolled to the last response, the reference is still on screen.
    expect(await page.evaluate(() => document.documentElement.scrollHeight - window.innerHeight)).toBeGreaterThan(300);
    await page.locator(".response-card").last().scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(300);
    const after = await reference.boundingBox();
    expect(after!.y).toBeGreaterThanOrEqual(0);
    expect(after!.y).toBeLessThan(600);
    // The next unit opens at the top again, the problem in view.
    await page.keyboard.press("ArrowRight");
    await page.getByText("Unit 2 of").waitFor();
    await ready(page);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    const problemTop = await page.locator(".problem-column h2").boundingBox();
    expect(problemTop!.y).toBeLessThan(600);
    await context.close();
  }, 90_000);

  it("the queue shows a snippet per unit, filters by status and marks stale units; Nothing left links to the next task", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    const base = `${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["response-satisfaction"]}`;
    await page.goto(`${base}/queue`);
    const items = page.getByTestId("queue-list").locator("li");
    expect(await items.count()).toBe(units.length);
    for (const s of await page.getByTestId("snippet").allTextContents()) expect(s).toContain("Solve for x and explain.");
    await page.getByRole("link", { name: /^Skipped \(1\)/ }).click();
    await page.waitForURL((u) => u.searchParams.get("status") === "skipped");
    await expect.poll(() => items.count()).toBe(1);
    expect(await items.first().getAttribute("data-status")).toBe("skipped");
    await page.getByRole("link", { name: /^Stale \(1\)/ }).click();
    await page.waitForURL((u) => u.searchParams.get("status") === "stale");
    await expect.poll(() => items.first().getAttribute("data-stale")).toBe("true");
    await expect.poll(() => items.count()).toBe(1);
    await items.first().getByText("stale", { exact: true }).waitFor();
    await page.getByRole("link", { name: /^All / }).click();
    await page.waitForURL((u) => !u.searchParams.has("status"));
    await expect.poll(() => items.count()).toBe(units.length);
    expect(await page.locator('li[data-stale="true"]').count()).toBe(1);
    await assertNoModelNames(page);

    // Nothing left in this task: the page names the next task with work, and goes there.
    await page.goto(`${base}/annotate`);
    await page.getByTestId("queue-done").waitFor();
    const next = page.getByTestId("next-task");
    expect(await next.textContent()).toContain("writing-quality task");
    await assertNoModelNames(page);
    await next.click();
    await page.waitForURL((u) => u.pathname.endsWith(`/tasks/${scenario.tasks["writing-quality"]}/annotate`));
    await page.getByText("Unit 1 of").waitFor();
    await context.close();
  }, 90_000);
});
