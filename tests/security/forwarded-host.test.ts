/**
 * Issue 18, critical 2, one more way around the Origin check: the server
 * compared Origin with `X-Forwarded-Host ?? Host`, and anyone can send
 * X-Forwarded-Host. A cross-site request (a script, a proxy-less client, a
 * page using a same-site cookie) that claims `X-Forwarded-Host: evil.example`
 * together with `Origin: http://evil.example` matched itself and passed. The
 * header may only count behind a proxy we were told about (TRUST_PROXY=1).
 * Against the real production server, a signed-in site admin's session and
 * its valid CSRF token: only the Origin check stands between the request and
 * a new site admin.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";

const ADMIN = "admin@forwarded.test";
const PASSWORD = "forwarded-host-2026";
const seed = async (file: string) => {
  const db = openDatabase(file);
  await createUser({ email: ADMIN, name: "Admin", password: PASSWORD, isSiteAdmin: true }, db);
  db.$client.close();
};
const newUser = (email: string) => ({ intent: "create", email, name: "Mallory", password: "mallory-password-1", isSiteAdmin: "on" });

function userExists(app: RunningApp, email: string): boolean {
  const db = openDatabase(app.databaseFile);
  try {
    return !!db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, email)).get();
  } finally {
    db.$client.close();
  }
}

/** A form POST with the admin's valid token, our cookie, and the given headers instead of our own Origin. */
async function post(app: RunningApp, client: AppClient, email: string, headers: Record<string, string>) {
  const token = await client.csrfToken("/admin/users");
  return client.request(
    "POST",
    "/admin/users",
    { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    new URLSearchParams({ _csrf: token, ...newUser(email) }).toString(),
  );
}

let direct: RunningApp;
let proxied: RunningApp;
beforeAll(async () => {
  [direct, proxied] = await Promise.all([
    startApp(seed, { env: { TRUST_PROXY: undefined } }),
    startApp(seed, { env: { TRUST_PROXY: "1" } }),
  ]);
});
afterAll(async () => {
  await Promise.all([direct?.stop(), proxied?.stop()]);
});

describe("X-Forwarded-Host and the Origin check", () => {
  it("without TRUST_PROXY, a cross-origin POST naming its own origin in X-Forwarded-Host gets 403 and changes nothing", async () => {
    const admin = new AppClient(direct.url);
    await admin.signIn(ADMIN, PASSWORD);
    const attacks: Record<string, string>[] = [
      { Origin: "http://evil.example", "X-Forwarded-Host": "evil.example" },
      { Origin: "https://evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https" },
      // A list, as a chain of proxies writes it.
      { Origin: "http://evil.example", "X-Forwarded-Host": "evil.example, localhost" },
    ];
    for (const [i, headers] of attacks.entries()) {
      const email = `forwarded-${i}@evil.test`;
      const res = await post(direct, admin, email, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.text).toMatch(/^Refused: The request came from another site\./);
      expect(res.text).not.toMatch(/\bat .*:\d+:\d+/);
      expect(userExists(direct, email)).toBe(false);
    }
    // The control: the same request from our own page goes through.
    const ok = await post(direct, admin, "direct-ok@concord.test", { Origin: direct.url });
    expect(ok.status).toBe(200);
    expect(userExists(direct, "direct-ok@concord.test")).toBe(true);
  });

  it("with TRUST_PROXY=1, the proxy's X-Forwarded-Host is our origin, and another site is still refused", async () => {
    const admin = new AppClient(proxied.url);
    await admin.signIn(ADMIN, PASSWORD);
    const viaProxy = { "X-Forwarded-Host": "concord.example", "X-Forwarded-Proto": "https" };
    const ok = await post(proxied, admin, "proxied-ok@concord.test", { ...viaProxy, Origin: "https://concord.example" });
    expect(ok.status, ok.text.slice(0, 200)).toBe(200);
    expect(userExists(proxied, "proxied-ok@concord.test")).toBe(true);

    const cross = await post(proxied, admin, "proxied-evil@evil.test", { ...viaProxy, Origin: "http://evil.example" });
    expect(cross.status).toBe(403);
    expect(userExists(proxied, "proxied-evil@evil.test")).toBe(false);
    // Behind the proxy, the backend's own Host is not the public origin any more.
    const backend = await post(proxied, admin, "proxied-backend@evil.test", { ...viaProxy, Origin: proxied.url });
    expect(backend.status).toBe(403);
    expect(userExists(proxied, "proxied-backend@evil.test")).toBe(false);
  });
});
