/**
 * Imports through the HTTP API (issue 37), against the real server and its import jobs: the body is the file
 * (CSV, JSONL or a JSON array by Content-Type) and the summary is the one `npm run import -- --format json` prints
 * for the same file on a database in the same state (the command is run too, on a database of its own); a refused
 * file is 422 problem+json with the command's problems by row and field and writes nothing; a conflicting re-import
 * is refused with the command's message; a dry run writes nothing; async=1 answers 202 and the import is polled
 * to its end; the limits (413 before the body is read, 413 while it streams, 415, unknown parameters 400), the
 * access rules (read token 403, annotator 403, another user's project 404, another project's import 404, a
 * cookie 401), Idempotency-Key (a replay imports once; another body with the key 409), the list's cursor pages,
 * and the records a dead server left running failed at start.
 */
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken, type NewToken } from "../../app/auth/tokens.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { AppClient, startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { withAppDb } from "../support/api";
import { runScript } from "../support/cli";
import { tempDir } from "../support/db";
import { expectMatchesSpec } from "../support/api-spec";

const PASSWORD = "correct horse battery";
const FIXTURES = path.resolve(__dirname, "../fixtures/import");
const fixture = (name: string) => path.join(FIXTURES, name);
let app: RunningApp;
/** The database `npm run import` writes, in the same state as the server's project "law" at each step. */
let cliDb: string;
const ids: Record<string, number> = {};
const tokens: Record<string, string> = {};

const withDb = <T>(fn: (db: Db) => Promise<T> | T) => withAppDb(app, fn);
const newToken = (owner: string, input: Partial<NewToken> = {}) =>
  withDb(async (db) => (await createApiToken(ids[owner], { name: "test", scope: "write", projects: "all", ...input }, db)).token);

type Body = Record<string, unknown>;
const json = (r: AppResponse) => JSON.parse(r.text) as Body;

function call(method: string, pathname: string, token: string | undefined, headers: Record<string, string> = {}, body?: string | Buffer) {
  return new AppClient(app.url).request(method, pathname, { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers }, body);
}
const post = (pathname: string, contentType: string, body: string | Buffer, token = tokens.ada, headers: Record<string, string> = {}) =>
  call("POST", pathname, token, { "Content-Type": contentType, ...headers }, body);

function expectProblem(r: AppResponse, status: number) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers["content-type"]).toBe("application/problem+json");
  const body = json(r);
  expect(body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  return body as { type: string; detail: string; errors?: { row?: number; field?: string; message: string }[] };
}

/** The API's answer checked against the OpenAPI document. */
function expectSpec(method: string, pathname: string, r: AppResponse) {
  expectMatchesSpec({ method, path: pathname, status: r.status, contentType: String(r.headers["content-type"]), body: json(r) });
}

/** `npm run import -- --format json` on the command's database: its exit code and summary. */
async function cli(preset: string, file: string, flags: string[] = []) {
  const r = await runScript("import", ["--preset", preset, "--project", "law", "--format", "json", ...flags, file], {
    DATABASE_URL: cliDb,
  });
  expect(r.err).not.toMatch(/Error:|at .*\.ts/);
  return { code: r.code, summary: JSON.parse(r.out) as Body };
}

const rowsOf = (table: "responses" | "items" | "apiImports" | "verdicts") =>
  withDb(async (db) => (await db.select({ n: count() }).from(schema[table]))[0].n);

const IMPORTS = "/api/v1/projects/law/imports";

beforeAll(async () => {
  // The command's database holds the project as the server's does (the command would otherwise create it: one more row).
  cliDb = path.join(tempDir("concord-api-import-cli-"), "cli.db");
  const c = openDatabase(cliDb);
  c.insert(schema.projects).values({ slug: "law", name: "Law" }).run();
  c.$client.close();
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    for (const name of ["ada", "bob", "eve"]) {
      ids[name] = (await createUser({ email: `${name}@lab.test`, name, password: PASSWORD }, db)).id;
    }
    for (const [slug, name] of [
      ["law", "Law"],
      ["art", "Art"],
    ])
      ids[slug] = db.insert(schema.projects).values({ slug, name }).returning({ id: schema.projects.id }).get().id;
    await setMembership(ids.law, ids.ada, "researcher", db);
    await setMembership(ids.art, ids.bob, "admin", db);
    await setMembership(ids.law, ids.eve, "annotator", db);
    // Two records a server left behind: one of this machine's, whose process is gone (failed at start), and
    // another machine's (its own server's to finish: left running).
    const runner = (host: string) => ({ phase: "checking", bytes: 10, totalBytes: 100, runner: { host, pid: 2 ** 22 + 17 } });
    for (const host of [os.hostname(), "another-machine"]) {
      db.insert(schema.apiImports)
        .values({
          projectId: ids.art,
          userId: ids.bob,
          preset: "responses",
          format: "csv",
          size: 100,
          status: "running",
          progress: runner(host),
        })
        .run();
    }
    db.$client.close();
  });
  tokens.ada = await newToken("ada");
  tokens.adaRead = await newToken("ada", { scope: "read" });
  tokens.bob = await newToken("bob");
  tokens.eve = await newToken("eve");
});
afterAll(async () => {
  await app?.stop();
});

describe("the same imports as npm run import", () => {
  it("JSONL, CSV and JSON-array bodies give the command's summary for the same files", async () => {
    // items (JSONL), then responses to them (CSV), then an LLMBar set and a judge's results (JSON arrays), in that order on both databases.
    const steps: [preset: string, file: string, contentType: string][] = [
      ["items-jsonl", "items.jsonl", "application/x-ndjson"],
      ["responses", "responses.csv", "text/csv"],
      ["llmbar", "LLMBar/Toy/dataset.json", "application/json"],
      ["llmbar", "LLMBar/Toy/evaluators/ToyJudge/Plain/result.json", "application/json"],
    ];
    for (const [preset, name, contentType] of steps) {
      const { readFileSync } = await import("node:fs");
      const q = `${IMPORTS}?preset=${preset}&filename=${encodeURIComponent(name)}`;
      const r = await post(q, contentType, readFileSync(fixture(name)));
      expect(r.status, r.text).toBe(201);
      const body = json(r);
      expect(r.headers.location).toBe(`${IMPORTS}/${body.id}`);
      expect(body).toMatchObject({ status: "succeeded", preset, dry_run: false, problems: null, error: null, progress: null });
      expectSpec("POST", q, r);
      const local = await cli(preset, fixture(name));
      expect(local.code).toBe(0);
      expect(body.summary, `${preset} ${name}`).toEqual(local.summary);
      // GET answers the same record.
      const again = await call("GET", `${IMPORTS}/${body.id}`, tokens.adaRead);
      expect(again.status).toBe(200);
      expect(json(again)).toEqual(body);
      expectSpec("GET", `${IMPORTS}/${body.id}`, again);
    }
    // What was written: the fixtures' 3 items, 3 responses, 3 LLMBar items with 2 outputs each, and the judge's picks in both orders.
    expect(await rowsOf("responses")).toBe(3 + 6);
    expect(await rowsOf("verdicts")).toBe(6);
    // application/jsonl is JSONL too (a dry run: nothing is written).
    const { readFileSync } = await import("node:fs");
    const jl = await post(
      `${IMPORTS}?preset=items-jsonl&dry_run=1`,
      "application/jsonl; charset=utf-8",
      readFileSync(fixture("items.jsonl")),
    );
    expect(jl.status, jl.text).toBe(200);
    expect(json(jl)).toMatchObject({ status: "succeeded", dry_run: true, format: "jsonl" });
  });

  it("a refused file: 422 problem+json with the command's problems by row and field; nothing written", async () => {
    const dir = tempDir("concord-api-import-bad-");
    const file = path.join(dir, "bad-responses.csv");
    const text = "item,model,turn,text\nq1,model-c,1,fine\nq2,model-c,two,not a turn\nq404,model-c,1,no such item\n";
    (await import("node:fs")).writeFileSync(file, text);
    const before = { responses: await rowsOf("responses"), imports: await rowsOf("apiImports") };
    const r = await post(`${IMPORTS}?preset=responses&filename=bad-responses.csv`, "text/csv", text);
    const p = expectProblem(r, 422);
    const local = await cli("responses", file);
    expect(local.code).toBe(1);
    const errors = local.summary.errors as { row: number; field?: string; message: string }[];
    expect(errors.length).toBeGreaterThanOrEqual(2);
    // The same problems, row by row, in the same words.
    expect(p.errors).toEqual(errors.map((e) => ({ row: e.row, ...(e.field ? { field: e.field } : {}), message: e.message })));
    expect(p.errors!.some((e) => e.row === 3 && e.field === "turn")).toBe(true);
    expect(p.detail).toMatch(/^Import refused \(\d+ problems?\); nothing was written\./);
    expect(await rowsOf("responses")).toBe(before.responses);
    // The record: failed, with the problems and the summary.
    expect(await rowsOf("apiImports")).toBe(before.imports + 1);
    const rec = json(await call("GET", r.headers.location!, tokens.ada));
    expect(rec).toMatchObject({ status: "failed", problems: p.errors, error: p.detail });
    expect((rec.summary as Body).errorCount).toBe(errors.length);

    // An empty body is an empty file, refused as the command refuses one.
    const empty = expectProblem(await post(`${IMPORTS}?preset=responses`, "text/csv", ""), 422);
    expect(empty.errors).toEqual([{ message: "The file is empty (0 bytes)." }]);
  });

  it("a conflicting re-import is refused with the command's message; the same file again changes nothing", async () => {
    const { readFileSync, writeFileSync } = await import("node:fs");
    const same = await post(`${IMPORTS}?preset=responses&filename=responses.csv`, "text/csv", readFileSync(fixture("responses.csv")));
    expect(same.status, same.text).toBe(201);
    const local = await cli("responses", fixture("responses.csv"));
    expect(json(same).summary).toEqual(local.summary);
    expect(json(same).summary).toMatchObject({ alreadyPresent: 3, newRows: 0, errorCount: 0 });

    const file = path.join(tempDir("concord-api-import-conflict-"), "responses.csv");
    const text = "item,model,turn,text\nq1,model-a,1,Saturn is the largest planet.\n";
    writeFileSync(file, text);
    const before = await rowsOf("responses");
    const p = expectProblem(await post(`${IMPORTS}?preset=responses&filename=responses.csv`, "text/csv", text), 422);
    const refused = await cli("responses", file);
    expect(refused.code).toBe(1);
    expect((refused.summary.conflictCount as number) > 0).toBe(true);
    const errors = refused.summary.errors as { row: number; field?: string; message: string }[];
    expect(p.errors).toEqual(errors.map((e) => ({ row: e.row, ...(e.field ? { field: e.field } : {}), message: e.message })));
    expect(p.detail).toMatch(/conflicts? with what is already imported under the same key/);
    expect(await rowsOf("responses")).toBe(before);
  });

  it("dry_run writes nothing; async=1 answers 202 and the import is polled to its end", async () => {
    const text = "item,model,turn,text\nq3,model-a,1,The Keeper's Light\nq3,model-b,1,Beacon\n";
    const before = await rowsOf("responses");
    const dry = await post(`${IMPORTS}?preset=responses&dry_run=1`, "text/csv", text);
    expect(dry.status, dry.text).toBe(200);
    expect(json(dry)).toMatchObject({ status: "succeeded", dry_run: true, options: { dry_run: "1" } });
    expect(json(dry).summary).toMatchObject({ dryRun: true, responses: 2, newRows: 2, committed: false });
    expect(await rowsOf("responses")).toBe(before);

    const q = `${IMPORTS}?preset=responses&async=1`;
    const accepted = await post(q, "text/csv", text);
    expect(accepted.status, accepted.text).toBe(202);
    const first = json(accepted);
    expect(["queued", "running", "succeeded"]).toContain(first.status);
    expectSpec("POST", q, accepted);
    const location = accepted.headers.location!;
    expect(location).toBe(`${IMPORTS}/${first.id}`);
    let rec: Body = first;
    for (let i = 0; i < 300 && (rec.status === "queued" || rec.status === "running"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      rec = json(await call("GET", location, tokens.adaRead));
    }
    expect(rec).toMatchObject({ status: "succeeded", progress: null, error: null });
    expect(rec.summary).toMatchObject({ responses: 2, newRows: 2, committed: true, dryRun: false });
    expect(rec.finished_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/));
    expect(await rowsOf("responses")).toBe(before + 2);
  });

  it("options the import refuses are 400 with its message in the API's words (labels-wide without annotators)", async () => {
    const r = await post(`${IMPORTS}?preset=labels-wide`, "text/csv", "unit,ann_1,ann_2\nu1,Yes,No\n");
    const p = expectProblem(r, 400);
    expect(p.detail).toMatch(/annotators/);
    expect(p.detail).not.toMatch(/--annotators/);
  });
});

describe("limits", () => {
  it("a Content-Length over 200 MB is 413 before the body is read; a body that streams past it is cut off with 413", async () => {
    const before = await rowsOf("apiImports");
    const declared = await post(`${IMPORTS}?preset=responses`, "text/csv", "item,model,turn,text\n", tokens.ada, {
      "Content-Length": String(200 * 1024 * 1024 + 1),
    });
    expectProblem(declared, 413);

    // Chunked (no Content-Length): counted as it arrives.
    const streamed = await new Promise<AppResponse>((resolve, reject) => {
      const url = new URL(app.url + `${IMPORTS}?preset=responses`);
      const req = http.request(
        {
          host: "127.0.0.1",
          port: url.port,
          path: url.pathname + url.search,
          method: "POST",
          agent: false,
          headers: { Authorization: `Bearer ${tokens.ada}`, "Content-Type": "text/csv", "Transfer-Encoding": "chunked" },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        },
      );
      req.on("error", () => {}); // the server closes the connection once it has answered
      const mb = Buffer.alloc(1024 * 1024, "x,y,1,z\n");
      let sent = 0;
      const more = () => {
        while (sent < 201) {
          sent++;
          if (!req.write(mb)) return void req.once("drain", more);
        }
        req.end();
      };
      req.write("item,model,turn,text\n");
      more();
      setTimeout(() => reject(new Error("no answer in 60 s")), 60_000).unref();
    });
    expectProblem(streamed, 413);
    expect(await rowsOf("apiImports")).toBe(before);
  });

  it("415 for a Content-Type that is not a file this endpoint reads, or not one the preset reads", async () => {
    const p = expectProblem(await post(`${IMPORTS}?preset=responses`, "text/plain", "item,model\n"), 415);
    expect(p.detail).toMatch(/text\/csv, application\/x-ndjson, application\/jsonl, application\/json/);
    const llm = expectProblem(await post(`${IMPORTS}?preset=llmbar`, "text/csv", "input,output_1\n"), 415);
    expect(llm.detail).toMatch(/llmbar preset reads json files/);
  });

  it("unknown query parameters are 400 naming them; so are bad values and a parameter given twice", async () => {
    const p = expectProblem(await post(`${IMPORTS}?preset=responses&file=/etc/passwd&color=red`, "text/csv", "a\n"), 400);
    expect(p.detail).toMatch(/^Unknown query parameters: file, color\./);
    expect(p.errors!.map((e) => e.field)).toEqual(["file", "color"]);
    const bad = expectProblem(await post(`${IMPORTS}?preset=nope&level=loud`, "text/csv", "a\n"), 400);
    expect(bad.errors!.map((e) => e.field).sort()).toEqual(["level", "preset"]);
    expect(expectProblem(await post(`${IMPORTS}?preset=responses&dataset=a&dataset=b`, "text/csv", "a\n"), 400).detail).toMatch(
      /dataset: given 2 times/,
    );
    expectProblem(await post(`${IMPORTS}?preset=responses&filename=../../x.csv`, "text/csv", "a\n"), 400);
  });
});

describe("access", () => {
  it("read token 403, annotator 403, another user's project 404, another project's import 404, a cookie 401", async () => {
    const csv = "item,model,turn,text\nq1,model-z,1,hi\n";
    const before = await rowsOf("apiImports");
    expect(expectProblem(await post(`${IMPORTS}?preset=responses`, "text/csv", csv, tokens.adaRead), 403).type).toBe(
      "urn:concord:problem:insufficient-scope",
    );
    expect(expectProblem(await post(`${IMPORTS}?preset=responses`, "text/csv", csv, tokens.eve), 403).detail).toMatch(/researcher role/);
    expectProblem(await call("GET", IMPORTS, tokens.eve), 403);
    // bob is no member of law: 404, as for a project that does not exist.
    expectProblem(await post(`${IMPORTS}?preset=responses`, "text/csv", csv, tokens.bob), 404);
    expectProblem(await post(`/api/v1/projects/nowhere/imports?preset=responses`, "text/csv", csv, tokens.ada), 404);
    // An import of art, asked for under law by ada: 404.
    const art = await post(
      `/api/v1/projects/art/imports?preset=items-jsonl&filename=items.jsonl`,
      "application/x-ndjson",
      "{}\n",
      tokens.bob,
    );
    expect(art.status, art.text).toBe(422);
    const artId = /\/imports\/(\d+)$/.exec(art.headers.location!)![1];
    expectProblem(await call("GET", `${IMPORTS}/${artId}`, tokens.ada), 404);
    expect((await call("GET", `/api/v1/projects/art/imports/${artId}`, tokens.bob)).status).toBe(200);
    expectProblem(await call("GET", `${IMPORTS}/abc`, tokens.ada), 404);
    // A signed-in browser's cookie, even with the page's CSRF token and our Origin: 401 from the API, not the CSRF check's 403.
    const browser = new AppClient(app.url);
    await browser.signIn("ada@lab.test", PASSWORD);
    const csrf = await browser.csrfToken("/projects");
    const cookie = await browser.request(
      "POST",
      `${IMPORTS}?preset=responses`,
      { "Content-Type": "text/csv", Origin: app.url, "X-CSRF-Token": csrf },
      csv,
    );
    expect(expectProblem(cookie, 401).detail).toMatch(/does not accept the sign-in cookie/);
    expect(await rowsOf("apiImports")).toBe(before + 1);
  });
});

describe("Idempotency-Key", () => {
  it("a replay answers the same and imports once; the key with another body is 409", async () => {
    const text = "item,model,turn,text\nq2,model-k,1,3 km is 3000 m\n";
    const before = { responses: await rowsOf("responses"), imports: await rowsOf("apiImports") };
    const headers = { "Idempotency-Key": "push-q2-model-k" };
    const one = await post(`${IMPORTS}?preset=responses`, "text/csv", text, tokens.ada, headers);
    expect(one.status, one.text).toBe(201);
    const two = await post(`${IMPORTS}?preset=responses`, "text/csv", text, tokens.ada, headers);
    expect(two.status).toBe(201);
    expect(two.headers["idempotent-replayed"]).toBe("true");
    expect(two.text).toBe(one.text);
    expect(two.headers.location).toBe(one.headers.location);
    expect(await rowsOf("responses")).toBe(before.responses + 1);
    expect(await rowsOf("apiImports")).toBe(before.imports + 1);
    const other = await post(`${IMPORTS}?preset=responses`, "text/csv", text.replace("3000", "3,000"), tokens.ada, headers);
    expect(expectProblem(other, 409).type).toBe("urn:concord:problem:idempotency-key-reused");
    // The same bytes under another Content-Type are another request too.
    expectProblem(await post(`${IMPORTS}?preset=responses`, "application/x-ndjson", text, tokens.ada, headers), 409);
    expect(await rowsOf("apiImports")).toBe(before.imports + 1);
  });
});

describe("the list, and a dead server's imports", () => {
  it("lists the project's imports newest first in cursor pages; another project's are not among them", async () => {
    const all: number[] = [];
    let next: string | null = `${IMPORTS}?limit=2`;
    while (next) {
      const r = await call("GET", next.replace(app.url, ""), tokens.adaRead);
      expect(r.status, r.text).toBe(200);
      expectSpec("GET", next, r);
      const page = json(r) as { data: { id: number }[]; next: string | null };
      expect(page.data.length).toBeLessThanOrEqual(2);
      all.push(...page.data.map((d) => d.id));
      next = page.next;
    }
    const expected = await withDb(async (db) =>
      (await db.select({ id: schema.apiImports.id }).from(schema.apiImports).where(eq(schema.apiImports.projectId, ids.law))).map(
        (r) => r.id,
      ),
    );
    expect(all).toEqual([...expected].sort((a, b) => b - a));
    expect(all.length).toBeGreaterThan(5);
  });

  it("at start, a record this machine's dead server left running is failed; another machine's is left", async () => {
    const r = json(await call("GET", "/api/v1/projects/art/imports", tokens.bob)) as { data: Body[] };
    const left = r.data.filter((d) => d.preset === "responses").sort((a, b) => (a.id as number) - (b.id as number));
    expect(left.map((d) => [d.status, d.error])).toEqual([
      ["failed", "The server stopped during the import; nothing of it was written."],
      ["running", null],
    ]);
    // The process that ran it is never shown.
    expect(left[1].progress).toEqual({ phase: "checking", bytes: 10, totalBytes: 100 });
  });
});
