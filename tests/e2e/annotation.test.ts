/**
 * The annotation workspace in real Chromium against the production server:
 * an annotator labels ten units of each kind with the keyboard alone, reloads
 * midway without losing a draft, never sees a model name or another
 * annotator's label, and the basic form works without JavaScript. Two
 * annotators, each in their own browser context (own cookies, own session),
 * label the same unit concurrently and never see each other's label, comment
 * or name.
 */
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextUnitId, saveAnnotation } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import { createUser } from "../../app/auth/accounts.server";
import { schema } from "../../db/client";
import { openDatabase } from "../../db/client";
import { startApp, type RunningApp } from "../support/app-server";
import { CHROMIUM, CHROMIUM_ARGS } from "../support/browser";

const PASSWORD = "annotate-e2e-2026";
const SECRET = "BEN-SECRET-NOTE";
let app: RunningApp;
let browser: Browser;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;
/** Two annotators with distinctive names sharing every unit of a response-satisfaction task (k = 2). */
const PAIR = [
  { email: "alba@lab.test", name: "Alba Quintessa", comment: "ALBA-PRIVATE-COMMENT-7731", id: 0 },
  { email: "bart@lab.test", name: "Bartholomew Okonkwo", comment: "BART-PRIVATE-COMMENT-4410", id: 0 },
];
let pairTask = { id: 0, unitId: 0 };
let goldTask = 0;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    scenario = await seedAnnotationScenario(db, { annotators: 2, items: 10, overlap: 2, password: PASSWORD });
    // The second annotator labels every checklist unit first, with a note.
    const ben = scenario.annotators[1].id;
    const taskId = scenario.tasks["checklist-appropriateness"];
    const task = (await findTask(scenario.projectId, taskId, db))!;
    for (let u = await nextUnitId(taskId, ben, undefined, db); u != null; u = await nextUnitId(taskId, ben, undefined, db)) {
      await saveAnnotation(
        { task, userId: ben, unitId: u, intent: "submit", form: new URLSearchParams({ answer: "No", comment: SECRET }) },
        db,
      );
    }
    for (const who of PAIR) {
      who.id = (await createUser({ email: who.email, name: who.name, password: PASSWORD }, db)).id;
      db.insert(schema.memberships).values({ projectId: scenario.projectId, userId: who.id, role: "annotator" }).run();
    }
    const pair = PAIR.map((w) => w.id);
    const id = (
      await createTask(
        scenario.projectId,
        scenario.researcher.id,
        { name: "Blind pair", datasetId: task.datasetId, kind: "response-satisfaction", overlap: 2, pool: pair, seed: 3 },
        db,
      )
    ).taskId;
    pairTask = { id, unitId: (await nextUnitId(id, pair[0], undefined, db))! };
    goldTask = (
      await createTask(
        scenario.projectId,
        scenario.researcher.id,
        {
          name: "Gold writing",
          datasetId: task.datasetId,
          kind: "writing-quality",
          overlap: 1,
          pool: [scenario.annotators[0].id],
          goldRate: 0.3,
          seed: 5,
        },
        db,
      )
    ).taskId;
    db.$client.close();
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** The annotate page's loader JSON for a unit, fetched with the context's own session cookie. */
async function loaderJson(context: BrowserContext, unitId: number) {
  const route = encodeURIComponent("routes/p.$slug.tasks.$taskId.annotate");
  const res = await context.request.get(`${app.url}/p/${scenario.slug}/tasks/${pairTask.id}/annotate?unit=${unitId}&_data=${route}`);
  expect(res.status()).toBe(200);
  return res.text();
}

async function signIn(page: Page, email: string) {
  await page.goto(`${app.url}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** Checks the live DOM and the document as served (the DOM loses the inline hydration data once hydrated). */
async function assertBlind(page: Page) {
  const sent = await page
    .context()
    .request.get(page.url())
    .then((r) => r.text());
  for (const html of [await page.content(), sent]) {
    for (const m of SYNTHETIC_MODELS) expect(html, `model name ${m} in HTML`).not.toContain(m);
    expect(html).not.toContain(SECRET);
    expect(html).not.toMatch(/:\\?"reference\\?"|\\?"reference\\?"[,\]]/);
  }
}

/** Waits until unit `n` of 10 is shown and its keyboard handler is live. */
async function atUnit(page: Page, n: number) {
  if (process.env.E2E_TRACE) process.stdout.write(`[unit ${n} ${page.url()}]`);
  await page.getByText(`Unit ${n} of 10`).waitFor();
  await page.locator('.annotate-grid[data-ready="true"]').waitFor();
}

async function openQueue(page: Page, kind: string) {
  await page.goto(`${app.url}/p/${scenario.slug}/tasks/${scenario.tasks[kind]}/queue`);
  await page.getByTestId("next").waitFor();
  await page.waitForLoadState("networkidle");
  await page.keyboard.press("Enter");
  await atUnit(page, 1);
}

async function finish(page: Page, n: number) {
  await page.keyboard.press("Enter");
  if (n < 10) await atUnit(page, n + 1);
  else await page.getByTestId("queue-done").waitFor();
}

describe("annotation workspace in Chromium", () => {
  it("labels ten units of each kind with the keyboard alone, blind, surviving a reload", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, scenario.annotators[0].email);

    // 1. Checklist appropriateness: Y/N, a comment via C, shortcut sheet and guidelines.
    await openQueue(page, "checklist-appropriateness");
    await page.keyboard.press("?");
    await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor();
    await page.keyboard.press("Escape");
    await page.keyboard.press("g");
    await page.getByTestId("guidelines").getByText("careful").waitFor();
    await page.keyboard.press("g");
    for (let n = 1; n <= 10; n++) {
      await assertBlind(page);
      await page.keyboard.press(n % 3 === 0 ? "n" : "y");
      if (n === 2) {
        await page.keyboard.press("c");
        await page.keyboard.type("Criterion is vague.");
        await page.keyboard.press("Escape");
      }
      await finish(page, n);
    }

    // 2. Response satisfaction.
    await openQueue(page, "response-satisfaction");
    for (let n = 1; n <= 10; n++) {
      await assertBlind(page);
      await page.keyboard.press(n % 2 ? "y" : "n");
      await finish(page, n);
    }

    // 3. Writing quality: 1–5 per response, L to move, P for a penalty reason; reload midway.
    await openQueue(page, "writing-quality");
    for (let n = 1; n <= 10; n++) {
      await assertBlind(page);
      const count = await page.locator(".response-card").count();
      for (let r = 0; r < count; r++) {
        if (r > 0) await page.keyboard.press("l");
        if (n === 3 && r === 0) {
          await page.keyboard.press("2");
          await page.keyboard.press("p"); // consistency
        } else await page.keyboard.press(String(3 + ((n + r) % 3)));
      }
      if (n === 5) {
        await page.getByTestId("save-state").getByText("Draft saved.").waitFor();
        await page.reload();
        await atUnit(page, 5);
        await expect(page.getByTestId("progress-mine").textContent()).resolves.toContain("4 / 10");
        for (let r = 0; r < count; r++) {
          const L = String.fromCharCode(65 + r);
          expect(await page.locator(`input[name="score.${L}"]:checked`).getAttribute("value")).toBe(String(3 + ((n + r) % 3)));
        }
      }
      await finish(page, n);
    }

    // 4. Best-of-N with the reference hidden among four responses; ties allowed.
    await openQueue(page, "best-of-n");
    for (let n = 1; n <= 10; n++) {
      await assertBlind(page);
      expect(await page.locator(".response-card").count()).toBe(4);
      await page.keyboard.press(n === 4 ? "t" : String(1 + (n % 4)));
      await finish(page, n);
    }

    // The queue shows everything submitted; the shortcut Enter opens nothing more.
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["best-of-n"]}/queue`);
    await expect(page.getByTestId("progress-mine").textContent()).resolves.toContain("10 / 10");
    await assertBlind(page);
    await context.close();

    // What was stored: 40 submitted annotations by this annotator, with durations and shown orders.
    const db = openDatabase(app.databaseFile);
    const rows = db.$client
      .prepare(
        `select t.kind, an.label, an.penalty_reasons as p, an.shown_order as so, an.duration_ms as d, an.status from annotations an
         join assignments a on a.id = an.assignment_id join units u on u.id = a.unit_id join tasks t on t.id = u.task_id where a.annotator_id = ?`,
      )
      .all(scenario.annotators[0].id) as {
      kind: string;
      label: string;
      p: string | null;
      so: string | null;
      d: number | null;
      status: string;
    }[];
    db.$client.close();
    expect(rows.filter((r) => r.status === "submitted")).toHaveLength(40);
    expect(rows.every((r) => r.d != null && r.d >= 0)).toBe(true);
    expect(rows.filter((r) => r.kind === "writing-quality" && r.p && r.p.includes("consistency"))).toHaveLength(1);
    expect(rows.filter((r) => r.kind === "best-of-n").every((r) => JSON.parse(r.so!).length === 4)).toBe(true);
    expect(rows.filter((r) => r.kind === "best-of-n" && JSON.parse(r.label).best === "tie")).toHaveLength(1);
  }, 240_000);

  it("a researcher records a gold answer with one score per response, and sees it kept", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(`${m.text()} @ ${m.location().url}`));
    await signIn(page, "researcher@lab.test");
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${goldTask}`);
    const row = page.locator(".gold-form").first();
    const selects = row.locator("select");
    const n = await selects.count();
    expect(n).toBeGreaterThan(1);
    // One score missing: the server names the field, nothing is saved.
    for (let i = 0; i < n - 1; i++) await selects.nth(i).selectOption(String(5 - (i % 5)));
    await row.getByRole("button", { name: "Save" }).click();
    // The message sits beside the missing score's field (and is summed up in the page's alert).
    await row.locator(".field-error", { hasText: /Give Response [A-Z] a known score from 1 to 5/ }).waitFor();
    await page
      .getByRole("alert")
      .filter({ hasText: /not saved/ })
      .waitFor();
    await page
      .locator(".gold-form")
      .first()
      .locator("select")
      .nth(n - 1)
      .selectOption("3");
    for (let i = 0; i < n - 1; i++)
      await page
        .locator(".gold-form")
        .first()
        .locator("select")
        .nth(i)
        .selectOption(String(5 - (i % 5)));
    await page.locator(".gold-form").first().getByRole("button", { name: "Save" }).click();
    await page.getByText(/Gold answer of unit #\d+ saved/).waitFor();
    await page.reload();
    expect(
      await page
        .locator(".gold-form")
        .first()
        .locator("select")
        .nth(n - 1)
        .inputValue(),
    ).toBe("3");
    expect(await page.getByText("answer set").count()).toBe(1);
    // The refused save answered 400 on purpose (Chromium logs that as a failed resource); nothing else went wrong.
    expect(errors.filter((e) => !/status of 400 \(Bad Request\)/.test(e))).toEqual([]);
    expect(errors.length).toBe(1);
    await context.close();
  });

  it("the basic form submits without JavaScript and shows errors next to the field", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await signIn(page, scenario.annotators[1].email);
    await page.goto(`${app.url}/p/${scenario.slug}/tasks/${scenario.tasks["response-satisfaction"]}/annotate`);
    await page.getByText("Unit 1 of 10").waitFor();
    await page.getByRole("button", { name: /^Submit/ }).click();
    await page.getByText("Choose Yes or No.").waitFor();
    await page.getByLabel("Yes").check();
    await page.getByRole("button", { name: /^Submit/ }).click();
    await page.getByText("Unit 2 of 10").waitFor();
    // Their own earlier labels are theirs: the checklist task shows their note when revising.
    const html = await page.content();
    for (const m of SYNTHETIC_MODELS) expect(html).not.toContain(m);
    await context.close();
  });

  it("two annotators label the same unit concurrently, each blind to the other", async () => {
    const [alba, bart] = PAIR;
    const [ctxA, ctxB] = await Promise.all([browser.newContext(), browser.newContext()]);
    const [pageA, pageB] = await Promise.all([ctxA.newPage(), ctxB.newPage()]);
    await Promise.all([signIn(pageA, alba.email), signIn(pageB, bart.email)]);
    const unitUrl = `${app.url}/p/${scenario.slug}/tasks/${pairTask.id}/annotate?unit=${pairTask.unitId}`;
    const ready = (page: Page) => page.locator('.annotate-grid[data-ready="true"]').waitFor();
    // Both have the unit open at the same time.
    await Promise.all([pageA.goto(unitUrl), pageB.goto(unitUrl)]);
    await Promise.all([ready(pageA), ready(pageB)]);

    const answer = (page: Page, v: "Yes" | "No") => page.locator(`input[name="answer"][value="${v}"]`);
    const submit = async (page: Page, v: "Yes" | "No", comment: string) => {
      await answer(page, v).check();
      await page.locator('textarea[name="comment"]').fill(comment);
      await Promise.all([
        page.waitForURL((u) => u.searchParams.get("unit") !== String(pairTask.unitId)),
        page.getByRole("button", { name: /^Submit/ }).click(),
      ]);
    };
    /**
     * Nothing of `other` in the live DOM, the document as the server sent it (its
     * inline hydration data is gone from the DOM after hydration), or the loader JSON.
     */
    const assertNothingOf = async (page: Page, context: BrowserContext, other: (typeof PAIR)[number]) => {
      const dom = await page.content();
      const sent = await context.request.get(unitUrl).then((r) => r.text());
      expect(sent).toContain("__remixContext");
      const json = await loaderJson(context, pairTask.unitId);
      for (const [what, text] of [
        ["DOM", dom],
        ["served HTML", sent],
        ["JSON", json],
      ]) {
        for (const secret of [other.comment, other.name, other.email]) expect(text, `${secret} in ${what}`).not.toContain(secret);
        for (const m of SYNTHETIC_MODELS) expect(text, `model name ${m} in ${what}`).not.toContain(m);
      }
      return JSON.parse(json) as { page: { values: Record<string, string>; savedStatus: string | null; revision: number } };
    };

    // A submits Yes with a comment.
    await submit(pageA, "Yes", alba.comment);

    // B (whose page was open all along) opens the unit afresh: nothing of A, and empty choices.
    await pageB.goto(unitUrl);
    await ready(pageB);
    const forB = await assertNothingOf(pageB, ctxB, alba);
    expect(forB.page.values).toEqual({});
    expect(forB.page.savedStatus).toBeNull();
    expect(forB.page.revision).toBe(0);
    expect(await pageB.locator('input[name="answer"]:checked').count()).toBe(0);
    expect(await pageB.locator('textarea[name="comment"]').inputValue()).toBe("");
    await submit(pageB, "No", bart.comment);

    // A revisits: only A's own label and comment.
    await pageA.goto(unitUrl);
    await ready(pageA);
    const forA = await assertNothingOf(pageA, ctxA, bart);
    expect(forA.page.values).toEqual({ answer: "Yes", comment: alba.comment });
    expect(await answer(pageA, "Yes").isChecked()).toBe(true);
    expect(await answer(pageA, "No").isChecked()).toBe(false);
    expect(await pageA.locator('textarea[name="comment"]').inputValue()).toBe(alba.comment);
    await Promise.all([ctxA.close(), ctxB.close()]);

    // Both submissions are stored: two annotations on the unit, one each.
    const db = openDatabase(app.databaseFile);
    const rows = db.$client
      .prepare(
        `select a.annotator_id as who, an.label, an.notes, an.status from annotations an join assignments a on a.id = an.assignment_id
         where a.unit_id = ? order by a.annotator_id`,
      )
      .all(pairTask.unitId) as { who: number; label: string; notes: string; status: string }[];
    db.$client.close();
    expect(rows).toEqual([
      { who: alba.id, label: JSON.stringify("Yes"), notes: JSON.stringify(alba.comment), status: "submitted" },
      { who: bart.id, label: JSON.stringify("No"), notes: JSON.stringify(bart.comment), status: "submitted" },
    ]);
  }, 120_000);
});
