/**
 * Real Chromium on the production build with the demo seeded: every report
 * page of every demo task renders its charts as SVG in the server HTML and in
 * the browser, with no console errors; the CSV links download.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { editChecklistItem } from "../../app/curation/versions.server";
import { openDatabase, schema } from "../../db/client";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
const errors: string[] = [];
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const annotator = DEMO_ACCOUNTS.find((a) => a.role === "annotator")!;

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const db = openDatabase(file);
    db.$client.close();
  });
  browser = await launchBrowser();
  browser.page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  browser.page.on("pageerror", (e) => errors.push(String(e)));
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("report pages in the browser", () => {
  it("a researcher opens every report page of every demo task and sees its charts", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/reports`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Reports");
    const taskLinks = await page
      .locator("tbody tr td:first-child a")
      .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).getAttribute("href")!));
    expect(taskLinks.length).toBe(4); // the demo has four tasks (appropriateness, satisfaction, writing, best-of-N)
    let judgeless = 0;
    for (const href of taskLinks) {
      const base = new URL(href, `${app.url}/p/demo/reports/`).pathname;
      for (const sub of ["", "/judges", "/disagreements"]) {
        const url = `${app.url}${base}${sub}`;
        // The server HTML already carries the SVG charts.
        const html = await (await page.request.get(url)).text();
        // (Checklist appropriateness has no judge verdicts: its judges page says so instead of drawing charts.)
        const charts = sub !== "/disagreements" && !html.includes("No judge has verdicts");
        if (charts) expect(html, url).toMatch(/<svg[^>]*class="recharts-surface/);
        else if (sub === "/judges") judgeless++;
        await page.goto(url);
        await expect.poll(() => page.getByRole("heading", { level: 1 }).count()).toBe(1);
        if (charts) {
          expect(await page.locator("svg.recharts-surface").count(), url).toBeGreaterThan(0);
          expect(await page.locator("svg.recharts-surface path.recharts-rectangle").count(), url).toBeGreaterThan(0);
        } else if (sub === "/disagreements")
          expect(await page.getByTestId("disagreement-count").textContent()).toMatch(/^\d+ disagreements?/);
      }
    }
    expect(judgeless).toBe(2); // appropriateness and best-of-N: no judge verdicts in the demo
    expect(errors).toEqual([]);
  });

  it("the checklist task shows the paper's form, the kappa paradox note and links to fix items", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await page.goto(`${app.url}/p/demo/reports`);
    await page.getByRole("link", { name: "Are these checklist items valid criteria?" }).click();
    await page.waitForURL(/\/p\/demo\/reports\/\d+$/);
    await expect.poll(() => page.getByTestId("checklist-overall").textContent()).toMatch(/\d+ of \d+ \(\d+\.\d%\)/);
    expect(await page.getByTestId("kappa-paradox").count()).toBe(1);
    const fix = page.getByRole("link", { name: "Fix item" }).first();
    const href = await fix.getAttribute("href");
    expect(href).toMatch(/^\/p\/demo\/datasets\/\d+\/items\/\d+$/);
    // Switching the final-label rule reloads the figures.
    await page.getByLabel("Final label rule").selectOption("adjudication");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/rule=adjudication/);
    await expect.poll(() => page.locator('[data-table="final"] .muted').first().textContent()).toMatch(/majority/);
    // A CSV link downloads the table behind the figure.
    const csvHref = await page.locator('[data-table="iaa"] a[download]', { hasText: "CSV" }).getAttribute("href");
    const res = await page.request.get(`${app.url}${csvHref}`);
    expect(res.headers()["content-type"]).toMatch(/text\/csv/);
    expect(await res.text()).toMatch(/^Statistic,Value,Value 95% CI low/);
    // Its LaTeX twin: a booktabs table with the figures as the page shows them.
    const texHref = await page.locator('[data-table="iaa"] a[download]', { hasText: "LaTeX" }).getAttribute("href");
    const tex = await page.request.get(`${app.url}${texHref}`);
    expect(tex.headers()["content-type"]).toMatch(/application\/x-tex/);
    const fleiss = await page.locator('[data-table="iaa"] tbody tr', { hasText: "Fleiss' kappa" }).locator("td").nth(1).textContent();
    expect(await tex.text()).toContain(`Fleiss' kappa & ${fleiss!.trim()} &`);
    expect(errors).toEqual([]);
  });

  it("the by-domain chart names the interval method its bars use (bootstrap for scores, Wilson for shares)", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    const db = openDatabase(app.databaseFile);
    const writing = db.select().from(schema.tasks).where(eq(schema.tasks.kind, "writing-quality")).get()!;
    const sat = db.select().from(schema.tasks).where(eq(schema.tasks.kind, "response-satisfaction")).get()!;
    db.$client.close();
    const chartTitle = async (taskId: number) => {
      await page.goto(`${app.url}/p/demo/reports/${taskId}`);
      const chart = page.locator("svg.report-chart[aria-label*='by domain']");
      await expect.poll(() => chart.count()).toBe(1);
      return (await chart.getAttribute("aria-label"))!;
    };
    // Mean scores on the 1–5 scale: a percentile bootstrap, not mean ± 1.96·SEM.
    const scores = await chartTitle(writing.id);
    expect(scores).toMatch(/^Mean final score by domain, 95% CI \(percentile bootstrap \(B=\d+, seed \d+\)/);
    expect(scores).not.toMatch(/SEM/);
    // Shares: the Wilson score interval.
    expect(await chartTitle(sat.id)).toMatch(/by domain, 95% CI \(Wilson score interval\)$/);
    expect(errors).toEqual([]);
  });

  it("after a curation edit, stale labels are noted, and leaving them out changes the figures", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    // Edit the checklist item of one labelled satisfaction unit, as a curator would (another connection, like the CLI).
    const db = openDatabase(app.databaseFile);
    const sat = db.select().from(schema.tasks).where(eq(schema.tasks.kind, "response-satisfaction")).get()!;
    const unit = db.select().from(schema.units).where(eq(schema.units.taskId, sat.id)).get()!;
    const curator = db.select().from(schema.users).where(eq(schema.users.email, researcher.email)).get()!;
    await editChecklistItem(
      unit.checklistItemId!,
      { text: "Does the response state each assumption it relies on?" },
      { userId: curator.id, reason: "clearer wording" },
      db,
    );
    db.$client.close();
    await page.goto(`${app.url}/p/demo/reports/${sat.id}`);
    await expect.poll(() => page.getByTestId("stale-note").textContent()).toMatch(/^\d+ submitted labels? .* still counted here/);
    const counted = await page.getByTestId("report-counts").textContent();
    await page.getByLabel("Stale labels and verdicts").selectOption("exclude");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/stale=exclude/);
    await expect.poll(() => page.getByTestId("stale-note").textContent()).toMatch(/left out of every figure/);
    expect(await page.getByTestId("report-counts").textContent()).not.toBe(counted);
    // The choice follows the tabs and the CSV links.
    expect(await page.getByRole("link", { name: "Judge–human agreement" }).getAttribute("href")).toMatch(/stale=exclude/);
    expect(await page.locator('[data-table="iaa"] a[download]', { hasText: "CSV" }).getAttribute("href")).toMatch(/stale=exclude/);
    expect(errors).toEqual([]);
  });

  it("an annotator is refused", async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Sign out" }).click();
    // Let the sign-out land on /login first: a sign-out answered after signInAs loaded its own /login would change the
    // cookies under that form, and the sign-in would be refused.
    await page.waitForURL((u) => u.pathname === "/login", { waitUntil: "load" });
    await signInAs(page, app.url, annotator.email, annotator.password);
    const res = await page.request.get(`${app.url}/p/demo/reports`);
    expect(res.status()).toBe(403);
    errors.length = 0;
  });
});
