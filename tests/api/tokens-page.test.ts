/**
 * Settings → API tokens in Chromium, against the real server: a user creates a write token for one of their
 * projects, sees it once (and can copy it), and it opens the API for that project only; after a reload the
 * token is nowhere in the page, and the list shows its prefix, scope, projects and last use; an expiry over 365
 * days is refused beside its field and creates nothing; revoking asks first and ends the token's access at
 * once; a site admin sees and revokes another user's token; another user sees only their own.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken } from "../../app/auth/tokens.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { hydrated, launchBrowser, signInAs, type Browser } from "../support/browser";

const PASSWORD = "correct horse battery";
let app: RunningApp;
let browser: Browser;
const ids: Record<string, number> = {};
let bobToken = "";

const tokenRows = () => {
  const db = openDatabase(app.databaseFile);
  try {
    return db.select().from(schema.apiTokens).all();
  } finally {
    db.$client.close();
  }
};
const api = (token: string, path: string) => new AppClient(app.url).get(path, { Authorization: `Bearer ${token}` });

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    for (const [name, admin] of [
      ["ada", false],
      ["bob", false],
      ["root", true],
    ] as const)
      ids[name] = (
        await createUser(
          { email: `${name}@lab.test`, name: name[0].toUpperCase() + name.slice(1), password: PASSWORD, isSiteAdmin: admin },
          db,
        )
      ).id;
    for (const [slug, name] of [
      ["law", "Law"],
      ["med", "Medicine"],
    ])
      ids[slug] = db.insert(schema.projects).values({ slug, name }).returning({ id: schema.projects.id }).get().id;
    await setMembership(ids.law, ids.ada, "researcher", db);
    await setMembership(ids.med, ids.ada, "researcher", db);
    await setMembership(ids.med, ids.bob, "admin", db);
    bobToken = (await createApiToken(ids.bob, { name: "bob's harness", scope: "read", projects: "all" }, db)).token;
    db.$client.close();
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("Settings → API tokens (Chromium)", () => {
  let adaToken = "";

  it("creates a token shown once, copies it, and it opens the API for the chosen project only", async () => {
    const page = browser.page;
    await signInAs(page, app.url, "ada@lab.test", PASSWORD);
    await page.getByRole("link", { name: "API tokens" }).click();
    await page.waitForURL(`${app.url}/settings/tokens`);
    await expect.poll(() => page.getByText("No tokens yet.").isVisible()).toBe(true);
    // Another user's token is not listed to Ada.
    expect(await page.content()).not.toContain("bob&#x27;s harness");
    expect(await page.content()).not.toContain("bob's harness");

    await page.getByLabel("Name").fill("eval harness");
    await page.getByRole("radio", { name: /^Write/ }).check();
    await page.getByRole("checkbox", { name: /^Law/ }).check();
    await expect.poll(() => page.getByRole("radio", { name: "Only these:" }).isChecked()).toBe(true);
    await page.getByLabel(/Expires in/).fill("30");
    const create = page.getByRole("button", { name: "Create token" });
    await hydrated(create);
    await create.click();
    const shown = page.getByLabel("New token");
    await shown.waitFor();
    adaToken = await shown.inputValue();
    expect(adaToken).toMatch(/^ccd_[A-Za-z0-9_-]{43}$/);

    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(adaToken);

    const rows = tokenRows().filter((r) => r.userId === ids.ada);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: "eval harness", scope: "write", allProjects: false, prefix: adaToken.slice(4, 12) });
    // 30 days, to the second the row was written.
    expect(Math.abs(rows[0].expiresAt - (Math.floor(Date.now() / 1000) + 30 * 24 * 3600))).toBeLessThanOrEqual(5);

    const list = await api(adaToken, "/api/v1/projects");
    expect(list.status).toBe(200);
    expect((JSON.parse(list.text) as { data: { slug: string }[] }).data.map((p) => p.slug)).toEqual(["law"]);
    expect((await api(adaToken, "/api/v1/projects/med")).status).toBe(404);
  });

  it("after a reload the token is nowhere in the page; the list shows its prefix, scope, projects and last use", async () => {
    const page = browser.page;
    await page.reload();
    await page.getByRole("heading", { name: "Your tokens" }).waitFor();
    expect(await page.getByLabel("New token").count()).toBe(0);
    const html = await page.content();
    expect(html).not.toContain(adaToken);
    expect(html).not.toContain(adaToken.slice(12));
    const row = page.getByRole("row", { name: /eval harness/ });
    await expect.poll(() => row.textContent()).toContain(`ccd_${adaToken.slice(4, 12)}…`);
    const text = (await row.textContent())!;
    expect(text).toContain("write");
    expect(text).toContain("Law");
    expect(text).not.toContain("Medicine");
    expect(text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC from 127\.0\.0\.1/);
    expect(text).toContain("active");
  });

  it("an expiry over 365 days is refused beside its field, and creates nothing", async () => {
    const page = browser.page;
    const before = tokenRows().length;
    await page.getByLabel("Name").fill("too long");
    await page.getByLabel(/Expires in/).fill("400");
    const create = page.getByRole("button", { name: "Create token" });
    await hydrated(create);
    await create.click();
    await page.locator('[data-field="expiresDays"]').waitFor();
    expect(await page.locator('[data-field="expiresDays"]').textContent()).toBe("A token can be valid for at most 365 days (1 year).");
    expect(await page.getByLabel(/Expires in/).getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("New token").count()).toBe(0);
    expect(tokenRows().length).toBe(before);
  });

  it("revoking asks first; once accepted the token is refused at its next request", async () => {
    const page = browser.page;
    await page.goto(`${app.url}/settings/tokens`);
    const revoke = page.getByRole("button", { name: "Revoke eval harness" });
    await hydrated(revoke);
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.dismiss();
    });
    await revoke.click();
    await expect.poll(() => asked).toMatch(/^Revoke the token “eval harness” \(ccd_.{8}…\)\?/);
    expect((await api(adaToken, "/api/v1/projects")).status).toBe(200);

    page.once("dialog", (d) => void d.accept());
    await revoke.click();
    await page.getByText("Token revoked: it no longer opens the API.").waitFor();
    await expect.poll(() => page.getByRole("row", { name: /eval harness/ }).textContent()).toContain("revoked");
    expect(await page.getByRole("button", { name: "Revoke eval harness" }).count()).toBe(0);
    const refused = await api(adaToken, "/api/v1/projects");
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text).detail).toMatch(/revoked/);
  });

  it("a site admin sees every user's tokens and revokes another user's", async () => {
    const page = browser.page;
    expect((await api(bobToken, "/api/v1/projects")).status).toBe(200);
    await signInAs(page, app.url, "root@lab.test", PASSWORD);
    await page.goto(`${app.url}/settings/tokens`);
    await page.getByRole("heading", { name: "Every user's tokens" }).waitFor();
    const bobRow = page.getByRole("row", { name: /bob's harness/ });
    expect(await bobRow.textContent()).toContain("bob@lab.test");
    expect(await page.getByRole("row", { name: /eval harness/ }).textContent()).toContain("ada@lab.test");
    const revoke = bobRow.getByRole("button", { name: "Revoke bob's harness" });
    await hydrated(revoke);
    page.once("dialog", (d) => void d.accept());
    await revoke.click();
    await page.getByText("Token revoked: it no longer opens the API.").waitFor();
    expect((await api(bobToken, "/api/v1/projects")).status).toBe(401);
    const db = openDatabase(app.databaseFile);
    try {
      const row = db
        .select({ revokedAt: schema.apiTokens.revokedAt })
        .from(schema.apiTokens)
        .where(eq(schema.apiTokens.userId, ids.bob))
        .get();
      expect(row?.revokedAt).toBeGreaterThan(0);
    } finally {
      db.$client.close();
    }
  });

  it("revoking someone else's token by posting its id is refused as if it did not exist", async () => {
    const client = new AppClient(app.url);
    await client.signIn("bob@lab.test", PASSWORD);
    const db = openDatabase(app.databaseFile);
    const second = await createApiToken(ids.ada, { name: "second", scope: "read", projects: "all" }, db).finally(() => db.$client.close());
    const r = await client.postForm("/settings/tokens", { intent: "revoke", tokenId: String(second.id) });
    expect(r.status).toBe(404);
    expect(r.text).toContain("No such token.");
    expect((await api(second.token, "/api/v1/projects")).status).toBe(200);
  });
});
