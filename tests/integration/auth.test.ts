import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { useTempDatabase } from "../support/db";
import { makeUser, TEST_PASSWORD } from "../support/factory";
import { args, get, ORIGIN, post, run, signInCookie } from "../support/http";
import { hashPassword, verifyPassword } from "../../app/auth/password.server";
import { signIn, MAX_FREE_FAILURES } from "../../app/auth/accounts.server";
import { action as loginAction } from "../../app/routes/login";
import { safeRedirect } from "../../app/auth/redirects";
import { action as logoutAction } from "../../app/routes/logout";
import { loader as projectsLoader } from "../../app/routes/projects._index";
import { schema } from "../../db/client";

const { db, file: dbFile } = useTempDatabase();

describe("passwords", () => {
  it("are stored as salted scrypt hashes and verified", async () => {
    const h1 = await hashPassword("a long passphrase");
    const h2 = await hashPassword("a long passphrase");
    expect(h1).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(h1).not.toBe(h2); // fresh salt each time
    expect(await verifyPassword("a long passphrase", h1)).toBe(true);
    expect(await verifyPassword("a long passphrasE", h1)).toBe(false);
    expect(await verifyPassword("anything", "not-a-hash")).toBe(false);
  });
});

describe("sign-in", () => {
  it("signs in with the right password and lands on the requested page", async () => {
    const u = await makeUser();
    const res = (await loginAction(
      args(post("/login", { email: u.email.toUpperCase(), password: u.password, redirectTo: "/projects?x=1" })),
    )) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/projects?x=1");
    const cookie = res.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });

  it("gives the same message for a wrong password and an unknown account", async () => {
    const u = await makeUser();
    const wrong = await run(loginAction, args(post("/login", { email: u.email, password: "not the password" })));
    const unknown = await run(loginAction, args(post("/login", { email: "nobody@example.test", password: "whatever123" })));
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const a = await wrong.json();
    const b = await unknown.json();
    expect(a).toEqual(b);
    expect(a.error).toBe("That email and password do not match an account.");
  });

  it("refuses a disabled account with the same message", async () => {
    const u = await makeUser();
    db().update(schema.users).set({ disabled: true }).where(eq(schema.users.id, u.id)).run();
    const res = await run(loginAction, args(post("/login", { email: u.email, password: u.password })));
    expect(res.status).toBe(401);
  });

  it("refuses further attempts after repeated failures, even with the right password", async () => {
    const u = await makeUser();
    for (let i = 0; i < MAX_FREE_FAILURES - 1; i++) {
      expect((await signIn(u.email, "wrong password!")).ok).toBe(false);
    }
    const last = await run(loginAction, args(post("/login", { email: u.email, password: "wrong password!" })));
    expect(last.status).toBe(429);
    expect(Number(last.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await last.json()).error).toMatch(/Too many failed sign-ins\. Try again in 1 minute\./);
    const right = await signIn(u.email, TEST_PASSWORD);
    expect(right).toMatchObject({ ok: false, reason: "locked" });
  });

  it("throttles unknown emails the same way, so locking reveals nothing", async () => {
    for (let i = 0; i < MAX_FREE_FAILURES - 1; i++) await signIn("ghost@example.test", "nope nope nope");
    expect(await signIn("ghost@example.test", "nope nope nope")).toMatchObject({ ok: false, reason: "locked" });
  });

  it("only redirects to same-site paths", () => {
    expect(safeRedirect("/p/demo", ORIGIN)).toBe("/p/demo");
    expect(safeRedirect("//evil.example", ORIGIN)).toBe("/projects");
    expect(safeRedirect("https://evil.example", ORIGIN)).toBe("/projects");
    expect(safeRedirect(undefined, ORIGIN)).toBe("/projects");
  });
});

describe("sessions", () => {
  it("without SESSION_SECRET, cookies are signed with a random secret kept beside the database", async () => {
    expect(process.env.SESSION_SECRET).toBeUndefined();
    const u = await makeUser();
    await signInCookie(u.email, u.password);
    const secretFile = path.join(path.dirname(dbFile), "concord-session-secret");
    expect(fs.readFileSync(secretFile, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600);
  });

  it("redirects to /login without a session", async () => {
    const res = await run(projectsLoader, args(get("/projects")));
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/login?redirectTo=%2Fprojects");
  });

  it("says the session ended when it has expired, and leaks nothing else", async () => {
    const u = await makeUser();
    const cookie = await signInCookie(u.email, u.password);
    db().update(schema.sessions).set({ expiresAt: 1 }).where(eq(schema.sessions.userId, u.id)).run();
    const res = await run(projectsLoader, args(get("/projects", cookie)));
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/login?redirectTo=%2Fprojects&reason=expired");
    expect(db().select().from(schema.sessions).where(eq(schema.sessions.userId, u.id)).all()).toHaveLength(0);
  });

  it("sign-out ends the session on the server, not just in the browser", async () => {
    const u = await makeUser();
    const cookie = await signInCookie(u.email, u.password);
    expect((await run(projectsLoader, args(get("/projects", cookie)))).status).toBe(200);
    const out = (await logoutAction(args(post("/logout", {}, cookie)))) as Response;
    expect(out.headers.get("Location")).toBe("/login");
    const again = await run(projectsLoader, args(get("/projects", cookie)));
    expect(again.status).toBe(302);
  });

  it("rejects a tampered cookie", async () => {
    const u = await makeUser();
    const cookie = await signInCookie(u.email, u.password);
    const tampered = cookie.slice(0, -3) + (cookie.endsWith("abc") ? "xyz" : "abc");
    const res = await run(projectsLoader, args(get("/projects", tampered)));
    expect(res.status).toBe(302);
  });

  it("refuses a POST from another origin", async () => {
    const u = await makeUser({ isSiteAdmin: true });
    const cookie = await signInCookie(u.email, u.password);
    const { action } = await import("../../app/routes/projects._index");
    const res = await run(action, args(post("/projects", { name: "X", slug: "xx" }, cookie, "https://evil.example")));
    expect(res.status).toBe(403);
    const same = await run(action, args(post("/projects", { name: "X", slug: "xx" }, cookie, ORIGIN)));
    expect(same.status).toBe(302);
  });
});
