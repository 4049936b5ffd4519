/**
 * Real Chromium on the production build: a researcher's own pairwise labels (three annotators,
 * ties) and two judges' verdicts — one judge with an empty output, "Unsure" and "I cannot decide",
 * the first written as missing (an empty CSV cell), the others outside the label set — imported
 * through labels-wide and unit-verdicts. The judge page answers 200, counts the empty cell as
 * missing and the others as unparsed, and shows them; switching the missing policy, the reference
 * and the unparsed policy reloads the figures; the CSV link downloads the table.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { runImport } from "../../app/formats/import.server";
import { ROOT, startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

const FX = path.join(ROOT, "tests/fixtures/judge");
const EMAIL = "meta-eval@concord.test";
const PASSWORD = "judge-the-judges-2026";
let app: RunningApp;
let browser: Browser;
let taskId = 0;
const errors: string[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    const labels = await runImport({
      databaseFile: file,
      projectSlug: "meta",
      preset: "labels-wide",
      file: path.join(FX, "labels-wide.csv"),
      annotators: ["ann_1", "ann_2", "ann_3"],
    });
    const verdicts = await runImport({
      databaseFile: file,
      projectSlug: "meta",
      preset: "unit-verdicts",
      file: path.join(FX, "verdicts.csv"),
    });
    if (!labels.committed || !verdicts.committed) throw new Error("fixture import failed");
    const db = openDatabase(file);
    const user = await createUser({ email: EMAIL, name: "Meta Evaluator", password: PASSWORD }, db);
    const project = db.$client.prepare("select id from projects where slug = 'meta'").get() as { id: number };
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

describe("the judge page on a team's own files", () => {
  it("renders with out-of-set verdicts, shows them as unparsed (the empty cell as missing), and switches the policies and the reference", async () => {
    const { page } = browser;
    await signInAs(page, app.url, EMAIL, PASSWORD);
    const url = `${app.url}/p/meta/reports/${taskId}/judges`;
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    await expect.poll(() => page.getByRole("heading", { name: /Any label set/ }).count()).toBe(1);
    // By default u02's empty cell is a missing verdict: out of n (9 compared units), counted under "No verdict".
    const summary = await page.getByTestId("unparsed-summary").textContent();
    expect(summary).toMatch(
      /judge-steady: 0 unparsed \(0 on units with a reference\); judge-wobbly: 2 unparsed \(2 on units with a reference\)/,
    );
    expect(summary).toMatch(
      /Missing verdicts \(imported without a value, or as NA or N\/A\) are left out of n .*\(judge-steady: 0; judge-wobbly: 1\)\./,
    );
    const table = page.locator('[data-table="agreement-judges"]');
    const wobbly = table.locator("tr", { hasText: "judge-wobbly" });
    expect(await wobbly.locator('td[data-col="n"]').textContent()).toBe("9");
    expect(await wobbly.locator('td[data-col="missing"]').textContent()).toBe("3");
    // The unparsed class is a column of the judge's confusion matrix.
    expect(await page.locator('[data-table="agreement-confusion-1"] th', { hasText: "(unparsed)" }).count()).toBe(1);
    expect(await page.locator("svg").count()).toBeGreaterThan(0);

    const section = page.locator('section[aria-labelledby="any-label-set"]');
    await section.locator(`select[name="missing"]`).selectOption("unparsed");
    await section.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/missing=unparsed/);
    // The empty cell counted as unparsed: scikit-learn on the fixture (tests/unit/judge), n 10, accuracy 60.0%,
    // macro F1 0.533 under count-as-wrong.
    const wobblyCell = (col: string) =>
      page.locator('[data-table="agreement-judges"] tr', { hasText: "judge-wobbly" }).locator(`td[data-col="${col}"]`).textContent();
    await expect.poll(() => wobblyCell("n")).toBe("10");
    expect(await wobblyCell("accuracy")).toBe("60.0%");
    expect(await wobblyCell("macroF1")).toBe("0.533");

    await section.locator(`select[name="unparsed"]`).selectOption("exclude");
    await section.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/unparsed=exclude/);
    // Under exclude: n 7, accuracy 85.7% (scikit-learn accuracy_score 0.8571428571428571).
    await expect
      .poll(() =>
        page.locator('[data-table="agreement-judges"] tr', { hasText: "judge-wobbly" }).locator('td[data-col="accuracy"]').textContent(),
      )
      .toBe("85.7%");

    await section.locator(`select[name="reference"]`).selectOption("each");
    await section.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/reference=each/);
    // Each annotator, pooled: judge-steady n 40, accuracy 60.0% (scikit-learn on the stacked pairs).
    await expect
      .poll(() => page.locator('[data-table="agreement-judges"] tr', { hasText: "judge-steady" }).locator('td[data-col="n"]').textContent())
      .toBe("40");

    const href = await page.locator('[data-table="agreement-judges"] a', { hasText: "CSV" }).getAttribute("href");
    const csv = await page.request.get(new URL(href!, app.url).toString());
    expect(csv.status()).toBe(200);
    // The judge-agreement export's columns (issue 12), for the reference the page shows.
    const text = await csv.text();
    expect(text.split("\n")[0]).toBe(
      "judge,reference,unparsed_policy,n,unparsed,accuracy,accuracy_ci_low,accuracy_ci_high,cohen_kappa,cohen_kappa_ci_low,cohen_kappa_ci_high,macro_precision,macro_recall,macro_f1,unparsed_compared,missing,missing_policy",
    );
    expect(text.split("\n")[1]).toMatch(/^judge-steady,each,exclude,40,0,0\.6,.*,unparsed$/);
    expect(errors).toEqual([]);
  }, 120_000);
});
