/**
 * The fifth task kind, Likert 1–7 with rationale, end to end in real Chromium: a researcher
 * creates the task in the UI over a dataset's responses (question and anchors set on the
 * form), two annotators label every unit with the keyboard alone (1–7, C for the rationale,
 * Enter) and never see a model name, a judge's verdict or the other's labels; the report's
 * quadratic-weighted kappa and Krippendorff's ordinal alpha equal the same coefficients
 * computed here from the raw labels; adjudication shows each label and records a final point;
 * the annotations export carries each point and rationale. Each test has its own task (the
 * keyboard one labels a task made at setup; report, adjudication and export read a task
 * labelled at setup through saveAnnotation, the same path the form's action takes), so any
 * one of them passes alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import Papa from "papaparse";
import { nextUnitId, saveAnnotation } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";

const PASSWORD = "likert-e2e-2026";
/** The scenario's researcher (app/annotation/synthetic.server.ts). */
const RESEARCHER = "researcher@lab.test";
const VERDICT_SECRET = "JUDGE-VERDICT-OUTPUT-5521";
const QUESTION = "How convincing is this answer's argument?";
const LOW = "Not convincing at all";
const HIGH = "Fully convincing";
let app: RunningApp;
let browser: Browser;
let db: Db;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;
/** Made at setup: one for the keyboard test to label, one labelled with POINTS for the report, adjudication and export tests. */
let keyboardTask = 0;
let labelledTask = 0;

/** The points each annotator gives, unit by unit in their queue's order (known disagreement, some of it large). */
const POINTS = [
  [7, 6, 2, 5, 1, 4, 3, 6],
  [6, 6, 3, 5, 2, 2, 3, 7],
];
const rationale = (who: number, n: number) => `RATIONALE-${who}-${n}: the argument is ${n % 2 ? "thin" : "sound"}.`;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const seeded = openDatabase(file);
    // A project, a researcher, two annotators and a dataset of 3 items × 4 models' responses; no task yet.
    scenario = await seedAnnotationScenario(seeded, { annotators: 2, items: 3, password: PASSWORD, kinds: [] });
    // A judge's verdict on every response: the annotators must never see it.
    const judge = seeded
      .insert(schema.judges)
      .values({ projectId: scenario.projectId, name: "Strict judge", provider: "p", model: "judge-model-x" })
      .returning({ id: schema.judges.id })
      .get();
    for (const r of seeded.select({ id: schema.responses.id }).from(schema.responses).all())
      seeded.insert(schema.verdicts).values({ judgeId: judge.id, responseId: r.id, value: "2", rawOutput: VERDICT_SECRET }).run();
    const datasetId = seeded.select({ id: schema.datasets.id }).from(schema.datasets).get()!.id;
    const pool = scenario.annotators.map((a) => a.id);
    const likert = async (name: string) =>
      (
        await createTask(
          scenario.projectId,
          scenario.researcher.id,
          {
            name,
            datasetId,
            kind: "likert-7",
            overlap: 2,
            pool,
            itemLimit: 2,
            settings: { question: QUESTION, lowAnchor: LOW, highAnchor: HIGH },
          },
          seeded,
        )
      ).taskId;
    keyboardTask = await likert("Convincingness (keyboard)");
    labelledTask = await likert("Convincingness (labelled)");
    const task = (await findTask(scenario.projectId, labelledTask, seeded))!;
    for (const [who, a] of scenario.annotators.entries()) {
      let n = 0;
      for (
        let u = await nextUnitId(labelledTask, a.id, undefined, seeded);
        u != null;
        u = await nextUnitId(labelledTask, a.id, undefined, seeded), n++
      ) {
        const form = new URLSearchParams({ score: String(POINTS[who][n]), rationale: rationale(who, n + 1) });
        expect((await saveAnnotation({ task, userId: a.id, unitId: u, intent: "submit", form }, seeded)).ok).toBe(true);
      }
    }
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

const base = () => `${app.url}/p/${scenario.slug}`;

/** Nothing blind-breaking in the live DOM or in the document as served. */
async function assertBlind(otherRationales: string[]) {
  const page = browser.page;
  const sent = await page
    .context()
    .request.get(page.url())
    .then((r) => r.text());
  for (const html of [await page.content(), sent]) {
    for (const m of SYNTHETIC_MODELS) expect(html, `model name ${m}`).not.toContain(m);
    expect(html).not.toContain(VERDICT_SECRET);
    expect(html).not.toContain("judge-model-x");
    for (const r of otherRationales) expect(html).not.toContain(r);
  }
}

/** Quadratic-weighted Cohen's kappa of two raters over the same units: 1 − Σ(a−b)²/n ÷ Σ_u Σ_v (a_u − b_v)²/n². */
function quadraticKappa(a: number[], b: number[]): number {
  const n = a.length;
  let observed = 0;
  for (let u = 0; u < n; u++) observed += (a[u] - b[u]) ** 2;
  let expected = 0;
  for (let u = 0; u < n; u++) for (let v = 0; v < n; v++) expected += (a[u] - b[v]) ** 2;
  return 1 - observed / n / (expected / (n * n));
}

/**
 * Krippendorff's alpha, ordinal metric, for complete data of two coders (Krippendorff 2011,
 * "Computing Krippendorff's alpha-reliability"): coincidences o_ck, marginals n_c, and
 * δ²(c,k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²; α = 1 − (n − 1)·Σ o_ck δ²_ck / Σ n_c n_k δ²_ck.
 */
function ordinalAlpha(a: number[], b: number[]): number {
  const values = [...new Set([...a, ...b])].sort((x, y) => x - y);
  const idx = new Map(values.map((v, i) => [v, i]));
  const q = values.length;
  const o = Array.from({ length: q }, () => new Array<number>(q).fill(0));
  // Each unit with two values contributes both ordered pairs, weighted 1/(m − 1) = 1.
  for (let u = 0; u < a.length; u++) {
    o[idx.get(a[u])!][idx.get(b[u])!] += 1;
    o[idx.get(b[u])!][idx.get(a[u])!] += 1;
  }
  const nc = o.map((row) => row.reduce((s, x) => s + x, 0));
  const n = nc.reduce((s, x) => s + x, 0);
  const delta2 = (c: number, k: number) => {
    const [lo, hi] = c <= k ? [c, k] : [k, c];
    let sum = 0;
    for (let g = lo; g <= hi; g++) sum += nc[g];
    return (sum - (nc[c] + nc[k]) / 2) ** 2;
  };
  let dObserved = 0;
  let dExpected = 0;
  for (let c = 0; c < q; c++)
    for (let k = 0; k < q; k++) {
      dObserved += o[c][k] * delta2(c, k);
      dExpected += nc[c] * nc[k] * delta2(c, k);
    }
  return 1 - ((n - 1) * dObserved) / dExpected;
}

/** The report's quadratic-weighted kappa and ordinal alpha of a task equal those computed here from its raw labels. */
async function reportMatchesRawLabels(taskId: number) {
  // The raw labels, paired by unit, straight from the database.
  const rows = db
    .select({ unitId: schema.units.id, annotatorId: schema.assignments.annotatorId, label: schema.annotations.label })
    .from(schema.annotations)
    .innerJoin(schema.assignments, eq(schema.assignments.id, schema.annotations.assignmentId))
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(and(eq(schema.units.taskId, taskId), eq(schema.annotations.status, "submitted")))
    .all();
  const byUnit = new Map<number, Map<number, number>>();
  for (const r of rows) (byUnit.get(r.unitId) ?? byUnit.set(r.unitId, new Map()).get(r.unitId)!).set(r.annotatorId, r.label as number);
  const [first, second] = scenario.annotators.map((a) => a.id);
  const a = [...byUnit.values()].map((m) => m.get(first)!);
  const b = [...byUnit.values()].map((m) => m.get(second)!);
  expect(a).toHaveLength(8);
  const kappa = quadraticKappa(a, b);
  const alpha = ordinalAlpha(a, b);
  expect(Number.isFinite(kappa) && Number.isFinite(alpha)).toBe(true);

  const page = browser.page;
  await signInAs(page, app.url, RESEARCHER, PASSWORD);
  await page.goto(`${base()}/reports/${taskId}`);
  expect(await page.getByTestId("report-counts").innerText()).toContain("ordinal labels");
  const iaa = page.locator('[data-table="iaa"]');
  const valueOf = (statistic: string) =>
    iaa.locator("tr", { has: page.getByRole("cell", { name: statistic, exact: true }) }).locator('td[data-col="value"]');
  // Equal at the precision shown (three decimals).
  expect(await valueOf("Weighted kappa, quadratic").innerText()).toBe(kappa.toFixed(3));
  expect(await valueOf("Krippendorff's alpha (ordinal)").innerText()).toBe(alpha.toFixed(3));
}

// Each step drives the browser through several pages (labelling: 16 units); a busy machine needs time.
describe("Likert 1–7 with rationale", { timeout: 180_000 }, () => {
  it("a researcher creates the task in the UI over the dataset's responses", async () => {
    const page = browser.page;
    await signInAs(page, app.url, RESEARCHER, PASSWORD);
    await page.goto(`${base()}/tasks/new`);
    const kind = page.getByLabel("Kind");
    await hydrated(kind);
    await kind.selectOption({ label: "Likert 1–7 with rationale" });
    await page.getByLabel("Question (annotators answer it for each response)").waitFor();
    await page.getByLabel("Name").fill("Convincingness");
    await page.getByLabel("Items to sample (blank: all)").fill("2");
    // A missing anchor is refused with the message next to its field; the rest of the form stays as typed.
    await page.getByLabel("Question (annotators answer it for each response)").fill(QUESTION);
    await page.getByLabel("Anchor of 1").fill(LOW);
    await page.getByRole("button", { name: "Create task" }).click();
    const anchorError = page.locator('p.field-error[data-field="settings.highAnchor"]');
    await anchorError.waitFor();
    expect(await anchorError.innerText()).toBe("Name the anchor of 7 (e.g. Strongly agree).");
    expect(await page.getByLabel("Anchor of 1").inputValue()).toBe(LOW);
    await page.getByLabel("Anchor of 7").fill(HIGH);
    await Promise.all([page.waitForURL(/\/tasks\/\d+$/), page.getByRole("button", { name: "Create task" }).click()]);
    const taskId = Number(/\/tasks\/(\d+)$/.exec(page.url())![1]);

    const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!;
    expect(task.kind).toBe("likert-7");
    expect(task.config).toMatchObject({ question: QUESTION, lowAnchor: LOW, highAnchor: HIGH, itemLimit: 2 });
    // One unit per response of the two sampled items (4 models each), each for both annotators (k = 2).
    const units = db.select().from(schema.units).where(eq(schema.units.taskId, taskId)).all();
    expect(units).toHaveLength(8);
    expect(units.every((u) => u.responseId != null && u.checklistItemId == null)).toBe(true);
    expect(new Set(units.map((u) => u.itemId)).size).toBe(2);
  });

  it("two annotators label every unit by keyboard, blind to models, verdicts and each other", async () => {
    const taskId = keyboardTask;
    const page = browser.page;
    for (const who of [0, 1]) {
      await signInAs(page, app.url, scenario.annotators[who].email, PASSWORD);
      await page.goto(`${base()}/tasks/${taskId}/queue`);
      await page.getByTestId("next").waitFor();
      await page.waitForLoadState("networkidle");
      await page.keyboard.press("Enter");
      for (let n = 1; n <= 8; n++) {
        await page.getByText(`Unit ${n} of 8`).waitFor();
        await page.locator('.annotate-grid[data-ready="true"]').waitFor();
        if (n === 1) {
          // The researcher's question and anchors are shown; the rationale is required.
          await page.getByText(QUESTION).waitFor();
          await page.getByText(`1 = ${LOW} · 7 = ${HIGH}`).waitFor();
          await page.keyboard.press(String(POINTS[who][0]));
          await page.keyboard.press("Enter");
          await page.getByText("Write a short rationale for your choice.").first().waitFor();
          // The refused save put the keyboard in the rationale: type it, leave the field, submit.
          await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("rationale");
          await page.keyboard.type(rationale(who, n));
          await page.keyboard.press("Escape");
          await page.keyboard.press(String(POINTS[who][0]));
          await page.keyboard.press("Enter");
          continue;
        }
        await assertBlind(who === 1 ? POINTS[0].map((_, k) => rationale(0, k + 1)) : []);
        await page.keyboard.press(String(POINTS[who][n - 1]));
        expect(await page.locator(`input[name="score"][value="${POINTS[who][n - 1]}"]`).isChecked()).toBe(true);
        await page.keyboard.press("c");
        await page.keyboard.type(rationale(who, n));
        await page.keyboard.press("Escape");
        await page.keyboard.press("Enter");
      }
      await page.getByTestId("queue-done").waitFor();
    }
    // Stored as the point (a number) and the rationale, in each annotator's queue order.
    for (const who of [0, 1]) {
      const rows = db
        .select({ label: schema.annotations.label, notes: schema.annotations.notes, status: schema.annotations.status })
        .from(schema.annotations)
        .innerJoin(schema.assignments, eq(schema.assignments.id, schema.annotations.assignmentId))
        .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
        .where(and(eq(schema.units.taskId, taskId), eq(schema.assignments.annotatorId, scenario.annotators[who].id)))
        .all();
      expect(rows.filter((r) => r.status === "submitted")).toHaveLength(8);
      expect(rows.map((r) => r.label).sort()).toEqual([...POINTS[who]].sort());
      expect(rows.every((r) => typeof r.notes === "string" && r.notes.startsWith(`RATIONALE-${who}-`))).toBe(true);
    }
    // The keyboard labels reach the report.
    await reportMatchesRawLabels(taskId);
  });

  it("the report's ordinal agreement equals the coefficients computed from the raw labels", async () => {
    await reportMatchesRawLabels(labelledTask);
  });

  it("adjudication shows each annotator's point and rationale and records a final point", async () => {
    const taskId = labelledTask;
    const page = browser.page;
    await signInAs(page, app.url, RESEARCHER, PASSWORD);
    await page.goto(`${base()}/tasks/${taskId}/adjudicate`);
    const labels = page.getByTestId("labels");
    await labels.waitFor();
    // Points two or more apart are disputed (neighbouring points count as agreement).
    const text = await labels.innerText();
    expect(text).toMatch(/\b[1-7] of 7\b/);
    expect(text).toMatch(/RATIONALE-0-\d/);
    expect(text).toMatch(/RATIONALE-1-\d/);
    const submit = page.getByRole("button", { name: "Record final label" });
    await hydrated(submit);
    await page.locator('input[name="score"][value="3"]').check();
    await page.locator('textarea[name="reason"]').fill("Both rationales point to a middling argument.");
    await submit.click();
    await page.getByText("Final label saved.").waitFor();
    const config = db.select({ config: schema.tasks.config }).from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!.config as {
      adjudications?: Record<string, { label: unknown; reason: string }>;
    };
    expect(Object.values(config.adjudications ?? {}).map((a) => a.label)).toEqual([3]);
  });

  it("the annotations export carries each point and its rationale", async () => {
    const taskId = labelledTask;
    const page = browser.page;
    await signInAs(page, app.url, RESEARCHER, PASSWORD);
    const res = await page.context().request.get(`${base()}/export/annotations.csv`);
    expect(res.status()).toBe(200);
    const parsed = Papa.parse<Record<string, string>>(await res.text(), { header: true, skipEmptyLines: true });
    const mine = parsed.data.filter((r) => r.task_id === String(taskId));
    expect(mine).toHaveLength(16);
    expect(mine.every((r) => r.task_kind === "likert-7" && r.response_id !== "" && r.status === "submitted")).toBe(true);
    for (const who of [0, 1]) {
      const rows = mine.filter((r) => r.annotator_id === String(scenario.annotators[who].id));
      expect(rows.map((r) => Number(r.label)).sort()).toEqual([...POINTS[who]].sort());
      expect(rows.map((r) => r.notes).sort()).toEqual(Array.from({ length: 8 }, (_, i) => rationale(who, i + 1)).sort());
    }
  });
});
