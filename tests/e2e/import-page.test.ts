/**
 * The import page in real Chromium (issue 14, Import): upload a file →
 * its columns are detected → fields are mapped with selects → the preview
 * shows the first rows as parsed and the counts → Confirm writes them; a
 * second upload of the same file says it is already imported before any
 * Confirm; a missing column is explained in the page's words.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runImport } from "../../app/formats/import.server";
import { openDatabase } from "../../db/client";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";
import { tempDir } from "../support/db";

let app: RunningApp;
let browser: Browser;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const dir = tempDir("concord-e2e-import-");

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const db = openDatabase(file);
    db.$client.close();
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

// Labels from another tool, with column names Concord does not know: the user maps them.
const FILE = path.join(dir, "ratings.csv");
fs.writeFileSync(
  FILE,
  "segment,rater,verdict,note\n" +
    's1,Ada,Yes,"first\nline two"\n' +
    "s1,Grace,No,\n" +
    "s2,Ada,No,\n" +
    "s2,Grace,No,\n" +
    "s3,Ada,Yes,\n",
);

async function upload(page: Browser["page"], preset: string, file: string) {
  await page.goto(`${app.url}/p/demo/import`);
  await page.getByLabel("Preset").selectOption(preset);
  await page.getByLabel("File").setInputFiles(file);
  await page.getByRole("button", { name: "Upload" }).click();
  await page.waitForURL(/\?upload=[0-9a-f]{32}$/, { waitUntil: "commit" });
  await page.getByTestId("mapping-form").waitFor();
}

// Each preview and confirm runs in a child process at a lower CPU priority than the server (so annotators' submits go
// first); on a loaded machine one takes well over the default 30 s, so each test may take as long as its waits allow.
describe("import page", { timeout: 180_000 }, () => {
  it("upload → columns detected → mapped with selects → preview of the first rows → confirm", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await upload(page, "labels-long", FILE);
    await expect.poll(() => page.getByTestId("upload-file").textContent()).toMatch(/ratings\.csv/);

    // The selects list the file's columns. "rater" is a usual name for the annotator, so it is chosen already;
    // "segment" and "verdict" are not, so unit and label wait for the user.
    const unit = page.getByRole("combobox", { name: /^unit/ });
    expect(await unit.locator("option").allTextContents()).toEqual(["— choose a column —", "segment", "rater", "verdict", "note"]);
    expect(await unit.inputValue()).toBe("");
    expect(await page.getByRole("combobox", { name: /^annotator/ }).inputValue()).toBe("rater");
    expect(await page.getByRole("combobox", { name: /^label/ }).inputValue()).toBe("");
    await unit.selectOption("segment");
    await page.getByRole("combobox", { name: /^label/ }).selectOption("verdict");
    await page.getByRole("button", { name: "Preview", exact: true }).click();

    // The preview runs as a job; the page follows it, then shows the rows as read.
    await page.getByTestId("import-result").waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByRole("heading", { level: 2 }).textContent()).toBe("ratings.csv: ready to import");
    const sample = page.getByTestId("import-sample");
    expect(await sample.locator("thead th").allTextContents()).toEqual(["row", "unit", "annotator", "label"]);
    const firstRows = await sample
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent)));
    expect(firstRows).toEqual([
      ["2", "s1", "Ada", "Yes"],
      ["3", "s1", "Grace", "No"],
      ["4", "s2", "Ada", "No"],
      ["5", "s2", "Grace", "No"],
      ["6", "s3", "Ada", "Yes"],
    ]);
    expect(await page.locator("table").first().textContent()).toContain("Annotations5");

    await page.getByRole("button", { name: "Confirm import" }).click();
    await expect
      .poll(() => page.getByRole("heading", { level: 2 }).textContent(), { timeout: 60_000 })
      .toMatch(/^Imported ratings\.csv into ratings v1$/);
    const db = openDatabase(app.databaseFile);
    try {
      expect(
        db.$client
          .prepare(
            "select count(*) as n from annotations a join assignments s on s.id = a.assignment_id join units u on u.id = s.unit_id join tasks t on t.id = u.task_id where t.name = 'ratings'",
          )
          .get(),
      ).toEqual({ n: 5 });
    } finally {
      db.$client.close();
    }
  });

  it("the same file again: the preview says it is already imported, and offers no Confirm", async () => {
    const { page } = browser;
    // The file imported once already (through the app's import, a no-op if the first test did it), so this test runs alone.
    const first = await runImport({
      databaseFile: app.databaseFile,
      projectSlug: "demo",
      preset: "labels-long",
      file: FILE,
      mapping: { unit: "segment", annotator: "rater", label: "verdict" },
    });
    expect(first.errors).toEqual([]);
    await signInAs(page, app.url, researcher.email, researcher.password);
    await upload(page, "labels-long", FILE);
    await page.getByRole("combobox", { name: /^unit/ }).selectOption("segment");
    await page.getByRole("combobox", { name: /^label/ }).selectOption("verdict");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByTestId("import-result").waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.getByRole("heading", { level: 2 }).textContent())
      .toBe("ratings.csv is already imported ratings v1: importing it again would change nothing");
    expect(await page.getByRole("button", { name: "Confirm import" }).count()).toBe(0);
  });

  it("a field left unmapped is explained in the page's words", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    await upload(page, "labels-long", FILE);
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByTestId("import-problems").waitFor({ timeout: 60_000 });
    const problems = await page.getByTestId("import-problems").textContent();
    expect(problems).toContain('missing column "unit"');
    expect(problems).toContain("choose its column");
    expect(problems).not.toMatch(/--map|--dataset|npm run/);
  });

  it("labels-wide: only annotator-like columns are pre-ticked, none ticked is refused beside the field; the scale and the level are shown", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    const wide = path.join(dir, "wide-ratings.csv");
    // An original file: two annotator columns and two that are not (a prompt and a note).
    fs.writeFileSync(wide, "unit,prompt,rater_a,rater_b,note\nw1,Pick one,A,A,\nw2,Pick again,B,tie,unsure\nw3,And again,A,B,\n");
    await upload(page, "labels-wide", wide);
    const box = (name: string) => page.getByTestId("annotator-columns").getByRole("checkbox", { name });
    expect(await Promise.all(["prompt", "rater_a", "rater_b", "note"].map((c) => box(c).isChecked()))).toEqual([false, true, true, false]);

    await box("rater_a").uncheck();
    await box("rater_b").uncheck();
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await expect
      .poll(() => page.getByTestId("annotator-columns").textContent())
      .toContain("Tick the columns that hold annotators' labels (at least one); the other columns are ignored.");

    await box("rater_a").check();
    await box("rater_b").check();
    await page.getByLabel(/^Scale \(categories, in order\)/).fill("A, B, tie, skip");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByTestId("import-result").waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByRole("heading", { level: 2 }).textContent()).toBe("wide-ratings.csv: ready to import");
    expect(await page.getByTestId("import-level").textContent()).toBe(
      'Measurement level: nominal (inferred from the declared scale ("Scale"): not every category is a number, so the categories have no order)',
    );
    expect(await page.locator("table").first().textContent()).toContain("Annotations6");
    await page.getByRole("button", { name: "Confirm import" }).click();
    await expect
      .poll(() => page.getByRole("heading", { level: 2 }).textContent(), { timeout: 60_000 })
      .toMatch(/^Imported wide-ratings\.csv into wide-ratings v1$/);
    const db = openDatabase(app.databaseFile);
    try {
      const task = db.$client.prepare("select config from tasks where name = 'wide-ratings'").get() as { config: string };
      expect(JSON.parse(task.config)).toMatchObject({ level: "nominal", levelSource: "inferred", categories: ["A", "B", "tie", "skip"] });
      const who = db.$client
        .prepare(
          "select distinct u.name from users u join assignments a on a.annotator_id = u.id join units n on n.id = a.unit_id join tasks t on t.id = n.task_id where t.name = 'wide-ratings' order by u.name",
        )
        .all();
      expect(who).toEqual([{ name: "rater_a" }, { name: "rater_b" }]);
    } finally {
      db.$client.close();
    }
  });
});
