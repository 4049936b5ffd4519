/**
 * Real headless Chromium against the production build: sign-in, the project
 * overview, the dataset browser (search and domain filter) and an item page,
 * then the refusals a user would meet.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
const annotator = DEMO_ACCOUNTS.find((a) => a.role === "annotator")!;

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

describe("signing in and browsing a dataset", () => {
  it("a wrong password shows a clear message that leaks nothing", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/login`);
    await page.getByLabel("Email").fill(researcher.email);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("That email and password do not match an account.");
    expect(new URL(page.url()).pathname).toBe("/login");
  });

  it("a researcher signs in, opens the demo project and browses its dataset", async () => {
    const { page } = browser;
    await signInAs(page, app.url, researcher.email, researcher.password);
    expect(new URL(page.url()).pathname).toBe("/projects");
    await page.getByRole("link", { name: /Concord Demo/ }).click();
    await page.waitForURL(/\/p\/demo$/, { waitUntil: "commit" });
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Concord Demo");

    await page.getByRole("link", { name: "Concord Demo Bench", exact: true }).click();
    await page.waitForURL(/\/p\/demo\/datasets\/\d+$/, { waitUntil: "commit" });
    await expect.poll(() => page.getByTestId("result-count").textContent()).toBe("12 items");

    // Filter by domain.
    await page.getByLabel("Domain").selectOption({ value: "Chemistry" });
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/domain=Chemistry/, { waitUntil: "commit" });
    // Wait for the filtered rows to render, then check every one is Chemistry.
    await expect.poll(() => page.getByTestId("result-count").textContent()).toMatch(/^[2-9] items$/);
    const domains = await page.locator("tbody tr td:nth-child(3)").allTextContents();
    expect(domains.length).toBeGreaterThanOrEqual(2);
    expect(domains.every((d) => d.startsWith("Chemistry"))).toBe(true);

    // Search by text: a word that occurs in one of the chemistry prompts.
    const firstPrompt = (await page.locator("tbody tr td:nth-child(2)").first().textContent())!;
    const word = firstPrompt.split(/\W+/).filter((w) => w.length > 7)[0];
    await page.getByLabel("Search text").fill(word);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(new RegExp(`q=${word}`), { waitUntil: "commit" });
    await expect.poll(() => page.getByTestId("result-count").textContent()).toMatch(/^1 item$/);
    expect(await page.locator("tbody tr td:nth-child(2)").first().textContent()).toContain(word);

    // Open the item: checklist, reference and responses with judge verdicts.
    await page.locator("tbody tr td:first-child a").first().click();
    await page.waitForURL(/\/items\/\d+$/, { waitUntil: "commit" });
    await expect.poll(() => page.getByRole("heading", { name: /^Checklist \(\d+\)$/ }).count()).toBe(1);
    expect(await page.getByTestId("response").count()).toBe(9);
    expect(await page.getByRole("heading", { name: "Reference" }).count()).toBe(1);
    expect(await page.locator(".badge.yes").count()).toBeGreaterThan(0);

    // Sign out ends the session.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/login$/, { waitUntil: "commit" });
    await page.goto(`${app.url}/projects`);
    expect(new URL(page.url()).pathname).toBe("/login");
  });

  it("an annotator is refused the dataset browser and a stranger's project is not found", async () => {
    const { page } = browser;
    await signInAs(page, app.url, annotator.email, annotator.password);
    const res = await page.goto(`${app.url}/p/demo/datasets/1`);
    expect(res!.status()).toBe(403);
    const overview = await page.goto(`${app.url}/p/demo`);
    expect(overview!.status()).toBe(200);
    const html = await page.content();
    for (const model of ["Sentinel", "Lumen", "judge-strict", "judge-lenient"]) expect(html).not.toContain(model);
    const missing = await page.goto(`${app.url}/p/not-a-project`);
    expect(missing!.status()).toBe(404);
    await page.getByRole("button", { name: "Sign out" }).click();
  });
});
