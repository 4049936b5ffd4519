/**
 * A task kind's client parts (its annotate form, its gold and final-label fields) are
 * chunks of their own that a page loads only when it renders them, in real Chromium:
 * the task page, adjudication and annotate page arrive fully rendered from the server,
 * hydrate without an error (the part is loaded before React's first render, so it equals
 * the server's HTML), render the part on a client-side navigation as well, and fetch only
 * the part they show: the task page no annotate form and no Markdown/KaTeX renderer, the
 * annotate page only its own kind's form. One Likert 1–7 task with gold units, labelled
 * at setup so that its units are disputed, but for one unit the first annotator has left.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { nextUnitId, saveAnnotation } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import { openDatabase, schema } from "../../db/client";
import { startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";

const PASSWORD = "kind-parts-e2e-2026";
const RESEARCHER = "researcher@lab.test";
let app: RunningApp;
let browser: Browser;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;
let taskId = 0;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const seeded = openDatabase(file);
    scenario = await seedAnnotationScenario(seeded, { annotators: 2, items: 3, password: PASSWORD, kinds: [] });
    taskId = (
      await createTask(
        scenario.projectId,
        scenario.researcher.id,
        {
          name: "Convincingness",
          datasetId: seeded.select({ id: schema.datasets.id }).from(schema.datasets).get()!.id,
          kind: "likert-7",
          overlap: 2,
          pool: scenario.annotators.map((a) => a.id),
          itemLimit: 2,
          goldRate: 0.3,
          settings: { question: "How convincing is it?", lowAnchor: "Not at all", highAnchor: "Fully" },
        },
        seeded,
      )
    ).taskId;
    const task = (await findTask(scenario.projectId, taskId, seeded))!;
    // The second annotator labels every unit 7, the first 1 but for one unit left to label: the others are disputed.
    for (const who of [1, 0]) {
      const a = scenario.annotators[who];
      for (let u = await nextUnitId(taskId, a.id, undefined, seeded); u != null; u = await nextUnitId(taskId, a.id, undefined, seeded)) {
        // (nextUnitId wraps round: the last open unit is its own next one.)
        if (who === 0 && (await nextUnitId(taskId, a.id, u, seeded)) === u) break;
        const form = new URLSearchParams({ score: who === 0 ? "1" : "7", rationale: "Because." });
        expect((await saveAnnotation({ task, userId: a.id, unitId: u, intent: "submit", form }, seeded)).ok).toBe(true);
      }
    }
    seeded.$client.close();
  });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const base = () => `${app.url}/p/${scenario.slug}`;

/** Records the page's errors (a failed hydration reports one) and the scripts it fetches, with their text. */
function watch(page: Page) {
  const errors: string[] = [];
  const scripts: { url: string; text: Promise<string> }[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("response", (r) => {
    if (r.url().endsWith(".js")) scripts.push({ url: new URL(r.url()).pathname, text: r.text().catch(() => "") });
  });
  return {
    errors,
    /** The kind-part chunks fetched so far ("form", "fields"), each file once, by file name. */
    parts: (name: "form" | "fields") => [...new Set(scripts.filter((s) => s.url.startsWith(`/build/_shared/${name}-`)).map((s) => s.url))],
    /** Whether any fetched script carries the Markdown renderer's maths (KaTeX). */
    katex: async () => (await Promise.all(scripts.map((s) => s.text))).some((t) => /katex/i.test(t)),
  };
}

/** The document as the server sends it. */
const served = (page: Page) =>
  page
    .context()
    .request.get(page.url())
    .then((r) => r.text());

/** Marks the window: a client-side navigation keeps the mark, a full page load loses it. */
const mark = (page: Page) => page.evaluate(() => Object.assign(window, { kindPartsMark: true }));
const marked = (page: Page) => page.evaluate(() => "kindPartsMark" in window);

describe("task-kind parts", () => {
  it("the task page renders the gold fields on the server and on a client navigation, without the annotate form or Markdown", async () => {
    const page = browser.page;
    await signInAs(page, app.url, RESEARCHER, PASSWORD);
    const seen = watch(page);
    await page.goto(`${base()}/tasks/${taskId}`);
    const gold = page.locator('select[aria-label^="Known point of unit"]').first();
    expect(await served(page)).toMatch(/aria-label="Known point of unit \d+"/);
    await hydrated(gold);
    expect(seen.errors).toEqual([]);
    expect(seen.parts("fields")).toHaveLength(1);
    expect(seen.parts("form")).toEqual([]);
    expect(await seen.katex()).toBe(false);

    // From the tasks list, client side: the fields are loaded before the page renders.
    await page.goto(`${base()}/tasks`);
    const overview = page.getByTestId(`task-${taskId}`).getByRole("link", { name: "Overview" });
    await hydrated(overview);
    await mark(page);
    await overview.click();
    await hydrated(page.locator('select[aria-label^="Known point of unit"]').first());
    expect(await marked(page)).toBe(true);
    expect(seen.errors).toEqual([]);
    expect(seen.parts("form")).toEqual([]);
  });

  it("adjudication renders the final-label fields on the server and on a client navigation, without an annotate form", async () => {
    const page = browser.page;
    await signInAs(page, app.url, RESEARCHER, PASSWORD);
    const seen = watch(page);
    await page.goto(`${base()}/tasks/${taskId}/adjudicate`);
    expect(await served(page)).toMatch(/<input[^>]*name="score"[^>]*value="4"/);
    await hydrated(page.locator('input[name="score"][value="4"]'));
    expect(seen.errors).toEqual([]);
    expect(seen.parts("fields")).toHaveLength(1);
    expect(seen.parts("form")).toEqual([]);

    await page.goto(`${base()}/tasks/${taskId}`);
    const link = page.getByRole("link", { name: "Adjudicate" });
    await hydrated(link);
    await mark(page);
    await link.click();
    await hydrated(page.locator('input[name="score"][value="4"]'));
    expect(await marked(page)).toBe(true);
    expect(seen.errors).toEqual([]);
    expect(seen.parts("form")).toEqual([]);
  });

  it("the annotate page renders its kind's form on the server and on a client navigation, and fetches no other kind's", async () => {
    const page = browser.page;
    await signInAs(page, app.url, scenario.annotators[0].email, PASSWORD);
    const seen = watch(page);
    await page.goto(`${base()}/tasks/${taskId}/annotate`);
    expect(await served(page)).toMatch(/<input[^>]*name="score"[^>]*value="7"/);
    await page.locator('.annotate-grid[data-ready="true"]').waitFor();
    expect(seen.errors).toEqual([]);
    expect(seen.parts("form")).toHaveLength(1);
    expect(seen.parts("fields")).toEqual([]);

    await page.goto(`${base()}/tasks`);
    const link = page.getByTestId(`task-${taskId}`).getByRole("link", { name: "Continue labelling" });
    await hydrated(link);
    await mark(page);
    await link.click();
    await page.locator('.annotate-grid[data-ready="true"]').waitFor();
    expect(await page.locator('input[name="score"][value="7"]').count()).toBe(1);
    expect(await marked(page)).toBe(true);
    expect(seen.errors).toEqual([]);
    expect(seen.parts("form")).toHaveLength(1);
  });
});
