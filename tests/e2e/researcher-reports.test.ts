/**
 * Report pages at a 1440 px wide window in real Chromium: no page-level
 * horizontal scroll (wide tables scroll inside their figure), headings and
 * chart titles whole, every empty or undefined figure explained, and the
 * index's counts meaning what the report's counts mean.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asc, eq, sql } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
let db: Db;
let taskIds: number[];
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const LONG_NAME =
  "Score each writing from 1 to 5 — second round with the revised rubric for persuasive, explanatory and narrative pieces, blind to the model";

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    // A long task name (the heading must wrap, not be cut), and one revised label: the
    // index must count it once, as the report does (latest revision per assignment).
    seeded.update(schema.tasks).set({ name: LONG_NAME }).where(eq(schema.tasks.kind, "writing-quality")).run();
    const task = seeded.select().from(schema.tasks).where(eq(schema.tasks.kind, "checklist-appropriateness")).get()!;
    const first = seeded.all<{ id: number; assignment_id: number; label: string }>(sql`
      SELECT an.id, an.assignment_id, an.label FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
      WHERE u.task_id = ${task.id} AND an.status = 'submitted' ORDER BY an.id LIMIT 1`)[0];
    seeded.run(
      sql`INSERT INTO annotations (assignment_id, revision, label, status) VALUES (${first.assignment_id}, 2, ${first.label}, 'submitted')`,
    );
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  taskIds = db
    .select({ id: schema.tasks.id })
    .from(schema.tasks)
    .orderBy(asc(schema.tasks.id))
    .all()
    .map((t) => t.id);
  browser = await launchBrowser();
  await browser.page.setViewportSize({ width: 1440, height: 900 });
  await signInAs(browser.page, app.url, researcher.email, researcher.password);
});

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

/** Problems a reader would see on the current page at this width. */
async function layoutProblems(): Promise<string[]> {
  return browser.page.evaluate(() => {
    const out: string[] = [];
    const sw = document.documentElement.scrollWidth;
    if (sw > 1440) out.push(`page scrolls sideways: scrollWidth ${sw}`);
    for (const h of document.querySelectorAll<HTMLElement>("h1, h2, h3")) {
      if (h.scrollWidth > h.clientWidth + 1) out.push(`heading cut: ${h.textContent}`);
      if (h.getBoundingClientRect().right > 1440) out.push(`heading past the window: ${h.textContent}`);
    }
    for (const svg of document.querySelectorAll<SVGSVGElement>("svg.report-chart")) {
      const title = svg.querySelector("text");
      if (!title) continue;
      const width = Number(svg.getAttribute("width"));
      const right = title.getBBox().x + title.getBBox().width;
      if (right > width) out.push(`chart title cut: ${title.textContent} (${Math.round(right)} > ${width})`);
    }
    return out;
  });
}

/** Tables with an empty ("—") or undefined ("n/a") figure that nothing on the table explains. */
async function unexplained(): Promise<string[]> {
  return browser.page.evaluate(() => {
    const out: string[] = [];
    for (const fig of document.querySelectorAll<HTMLElement>(".figure-table")) {
      const cells = [...fig.querySelectorAll("tbody td")].map((td) => td.textContent!.trim());
      const text = [...fig.querySelectorAll("p")].map((p) => p.textContent ?? "").join(" ");
      const title = fig.querySelector("h3")?.textContent ?? "";
      if (cells.some((c) => c === "—" || /\[—|—\]/.test(c)) && !text.includes("—")) out.push(`${title}: "—" unexplained`);
      if (cells.some((c) => c.includes("n/a")) && !text.includes("n/a")) out.push(`${title}: "n/a" unexplained`);
    }
    return out;
  });
}

describe("reports at 1440 px", () => {
  it("fit the window, keep headings whole and explain every missing figure", async () => {
    const { page } = browser;
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
    const paths = [
      "/p/demo/reports",
      ...taskIds.flatMap((id) => [`/p/demo/reports/${id}`, `/p/demo/reports/${id}/judges`, `/p/demo/reports/${id}/disagreements`]),
    ];
    let explainedLegends = 0;
    for (const p of paths) {
      const res = await page.goto(`${app.url}${p}`);
      expect(res?.status(), p).toBe(200);
      expect(await layoutProblems(), p).toEqual([]);
      expect(await unexplained(), p).toEqual([]);
      explainedLegends += await page.getByTestId("missing-legend").count();
    }
    // The demo has figures without a value (gold accuracy with no gold units): they are explained.
    expect(explainedLegends).toBeGreaterThan(0);
    // The long heading wraps onto more than one line instead of being cut.
    const writing = db.select().from(schema.tasks).where(eq(schema.tasks.kind, "writing-quality")).get()!;
    await page.goto(`${app.url}/p/demo/reports/${writing.id}`);
    const h1 = page.locator("h1");
    expect(await h1.textContent()).toBe(LONG_NAME);
    const box = (await h1.boundingBox())!;
    const lineHeight = await h1.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 30);
    expect(box.height).toBeGreaterThan(lineHeight * 1.5);
    expect(errors).toEqual([]);
  }, 120_000);

  it("a wide table scrolls inside its figure, not the page", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/reports/${taskIds[0]}`);
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>(".figure-table")]
        .filter((f) => f.scrollWidth > f.clientWidth)
        .map((f) => getComputedStyle(f).overflowX),
    );
    // Whatever is wider than its figure scrolls there.
    for (const o of wide) expect(o).toBe("auto");
    // Squeeze the window: the figures still never push the page sideways beyond what the page itself needs.
    await page.setViewportSize({ width: 1024, height: 900 });
    const sw = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(sw).toBeLessThanOrEqual(1024);
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 60_000);
});

describe("n on the index and on the report", () => {
  it("counts the same submitted annotations, and says what n is", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/reports`);
    expect(await page.getByTestId("n-legend").textContent()).toMatch(/n is the number of rated subjects/);
    const headers = await page.locator("thead th").allTextContents();
    const col = headers.findIndex((h) => /submitted annotations/i.test(h));
    expect(col).toBeGreaterThan(-1);
    const index = new Map<string, number>();
    for (const row of await page.locator("tbody tr").all()) {
      const cells = await row.locator("td").allTextContents();
      index.set(cells[0], Number(cells[col]));
    }
    for (const id of taskIds) {
      const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, id)).get()!;
      await page.goto(`${app.url}/p/demo/reports/${id}`);
      const counts = (await page.getByTestId("report-counts").textContent())!;
      const reported = Number(counts.match(/(\d+) submitted annotations/)![1]);
      expect(index.get(task.name), task.name).toBe(reported);
      expect(await page.getByTestId("n-meaning").textContent()).toMatch(/^n in the tables below counts rated subjects/);
    }
    // The revised label counts once (the checklist task's 266 labels, not 267).
    const checklist = db.select().from(schema.tasks).where(eq(schema.tasks.kind, "checklist-appropriateness")).get()!;
    const revisions = db.all<{
      n: number;
    }>(sql`SELECT COUNT(*) AS n FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
      WHERE u.task_id = ${checklist.id} AND an.status = 'submitted'`)[0].n;
    expect(index.get(checklist.name)).toBe(revisions - 1);
  }, 60_000);
});
