/**
 * Researcher pages in real Chromium, on the demo project: a new task (or a
 * curation reference task) whose name or guidelines name a model of the project
 * is held back with a warning beside the field until "Save anyway"; the run
 * page's calibration form and the providers form show each error beside its
 * field in plain words, focused; the results chart stays inside its panel with
 * a legend of every model, and the run's settings are a readable list; every
 * interval shown stays inside its scale; a stale unit says so on the annotate
 * page; an admin's "Set password" asks first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, isNull } from "drizzle-orm";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS, DEMO_RUN_NAME } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { modelOfProject } from "../support/factory";
import { launchBrowser, signInAs, type Browser } from "../support/browser";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { findTask } from "../../app/annotation/tasks.server";
import { editItem } from "../../app/curation/versions.server";

let app: RunningApp;
let browser: Browser;
let db: Db;
let projectId: number;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const pageErrors: string[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  projectId = db.select({ id: schema.projects.id }).from(schema.projects).where(eq(schema.projects.slug, "demo")).get()!.id;
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => pageErrors.push(e.message));
  await signInAs(browser.page, app.url, researcher.email, researcher.password);
}, 120_000);

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

const focused = () => browser.page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? null);
/** A model whose responses are in the demo project (annotators must never read its name). */
const demoModel = () => modelOfProject(db, projectId);
const tasksNamed = (name: string) =>
  db
    .select({ id: schema.tasks.id })
    .from(schema.tasks)
    .where(and(eq(schema.tasks.projectId, projectId), eq(schema.tasks.name, name)))
    .all();

describe("a task name that would unblind annotators", () => {
  it("the new-task form holds it back beside the field until Save anyway", async () => {
    const { page } = browser;
    const model = demoModel();
    expect(model).toBeTruthy();
    const name = `Compare ${model} answers`;
    await page.goto(`${app.url}/p/demo/tasks/new`);
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Guidelines (markdown)").fill(`Pick the better one; the first is always ${model.toLowerCase()}.`);
    await page.getByRole("button", { name: "Create task", exact: true }).click();
    const nameError = page.locator('.field-error[data-field="name"]');
    await expect.poll(() => nameError.textContent()).toContain(`"${model}"`);
    expect(await nameError.textContent()).toMatch(/Annotators see this text.*no longer be blind/);
    expect(await page.locator('.field-error[data-field="guidelines"]').textContent()).toContain(`"${model}"`);
    await expect.poll(focused).toBe("name");
    expect(tasksNamed(name)).toHaveLength(0);
    // Saving anyway creates the task as written.
    await page.getByRole("button", { name: "Save anyway" }).click();
    await page.waitForURL(/\/p\/demo\/tasks\/\d+$/);
    expect(tasksNamed(name)).toHaveLength(1);
  });

  it("a neutral name goes through without a warning", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/tasks/new`);
    await page.getByLabel("Name", { exact: true }).fill("Round three");
    expect(await page.getByRole("button", { name: "Save anyway" }).count()).toBe(0);
    await page.getByRole("button", { name: "Create task", exact: true }).click();
    await page.waitForURL(/\/p\/demo\/tasks\/\d+$/);
    expect(tasksNamed("Round three")).toHaveLength(1);
  });

  it("the curation reference-task form holds it back too", async () => {
    const { page } = browser;
    const model = demoModel();
    const dataset = db
      .select({ id: schema.datasets.id })
      .from(schema.datasets)
      .innerJoin(schema.items, eq(schema.items.datasetId, schema.datasets.id))
      .innerJoin(schema.responses, eq(schema.responses.itemId, schema.items.id))
      .where(and(eq(schema.datasets.projectId, projectId), isNull(schema.datasets.frozenAt), eq(schema.responses.model, model)))
      .get()!;
    const name = `Is ${model} better than the reference?`;
    await page.goto(`${app.url}/p/demo/curation/${dataset.id}`);
    const form = page.getByTestId("reference-task-form");
    await form.locator("summary").click();
    await form.getByLabel("Name (annotators see it)").fill(name);
    await form.getByRole("button", { name: "Create task", exact: true }).click();
    const nameError = form.locator('.field-error[data-field="name"]');
    await expect.poll(() => nameError.textContent()).toContain(`"${model}"`);
    await expect.poll(focused).toBe("name");
    expect(tasksNamed(name)).toHaveLength(0);
    await form.getByRole("button", { name: "Save anyway" }).click();
    await expect.poll(() => page.locator('[role="status"]').textContent()).toMatch(/^Created task \d+/);
    expect(tasksNamed(name)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });
});

const demoRunId = () => db.select({ id: schema.runs.id }).from(schema.runs).where(eq(schema.runs.name, DEMO_RUN_NAME)).get()!.id;
const fieldError = (name: string) => browser.page.locator(`.field-error[data-field="${name}"]`);

describe("form errors beside their fields", () => {
  it("the run page's calibration form: each error in plain words beside its field, which takes focus", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/runs/${demoRunId()}`);
    const form = page.getByTestId("calibrate");
    await form.getByLabel("Units per stratum").fill("0");
    await form.getByRole("button", { name: "Create human task" }).click();
    await expect.poll(() => fieldError("perStratum").textContent()).toBe("Units per stratum must be 1 or more.");
    await expect.poll(focused).toBe("perStratum");
    expect(await page.content()).not.toMatch(/Too small|perStratum:/);
    // No annotator chosen: the sentence sits under the pool, whose first box takes focus.
    await form.getByLabel("Units per stratum").fill("5");
    const boxes = form.locator("input[name=pool]");
    for (let i = 0; i < (await boxes.count()); i++) await boxes.nth(i).setChecked(false);
    await form.getByRole("button", { name: "Create human task" }).click();
    await expect.poll(() => fieldError("pool").textContent()).toBe("Choose at least one annotator.");
    expect(await fieldError("perStratum").count()).toBe(0);
    await expect.poll(focused).toBe("pool");
    expect(await page.content()).not.toContain("pool: choose");
    // Nothing was created: no task made from this run.
    const fromRun = db
      .select({ config: schema.tasks.config })
      .from(schema.tasks)
      .all()
      .filter((t) => (t.config as { runId?: number }).runId === demoRunId());
    expect(fromRun).toHaveLength(0);
  });

  it("the Runs page's JSON definition: each problem in a sentence beside the JSON, which takes focus", async () => {
    const { page } = browser;
    const runsBefore = db.select({ id: schema.runs.id }).from(schema.runs).all().length;
    const submit = async (edit: (def: Record<string, unknown>) => void) => {
      await page.goto(`${app.url}/p/demo/runs`);
      const details = page.locator("details", { hasText: "Advanced: a run definition in JSON" });
      await details.locator("summary").click();
      const area = details.locator("textarea[name=definition]");
      const def = JSON.parse(await area.inputValue()) as Record<string, unknown>;
      edit(def);
      await area.fill(JSON.stringify(def, null, 2));
      await details.getByRole("button", { name: "Start run from JSON" }).click();
    };
    // No model: zod's "definition.models: Too small: expected array to have >=1 items" was shown at the top.
    await submit((def) => (def.models = []));
    await expect.poll(() => fieldError("definition").textContent()).toBe("Choose at least one: the definition's models.");
    await expect.poll(focused).toBe("definition");
    expect(await page.locator("textarea[name=definition]").getAttribute("aria-describedby")).toBe("definition-error");
    // The message sits right under the JSON, not at the top of the page.
    const areaBox = (await page.locator("textarea[name=definition]").boundingBox())!;
    const errBox = (await fieldError("definition").boundingBox())!;
    expect(errBox.y).toBeGreaterThanOrEqual(areaBox.y + areaBox.height - 1);
    expect(errBox.y - (areaBox.y + areaBox.height)).toBeLessThan(40);
    expect(await page.locator(".alert").count()).toBe(0);
    // A protocol setting out of bounds: was "settings.maxTurns: Too small: expected number to be >=1".
    await submit((def) => {
      def.protocol = "refinebench";
      def.settings = { maxTurns: 0 };
    });
    await expect.poll(() => fieldError("definition").textContent()).toBe("The definition's settings.maxTurns must be 1 or more.");
    await expect.poll(focused).toBe("definition");
    // What only the data can refuse (no such provider) goes beside the JSON too.
    await submit((def) => (def.models = [{ provider: "no-such-provider" }]));
    await expect.poll(() => fieldError("definition").textContent()).toMatch(/no provider named "no-such-provider"/);
    await expect.poll(focused).toBe("definition");
    const body = (await page.locator("body").textContent())!;
    expect(body).not.toMatch(/Too (small|big)|expected (number|array)|Invalid input/);
    expect(db.select({ id: schema.runs.id }).from(schema.runs).all()).toHaveLength(runsBefore);
    expect(pageErrors).toEqual([]);
  });

  it("the calibration pool picker lists one annotator per line, like the task page's", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/runs/${demoRunId()}`);
    const labels = page.getByTestId("calibrate").locator("fieldset label:has(input[name=pool])");
    const n = await labels.count();
    expect(n).toBeGreaterThan(1);
    const boxes = await Promise.all(Array.from({ length: n }, (_, i) => labels.nth(i).boundingBox()));
    for (let i = 1; i < n; i++) {
      expect(boxes[i]!.y, `annotator ${i + 1} below annotator ${i}`).toBeGreaterThanOrEqual(boxes[i - 1]!.y + boxes[i - 1]!.height - 1);
      expect(Math.abs(boxes[i]!.x - boxes[0]!.x), `annotator ${i + 1} starts where the first does`).toBeLessThan(2);
    }
    // The other settings are one per line too: each label starts at the form's left edge.
    const formBox = (await page.getByTestId("calibrate").locator("form").boundingBox())!;
    for (const label of ["Sampling plan", "Splits (annotators disagree)", "Units per stratum", "Seed", "Annotators per unit"]) {
      const box = (await page.getByTestId("calibrate").locator("label", { hasText: label }).first().boundingBox())!;
      expect(Math.abs(box.x - formBox.x), label).toBeLessThan(2);
    }
  });

  it("the providers form: concurrency over the limit is said in words beside the field, focused", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/providers`);
    const form = page.getByTestId("add-provider");
    await form.getByLabel("Name", { exact: true }).fill("too-busy");
    await form.getByLabel("Base URL").fill("http://127.0.0.1:9/v1");
    await form.getByLabel("Model", { exact: true }).fill("some-model");
    await form.getByLabel("Concurrency").fill("600");
    await form.getByRole("button", { name: "Add provider" }).click();
    await expect.poll(() => fieldError("concurrency").textContent()).toBe("Concurrency must be 512 or less.");
    await expect.poll(focused).toBe("concurrency");
    expect(await page.content()).not.toMatch(/Too big|concurrency:/);
    // A refusal of the store (a missing URL) goes beside the URL.
    await form.getByLabel("Concurrency").fill("4");
    await form.getByLabel("Base URL").fill("");
    await form.getByRole("button", { name: "Add provider" }).click();
    await expect.poll(() => fieldError("baseUrl").textContent()).toBe("An http(s) URL is required (e.g. http://localhost:8000/v1)");
    await expect.poll(focused).toBe("baseUrl");
    expect(db.select({ id: schema.providers.id }).from(schema.providers).where(eq(schema.providers.name, "too-busy")).all()).toHaveLength(
      0,
    );
    expect(pageErrors).toEqual([]);
  });
});

describe("the demo run's results page", () => {
  it("at 1440×900 the chart lies inside its panel, clear of the table, with a legend of every model; the settings are a list", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${app.url}/p/demo/runs/${demoRunId()}/results`);
    const figure = page.getByTestId("pass-figure").first();
    const svg = figure.locator("svg.recharts-surface");
    await svg.waitFor();
    const panel = (await figure.boundingBox())!;
    const chart = (await svg.boundingBox())!;
    expect(chart.x).toBeGreaterThanOrEqual(panel.x);
    expect(chart.x + chart.width, "the chart's right edge inside its panel").toBeLessThanOrEqual(panel.x + panel.width);
    // The table beside it starts where the chart ends (or below it): nothing drawn over it.
    const table = (await figure.locator("table").boundingBox())!;
    expect(table.x >= chart.x + chart.width || table.y >= chart.y + chart.height, "the table is clear of the chart").toBe(true);
    // The legend names every model of the run, as the table does.
    const models = (await figure.locator("tbody tr td:first-child").allTextContents()).map((t) => t.trim());
    expect(models.length).toBeGreaterThan(1);
    const legend = (await figure.getByTestId("chart-legend").locator("li").allTextContents()).map((t) => t.trim());
    expect(legend).toEqual(models);
    // The settings used, as rows the run page also shows ("max turns" → its value), not JSON.
    await page.getByText(/^Settings used/).click();
    const settings = page.getByTestId("results-settings");
    expect(await settings.locator("dt").count()).toBeGreaterThan(0);
    expect(await settings.textContent()).toMatch(/max turns\d/);
    expect(await settings.textContent()).not.toContain("{");
    expect(await page.locator("details pre").count()).toBe(0);
  });
});

/**
 * Every interval a table shows, checked against its scale: the reports format a
 * CI like the figure before it (app/reports/format.ts): "12.3%" → a share in
 * [0, 100] %; two decimals → a mean on the task's 1–5 scale; three decimals → a
 * coefficient (kappa, AC1, Pearson r) in [−1, 1].
 */
function outOfScale(cells: string[], scaleOf: (lo: string) => [number, number]): string[] {
  const bad: string[] = [];
  for (const text of cells) {
    const m = /^\[(-?[\d.]+)(%?), (-?[\d.]+)(%?)\]$/.exec(text.trim());
    if (!m) continue;
    const [lo, hi] = [Number(m[1]), Number(m[3])];
    const [min, max] = scaleOf(m[1] + m[2]);
    if (!(lo >= min && hi <= max && lo < hi)) bad.push(text);
  }
  return bad;
}

describe("intervals", () => {
  it("on the run page and its results, each CI names its method, stays in 0–100, and too few labels says so", async () => {
    const { page } = browser;
    const runId = demoRunId();
    await page.goto(`${app.url}/p/demo/runs/${runId}`);
    const form = page.getByTestId("calibrate");
    await form.getByLabel("Sampling plan").selectOption("stratified");
    // Five of each model × turn stratum's units: a sample, so the corrected figures have a sampling error.
    await form.getByLabel("Units per stratum").fill("5");
    await form.getByRole("button", { name: "Create human task" }).click();
    await expect.poll(() => page.getByText(/can be labelled now/).count()).toBe(1);
    const taskId = Number((await page.getByRole("link", { name: "Open the task" }).getAttribute("href"))!.split("/").pop());
    // Before any label: the judge's own interval, and "too few labels" for the corrected one.
    await page.reload();
    const ciCells = page.locator('td[data-ci="percent"]');
    await expect.poll(() => ciCells.count()).toBeGreaterThan(0);
    const before = await ciCells.allTextContents();
    expect(before.filter((t) => t.startsWith("too few labels")).length).toBeGreaterThan(0);
    expect(
      before.some((t) => /^\[/.test(t)),
      "the judge's raw interval",
    ).toBe(true);
    expect(outOfScale(before, () => [0, 100])).toEqual([]);
    expect(await page.locator("th", { hasText: "95% CI (Wilson score" }).count()).toBe(2);
    // The annotators label every unit through the app's own save (agreeing; "No" on every third unit).
    const task = (await findTask(projectId, taskId, db))!;
    const assignments = db
      .select({ unitId: schema.assignments.unitId, userId: schema.assignments.annotatorId })
      .from(schema.assignments)
      .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
      .where(eq(schema.units.taskId, taskId))
      .all();
    expect(assignments.length).toBeGreaterThan(4);
    for (const a of assignments) {
      const answer = a.unitId % 3 === 0 ? "No" : "Yes";
      const r = await saveAnnotation(
        { task, userId: a.userId, unitId: a.unitId, intent: "submit", form: new URLSearchParams({ answer }) },
        db,
      );
      expect(r.ok).toBe(true);
    }
    await page.reload();
    const after = await ciCells.allTextContents();
    expect(after.filter((t) => /^\[/.test(t)).length, "corrected intervals once labelled").toBeGreaterThan(
      before.filter((t) => /^\[/.test(t)).length,
    );
    expect(outOfScale(after, () => [0, 100])).toEqual([]);
    for (const t of after) expect(t, "an interval or the reason there is none").toMatch(/^\[|^too few/);
    // The results page: the corrected headline metrics (RefineBench Acc_t, Pass_t: percentages).
    await page.goto(`${app.url}/p/demo/runs/${runId}/results`);
    const metricCells = page.locator('td[data-ci="metric"]');
    await expect.poll(() => metricCells.count()).toBeGreaterThan(0);
    const shown = await metricCells.allTextContents();
    expect(shown.some((t) => /^\[/.test(t))).toBe(true);
    // Never a zero-width interval: an interval, too few labels, or exact (every unit labelled).
    for (const t of shown) expect(t).toMatch(/^\[|^too few labels$|^exact: every unit labelled$/);
    for (const t of shown.filter((x) => x.startsWith("["))) {
      const [lo, hi] = t.slice(1, -1).split(", ").map(Number);
      expect(hi, t).toBeGreaterThan(lo);
    }
    expect(outOfScale(shown, () => [0, 100])).toEqual([]);
    expect(
      await page.locator("th", { hasText: "95% CI (Wilson score per direction of the judge's errors, MOVER)" }).count(),
    ).toBeGreaterThan(0);
    expect(await page.getByTestId("ci-method").first().textContent()).toMatch(/Wilson score interval.*MOVER/s);
    // One unit per stratum: the plan warns when it is made, and the run page and the results page say it again, with the numbers.
    await page.goto(`${app.url}/p/demo/runs/${runId}`);
    const form2 = page.getByTestId("calibrate");
    await form2.getByLabel("Sampling plan").selectOption("stratified");
    await form2.getByLabel("Units per stratum").fill("1");
    await form2.getByRole("button", { name: "Create human task" }).click();
    await expect.poll(() => page.getByText(/can be labelled now/).count()).toBe(1);
    const thin = /strata with fewer than 2 units drawn \([^)]*: 1 of \d+[^)]*\): an interval needs at least 2 labelled units per stratum/;
    expect(await page.getByText(/can be labelled now/).textContent()).toMatch(thin);
    await page.reload();
    await expect.poll(() => page.getByTestId("calibration-warning").count()).toBe(1);
    expect(await page.getByTestId("calibration-warning").textContent()).toMatch(thin);
    await page.goto(`${app.url}/p/demo/runs/${runId}/results`);
    await expect.poll(() => page.getByTestId("calibration-warning").count()).toBe(1);
    expect(await page.getByTestId("calibration-warning").textContent()).toMatch(thin);
  });

  it("every CI on the demo's reports stays inside its scale", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/reports`);
    const hrefs = [
      ...new Set(
        (await page.locator('a[href*="/reports/"]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).pathname))).filter((h) =>
          /\/reports\/\d+(\/(judges|disagreements))?$/.test(h),
        ),
      ),
    ];
    const taskPages = new Set(hrefs.map((h) => h.replace(/\/(judges|disagreements)$/, "")));
    const urls = [...taskPages].flatMap((t) => [t, `${t}/judges`, `${t}/disagreements`]);
    expect(urls.length).toBeGreaterThan(2);
    let intervals = 0;
    for (const url of urls) {
      await page.goto(`${app.url}${url}`);
      const cells = await page.locator("[data-table] td").allTextContents();
      intervals += cells.filter((t) => /^\[/.test(t.trim())).length;
      const bad = outOfScale(cells, (lo) => (lo.endsWith("%") ? [0, 100] : /\.\d\d$/.test(lo) ? [1, 5] : [-1, 1]));
      expect(bad, url).toEqual([]);
    }
    expect(intervals).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  });
});

describe("a stale unit on the annotate page", () => {
  it("says the text changed since the annotator labelled it, with the stale mark; an unchanged unit does not", async () => {
    const { page } = browser;
    const ana = DEMO_ACCOUNTS.find((a) => a.email.startsWith("ana@"))!;
    const anaId = db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, ana.email)).get()!.id;
    // Two of Ana's submitted units in the demo (of open datasets): the text of the first one's item is edited.
    const submitted = db
      .selectDistinct({ unitId: schema.units.id, taskId: schema.units.taskId, itemId: schema.units.itemId })
      .from(schema.annotations)
      .innerJoin(schema.assignments, eq(schema.assignments.id, schema.annotations.assignmentId))
      .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
      .innerJoin(schema.items, eq(schema.items.id, schema.units.itemId))
      .innerJoin(schema.datasets, eq(schema.datasets.id, schema.items.datasetId))
      .innerJoin(schema.tasks, eq(schema.tasks.id, schema.units.taskId))
      .where(
        and(
          eq(schema.assignments.annotatorId, anaId),
          eq(schema.annotations.status, "submitted"),
          isNull(schema.datasets.frozenAt),
          eq(schema.tasks.status, "open"),
        ),
      )
      .all();
    const changed = submitted[0];
    const unchanged = submitted.find((u) => u.itemId !== changed.itemId && u.taskId === changed.taskId);
    expect(changed && unchanged, "two submitted units of different items in one task").toBeTruthy();
    const item = db.select({ query: schema.items.query }).from(schema.items).where(eq(schema.items.id, changed.itemId)).get()!;
    const researcherId = db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, researcher.email)).get()!.id;
    const edit = await editItem(
      changed.itemId,
      { query: `${item.query}\n\n(Clarified: answer in one sentence.)` },
      { userId: researcherId, reason: "clarify the question" },
      db,
    );
    expect(edit.stale.annotations).toBeGreaterThan(0);

    await signInAs(page, app.url, ana.email, ana.password);
    await page.goto(`${app.url}/p/demo/tasks/${changed.taskId}/annotate?unit=${changed.unitId}`);
    const notice = page.getByTestId("stale-notice");
    await expect.poll(() => notice.textContent()).toMatch(/this text changed since you labelled it/i);
    expect(await notice.locator(".badge.stale").textContent()).toBe("stale");
    // The page shows the new text.
    expect(await page.getByRole("region", { name: "Problem" }).textContent()).toContain("Clarified: answer in one sentence.");
    await page.goto(`${app.url}/p/demo/tasks/${unchanged!.taskId}/annotate?unit=${unchanged!.unitId}`);
    await page.getByRole("region", { name: "Problem" }).waitFor();
    expect(await page.getByTestId("stale-notice").count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await signInAs(page, app.url, researcher.email, researcher.password);
  });
});

describe("admin: set a user's password", () => {
  it("asks before setting it (the user is signed out everywhere); nothing changes when the admin says no", async () => {
    const { page } = browser;
    const admin = DEMO_ACCOUNTS.find((a) => a.role === "admin")!;
    const ben = DEMO_ACCOUNTS.find((a) => a.email.startsWith("ben@"))!;
    const hashOf = () => db.select({ h: schema.users.passwordHash }).from(schema.users).where(eq(schema.users.email, ben.email)).get()!.h;
    const before = hashOf();
    await signInAs(page, app.url, admin.email, admin.password);
    await page.goto(`${app.url}/admin/users`);
    await page.getByLabel(`New password for ${ben.email}`).fill("a-brand-new-password-2026");
    const questions: string[] = [];
    let answer = false;
    const onDialog = (d: import("playwright-core").Dialog) => {
      questions.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    };
    page.on("dialog", onDialog);
    try {
      const button = page.getByRole("button", { name: `Set password for ${ben.email}` });
      await button.click();
      await expect.poll(() => questions.length).toBe(1);
      expect(questions[0]).toMatch(new RegExp(`${ben.email.replace(/\./g, "\\.")}.*signed out everywhere`));
      // Declined: nothing was sent.
      await page.waitForTimeout(300);
      expect(hashOf()).toBe(before);
      answer = true;
      await button.click();
      await expect
        .poll(() => page.locator('[role="status"], .alert, .panel').filter({ hasText: "Password changed" }).count())
        .toBeGreaterThan(0);
      expect(questions).toHaveLength(2);
      expect(hashOf()).not.toBe(before);
    } finally {
      page.off("dialog", onDialog);
    }
    expect(pageErrors).toEqual([]);
  });
});
