/**
 * The admin forms in real Chromium, on the demo project, as the site admin: Users (create,
 * set a password, disable), Members (role, remove) and a new project. Every refusal is a
 * sentence beside its field — in the row it is about for a row's form — that field takes
 * the keyboard, zod's raw wording never shows, and nothing is changed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { openDatabase, type Db } from "../../db/client";
import * as schema from "../../db/schema";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { copyDemoDatabase } from "../support/demo";
import { startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";

let app: RunningApp;
let browser: Browser;
let db: Db;
const admin = DEMO_ACCOUNTS.find((a) => a.isSiteAdmin)!;
const ben = DEMO_ACCOUNTS.find((a) => a.email === "ben@concord.test")!;
const pageErrors: string[] = [];
/** zod's own wording, which must never reach the page. */
const RAW_ZOD = /Too small|Too big|Invalid input|expected (string|number)|Required/;

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const seeded = openDatabase(file);
    seeded.$client.close();
  });
  db = openDatabase(app.databaseFile);
  browser = await launchBrowser();
  browser.page.on("pageerror", (e) => pageErrors.push(e.message));
  // Confirm every "are you sure?" (the server's own rules are what is tested).
  browser.page.on("dialog", (d) => void d.accept());
  browser.page.setDefaultTimeout(60_000);
  browser.page.setDefaultNavigationTimeout(60_000);
  await signInAs(browser.page, app.url, admin.email, admin.password);
}, 120_000);

afterAll(async () => {
  db?.$client.close();
  await browser?.close();
  await app?.stop();
});

/** What has the keyboard: its name, aria-label and the id of the error it is described by. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const e = document.activeElement as HTMLInputElement | null;
    return {
      name: e?.getAttribute("name") ?? null,
      label: e?.getAttribute("aria-label") ?? null,
      describedBy: e?.getAttribute("aria-describedby") ?? null,
      text: e?.textContent ?? null,
    };
  });
const errorsShown = (page: Page) => page.locator(".field-error").allTextContents();
const userCount = () => db.select({ id: schema.users.id }).from(schema.users).all().length;
const userId = (email: string) => db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, email)).get()!.id;

describe("admin forms: each error beside its field, focused, in plain words", () => {
  it("Users → Create a user: every problem beside its field, the first focused; a taken email beside the email", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/admin/users`);
    const form = page.locator("form:has(input[name=intent][value=create])");
    await hydrated(form.getByRole("button", { name: "Create user" }), 60_000);
    const before = userCount();
    await form.getByLabel("Email").fill("not-an-email");
    await form.getByLabel("Initial password (10+ characters)").fill("short");
    await form.getByRole("button", { name: "Create user" }).click();
    const name = form.locator('.field-error[data-field="name"]');
    await expect.poll(() => name.textContent()).toBe("Enter a name.");
    expect(await form.locator('.field-error[data-field="email"]').textContent()).toBe("Enter a valid email address.");
    expect(await form.locator('.field-error[data-field="password"]').textContent()).toBe("Passwords need at least 10 characters.");
    await expect.poll(async () => (await focused(page)).name).toBe("name");
    expect((await focused(page)).describedBy).toBe("name-error");
    for (const t of await errorsShown(page)) expect(t).not.toMatch(RAW_ZOD);
    expect(userCount()).toBe(before);

    // Now only the email is wrong: it is taken.
    await form.getByLabel("Name").fill("Dana Duplicate");
    await form.getByLabel("Email").fill(ben.email);
    await form.getByLabel("Initial password (10+ characters)").fill("a-long-enough-password");
    await form.getByRole("button", { name: "Create user" }).click();
    const email = form.locator('.field-error[data-field="email"]');
    await expect.poll(() => email.textContent()).toBe(`${ben.email} already has an account.`);
    await expect.poll(async () => (await focused(page)).name).toBe("email");
    expect(await form.locator('.field-error[data-field="name"]').count()).toBe(0);
    expect(userCount()).toBe(before);
  });

  it("Users → Set password: a short password is refused beside that user's field, and only there", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/admin/users`);
    const field = page.getByLabel(`New password for ${ben.email}`);
    const button = page.getByRole("button", { name: `Set password for ${ben.email}` });
    await hydrated(button, 60_000);
    const hash = () => db.select({ h: schema.users.passwordHash }).from(schema.users).where(eq(schema.users.email, ben.email)).get()!.h;
    const was = hash();
    await field.fill("short");
    await button.click();
    const row = page.locator("tr", { has: field });
    await expect
      .poll(() => row.locator('.field-error[data-field="password"]').textContent())
      .toBe("Passwords need at least 10 characters.");
    expect(await errorsShown(page)).toEqual(["Passwords need at least 10 characters."]);
    await expect.poll(async () => (await focused(page)).label).toBe(`New password for ${ben.email}`);
    expect((await focused(page)).describedBy).toBe(`reset-${userId(ben.email)}-password-error`);
    expect(hash()).toBe(was);
  });

  it("Users → Disable: disabling yourself is refused beside your own row's button, which message takes focus", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/admin/users`);
    const row = page.locator("tr", { hasText: admin.email });
    const disable = row.getByRole("button", { name: "Disable" });
    await hydrated(disable, 60_000);
    await disable.click();
    const message = row.locator('.field-error[data-field="form"]');
    await expect.poll(() => message.textContent()).toBe("You cannot disable your own account.");
    await expect.poll(async () => (await focused(page)).text).toBe("You cannot disable your own account.");
    expect(await errorsShown(page)).toEqual(["You cannot disable your own account."]);
    expect(db.select({ d: schema.users.disabled }).from(schema.users).where(eq(schema.users.email, admin.email)).get()!.d).toBe(false);
  });

  it("Members: demoting or removing the project's last admin is refused beside that row's control", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/p/demo/members`);
    const select = page.getByLabel(`Role of ${admin.name}`);
    const row = page.locator("tr", { has: select });
    await hydrated(row.getByRole("button", { name: "Save" }), 60_000);
    await select.selectOption("annotator");
    await row.getByRole("button", { name: "Save" }).click();
    const roleError = row.locator('.field-error[data-field="role"]');
    await expect.poll(() => roleError.textContent()).toBe("This is the project's last admin: make another member admin first.");
    await expect.poll(async () => (await focused(page)).label).toBe(`Role of ${admin.name}`);
    expect(await errorsShown(page)).toHaveLength(1);

    await row.getByRole("button", { name: "Remove" }).click();
    const removeError = row.locator('.field-error[data-field="form"]');
    await expect.poll(() => removeError.textContent()).toBe("This is the project's last admin: make another member admin first.");
    await expect.poll(async () => (await focused(page)).text).toBe("This is the project's last admin: make another member admin first.");
    expect(await errorsShown(page)).toHaveLength(1);
    const role = db.$client
      .prepare(
        "select m.role from memberships m join users u on u.id = m.user_id join projects p on p.id = m.project_id where u.email = ? and p.slug = 'demo'",
      )
      .get(admin.email) as { role: string };
    expect(role.role).toBe("admin");
  });

  it("Providers → Remove: a refusal shows in that provider's row, which message takes focus, not as a raw alert at the top", async () => {
    const { page } = browser;
    const demo = db.select({ id: schema.projects.id }).from(schema.projects).where(eq(schema.projects.slug, "demo")).get()!.id;
    const spare = db
      .insert(schema.providers)
      .values({
        projectId: demo,
        name: "Spare endpoint",
        kind: "openai-compatible",
        baseUrl: "http://127.0.0.1:9/v1",
        model: "spare-model",
      })
      .returning({ id: schema.providers.id })
      .get();
    // A paused run still holds a job for it.
    const run = db
      .insert(schema.runs)
      .values({ projectId: demo, name: "Held run", protocol: "refinebench", status: "paused" })
      .returning({ id: schema.runs.id })
      .get();
    db.insert(schema.jobs)
      .values({ runId: run.id, key: "held-1", payload: { providerId: spare.id }, status: "queued" })
      .run();
    await page.goto(`${app.url}/p/demo/providers`);
    const row = page.locator("tr", { hasText: "Spare endpoint" });
    const remove = row.getByRole("button", { name: "Remove" });
    await hydrated(remove, 60_000);
    await remove.click();
    const said = 'The run "Held run" still has jobs for this provider; cancel or finish it first.';
    const message = row.locator('.field-error[data-field="form"]');
    await expect.poll(() => message.textContent()).toBe(said);
    await expect.poll(async () => (await focused(page)).text).toBe(said);
    expect(await page.locator(".alert").count()).toBe(0);
    expect(await errorsShown(page)).toEqual([said]);
    expect(db.select({ id: schema.providers.id }).from(schema.providers).where(eq(schema.providers.id, spare.id)).get()).toBeTruthy();
  });

  it("Projects → New project: a bad or taken slug and an empty name beside their fields, the first focused", async () => {
    const { page } = browser;
    await page.goto(`${app.url}/projects`);
    const form = page.locator("form:has(textarea[name=description])");
    await hydrated(form.getByRole("button", { name: "Create project" }), 60_000);
    const projects = () => db.select({ id: schema.projects.id }).from(schema.projects).all().length;
    const before = projects();
    await form.getByLabel("Slug (used in addresses)").fill("Bad slug!");
    await form.getByRole("button", { name: "Create project" }).click();
    await expect.poll(() => form.locator('.field-error[data-field="name"]').textContent()).toBe("Give the project a name.");
    expect(await form.locator('.field-error[data-field="slug"]').textContent()).toBe(
      "Use 2–63 lowercase letters, digits or dashes, starting with a letter or digit.",
    );
    await expect.poll(async () => (await focused(page)).name).toBe("name");
    await form.getByLabel("Name").fill("Another demo");
    await form.getByLabel("Slug (used in addresses)").fill("demo");
    await form.getByRole("button", { name: "Create project" }).click();
    await expect
      .poll(() => form.locator('.field-error[data-field="slug"]').textContent())
      .toBe('A project called "demo" already exists: choose another slug.');
    await expect.poll(async () => (await focused(page)).name).toBe("slug");
    for (const t of await errorsShown(page)) expect(t).not.toMatch(RAW_ZOD);
    expect(projects()).toBe(before);
    expect(pageErrors).toEqual([]);
  });
});
