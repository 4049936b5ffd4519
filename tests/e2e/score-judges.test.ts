/**
 * Issue 41 in real Chromium on the production build: a story-evaluation set (tests/fixtures/judge/
 * stories.ts: prompts × systems, 1–5 human ratings, judges on their own scales) imported through
 * items-csv, responses, labels-long (interval) and verdicts with a variant_of column. The judges
 * page shows the variant table from the imported file (tie-judge beside its base avg-judge, with the
 * three consistencies), and its form marks another judge as a variant.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";
import { tempDir } from "../support/db";
import { IMPORT_MAPPINGS, JUDGES, PROMPTS, STORIES, W1, W2, writeStoryFiles } from "../fixtures/judge/stories";

const EMAIL = "scores@concord.test";
const PASSWORD = "score-the-scorers-2026";
let app: RunningApp;
let browser: Browser;
let taskId = 0;
const errors: string[] = [];
const files = writeStoryFiles(tempDir(), Object.keys(JUDGES), { "tie-judge": "avg-judge" });

beforeAll(async () => {
  app = await startApp(async (file) => {
    for (const s of [
      { preset: "items-csv", file: files.items, mapping: IMPORT_MAPPINGS.items },
      { preset: "responses", file: files.stories, mapping: IMPORT_MAPPINGS.stories },
      { preset: "labels-long", file: files.ratings, mapping: IMPORT_MAPPINGS.ratings, level: "interval" as const },
      { preset: "verdicts", file: files.verdicts, mapping: IMPORT_MAPPINGS.verdicts },
    ]) {
      const r = await runImport({ databaseFile: file, projectSlug: "stories", ...s });
      if (!r.committed) throw new Error(`fixture import failed: ${JSON.stringify(r.errors.slice(0, 3))}`);
    }
    const db = openDatabase(file);
    const user = await createUser({ email: EMAIL, name: "Score Evaluator", password: PASSWORD }, db);
    const project = db.$client.prepare("select id from projects where slug = 'stories'").get() as { id: number };
    await setMembership(project.id, user.id, "researcher", db);
    taskId = (db.$client.prepare("select id from tasks where project_id = ?").get(project.id) as { id: number }).id;
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

/** Consistency with humans differing (RAVEL §5.5), from the fixture: pairs within a prompt the humans order, a judge tie inconsistent. */
function humanDiffering(judge: number[]) {
  const human = STORIES.map((_, i) => (W1[i] + W2[i]) / 2);
  let pairs = 0;
  let consistent = 0;
  for (const p of PROMPTS) {
    const idx = STORIES.map((s, i) => (s.prompt === p ? i : -1)).filter((i) => i >= 0);
    for (let a = 0; a < idx.length; a++)
      for (let b = a + 1; b < idx.length; b++) {
        const h = Math.sign(human[idx[a]] - human[idx[b]]);
        if (h === 0) continue;
        pairs++;
        if (Math.sign(judge[idx[a]] - judge[idx[b]]) === h) consistent++;
      }
  }
  return consistent / pairs;
}
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

describe("the judges page on an imported score set", () => {
  it("shows the ablation table from the file's variant_of, and the form marks another variant", async () => {
    const { page } = browser;
    await signInAs(page, app.url, EMAIL, PASSWORD);
    const res = await page.goto(`${app.url}/p/stories/reports/${taskId}/judges`);
    expect(res?.status()).toBe(200);
    const table = page.locator('[data-table="ablation"]');
    await expect.poll(() => table.locator("tbody tr").count()).toBe(2);
    const rows = await table.locator("tbody tr").allTextContents();
    expect(rows[0]).toContain("avg-judge");
    expect(rows[0]).toContain("full (base)");
    expect(rows[1]).toContain("tie-judge");
    const tie = table.locator("tbody tr", { hasText: "tie-judge" });
    expect(await tie.locator('td[data-col="humanDiffering"]').textContent()).toBe(pct(humanDiffering(JUDGES["tie-judge"])));
    const base = table.locator("tbody tr", { hasText: "full (base)" });
    expect(await base.locator('td[data-col="humanDiffering"]').textContent()).toBe(pct(humanDiffering(JUDGES["avg-judge"])));

    // The page's form: ten-judge becomes a variant of avg-judge, labelled.
    await page.locator("summary", { hasText: "Mark a judge as a variant" }).click();
    const form = page.getByRole("form", { name: "Variant of ten-judge" });
    await form.getByLabel("ten-judge: variant of").selectOption("avg-judge");
    await form.getByLabel("ten-judge: variant label").fill("1-10 scale");
    await form.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => form.getByRole("status").textContent()).toBe("Saved: a variant of avg-judge.");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(3);
    const ten = table.locator("tbody tr", { hasText: "ten-judge" });
    expect(await ten.locator('td[data-col="variant"]').textContent()).toBe("1-10 scale");
    expect(await ten.locator('td[data-col="humanDiffering"]').textContent()).toBe(pct(humanDiffering(JUDGES["ten-judge"])));
    expect(errors).toEqual([]);
  });

  it("the planner's δ field: applied, it sets the planner's target and travels with the CSV links", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/stories/reports/${taskId}/judges`);
    await page.getByLabel("Planner target ±δ").fill("0.1");
    await page.getByRole("button", { name: "Apply" }).first().click();
    await expect.poll(() => new URL(page.url()).searchParams.get("delta")).toBe("0.1");
    const planner = page.locator('[data-table="planner"]');
    const row = planner.locator("tbody tr", { hasText: "avg-judge Pearson r" });
    // The URL changes as the navigation commits; the table follows in the next render.
    await expect.poll(() => row.locator('td[data-col="delta"]').textContent()).toBe("0.100");
    expect(Number(await row.locator('td[data-col="neededAssured"]').textContent())).toBeGreaterThan(
      Number(await row.locator('td[data-col="needed"]').textContent()),
    );
    const href = await page.locator('[data-table="judges"] a', { hasText: /CSV/ }).first().getAttribute("href");
    expect(new URL(href!, app.url).searchParams.get("delta")).toBe("0.1");
    expect(errors).toEqual([]);
  });
});
