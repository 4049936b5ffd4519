/**
 * The whole app on PostgreSQL (issue 17): the demo, loaded into SQLite and
 * moved with the real db:copy (copyDatabase), is served by the production
 * server with DATABASE_URL=postgres://…, and used in Chromium as on SQLite:
 * an annotator labels a unit with the keyboard and the label is stored in
 * PostgreSQL exactly once; a researcher opens the project overview, the task
 * list, the agreement and judge reports, a report download, the curation
 * page, the dataset browser and the import page, each answering without an
 * error; a researcher starts a run from the runs page, which says no worker
 * is running until a worker process started against the same database drains
 * it (the page following over its event stream), with the responses and
 * verdicts the seed's run of the same definition made on SQLite. Nothing in
 * the server's output mentions SQLite files, and the
 * generated session secret sits in CONCORD_STATE_DIR, not in a folder named
 * after the URL.
 */
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { copyDatabase } from "../../db/copy";
import { DEMO_ACCOUNTS, DEMO_PROJECT, DEMO_RUN_NAME, seedDemo } from "../../seeds/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import { exited, spawnWorker } from "../support/worker-process";

const NO_PG = pgSkipReason();
let testPg: TestPg | undefined;
let url = "";
let stateDir = "";
let app: RunningApp | undefined;
let browser: Browser | undefined;
let client: pg.Client | undefined;
const account = (role: string) => DEMO_ACCOUNTS.find((a) => a.role === role)!;

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await client?.end();
  testPg?.stop();
});

describe.skipIf(NO_PG)("the app on PostgreSQL, in Chromium", () => {
  beforeAll(async () => {
    const dir = tempDir("concord-pg-app-");
    stateDir = path.join(dir, "state");
    const file = path.join(dir, "demo.db");
    const db = openDatabase(file);
    await seedDemo(db);
    db.$client.close();
    testPg = await startTestPg();
    url = await testPg.createDatabase("app_on_pg");
    const checks = await copyDatabase({ kind: "sqlite", file }, { kind: "postgres", url });
    expect(checks.every((c) => c.same)).toBe(true);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    app = await startApp(undefined, { env: { DATABASE_URL: url, CONCORD_STATE_DIR: stateDir } });
    browser = await launchBrowser();
  }, 180_000);

  const one = async <T>(text: string, values: unknown[] = []) => (await client!.query(text, values)).rows[0] as T;

  it("an annotator labels a unit with the keyboard; it is stored in PostgreSQL once", async () => {
    const ana = account("annotator");
    // A Yes/No task where the annotator still has units to label (the demo leaves some open).
    const open = await one<{ task_id: number; n: number }>(
      `SELECT u.task_id, count(*)::int AS n FROM assignments a JOIN units u ON u.id = a.unit_id JOIN tasks t ON t.id = u.task_id
       JOIN users us ON us.id = a.annotator_id
       WHERE us.email = $1 AND a.status IN ('pending', 'draft') AND t.kind IN ('checklist-appropriateness', 'response-satisfaction')
       GROUP BY u.task_id ORDER BY u.task_id LIMIT 1`,
      [ana.email],
    );
    expect(open?.n).toBeGreaterThan(0);
    const submitted = async () =>
      (
        await one<{ n: number }>(
          `SELECT count(*)::int AS n FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
           JOIN users us ON us.id = a.annotator_id WHERE us.email = $1 AND u.task_id = $2 AND an.status = 'submitted'`,
          [ana.email, open.task_id],
        )
      ).n;
    const before = await submitted();
    const page = browser!.page;
    await signInAs(page, app!.url, ana.email, ana.password);
    await page.goto(`${app!.url}/p/${DEMO_PROJECT.slug}/tasks/${open.task_id}/queue`);
    await page.getByTestId("next").waitFor();
    await page.waitForLoadState("networkidle");
    await page.keyboard.press("Enter");
    await page.locator('.annotate-grid[data-ready="true"]').waitFor();
    const shown = (await page
      .getByText(/Unit \d+ of \d+/)
      .first()
      .textContent())!;
    await page.keyboard.press("y");
    await page.keyboard.press("Enter");
    // The next unit (or the end of the queue) shows once the submit was answered.
    await page.waitForFunction((t) => !document.body.innerText.includes(t), shown);
    await expect.poll(submitted, { timeout: 10_000 }).toBe(before + 1);
    expect(app!.output()).not.toMatch(/Something went wrong|Error:/);
  }, 120_000);

  it("a researcher's pages and a report download answer from PostgreSQL", async () => {
    const rhea = account("researcher");
    const page = browser!.page;
    await signInAs(page, app!.url, rhea.email, rhea.password);
    const base = `${app!.url}/p/${DEMO_PROJECT.slug}`;
    const task = await one<{ id: number }>(`SELECT id FROM tasks WHERE kind = 'response-satisfaction' ORDER BY id LIMIT 1`);
    const dataset = await one<{ id: number }>(`SELECT id FROM datasets WHERE name = 'Concord Demo Bench'`);
    const pages: [string, RegExp][] = [
      [base, /Concord Demo Bench/],
      [`${base}/tasks`, /Tasks/],
      [`${base}/reports`, /Reports/],
      [`${base}/reports/${task.id}`, /Percent agreement/],
      [`${base}/reports/${task.id}/judges`, /Judge/],
      [`${base}/datasets/${dataset.id}`, /Concord Demo Bench/],
      [`${base}/curation/${dataset.id}`, /Back-check the references/],
      [`${base}/import`, /Import/],
    ];
    for (const [href, text] of pages) {
      const res = await page.goto(href);
      expect(res?.status(), href).toBe(200);
      await expect.poll(() => page.locator("body").innerText(), { timeout: 10_000 }).toMatch(text);
      expect(await page.locator("body").innerText(), href).not.toMatch(/Something went wrong/);
    }
    // A download of the agreement tables, through the browser's own session.
    const csv = await page.context().request.get(`${base}/reports/${task.id}/csv?table=iaa`);
    expect(csv.status()).toBe(200);
    expect(await csv.text()).toMatch(/Percent agreement/);
    expect(app!.output()).not.toMatch(/Something went wrong|\.db\b/);
  }, 120_000);

  it("an admin's members and accounts pages, and the runs and providers pages, answer from PostgreSQL", async () => {
    const admin = account("admin");
    const page = browser!.page;
    await signInAs(page, app!.url, admin.email, admin.password);
    const base = `${app!.url}/p/${DEMO_PROJECT.slug}`;
    const run = await one<{ id: number; name: string }>(
      `SELECT r.id, r.name FROM runs r JOIN projects p ON p.id = r.project_id WHERE p.slug = $1 ORDER BY r.id LIMIT 1`,
      [DEMO_PROJECT.slug],
    );
    expect(run?.id).toBeGreaterThan(0);
    const escaped = run.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    for (const [href, text] of [
      [`${base}/members`, /Members/],
      [`${app!.url}/admin/users`, /rhea@concord\.test/],
      [`${base}/runs`, new RegExp(escaped)],
      [`${base}/runs/${run.id}`, /done/],
      [`${base}/runs/${run.id}/results`, /Results|Turn/],
      [`${base}/providers`, /Providers/],
    ] as [string, RegExp][]) {
      const res = await page.goto(href);
      expect(res?.status(), href).toBe(200);
      await expect.poll(() => page.locator("body").innerText(), { timeout: 10_000 }).toMatch(text);
      expect(await page.locator("body").innerText(), href).not.toMatch(/Something went wrong/);
    }
    // The run's live progress streams from PostgreSQL (the demo run is finished: one progress event, then the end).
    const events = await page.context().request.get(`${base}/runs/${run.id}/events`);
    expect(events.status()).toBe(200);
    expect(await events.text()).toMatch(/event: progress\ndata: \{"runId":\d+,"status":"completed/);
  }, 120_000);

  it("a researcher starts a run from the runs page; it waits for a worker, a worker process drains it, and the page follows live", async () => {
    const researcher = account("researcher");
    const page = browser!.page;
    await signInAs(page, app!.url, researcher.email, researcher.password);
    const base = `${app!.url}/p/${DEMO_PROJECT.slug}`;
    const demoRun = await one<{ id: number }>(`SELECT id FROM runs WHERE name = $1`, [DEMO_RUN_NAME]);
    await page.goto(`${base}/runs`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Runs");
    // The advanced JSON definition starts from the demo run's (its recorded providers): the same run again, renamed.
    await page.getByText("Advanced: a run definition in JSON").click();
    const textarea = page.locator("textarea[name=definition]");
    const def = JSON.parse(await textarea.inputValue()) as { name: string };
    await hydrated(textarea);
    await textarea.fill(JSON.stringify({ ...def, name: "Started on PostgreSQL" }, null, 2));
    await page.getByRole("button", { name: "Start run from JSON" }).click();
    await page.waitForURL(/\/runs\/\d+$/);
    const runId = Number(/\/runs\/(\d+)$/.exec(page.url())![1]);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toContain("Started on PostgreSQL");
    // No worker serves this database yet (the server's in-process worker is off on PostgreSQL): the page says so.
    const bar = page.getByTestId("progress");
    expect(await bar.locator(".badge").textContent()).toBe("queued");
    expect(await page.getByTestId("no-worker").textContent()).toContain("npm run worker");
    const created = await one<{ n: string }>(`SELECT COUNT(*) AS n FROM jobs WHERE run_id = $1`, [runId]);
    expect(Number(created.n)).toBeGreaterThan(0);
    // An operator starts a worker process against the same database; the open page follows over its event stream.
    await page.evaluate(() => ((window as unknown as { __stay: number }).__stay = 1));
    const worker = spawnWorker(url, 10_000);
    await expect.poll(() => bar.locator(".badge").textContent(), { timeout: 90_000 }).toBe("completed");
    expect(await exited(worker.child), worker.out()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __stay?: number }).__stay)).toBe(1); // no reload
    expect(await page.getByTestId("no-worker").count()).toBe(0);
    const counts = await one<{ done: number; other: number }>(
      `SELECT COUNT(*) FILTER (WHERE status = 'done') AS done, COUNT(*) FILTER (WHERE status <> 'done') AS other FROM jobs WHERE run_id = $1`,
      [runId],
    );
    expect(Number(counts.other)).toBe(0);
    expect(await bar.getByTestId("done").textContent()).toBe(String(counts.done));
    // The recorded providers answer the same request with the same text: the run made here on PostgreSQL has the
    // responses and verdicts the seed's run of the same definition made on SQLite (copied in with db:copy).
    const responses = async (id: number) =>
      (await client!.query(`SELECT item_id, model, turn, text FROM responses WHERE run_id = $1 ORDER BY item_id, model, turn`, [id])).rows;
    const verdicts = async (id: number) =>
      (
        await client!.query(
          `SELECT r.item_id, r.model, r.turn, v.judge_id, v.checklist_item_id, v.value, v.parse_status
             FROM verdicts v JOIN responses r ON r.id = v.response_id
            WHERE v.run_id = $1 ORDER BY r.item_id, r.model, r.turn, v.judge_id, v.checklist_item_id`,
          [id],
        )
      ).rows;
    const mine = await responses(runId);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine).toEqual(await responses(demoRun.id));
    const myVerdicts = await verdicts(runId);
    expect(myVerdicts.length).toBeGreaterThan(0);
    expect(myVerdicts).toEqual(await verdicts(demoRun.id));
  }, 180_000);

  it("keeps its generated session secret in CONCORD_STATE_DIR, never in a folder named after the URL", () => {
    expect(fs.existsSync(path.join(stateDir, "concord-session-secret"))).toBe(true);
    expect(fs.existsSync(path.join(process.cwd(), "postgres:"))).toBe(false);
  });
});
