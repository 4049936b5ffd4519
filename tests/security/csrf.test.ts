/**
 * Issue 18, critical 2: every state-changing request must come from our own
 * pages. Attacks run against the real server (scripts/server.ts on the
 * production build); the redirect case in real Chromium.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs } from "../support/browser";

const PASSWORD = "correct horse battery";
const ADMIN = "admin@concord.test";
let app: RunningApp;

function userExists(email: string): boolean {
  const db = openDatabase(app.databaseFile);
  try {
    return !!db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, email)).get();
  } finally {
    db.$client.close();
  }
}

const newUser = (email: string) => ({ intent: "create", email, name: "Mallory", password: "mallory-password-1", isSiteAdmin: "on" });

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    await createUser({ email: ADMIN, name: "Admin", password: PASSWORD, isSiteAdmin: true }, db);
    await createUser({ email: "other@concord.test", name: "Other", password: PASSWORD }, db);
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("CSRF", () => {
  it("a page on another port cannot create an admin through a 307 redirect of a POST (Chromium)", async () => {
    // The attacker's page: same host, another port (so same-site: the Lax cookie travels).
    const target = `${app.url}/admin/users`;
    const attacker = http.createServer((req, res) => {
      if (req.method === "POST") {
        res.writeHead(307, { Location: target });
        res.end();
        return;
      }
      const fields = Object.entries(newUser("mallory@evil.test"))
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
        .join("");
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(`<form id="f" method="post" action="/go">${fields}</form><script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((r) => attacker.listen(0, "127.0.0.1", r));
    const attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    const browser = await launchBrowser();
    try {
      await signInAs(browser.page, app.url, ADMIN, PASSWORD);
      const answer = browser.page.waitForResponse((r) => r.url() === target && r.request().method() === "POST");
      await browser.page.goto(attackerUrl);
      const res = await answer;
      // Chromium sends Origin: null after the cross-origin 307 and carries the session cookie.
      expect((await res.request().allHeaders())["origin"]).toBe("null");
      expect(res.status()).toBe(403);
      const body = await res.text();
      expect(body).toMatch(/Refused/);
      expect(body).not.toMatch(/\bat .*\.(js|ts):\d+/);
      expect(userExists("mallory@evil.test")).toBe(false);
    } finally {
      await browser.close();
      attacker.close();
    }
  });

  it("our own form in Chromium still creates a user (the token travels with the form)", async () => {
    const browser = await launchBrowser();
    try {
      await signInAs(browser.page, app.url, ADMIN, PASSWORD);
      await browser.page.goto(`${app.url}/admin/users`);
      const form = browser.page.locator("form", { has: browser.page.getByRole("button", { name: "Create user" }) });
      await form.getByLabel("Email", { exact: true }).fill("carol@concord.test");
      await form.getByLabel("Name", { exact: true }).fill("Carol");
      await form.getByLabel("Initial password").fill("carol-password-1");
      await form.getByRole("button", { name: "Create user" }).click();
      await browser.page.getByText("Created carol@concord.test.").waitFor();
      expect(userExists("carol@concord.test")).toBe(true);
    } finally {
      await browser.close();
    }
  });

  it("refuses Origin null, a missing Origin and a malformed Origin even with the right token", async () => {
    const admin = new AppClient(app.url);
    await admin.signIn(ADMIN, PASSWORD);
    const token = await admin.csrfToken("/admin/users");
    const cases: Array<[string, Record<string, string>]> = [
      ["null", { Origin: "null" }],
      ["missing", { Origin: "" }],
      ["null, cross-site fetch", { Origin: "null", "Sec-Fetch-Site": "same-site" }],
      ["malformed", { Origin: "http://[::1" }],
      ["not an origin", { Origin: "javascript:alert(1)" }],
      ["another port", { Origin: "http://localhost:1" }],
    ];
    for (const [i, [name, headers]] of cases.entries()) {
      const email = `origin-${i}@evil.test`;
      const h = { ...headers };
      const res = await admin.request(
        "POST",
        "/admin/users",
        { "Content-Type": "application/x-www-form-urlencoded", ...h },
        new URLSearchParams({ _csrf: token, ...newUser(email) }).toString(),
      );
      expect(res.status, name).toBe(403);
      expect(res.text, name).not.toMatch(/\bat .*:\d+:\d+/);
      expect(userExists(email), name).toBe(false);
    }
    // The control: same request with our own Origin succeeds.
    const ok = await admin.postForm("/admin/users", newUser("control@concord.test"), { token });
    expect(ok.status).toBe(200);
    expect(userExists("control@concord.test")).toBe(true);
  });

  it("a missing Origin passes only with Sec-Fetch-Site: same-origin (browsers that omit Origin)", async () => {
    const admin = new AppClient(app.url);
    await admin.signIn(ADMIN, PASSWORD);
    const token = await admin.csrfToken("/admin/users");
    const res = await admin.request(
      "POST",
      "/admin/users",
      { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin" },
      new URLSearchParams({ _csrf: token, ...newUser("fetch-site@concord.test") }).toString(),
    );
    expect(res.status).toBe(200);
    expect(userExists("fetch-site@concord.test")).toBe(true);
  });

  it("refuses a ?_data= POST without the token, and one with another session's token", async () => {
    const admin = new AppClient(app.url);
    await admin.signIn(ADMIN, PASSWORD);
    const noToken = await admin.request(
      "POST",
      "/admin/users?_data=routes%2Fadmin.users",
      { "Content-Type": "application/x-www-form-urlencoded", Origin: app.url },
      new URLSearchParams(newUser("data-1@evil.test")).toString(),
    );
    expect(noToken.status).toBe(403);
    expect(noToken.headers["x-remix-catch"]).toBe("yes");
    expect(userExists("data-1@evil.test")).toBe(false);

    // A token is bound to its session: another user's valid token does not work with the admin's cookie.
    const other = new AppClient(app.url);
    await other.signIn("other@concord.test", PASSWORD);
    const othersToken = await other.csrfToken("/projects");
    const wrong = await admin.postForm("/admin/users?_data=routes%2Fadmin.users", newUser("data-2@evil.test"), { token: othersToken });
    expect(wrong.status).toBe(403);
    expect(userExists("data-2@evil.test")).toBe(false);

    // The same data request with the admin's own token goes through.
    const right = await admin.postForm("/admin/users?_data=routes%2Fadmin.users", newUser("data-3@concord.test"), {
      tokenFrom: "/admin/users",
    });
    expect(right.status).toBe(200);
    expect(userExists("data-3@concord.test")).toBe(true);
  });

  it("the token changes at sign-in: a pre-session token is useless once signed in", async () => {
    const c = new AppClient(app.url);
    const before = await c.csrfToken("/login");
    await c.signIn(ADMIN, PASSWORD);
    const after = await c.csrfToken("/admin/users");
    expect(after).not.toBe(before);
    const stale = await c.postForm("/admin/users", newUser("stale@evil.test"), { token: before });
    expect(stale.status).toBe(403);
    expect(userExists("stale@evil.test")).toBe(false);
  });

  it("multipart bodies: the token must come before any file part", async () => {
    const admin = new AppClient(app.url);
    await admin.signIn(ADMIN, PASSWORD);
    const token = await admin.csrfToken("/admin/users");
    const boundary = "----concordtest";
    const part = (name: string, value: string, filename?: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ""}\r\n\r\n${value}\r\n`;
    const fields = (email: string) =>
      Object.entries(newUser(email))
        .map(([k, v]) => part(k, v))
        .join("");
    const headers = { "Content-Type": `multipart/form-data; boundary=${boundary}`, Origin: app.url };

    const fileFirst = await admin.request(
      "POST",
      "/admin/users",
      headers,
      part("f", "x", "a.txt") + part("_csrf", token) + fields("mp-1@evil.test") + `--${boundary}--\r\n`,
    );
    expect(fileFirst.status).toBe(403);
    expect(userExists("mp-1@evil.test")).toBe(false);

    const missing = await admin.request("POST", "/admin/users", headers, fields("mp-2@evil.test") + `--${boundary}--\r\n`);
    expect(missing.status).toBe(403);

    const good = await admin.request(
      "POST",
      "/admin/users",
      headers,
      part("_csrf", token) + fields("mp-3@concord.test") + `--${boundary}--\r\n`,
    );
    expect(good.status).toBe(200);
    expect(userExists("mp-3@concord.test")).toBe(true);
  });

  it("sign-in and sign-out forms need the token too", async () => {
    const c = new AppClient(app.url);
    await c.csrfToken("/login"); // gets the pre-session cookie
    const res = await c.request(
      "POST",
      "/login",
      { "Content-Type": "application/x-www-form-urlencoded", Origin: app.url },
      new URLSearchParams({ email: ADMIN, password: PASSWORD }).toString(),
    );
    expect(res.status).toBe(403);
    expect(res.headers["set-cookie"]?.some((c) => c.startsWith("concord_session="))).toBeFalsy();

    await c.signIn(ADMIN, PASSWORD);
    const logout = await c.request("POST", "/logout", { "Content-Type": "application/x-www-form-urlencoded", Origin: app.url }, "");
    expect(logout.status).toBe(403);
    expect((await c.get("/admin/users")).status).toBe(200); // still signed in
  });
});
