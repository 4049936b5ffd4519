/**
 * A response laid out with spaces outside a code fence — an ASCII bar chart, a table
 * aligned by hand, a pyramid of `*` — is shown exactly as written, in real Chromium:
 * the same characters and line breaks, and its columns line up on screen (measured:
 * each column's first character at the same x on every row). Markdown around it still
 * renders: a paragraph, a list, a GFM table, `$\sqrt{2}$` typeset by KaTeX, a fenced
 * code block verbatim; R still shows the exact characters of the whole response.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { myQueue } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { openDatabase } from "../../db/client";
import { startApp, type RunningApp } from "../support/app-server";
import { CHROMIUM, CHROMIUM_ARGS } from "../support/browser";

const PASSWORD = "annotate-layout-e2e-2026";
const CHART = ["Sales by quarter", "Q1 | ####", "Q2 | ########", "Q3 | ######", "   +----+----+", "   0    5   10"];
const TABLE = ["Name     Score   Rank", "Alice    90      1", "Bob      85      2"];
const PYRAMID = ["    *", "   ***", "  *****", " -------"];
const RESPONSE = [
  "Here is the chart:",
  "",
  ...CHART,
  "",
  ...TABLE,
  "",
  ...PYRAMID,
  "",
  "- first item",
  "- second item",
  "",
  "| a | b |",
  "|---|---|",
  "| 1 | 2 |",
  "",
  "Math: $\\sqrt{2}$ stays math.",
  "",
  "```",
  "x  =  1",
  "```",
].join("\n");

let app: RunningApp;
let browser: Browser;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;
let unitId = 0;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    scenario = await seedAnnotationScenario(db, {
      annotators: 1,
      items: 1,
      overlap: 1,
      password: PASSWORD,
      kinds: ["response-satisfaction"],
    });
    db.$client.prepare("update responses set text = ?").run(RESPONSE);
    unitId = (await myQueue(scenario.tasks["response-satisfaction"], scenario.annotators[0].id, db))[0].unitId;
    db.$client.close();
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** The x and top of the first character of `needle` inside `block` (the nth laid-out block of the response). */
async function at(page: Page, block: number, needle: string) {
  return page.evaluate(
    ({ block, needle }) => {
      const root = document.querySelectorAll(".response-text pre:has(> code.language-layout)")[block];
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const i = n.textContent!.indexOf(needle);
        if (i < 0) continue;
        const range = document.createRange();
        range.setStart(n, i);
        range.setEnd(n, i + 1);
        const r = range.getBoundingClientRect();
        return { x: r.left, top: r.top };
      }
      throw new Error(`${needle} not in block ${block}`);
    },
    { block, needle },
  );
}

describe("annotate page: text laid out with spaces is shown as written", () => {
  it("an ASCII chart, a hand-aligned table and a pyramid keep their characters, line breaks and columns; markdown around them renders", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(60_000);
    context.setDefaultNavigationTimeout(60_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${app.url}/login`);
    await page.getByLabel("Email").fill(scenario.annotators[0].email);
    await page.getByLabel("Password").fill(PASSWORD);
    await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Sign in" }).click()]);
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["response-satisfaction"]}/annotate?unit=${unitId}`);
    await page.locator('.annotate-grid[data-ready="true"]').waitFor();
    const text = page.locator(".response-text").first();

    // The three laid-out blocks, each exactly its characters and line breaks, in a monospace font.
    const blocks = text.locator("pre:has(> code.language-layout)");
    expect(await blocks.count()).toBe(3);
    const shown = await blocks.evaluateAll((els) => els.map((e) => (e as HTMLElement).innerText.replace(/\n$/, "")));
    expect(shown).toEqual([CHART.join("\n"), TABLE.join("\n"), PYRAMID.join("\n")]);
    const font = await blocks.first().evaluate((e) => getComputedStyle(e).fontFamily);
    expect(font).toMatch(/monospace/);

    // Columns line up on screen: a column's first character at one x on every row, one row per line.
    const score = await at(page, 1, "Score");
    const n90 = await at(page, 1, "90");
    const n85 = await at(page, 1, "85");
    expect(Math.abs(n90.x - score.x)).toBeLessThan(0.5);
    expect(Math.abs(n85.x - score.x)).toBeLessThan(0.5);
    expect(Math.abs((await at(page, 1, "Rank")).x - (await at(page, 1, "1")).x)).toBeLessThan(0.5);
    expect(score.top).toBeLessThan(n90.top);
    expect(n90.top).toBeLessThan(n85.top);
    // The chart's axis: "0", "5" and the last digit of "10" under the "+" marks they label.
    const axis = await page.evaluate(() => {
      const root = document.querySelectorAll(".response-text pre:has(> code.language-layout)")[0];
      const textNode = [...root.querySelectorAll("code")][0].firstChild!;
      const s = textNode.textContent!;
      const xOf = (i: number) => {
        const r = document.createRange();
        r.setStart(textNode, i);
        r.setEnd(textNode, i + 1);
        return r.getBoundingClientRect().left;
      };
      const rule = s.indexOf("+----");
      const labels = s.indexOf("0    5");
      return { plus: [xOf(rule), xOf(rule + 5), xOf(rule + 10)], labels: [xOf(labels), xOf(labels + 5), xOf(labels + 10)] };
    });
    for (let i = 0; i < 3; i++) expect(Math.abs(axis.plus[i] - axis.labels[i])).toBeLessThan(0.5);
    // Markdown did not eat the pyramid's "***" or "-------" as rules, nor the bars' "####" as headings.
    expect(await text.locator("hr").count()).toBe(0);
    expect(await text.locator("h1, h2, h3, h4, h5, h6").count()).toBe(0);

    // Markdown around them still renders.
    expect(await text.locator("p").first().textContent()).toBe("Here is the chart:");
    expect(await text.locator("ul > li").allTextContents()).toEqual(["first item", "second item"]);
    expect(await text.locator("table td").allTextContents()).toEqual(["1", "2"]);
    expect(await text.locator(".katex").count()).toBe(1);
    expect(await text.locator("pre:not(:has(> code.language-layout)) code").textContent()).toBe("x  =  1\n");

    // R: the exact characters of the whole response.
    await page.keyboard.press("r");
    await expect.poll(() => text.locator("pre.raw-text").count()).toBe(1);
    expect(await text.locator("pre.raw-text").textContent()).toBe(RESPONSE);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
