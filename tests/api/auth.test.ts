/**
 * The HTTP API's authentication and access (issue 37), against the real server: only `Authorization: Bearer`
 * opens /api/v1/ (no token, a malformed, wrong, expired or revoked one, a disabled user's, and a signed-in
 * browser's cookie all get 401 problem+json with `WWW-Authenticate: Bearer`); a read token cannot POST (403
 * insufficient_scope); a project the token cannot reach is 404 exactly as one that does not exist; a token
 * listing projects reaches no other project of its user; removing, demoting or disabling the user takes effect
 * on the next request; the token is stored only as its SHA-256; lists page with cursors; the rate limit
 * answers 429 with Retry-After; bearer requests skip the CSRF check only under the normalised /api/v1/ path.
 */
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, removeMembership, setMembership } from "../../app/auth/accounts.server";
import { setUserDisabled } from "../../app/auth/users.server";
import { createApiToken, revokeApiToken, type NewToken } from "../../app/auth/tokens.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { AppClient, startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { withAppDb } from "../support/api";
import { expectMatchesSpec } from "../support/api-spec";

const PASSWORD = "correct horse battery";
/** Requests per minute per token on this server: low, so the rate-limit test reaches it quickly. */
const RATE = 30;
let app: RunningApp;
const ids: Record<string, number> = {};

/** Runs `fn` on the running server's database (another connection; the server sees the change at its next read). */
const withDb = <T>(fn: (db: Db) => Promise<T> | T) => withAppDb(app, fn);
const newToken = (owner: string, input: Partial<NewToken> = {}) =>
  withDb(async (db) => createApiToken(ids[owner], { name: "test", scope: "read", projects: "all", ...input }, db));

const client = () => new AppClient(app.url);
const call = (method: string, path: string, token?: string, headers: Record<string, string> = {}, body?: string) =>
  client().request(method, path, { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers }, body);
const json = (r: AppResponse) => JSON.parse(r.text) as Record<string, unknown>;
/** The answer as the OpenAPI document describes it (tests/support/api-spec.ts); returns its parsed body. */
function specBody(method: string, path: string, r: AppResponse) {
  const body = r.text ? (JSON.parse(r.text) as Record<string, unknown>) : undefined;
  expectMatchesSpec({ method, path, status: r.status, contentType: r.headers["content-type"], body, headers: r.headers });
  return body!;
}

function expectProblem(r: AppResponse, status: number) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers["content-type"]).toBe("application/problem+json");
  const body = json(r);
  expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  return body as { type: string; title: string; status: number; detail: string; errors?: { field?: string; message: string }[] };
}

beforeAll(async () => {
  app = await startApp(
    async (file) => {
      const db = openDatabase(file);
      const user = async (name: string, isSiteAdmin = false) =>
        (ids[name] = (await createUser({ email: `${name}@lab.test`, name, password: PASSWORD, isSiteAdmin }, db)).id);
      for (const name of ["ada", "bob", "dan", "eve"]) await user(name);
      await user("root", true);
      for (const [slug, name] of [
        ["law", "Law"],
        ["med", "Medicine"],
        ["art", "Art"],
      ])
        ids[slug] = db.insert(schema.projects).values({ slug, name }).returning({ id: schema.projects.id }).get().id;
      await setMembership(ids.law, ids.ada, "researcher", db);
      await setMembership(ids.med, ids.ada, "annotator", db);
      await setMembership(ids.art, ids.bob, "admin", db);
      await setMembership(ids.law, ids.dan, "researcher", db);
      await setMembership(ids.law, ids.eve, "annotator", db);
      db.$client.close();
    },
    { env: { CONCORD_API_RATE_LIMIT: String(RATE) } },
  );
});
afterAll(async () => {
  await app?.stop();
});

describe("authentication", () => {
  it("no token, a malformed, wrong, expired or revoked token, and a disabled user's token: 401 problem+json with WWW-Authenticate", async () => {
    const none = await call("GET", "/api/v1/projects");
    const body = expectProblem(none, 401);
    specBody("GET", "/api/v1/projects", none);
    expect(body.title).toBe("Unauthorized");
    expect(none.headers["www-authenticate"]).toBe('Bearer realm="Concord API"');
    // The API sets no cookie, not even the pre-session one every page gets.
    expect(none.headers["set-cookie"]).toBeUndefined();

    const good = await newToken("bob");
    const wrong = good.token.slice(0, -2) + (good.token.endsWith("AA") ? "BB" : "AA");
    for (const bad of ["not-a-token", wrong, good.token.slice(4)]) {
      const r = await call("GET", "/api/v1/projects", bad);
      expect(expectProblem(r, 401).detail).toMatch(/not valid/);
      expect(r.headers["www-authenticate"]).toMatch(/^Bearer realm="Concord API", error="invalid_token"/);
    }
    // Basic or any other scheme is not a bearer token.
    expectProblem(await call("GET", "/api/v1/projects", undefined, { Authorization: `Basic ${good.token}` }), 401);
    // The scheme's case does not matter (RFC 9110 §11.1).
    expect((await call("GET", "/api/v1/projects", undefined, { Authorization: `bearer ${good.token}` })).status).toBe(200);

    const expired = await newToken("bob");
    await withDb((db) =>
      db
        .update(schema.apiTokens)
        .set({ expiresAt: Math.floor(Date.now() / 1000) - 1 })
        .where(eq(schema.apiTokens.id, expired.id))
        .run(),
    );
    expect(expectProblem(await call("GET", "/api/v1/projects", expired.token), 401).detail).toMatch(/expired/);

    const revoked = await newToken("bob");
    expect((await call("GET", "/api/v1/projects", revoked.token)).status).toBe(200);
    await withDb((db) => revokeApiToken("operator", revoked.id, db));
    expect(expectProblem(await call("GET", "/api/v1/projects", revoked.token), 401).detail).toMatch(/revoked/);
  });

  it("a signed-in browser's cookie opens nothing under /api/v1/ (401), for reads and writes", async () => {
    const browser = client();
    await browser.signIn("ada@lab.test", PASSWORD);
    expect((await browser.get("/p/law")).status).toBe(200);
    const read = await browser.get("/api/v1/projects");
    expect(expectProblem(read, 401).detail).toMatch(/does not accept the sign-in cookie/);
    expectProblem(await browser.get("/api/v1/projects/law"), 401);
    // Even a same-origin POST carrying the page's CSRF token: the API never reads the cookie.
    const token = await browser.csrfToken("/projects");
    const write = await browser.request(
      "POST",
      "/api/v1/projects",
      { "Content-Type": "application/json", Origin: app.url, "X-CSRF-Token": token },
      "{}",
    );
    expectProblem(write, 401);
    // A cross-site POST with the cookie and no bearer token is refused by the CSRF check before any route runs.
    const forged = await browser.request(
      "POST",
      "/api/v1/projects",
      { "Content-Type": "application/json", Origin: "http://evil.test" },
      "{}",
    );
    expect(forged.status).toBe(403);
    expect(forged.text).toMatch(/^Refused/);
  });
});

describe("scope", () => {
  it("a read token reads but cannot POST (403 insufficient_scope); a write token's POST to a read-only endpoint is 405", async () => {
    const read = await newToken("ada", { scope: "read" });
    const write = await newToken("ada", { scope: "write" });
    expect((await call("GET", "/api/v1/projects", read.token)).status).toBe(200);
    // HEAD is a read.
    expect((await call("HEAD", "/api/v1/projects/law", read.token)).status).toBe(200);
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const r = await call(method, "/api/v1/projects", read.token, { "Content-Type": "application/json" }, "{}");
      const body = expectProblem(r, 403);
      expect(body.type).toBe("urn:concord:problem:insufficient-scope");
      expect(r.headers["www-authenticate"]).toMatch(/error="insufficient_scope".*scope="write"/);
    }
    // A bearer POST is not put through the CSRF check (no Origin, or another site's): the token is the authority.
    const crossSite = await call(
      "POST",
      "/api/v1/projects/law",
      read.token,
      { Origin: "http://evil.test", "Content-Type": "application/json" },
      "{}",
    );
    expectProblem(crossSite, 403);
    const allowed = await call("POST", "/api/v1/projects", write.token, { "Content-Type": "application/json" }, "{}");
    expectProblem(allowed, 405);
    expect(allowed.headers.allow).toBe("GET, HEAD");
    // No token at all on a POST: 401 from the API (no cookie, so no CSRF check either).
    expectProblem(await call("POST", "/api/v1/projects", undefined, { "Content-Type": "application/json" }, "{}"), 401);
  });

  it("the CSRF exemption follows the normalised path: a bearer POST that resolves to a page is checked as a page", async () => {
    const write = await newToken("root", { scope: "write" });
    for (const path of ["/api/v1/../../p/law/members", "/api/v1/%2e%2e/%2e%2e/p/law/members", "/api/v1/%2E%2E/%2E%2E/logout"]) {
      const r = await call(
        "POST",
        path,
        write.token,
        { "Content-Type": "application/x-www-form-urlencoded", Origin: "http://evil.test" },
        "intent=remove&userId=1",
      );
      expect([r.status, r.text.slice(0, 8)], path).toEqual([403, "Refused:"]);
    }
  });
});

describe("projects", () => {
  it("lists the projects the token reaches and reads one with the user's role; another user's project is 404 as a missing one", async () => {
    const t = await newToken("ada");
    const list = await call("GET", "/api/v1/projects", t.token);
    expect(list.status).toBe(200);
    expect(list.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(list.headers["cache-control"]).toBe("no-store");
    expect(specBody("GET", "/api/v1/projects", list)).toEqual({
      data: [
        { id: ids.law, slug: "law", name: "Law", description: "", role: "researcher" },
        { id: ids.med, slug: "med", name: "Medicine", description: "", role: "annotator" },
      ],
      next: null,
    });
    const law = specBody("GET", "/api/v1/projects/law", await call("GET", "/api/v1/projects/law", t.token));
    expect(law).toMatchObject({ id: ids.law, slug: "law", name: "Law", role: "researcher", datasets: [], counts: { tasks: 0, judges: 0 } });
    // An annotator's view, as the overview page: no datasets or counts.
    expect(specBody("GET", "/api/v1/projects/med", await call("GET", "/api/v1/projects/med", t.token))).toMatchObject({
      slug: "med",
      role: "annotator",
      datasets: null,
      counts: null,
    });
    const other = await call("GET", "/api/v1/projects/art", t.token);
    const missing = await call("GET", "/api/v1/projects/no-such-project", t.token);
    expectProblem(other, 404);
    specBody("GET", "/api/v1/projects/art", other);
    expect(other.text).toBe(missing.text);
    // A site admin reaches every project, as admin.
    const root = await newToken("root");
    expect(
      (json(await call("GET", "/api/v1/projects", root.token)).data as { slug: string; role: string }[]).map((p) => `${p.slug}:${p.role}`),
    ).toEqual(["art:admin", "law:admin", "med:admin"]);
  });

  it("a token listing projects cannot read another project of its own user", async () => {
    const t = await newToken("ada", { projects: [ids.law] });
    expect((json(await call("GET", "/api/v1/projects", t.token)).data as { slug: string }[]).map((p) => p.slug)).toEqual(["law"]);
    expect((await call("GET", "/api/v1/projects/law", t.token)).status).toBe(200);
    const med = await call("GET", "/api/v1/projects/med", t.token);
    expectProblem(med, 404);
    expect(med.text).toBe((await call("GET", "/api/v1/projects/no-such-project", t.token)).text);
  });

  it("demoting, removing and disabling the user take effect on the token's next request", async () => {
    const t = await newToken("dan");
    expect(json(await call("GET", "/api/v1/projects/law", t.token))).toMatchObject({ role: "researcher", datasets: [] });
    await withDb((db) => setMembership(ids.law, ids.dan, "annotator", db));
    expect(json(await call("GET", "/api/v1/projects/law", t.token))).toMatchObject({ role: "annotator", datasets: null });
    await withDb((db) => removeMembership(ids.law, ids.dan, db));
    expectProblem(await call("GET", "/api/v1/projects/law", t.token), 404);
    expect(json(await call("GET", "/api/v1/projects", t.token)).data).toEqual([]);
    await withDb((db) => setMembership(ids.law, ids.dan, "researcher", db));
    expect((await call("GET", "/api/v1/projects/law", t.token)).status).toBe(200);
    await withDb((db) => setUserDisabled(ids.root, ids.dan, true, db));
    expect(expectProblem(await call("GET", "/api/v1/projects/law", t.token), 401).detail).toMatch(/disabled/);
  });

  it("pages with cursors and a next link; a bad limit or cursor is 400 naming it", async () => {
    const t = await newToken("root");
    const seen: string[] = [];
    let next: string | null = "/api/v1/projects?limit=1";
    let pages = 0;
    while (next) {
      const r = await call("GET", next.replace(app.url, ""), t.token);
      expect(r.status).toBe(200);
      const page = specBody("GET", next, r) as { data: { slug: string }[]; next: string | null };
      expect(page.data).toHaveLength(1);
      seen.push(page.data[0].slug);
      if (page.next) {
        expect(page.next.startsWith(`${app.url}/api/v1/projects?`)).toBe(true);
        expect(r.headers.link).toBe(`<${page.next}>; rel="next"`);
      } else expect(r.headers.link).toBeUndefined();
      next = page.next;
      pages++;
    }
    expect([pages, seen]).toEqual([3, ["art", "law", "med"]]);
    for (const limit of ["0", "10001", "abc", "-1", "1.5"]) {
      const r = await call("GET", `/api/v1/projects?limit=${limit}`, t.token);
      specBody("GET", "/api/v1/projects", r);
      const body = expectProblem(r, 400);
      expect(body.errors).toEqual([{ field: "limit", message: expect.stringMatching(/^limit: a whole number from 1 to 10000/) }]);
    }
    expect((await call("GET", "/api/v1/projects?limit=10000", t.token)).status).toBe(200);
    for (const cursor of ["garbage!", "eyJ4IjoxfQ", Buffer.from("[]").toString("base64url")]) {
      const body = expectProblem(await call("GET", `/api/v1/projects?cursor=${cursor}`, t.token), 400);
      expect(body.errors?.[0].field).toBe("cursor");
    }
  });
});

describe("storage, limits and unknown paths", () => {
  it("stores only the token's SHA-256, and records when and from where it was last used", async () => {
    const t = await newToken("eve");
    expect((await call("GET", "/api/v1/projects", t.token)).status).toBe(200);
    const row = await withDb((db) => db.select().from(schema.apiTokens).where(eq(schema.apiTokens.id, t.id)).get()!);
    expect(row.tokenHash).toBe(createHash("sha256").update(t.token).digest("hex"));
    for (const value of Object.values(row)) expect(String(value)).not.toContain(t.token.slice(4));
    expect(row.lastUsedFrom).toBe("127.0.0.1");
    expect(Math.abs(row.lastUsedAt! - Date.now() / 1000)).toBeLessThanOrEqual(5);
  });

  it(`answers 429 with Retry-After past ${RATE} requests a minute per token, and other tokens are not held back`, async () => {
    const t = await newToken("eve");
    const other = await newToken("eve");
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: RATE + 10 }, () => call("GET", "/api/v1/projects", t.token)));
    const seconds = (Date.now() - started) / 1000;
    const ok = answers.filter((r) => r.status === 200).length;
    const limited = answers.filter((r) => r.status === 429);
    expect(ok + limited.length).toBe(RATE + 10);
    // The bucket holds RATE and refills RATE per minute: at most RATE + the refill over the burst's duration pass.
    expect(ok).toBeGreaterThanOrEqual(RATE);
    expect(ok).toBeLessThanOrEqual(RATE + Math.ceil((seconds * RATE) / 60));
    expect(limited.length).toBeGreaterThan(0);
    const body = expectProblem(limited[0], 429);
    specBody("GET", "/api/v1/projects", limited[0]);
    expect(body.type).toBe("urn:concord:problem:rate-limited");
    // One request refills in 60 / RATE = 2 s.
    expect(Number(limited[0].headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(limited[0].headers["retry-after"])).toBeLessThanOrEqual(60 / RATE);
    expect((await call("GET", "/api/v1/projects", other.token)).status).toBe(200);
  });

  it("an unknown path under /api/v1/ is 404 problem+json, for any method", async () => {
    const t = await newToken("eve", { scope: "write" });
    expectProblem(await call("GET", "/api/v1/nothing-here", t.token), 404);
    expectProblem(await call("GET", "/api/v1/projects/law/extra/deep", t.token), 404);
    expectProblem(await call("POST", "/api/v1/nothing-here", undefined, { "Content-Type": "application/json" }, "{}"), 404);
  });
});
