/**
 * Every page of the demo opens in real Chromium for the people who may see it,
 * hydrates without errors, and blinded pages carry no model or judge names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const db = openDatabase(file);
    db.$client.close();
  });
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => errors.push(`${browser.page.url()}: ${e.message}`));
  browser.page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${browser.page.url()}: ${m.text()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

/** Opens a page; returns the HTML as the server sent it (with its embedded loader data) and the hydrated DOM. */
async function visit(path: string): Promise<string> {
  const res = await browser.page.goto(`${app.url}${path}`);
  expect(res!.status(), path).toBe(200);
  const served = await res!.text();
  // Give the client bundle time to hydrate (a mismatch is reported as a page error).
  await browser.page.waitForLoadState("networkidle");
  return served + (await browser.page.content());
}

describe("a tour of the demo", () => {
  it("the site admin and the researcher open every page without errors", async () => {
    const admin = DEMO_ACCOUNTS.find((a) => a.isSiteAdmin)!;
    await signInAs(browser.page, app.url, admin.email, admin.password);
    for (const p of ["/projects", "/admin/users", "/p/demo/members"]) await visit(p);
    const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
    await signInAs(browser.page, app.url, researcher.email, researcher.password);
    const pages = [
      "/p/demo",
      "/p/demo/datasets/1",
      "/p/demo/datasets/1/items/1",
      "/p/demo/tasks",
      "/p/demo/tasks/new",
      "/p/demo/tasks/1",
      "/p/demo/tasks/2/adjudicate",
      "/p/demo/reports",
      "/p/demo/reports/3",
      "/p/demo/reports/2/judges",
      "/p/demo/reports/2/disagreements",
      "/p/demo/runs",
      "/p/demo/providers",
      "/p/demo/import",
      "/p/demo/export",
      "/p/demo/curation/1",
      "/p/demo/curation/1/items/1",
      "/p/demo/curation/2",
    ];
    for (const p of pages) await visit(p);
    expect(errors).toEqual([]);
  });

  it("an annotator's pages open without errors and name no model or judge", async () => {
    const ana = DEMO_ACCOUNTS.find((a) => a.email === "ana@concord.test")!;
    await signInAs(browser.page, app.url, ana.email, ana.password);
    const secret = ["Quillon", "Halberd", "Orrery", "Sentinel", "Lumen", "judge-strict", "judge-lenient"];
    for (const p of [
      "/p/demo",
      "/p/demo/tasks",
      "/p/demo/tasks/1/queue",
      "/p/demo/tasks/1/annotate",
      "/p/demo/tasks/2/annotate",
      "/p/demo/tasks/3/annotate",
      "/p/demo/tasks/4/annotate",
    ]) {
      const html = await visit(p);
      for (const name of secret) expect(html, `${p} names ${name}`).not.toContain(name);
    }
    expect(errors).toEqual([]);
  });
});
