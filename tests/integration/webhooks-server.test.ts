/**
 * Webhooks against the real server (issue 37): the API endpoints (register with the secret once, list, read,
 * delete, the delivery log in cursor pages; idempotent POST; 401/403/404 as every endpoint; a private address
 * refused with the field named; every 2xx body checked against the OpenAPI document), and the server's own
 * sender delivering an event another process emitted (`npm run import` on the server's database) to a local
 * receiver, signed. The page is for researchers and admins: an annotator is refused it.
 */
import { createHmac } from "node:crypto";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken, type NewToken } from "../../app/auth/tokens.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { expectMatchesSpec, expectRequestMatchesSpec } from "../support/api-spec";
import { AppClient, startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { withAppDb } from "../support/api";
import { runScript } from "../support/cli";

const PASSWORD = "correct horse battery";
let app: RunningApp;
const ids: Record<string, number> = {};

type Received = { headers: http.IncomingHttpHeaders; body: string };
const received: Received[] = [];
let receiverUrl = "";
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.statusCode = 200;
    res.end("ok");
  });
});

const withDb = <T>(fn: (db: Db) => Promise<T> | T) => withAppDb(app, fn);
const newToken = (owner: string, input: Partial<NewToken> = {}) =>
  withDb(async (db) => createApiToken(ids[owner], { name: "test", scope: "write", projects: "all", ...input }, db));

const call = (method: string, p: string, token?: string, headers: Record<string, string> = {}, body?: string) =>
  new AppClient(app.url).request(method, p, { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers }, body);
const postJson = (p: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  call("POST", p, token, { "Content-Type": "application/json", ...headers }, JSON.stringify(body));
const bodyOf = (r: AppResponse) => (r.text ? (JSON.parse(r.text) as Record<string, any>) : undefined);

/** The answer matches the OpenAPI document (status, media type, body); returns the parsed body. */
function spec(method: string, p: string, r: AppResponse) {
  const body = bodyOf(r);
  expectMatchesSpec({ method, path: p, status: r.status, contentType: r.headers["content-type"], body, headers: r.headers });
  return body!;
}

async function waitFor(check: () => boolean, ms = 15_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms; server output:\n${app.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/in`;
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    for (const name of ["rhea", "ana", "olga"])
      ids[name] = (await createUser({ email: `${name}@lab.test`, name, password: PASSWORD }, db)).id;
    ids.lab = db.insert(schema.projects).values({ slug: "lab", name: "Lab" }).returning({ id: schema.projects.id }).get().id;
    ids.other = db.insert(schema.projects).values({ slug: "other", name: "Other" }).returning({ id: schema.projects.id }).get().id;
    await setMembership(ids.lab, ids.rhea, "researcher", db);
    await setMembership(ids.lab, ids.ana, "annotator", db);
    await setMembership(ids.other, ids.olga, "admin", db);
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
  await new Promise((r) => receiver.close(r));
});

describe("the API", () => {
  it("registers a webhook (201, the secret once, Location), lists, reads and deletes it; the POST is idempotent", async () => {
    const { token } = await newToken("rhea");
    const input = { url: receiverUrl, events: ["import.finished", "run.finished"] };
    expectRequestMatchesSpec("POST", "/api/v1/projects/lab/webhooks", input);
    const headers = { "Idempotency-Key": "hook-1" };
    const made = await postJson("/api/v1/projects/lab/webhooks", token, input, headers);
    expect(made.status, made.text).toBe(201);
    const created = spec("POST", "/api/v1/projects/lab/webhooks", made);
    expect(created).toMatchObject({ url: receiverUrl, events: ["run.finished", "import.finished"], status: "active", created_by: "rhea" });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(made.headers.location).toBe(`/api/v1/projects/lab/webhooks/${created.id}`);
    // The same key and body: the same answer, replayed, and no second webhook.
    const again = await postJson("/api/v1/projects/lab/webhooks", token, input, headers);
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(bodyOf(again)).toEqual(created);

    const list = await call("GET", "/api/v1/projects/lab/webhooks", token);
    const page = spec("GET", "/api/v1/projects/lab/webhooks", list);
    expect(page.data.map((h: { id: number }) => h.id)).toEqual([created.id]);
    // Never the secret again.
    expect(list.text).not.toContain(created.secret);
    const one = await call("GET", `/api/v1/projects/lab/webhooks/${created.id}`, token);
    expect(spec("GET", `/api/v1/projects/lab/webhooks/${created.id}`, one)).toMatchObject({ id: created.id, url: receiverUrl });
    expect(one.text).not.toContain(created.secret);

    const gone = await call("DELETE", `/api/v1/projects/lab/webhooks/${created.id}`, token);
    expect(gone.status).toBe(204);
    spec("DELETE", `/api/v1/projects/lab/webhooks/${created.id}`, gone);
    expect((await call("DELETE", `/api/v1/projects/lab/webhooks/${created.id}`, token)).status).toBe(404);
    expect((await call("GET", `/api/v1/projects/lab/webhooks/${created.id}`, token)).status).toBe(404);
  });

  it("refuses a private address with the field named, changing nothing; a bad body names its field", async () => {
    const { token } = await newToken("rhea");
    const before = bodyOf(await call("GET", "/api/v1/projects/lab/webhooks", token))!.data.length;
    const r = await postJson("/api/v1/projects/lab/webhooks", token, { url: "http://192.168.1.20/hook", events: ["run.finished"] });
    expect(r.status).toBe(400);
    expect(r.headers["content-type"]).toBe("application/problem+json");
    const p = spec("POST", "/api/v1/projects/lab/webhooks", r);
    expect(p.errors).toEqual([
      { field: "url", message: expect.stringMatching(/192\.168\.1\.20 is a private address.*CONCORD_EGRESS_ALLOW/) },
    ]);
    const bad = await postJson("/api/v1/projects/lab/webhooks", token, { url: receiverUrl, events: ["run.started"] });
    expect(bad.status).toBe(400);
    expect(spec("POST", "/api/v1/projects/lab/webhooks", bad).errors[0].field).toBe("events.0");
    const extra = await postJson("/api/v1/projects/lab/webhooks", token, { url: receiverUrl, events: ["run.finished"], secret: "mine" });
    expect(extra.status).toBe(400);
    expect(bodyOf(await call("GET", "/api/v1/projects/lab/webhooks", token))!.data.length).toBe(before);
  });

  it("401 without a token, 403 for a read token's POST and for an annotator, 404 for another project", async () => {
    expect((await call("GET", "/api/v1/projects/lab/webhooks")).status).toBe(401);
    const read = await newToken("rhea", { scope: "read" });
    expect((await postJson("/api/v1/projects/lab/webhooks", read.token, { url: receiverUrl, events: ["run.finished"] })).status).toBe(403);
    expect((await call("GET", "/api/v1/projects/lab/webhooks", read.token)).status).toBe(200);
    const annotator = await newToken("ana");
    expect((await call("GET", "/api/v1/projects/lab/webhooks", annotator.token)).status).toBe(403);
    const outsider = await newToken("olga");
    expect((await call("GET", "/api/v1/projects/lab/webhooks", outsider.token)).status).toBe(404);
    expect((await postJson("/api/v1/projects/lab/webhooks", outsider.token, { url: receiverUrl, events: ["run.finished"] })).status).toBe(
      404,
    );
    // A webhook of another project is not found through this one.
    const { token } = await newToken("olga");
    const theirs = bodyOf(await postJson("/api/v1/projects/other/webhooks", token, { url: receiverUrl, events: ["run.finished"] }))!;
    const rhea = await newToken("rhea");
    expect((await call("GET", `/api/v1/projects/lab/webhooks/${theirs.id}/deliveries`, rhea.token)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/projects/lab/webhooks/${theirs.id}`, rhea.token)).status).toBe(404);
  });
});

describe("the server's sender", () => {
  it("delivers an import.finished that `npm run import` emitted, signed; the delivery log shows it, in pages", async () => {
    const { token } = await newToken("rhea");
    const made = bodyOf(await postJson("/api/v1/projects/lab/webhooks", token, { url: receiverUrl, events: ["import.finished"] }))!;
    received.length = 0;
    const file = path.resolve(__dirname, "../fixtures/import/refinebench-mini.json");
    for (const name of ["first", "second"]) {
      const r = await runScript("import", ["--preset", "refinebench", "--project", "lab", "--dataset", `RB ${name}`, file], {
        DATABASE_URL: app.databaseFile,
      });
      expect(r.code, r.err).toBe(0);
    }
    await waitFor(() => received.length >= 2);
    for (const got of received) {
      const ts = String(got.headers["concord-timestamp"]);
      expect(got.headers["concord-signature"]).toBe(
        `sha256=${createHmac("sha256", made.secret).update(`${ts}.${got.body}`).digest("hex")}`,
      );
      expect(got.headers["concord-event"]).toBe("import.finished");
      expect(JSON.parse(got.body)).toMatchObject({
        event: "import.finished",
        project: { slug: "lab" },
        data: { preset: "refinebench", committed: true },
      });
    }
    const p = `/api/v1/projects/lab/webhooks/${made.id}/deliveries`;
    const first = await call("GET", `${p}?limit=1`, token);
    const page1 = spec("GET", p, first);
    expect(page1.data).toHaveLength(1);
    expect(page1.data[0]).toMatchObject({ event: "import.finished", status: "delivered", attempts: 1, last_status: 200, last_error: null });
    expect(page1.next).toMatch(/cursor=/);
    const page2 = spec("GET", p, await call("GET", new URL(page1.next).pathname + new URL(page1.next).search, token));
    expect(page2.data).toHaveLength(1);
    expect(page2.next).toBeNull();
    const idsSeen = [page1.data[0].id, page2.data[0].id];
    expect(idsSeen[0]).toBeGreaterThan(idsSeen[1]);
    expect(new Set(received.map((g) => Number(g.headers["concord-delivery"])))).toEqual(new Set(idsSeen));
  });
});

describe("the page", () => {
  it("is for researchers: an annotator is refused it and does not see its link", async () => {
    const ana = new AppClient(app.url);
    await ana.signIn("ana@lab.test", PASSWORD);
    expect((await ana.get("/p/lab/webhooks")).status).toBe(403);
    expect((await ana.get("/p/lab")).text).not.toContain("/p/lab/webhooks");
    const rhea = new AppClient(app.url);
    await rhea.signIn("rhea@lab.test", PASSWORD);
    const page = await rhea.get("/p/lab/webhooks");
    expect(page.status).toBe(200);
    expect(page.text).toContain(receiverUrl);
    // The page never renders a secret.
    expect(page.text).not.toMatch(/whsec_/);
    const olga = new AppClient(app.url);
    await olga.signIn("olga@lab.test", PASSWORD);
    expect([403, 404]).toContain((await olga.get("/p/lab/webhooks")).status);
  });
});
