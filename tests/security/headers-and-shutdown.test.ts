/**
 * Issue 18, "Also": security headers on every page (a nonce CSP that Remix's
 * inline scripts satisfy, no framing, nosniff, a referrer policy), pages that
 * still work in Chromium under that policy, and a clean SIGTERM.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/auth/accounts.server";
import { openDatabase } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";
import { launchBrowser, signInAs } from "../support/browser";

const PASSWORD = "correct horse battery";
let app: RunningApp;
beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    await createUser({ email: "admin@concord.test", name: "Admin", password: PASSWORD, isSiteAdmin: true }, db);
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("security headers", () => {
  it("every page carries a nonce CSP, no framing, nosniff and a referrer policy; inline scripts carry the nonce", async () => {
    const c = new AppClient(app.url);
    for (const path of ["/login", "/projects", "/no-such-page"]) {
      const res = await c.get(path);
      const csp = String(res.headers["content-security-policy"]);
      expect(csp, path).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{16,}'/);
      expect(csp, path).not.toMatch(/script-src[^;]*'unsafe-inline'/);
      expect(csp, path).toMatch(/frame-ancestors 'none'/);
      expect(res.headers["x-frame-options"], path).toBe("DENY");
      expect(res.headers["x-content-type-options"], path).toBe("nosniff");
      expect(res.headers["referrer-policy"], path).toBe("same-origin");
    }
    const page = await c.get("/login");
    const nonce = /'nonce-([^']+)'/.exec(String(page.headers["content-security-policy"]))![1];
    const scripts = [...page.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) {
      if (/\bsrc=/.test(attrs)) continue;
      expect(attrs).toContain(`nonce="${nonce}"`);
    }
    // A fresh nonce per response.
    const again = await c.get("/login");
    expect(String(again.headers["content-security-policy"])).not.toContain(nonce);
  });

  it("pages hydrate and work in Chromium under the policy, with no CSP violation", async () => {
    const browser = await launchBrowser();
    const violations: string[] = [];
    const errors: string[] = [];
    browser.page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
      if (m.type() === "error") errors.push(m.text());
    });
    try {
      await signInAs(browser.page, app.url, "admin@concord.test", PASSWORD); // client-side navigation after sign-in
      await browser.page.goto(`${app.url}/admin/users`);
      await browser.page.waitForLoadState("networkidle");
      // Client-side navigation works only once the scripts have run.
      await browser.page.getByRole("link", { name: "Projects" }).click();
      await browser.page.waitForURL(/\/projects$/);
      expect(await browser.page.evaluate(() => typeof (window as unknown as { __remixContext?: unknown }).__remixContext)).toBe("object");
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe("production mode", () => {
  it("npm start and npm run demo run the server with NODE_ENV=production", async () => {
    const { default: pkg } = await import("../../package.json", { with: { type: "json" } });
    for (const name of ["start", "demo"] as const) {
      expect(pkg.scripts[name], name).toMatch(/NODE_ENV=production node .*scripts\/cli\.mjs server/);
    }
  });

  it("errors never reach the client as stack traces", async () => {
    const c = new AppClient(app.url);
    const res = await c.request("POST", "/login", { Origin: "%%%", "Content-Type": "application/x-www-form-urlencoded" }, "a=1");
    expect(res.status).toBe(403);
    expect(res.text).not.toMatch(/\bat .*:\d+:\d+/);
  });
});

describe("shutdown", () => {
  it("SIGTERM lets an in-flight request finish, then the server exits within 10 s", async () => {
    const own = await startApp();
    try {
      const c = new AppClient(own.url);
      const token = await c.csrfToken("/login");
      const body = new URLSearchParams({ _csrf: token, email: "nobody@concord.test", password: "wrong password!" }).toString();
      const url = new URL(own.url);
      // A sign-in whose body is still arriving when the signal comes.
      const answer = new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: "127.0.0.1",
            port: url.port,
            path: "/login",
            method: "POST",
            headers: {
              Host: url.host,
              Origin: own.url,
              Cookie: c.cookieHeader(),
              "Content-Type": "application/x-www-form-urlencoded",
              "Content-Length": String(body.length),
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.write(body.slice(0, 10));
        setTimeout(() => {
          process.kill(own.pid, "SIGTERM");
          setTimeout(() => req.end(body.slice(10)), 500);
        }, 200);
      });
      const exited = new Promise<number>((resolve) => {
        const check = setInterval(() => {
          try {
            process.kill(own.pid, 0);
          } catch {
            clearInterval(check);
            resolve(Date.now());
          }
        }, 50);
      });
      const signalled = Date.now() + 200;
      expect(await answer).toBe(401);
      const exitAt = await exited;
      expect(exitAt - signalled).toBeLessThan(10_000);
      // Nothing held it open until the forced cut-off (8 s): it left once the request was done.
      expect(own.output()).not.toMatch(/cutting/);
      expect(own.output()).toMatch(/SIGTERM, finishing 1 request/);
    } finally {
      await own.stop();
    }
  }, 60_000);
});
