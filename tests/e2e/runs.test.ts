/**
 * Real Chromium on the production build with the demo seeded (one server, one
 * browser): the providers page labels the recorded providers, the runs list
 * shows the demo run and starts a new run, the run page's progress bar moves
 * by server-sent events without a reload, and the results pages draw their
 * SVG charts — with no page or console errors.
 *
 * The new run talks to the local fake OpenAI-compatible server, whose replies
 * wait behind a gate the test opens, so the run page is seen mid-run first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { openDatabase, schema } from "../../db/client";
import { DEMO_ACCOUNTS, DEMO_RUN_DATASET, DEMO_RUN_NAME } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { refineScript } from "../unit/runs/fixtures";

let app: RunningApp;
let browser: Browser;
let fake: FakeLlm;
let open!: () => void;
const gate = new Promise<void>((ok) => (open = ok));
const errors: string[] = [];
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const annotator = DEMO_ACCOUNTS.find((a) => a.role === "annotator")!;
let sampleDatasetId = 0;
let demoRunId = 0;

beforeAll(async () => {
  const script = refineScript();
  fake = await startFakeLlm(async (req) => {
    await gate;
    return script(req);
  });
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const db = openDatabase(file);
    const project = db.select().from(schema.projects).where(eq(schema.projects.slug, "demo")).get()!;
    db.insert(schema.providers)
      .values({
        projectId: project.id,
        name: "local-fake",
        kind: "openai-compatible",
        baseUrl: fake.baseUrl,
        apiKey: "sk-e2e-SECRET",
        model: "fake-model",
        concurrency: 4,
        settings: { timeoutMs: 60_000 },
      })
      .run();
    sampleDatasetId = db.select().from(schema.datasets).where(eq(schema.datasets.name, DEMO_RUN_DATASET)).get()!.id;
    demoRunId = db.select().from(schema.runs).where(eq(schema.runs.name, DEMO_RUN_NAME)).get()!.id;
    db.$client.close();
  });
  browser = await launchBrowser();
  browser.page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  browser.page.on("pageerror", (e) => errors.push(String(e)));
  await signInAs(browser.page, app.url, researcher.email, researcher.password);
});

afterAll(async () => {
  open?.();
  await browser?.close();
  await app?.stop();
  await fake?.close();
});

describe("runs in the browser", () => {
  it("the providers page lists the recorded providers, labelled, and never shows a key", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/providers`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toMatch(/Providers/);
    const rows = page.locator("tbody tr");
    for (const name of ["Quillon-8B (recorded)", "Orrery-70B (recorded)", "Sentinel-34B (recorded)"]) {
      const row = rows.filter({ hasText: name });
      expect(await row.count(), name).toBe(1);
      expect(await row.textContent()).toContain("recorded outputs");
    }
    expect(await rows.filter({ hasText: "local-fake" }).count()).toBe(1);
    expect(await page.content()).not.toContain("SECRET");
  });

  it("the runs list shows the demo run; a new run's page shows live progress over server-sent events", async () => {
    const { page } = browser;
    const eventStreams: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/events")) eventStreams.push(r.url());
    });
    await page.goto(`${app.url}/p/demo/runs`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Runs");
    const demoRow = page.locator("tbody tr").filter({ hasText: DEMO_RUN_NAME });
    expect(await demoRow.count()).toBe(1);
    expect(await demoRow.textContent()).toContain("completed");
    // The advanced JSON definition starts from the demo's recorded definition.
    expect(await page.locator("textarea[name=definition]").inputValue()).toContain("Quillon-8B (recorded)");
    // The run is started from the form: only the chosen protocol's settings are shown, with the paper's defaults.
    const form = page.getByTestId("new-run");
    await form.getByLabel("Name").fill("e2e live run");
    await form.getByLabel("Protocol").selectOption("fb-bench");
    expect(await form.locator('fieldset[data-protocol="fb-bench"]').isVisible()).toBe(true);
    expect(await form.locator('fieldset[data-protocol="refinebench"]').isVisible()).toBe(false);
    await form.getByLabel("Protocol").selectOption("refinebench");
    expect(await form.locator('input[name="s.refinebench.targetSampling.temperature"]').inputValue()).toBe("1");
    await form.locator("select[name=datasetId]").selectOption(String(sampleDatasetId));
    // Without a model the error appears beside the models, which take focus.
    await form.getByRole("button", { name: "Start run", exact: true }).click();
    await expect
      .poll(() => form.locator('fieldset:has(legend:text("Models")) [role=alert]').textContent())
      .toBe("Choose at least one model to run.");
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe("models");
    // The browser logs the expected 400 answer to the invalid form; anything else still counts as an error.
    for (let i = errors.length - 1; i >= 0; i--) if (/status of 400/.test(errors[i])) errors.splice(i, 1);
    await form.locator('fieldset:has(legend:text("Models")) input[value="local-fake"]').check();
    await form.locator('fieldset:has(legend:text("Judges")) input[value="local-fake"]').check();
    await form.locator('input[name="s.refinebench.maxTurns"]').fill("2");
    await form.getByRole("button", { name: "Start run", exact: true }).click();
    await page.waitForURL(/\/p\/demo\/runs\/\d+$/);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain("e2e live run");
    const bar = page.getByTestId("progress");
    expect(await bar.getByRole("progressbar").count()).toBe(1);
    // Nothing can finish while the fake server holds its replies.
    expect(await bar.locator(".badge").textContent()).toMatch(/queued|running/);
    expect(await bar.getByTestId("done").textContent()).toBe("0");
    await page.evaluate(() => ((window as unknown as { __stay: number }).__stay = 1));
    open();
    // 3 items × 2 turns × (generation + judge) = 12 jobs, reported by the event stream.
    await expect.poll(() => bar.locator(".badge").textContent(), { timeout: 20_000 }).toBe("completed");
    expect(await bar.getByTestId("done").textContent()).toBe("12");
    expect(await bar.getByRole("progressbar").getAttribute("aria-valuenow")).toBe("12");
    expect(await page.evaluate(() => (window as unknown as { __stay?: number }).__stay)).toBe(1); // no reload: the events did it
    expect(eventStreams.length).toBeGreaterThan(0);
    // A completed run: nothing to pause, resume or cancel; the settings used are listed.
    const actions = page.getByTestId("run-actions");
    expect(await actions.getByRole("button", { name: "Pause" }).isDisabled()).toBe(true);
    expect(await actions.getByRole("button", { name: "Cancel" }).isDisabled()).toBe(true);
    expect(await actions.getByRole("button", { name: "Retry failed jobs" }).isDisabled()).toBe(true);
    const settings = await page.getByTestId("run-settings").textContent();
    expect(settings).toContain("max turns2");
    expect(settings).toContain("target sampling · temperature1");
    // The results page of the new run draws its curve.
    await page.getByRole("link", { name: "Results" }).click();
    await page.waitForURL(/\/results$/);
    await expect.poll(() => page.locator("svg.recharts-surface").count()).toBe(1);
    expect(await page.locator("svg.recharts-surface path.recharts-curve").count()).toBe(1);
  });

  it("the demo run's results page renders its SVG chart in the server HTML and in the browser", async () => {
    const { page } = browser;
    const url = `${app.url}/p/demo/runs/${demoRunId}/results`;
    const html = await (await page.request.get(url)).text();
    expect(html).toMatch(/<svg[^>]*class="recharts-surface/);
    await page.goto(url);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain(DEMO_RUN_NAME);
    // One curve per model (Quillon-8B, Orrery-70B), with a dot per turn.
    expect(await page.locator("svg.recharts-surface path.recharts-curve").count()).toBe(2);
    expect(await page.locator("svg.recharts-surface circle.recharts-dot").count()).toBe(4);
    const table = await page.locator("table").first().textContent();
    expect(table).toContain("Quillon-8B");
    expect(table).toContain("Orrery-70B");
    // The run page: recorded badge, finished progress bar.
    await page.goto(`${app.url}/p/demo/runs/${demoRunId}`);
    await expect.poll(() => page.getByTestId("progress").locator(".badge").textContent()).toBe("completed");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain("recorded outputs");
    expect(errors).toEqual([]);
  });

  it("a calibration task made on the run page can be labelled at once by a chosen annotator, blind", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/runs/${demoRunId}`);
    await hydrated(page.getByRole("button", { name: "Create human task" }));
    await page.getByLabel("Sampling plan").selectOption("stratified");
    await page.getByLabel("Annotators per unit").fill("1");
    // The pool: only the first annotator.
    const boxes = page.locator("input[name=pool]");
    const n = await boxes.count();
    for (let i = 0; i < n; i++) await boxes.nth(i).setChecked(false);
    await page.getByLabel(annotator.name).check();
    await page.getByRole("button", { name: "Create human task" }).click();
    await expect.poll(() => page.getByText(/can be labelled now/).count()).toBe(1);
    const href = (await page.getByRole("link", { name: "Open the task" }).getAttribute("href"))!;
    // The chosen annotator signs in and labels the first unit.
    await signInAs(page, app.url, annotator.email, annotator.password);
    await page.goto(`${app.url}${href}/annotate`);
    await page.getByText(/Unit 1 of \d+/).waitFor();
    await hydrated(page.getByRole("button", { name: /^Submit/ }));
    const html = await page.content();
    for (const secret of ["Quillon-8B", "Orrery-70B", "judge-strict", "Sentinel-34B"]) expect(html).not.toContain(secret);
    await page.getByLabel("Yes").check();
    await page.getByRole("button", { name: /^Submit/ }).click();
    await page.getByText(/Unit 2 of \d+/).waitFor();
    expect(errors).toEqual([]);
  }, 90_000);
});
