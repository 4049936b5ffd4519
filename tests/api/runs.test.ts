/**
 * The runs endpoints of the HTTP API (issue 37) against the real server, a real local OpenAI-compatible server
 * (tests/support/fake-llm.ts) and a real worker process (`npm run worker --until-idle`; the server's own worker is
 * off, CONCORD_WORKER=external, so a run moves only when the test lets it):
 *
 *   - POST …/runs with a run definition creates the same run (stored definition, settings, models, judges, jobs) as
 *     the Runs page's form does through its domain function (definitionFromForm + startRun);
 *   - a refused definition is a 400 problem naming each field, and writes nothing; a body that is not JSON is 415;
 *   - Idempotency-Key: a replay answers the same run and creates no second one; the key with another body is 409;
 *   - pause, resume, cancel and retry-failed move the status as the run page's buttons do, and a control that does
 *     not apply to the run's state is 409 with the reason;
 *   - while a worker runs the run, GET …/runs/{id} reports progress (done, in flight, remaining, total) and an ETA
 *     from the last minute's rate; once it has run, GET …/results equals runResultsAll / runResults on the database;
 *   - a read token's POST is 403, an annotator's request 403, a run of another project (or a project the token's
 *     user is not in) 404.
 * Every 2xx body (and every request body sent) is checked against the OpenAPI document (tests/support/api-spec.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken, type NewToken } from "../../app/auth/tokens.server";
import { definitionFromForm, protocolForms, startRun, type FormField } from "../../app/runs/run-form.server";
import { runResults, runResultsAll, runRow } from "../../app/runs/results.server";
import { controlRun, createRun, type StoredRunConfig } from "../../app/runs/runner.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { expectMatchesSpec, expectRequestMatchesSpec } from "../support/api-spec";
import { startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { withAppDb, bearerRequest } from "../support/api";
import { runScript } from "../support/cli";
import { tempDir } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { exited, spawnWorker } from "../support/worker-process";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

let app: RunningApp;
let fake: FakeLlm;
const ids: Record<string, number> = {};
let law: ReturnType<typeof makeRunsFixture>;
let med: ReturnType<typeof makeRunsFixture>;
let medRunId = 0;
const tokens: Record<string, string> = {};

const withDb = <T>(fn: (db: Db) => Promise<T> | T) => withAppDb(app, fn);
const newToken = (owner: string, input: Partial<NewToken> = {}) =>
  withDb(async (db) => (await createApiToken(ids[owner], { name: "test", scope: "write", projects: "all", ...input }, db)).token);

const call = (method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  bearerRequest(app, method, path, token, body, headers);
const json = <T = Record<string, unknown>>(r: AppResponse) => JSON.parse(r.text) as T;

/** A 2xx answer, checked against the OpenAPI document. */
function ok<T = Record<string, unknown>>(method: string, path: string, r: AppResponse, status = 200): T {
  expect(r.status, r.text).toBe(status);
  const body = json<T>(r);
  expectMatchesSpec({ method, path, status: r.status, contentType: r.headers["content-type"], body, headers: r.headers });
  return body;
}

type Problem = { type: string; title: string; status: number; detail: string; errors?: { field?: string; message: string }[] };
function problemOf(r: AppResponse, status: number): Problem {
  expect(r.status, r.text).toBe(status);
  expect(r.headers["content-type"]).toBe("application/problem+json");
  return json<Problem>(r);
}

type RunBody = {
  id: number;
  name: string;
  status: string;
  settings: Record<string, unknown>;
  judges: { id: number; name: string }[];
  models: string[];
  progress: {
    done: number;
    failed: number;
    inFlight: number;
    remaining: number;
    total: number;
    throughput: number;
    etaSeconds: number | null;
    etaAt: string | null;
    workers: number;
  };
  failedJobs: { key: string; error: string; provider: string }[];
};

const runs = () => "/api/v1/projects/law/runs";
const runCount = () => withDb((db) => db.select().from(schema.runs).all().length);

/** A definition of a short RefineBench run on law's dataset (`changes` merged in). */
const definition = (changes: Record<string, unknown> = {}) => ({
  name: "api run",
  protocol: "refinebench",
  datasetId: law.dataset.id,
  limit: 2,
  models: [{ provider: "target" }],
  judges: [{ provider: "judge" }],
  settings: { maxTurns: 2, targetSampling: { temperature: 0.3 } },
  ...changes,
});

/** Creates a run over the API (checked against the document) and returns its body. */
async function createOverApi(def: Record<string, unknown> = definition()): Promise<RunBody> {
  expectRequestMatchesSpec("POST", runs(), def);
  return ok<RunBody>("POST", runs(), await call("POST", runs(), tokens.ada, def), 201);
}

/** Runs every queued job with a worker process (as `npm run worker -- --until-idle`), until none is left. */
async function drain() {
  const w = spawnWorker(app.databaseFile, 60_000);
  const code = await exited(w.child);
  expect(code, w.out()).toBe(0);
}

beforeAll(async () => {
  fake = await startFakeLlm(refineScript());
  app = await startApp(
    async (file) => {
      const db = openDatabase(file);
      for (const name of ["ada", "bob", "eve"])
        ids[name] = (await createUser({ email: `${name}@lab.test`, name, password: "correct horse battery" }, db)).id;
      // One call per job (no retries) and a patient timeout: the progress test holds judge calls open for a while.
      const providerSettings = { maxRetries: 0, timeoutMs: 60_000 };
      law = makeRunsFixture(db, { slug: "law", baseUrl: fake.baseUrl, items: 3, checklist: 2, providerSettings });
      med = makeRunsFixture(db, { slug: "med", baseUrl: fake.baseUrl, items: 2, checklist: 1, providerSettings });
      await setMembership(law.project.id, ids.ada, "researcher", db);
      await setMembership(med.project.id, ids.ada, "researcher", db);
      await setMembership(law.project.id, ids.eve, "annotator", db);
      await setMembership(med.project.id, ids.bob, "researcher", db);
      const medRun = await createRun(
        db,
        med.project.id,
        {
          name: "med run",
          protocol: "refinebench",
          datasetId: med.dataset.id,
          models: [{ provider: "target" }],
          judges: [{ provider: "judge" }],
        },
        ids.ada,
      );
      medRunId = medRun.id;
      // Paused, so that the workers this file starts leave it alone.
      await controlRun(db, medRunId, "pause");
      db.$client.close();
    },
    { env: { CONCORD_WORKER: "external" } },
  );
  tokens.ada = await newToken("ada");
  tokens.adaRead = await newToken("ada", { scope: "read" });
  tokens.bob = await newToken("bob");
  tokens.eve = await newToken("eve");
});

afterAll(async () => {
  await app?.stop();
  await fake?.close();
});

describe("creating a run", () => {
  it("a definition POSTed to the API makes the same run as the Runs page's form: definition, settings, models, judges and jobs", async () => {
    const before = await runCount();
    const r = await call("POST", runs(), tokens.ada, definition());
    const created = ok<RunBody>("POST", runs(), r, 201);
    expect(r.headers.location).toBe(`/api/v1/projects/law/runs/${created.id}`);
    expect(created).toMatchObject({ name: "api run", status: "queued", models: ["tiny-model"] });
    // RefineBench Appendix C's target sampling, with the temperature this definition overrides.
    expect(created.settings).toMatchObject({ maxTurns: 2, targetSampling: { temperature: 0.3, top_p: 0.9, max_tokens: 10000 } });
    expect(await runCount()).toBe(before + 1);

    // The same run from the page's form: its fields with the protocol's defaults, changed as a researcher would.
    const form = new FormData();
    const add = (f: FormField) => {
      if (f.kind === "group") return f.fields.forEach(add);
      if (f.kind === "multi") return f.value.forEach((v) => form.append(f.name, v));
      form.append(f.name, f.value == null ? "" : String(f.value));
    };
    protocolForms()
      .find((f) => f.id === "refinebench")!
      .fields.forEach(add);
    const changes: Record<string, string> = {
      intent: "create",
      name: "api run",
      protocol: "refinebench",
      datasetId: String(law.dataset.id),
      limit: "2",
      models: "target",
      judges: "judge",
      "s.refinebench.maxTurns": "2",
      "s.refinebench.targetSampling.temperature": "0.3",
    };
    for (const [k, v] of Object.entries(changes)) form.set(k, v);
    const fromForm = await withDb((db) => startRun(db, law.project.id, definitionFromForm(form), ids.ada));

    const [apiRow, formRow, apiJobs, formJobs] = await withDb((db) => [
      db.select().from(schema.runs).where(eq(schema.runs.id, created.id)).get()!,
      db.select().from(schema.runs).where(eq(schema.runs.id, fromForm.id)).get()!,
      db.select().from(schema.jobs).where(eq(schema.jobs.runId, created.id)).all(),
      db.select().from(schema.jobs).where(eq(schema.jobs.runId, fromForm.id)).all(),
    ]);
    const strip = (row: typeof apiRow) => ({ ...row, id: 0, createdAt: 0 });
    expect(strip(apiRow)).toEqual(strip(formRow));
    const cfg = apiRow.config as unknown as StoredRunConfig;
    expect(cfg.itemCount).toBe(2);
    expect(cfg.definition).toMatchObject({ datasetId: law.dataset.id, limit: 2, models: [{ provider: "target" }] });
    // The same first jobs, request for request (the payload names its run only in its state).
    const jobsOf = (rows: typeof apiJobs) =>
      rows
        .map((j) => ({ key: j.key, status: j.status, request: (j.payload as { request: unknown }).request }))
        .sort((a, b) => a.key.localeCompare(b.key));
    expect(apiJobs.length).toBeGreaterThan(0);
    expect(jobsOf(apiJobs)).toEqual(jobsOf(formJobs));
  });

  it("a refused definition is a 400 problem naming each field, and nothing is written", async () => {
    const before = await runCount();
    const refused = async (def: unknown) => {
      const p = problemOf(await call("POST", runs(), tokens.ada, def), 400);
      expectMatchesSpec({ method: "POST", path: runs(), status: 400, contentType: "application/problem+json", body: p });
      return p;
    };
    // The protocol's settings schema: RefineBench allows 1 to 20 turns.
    const turns = await refused(definition({ settings: { maxTurns: 0 } }));
    expect(turns.errors).toEqual([{ field: "settings.maxTurns", message: "The definition's settings.maxTurns must be 1 or more." }]);
    expect(turns.detail).toBe("The definition's settings.maxTurns must be 1 or more.");
    // The definition's own schema: every problem at once.
    const two = await refused(definition({ name: " ", models: [] }));
    expect(two.errors).toEqual([
      { field: "name", message: "The definition's name cannot be empty." },
      { field: "models", message: "Choose at least one: the definition's models." },
    ]);
    // The data: a provider or dataset that is not the project's (med's dataset is not law's).
    expect((await refused(definition({ judges: [{ provider: "nobody" }] }))).errors).toEqual([
      { field: "judges.0.provider", message: 'judges[0].provider: no provider named "nobody" in this project' },
    ]);
    expect((await refused(definition({ datasetId: med.dataset.id }))).errors).toEqual([
      { field: "datasetId", message: `datasetId ${med.dataset.id}: no such dataset in this project` },
    ]);
    expect((await refused(definition({ protocol: "no-such" }))).errors?.[0]).toMatchObject({ field: "protocol" });
    expect((await refused("[1, 2")).detail).toMatch(/not valid JSON/);
    // Not JSON at all: 415, with what to send.
    const form = await call("POST", runs(), tokens.ada, undefined, { "Content-Type": "application/x-www-form-urlencoded" });
    expect(problemOf(form, 415).detail).toMatch(/application\/json/);
    // `npm run runs -- start` refuses the same definition in the same words (one check for the page, the API and the command).
    const file = path.join(tempDir("concord-runs-cli-"), "run.json");
    fs.writeFileSync(file, JSON.stringify(definition({ name: " ", settings: { maxTurns: 0 } })));
    const cli = await runScript("runs", ["start", "--project", "law", "--config", file, "--detach"], { DATABASE_URL: app.databaseFile });
    expect(cli.code).toBe(1);
    expect(cli.err.trim()).toBe(`runs: ${file}: The definition's name cannot be empty.`);
    fs.writeFileSync(file, JSON.stringify(definition({ settings: { maxTurns: 0 } })));
    const cli2 = await runScript("runs", ["start", "--project", "law", "--config", file, "--detach"], { DATABASE_URL: app.databaseFile });
    expect(cli2.err.trim()).toBe(`runs: ${file}: ${turns.detail}`);
    expect(await runCount()).toBe(before);
  });

  it("Idempotency-Key: the replay answers the same run and creates none; the key with another body is 409", async () => {
    const before = await runCount();
    const def = definition({ name: "once" });
    const key = { "Idempotency-Key": "run-once-1" };
    const first = await call("POST", runs(), tokens.ada, def, key);
    const run = ok<RunBody>("POST", runs(), first, 201);
    const again = await call("POST", runs(), tokens.ada, def, key);
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers.location).toBe(first.headers.location);
    expect(json<RunBody>(again).id).toBe(run.id);
    expect(await runCount()).toBe(before + 1);
    const other = await call("POST", runs(), tokens.ada, definition({ name: "twice" }), key);
    expect(problemOf(other, 409).type).toBe("urn:concord:problem:idempotency-key-reused");
    expect(await runCount()).toBe(before + 1);
  });
});

describe("controls", () => {
  it("pause, resume and cancel move the status as the run page's buttons do; a control that does not apply is 409 with the reason", async () => {
    const run = await createOverApi(definition({ name: "controlled" }));
    const control = async (c: string, status = 200) => {
      const path = `${runs()}/${run.id}/${c}`;
      const r = await call("POST", path, tokens.ada);
      if (status !== 200) return problemOf(r, status);
      return ok<RunBody>("POST", path, r);
    };
    expect(((await control("pause")) as RunBody).status).toBe("paused");
    expect(((await control("pause", 409)) as Problem).detail).toBe("cannot pause a paused run");
    expect(((await control("retry-failed", 409)) as Problem).detail).toBe("no failed jobs to retry");
    expect(((await control("resume")) as RunBody).status).toBe("queued");
    expect(((await control("resume", 409)) as Problem).detail).toBe("cannot resume a queued run");
    expect(((await control("cancel")) as RunBody).status).toBe("cancelled");
    for (const c of ["pause", "resume", "cancel", "retry-failed"])
      expect(((await control(c, 409)) as Problem).detail).toBe(`cannot ${c} a cancelled run`);
    // What the database holds, as the run page reads it.
    expect(await withDb((db) => db.select().from(schema.runs).where(eq(schema.runs.id, run.id)).get()!.status)).toBe("cancelled");
    // A GET on a control is not a control.
    const get = await call("GET", `${runs()}/${run.id}/pause`, tokens.ada);
    expect(problemOf(get, 405).status).toBe(405);
    expect(get.headers.allow).toBe("POST");
  });
});

describe("a run driven by a worker", () => {
  it("while it runs: progress and an ETA from the last minute's rate; then results equal runResultsAll, and retry-failed reruns its failed job", async () => {
    // The judge's calls wait behind a gate, so the run is seen mid-way: its generation jobs done, its judge jobs in
    // flight. The target's call for item 0 fails (HTTP 400, no retries), so the run ends with one failed job.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const script = refineScript();
    fake.setScript(async (req) => {
      const text = JSON.stringify(req.body.messages);
      const judging = text.includes("### Checklist (Evaluation Items)");
      if (!judging && text.includes("Problem 0?")) return { status: 400, raw: JSON.stringify({ error: { message: "bad request" } }) };
      if (judging) await gate;
      return script(req);
    });
    // The earlier tests' runs are cancelled, so that the worker runs this one alone.
    for (const r of await withDb((db) => db.select().from(schema.runs).where(eq(schema.runs.projectId, law.project.id)).all()))
      if (r.status === "queued") ok("POST", `${runs()}/${r.id}/cancel`, await call("POST", `${runs()}/${r.id}/cancel`, tokens.ada));
    const run = await createOverApi(definition({ name: "driven", limit: 3, settings: { maxTurns: 1 } }));
    const path = `${runs()}/${run.id}`;
    const worker = spawnWorker(app.databaseFile, 60_000);
    try {
      let seen: RunBody | undefined;
      let asked = 0;
      // 3 items × 1 turn: 3 generations, then one judging of each response. Item 0's generation fails; the two
      // judgings wait at the gate: 2 done, 1 failed, 2 in flight.
      await expect
        .poll(
          async () => {
            asked = Date.now();
            seen = ok<RunBody>("GET", path, await call("GET", path, tokens.ada));
            const p = seen.progress;
            return p.done === 2 && p.failed === 1 && p.inFlight === 2;
          },
          { timeout: 60_000, interval: 200 },
        )
        .toBe(true);
      const answered = Date.now();
      const p = seen!.progress;
      expect(seen!.status).toBe("running");
      // The estimate planned 3 × (1 generation + 1 judging) = 6 jobs: 3 remain of it (the judging of item 0 never comes).
      expect(p).toMatchObject({ remaining: 3, total: 6 });
      expect(p.workers).toBeGreaterThanOrEqual(1);
      // The rate: the jobs finished in the last minute (2) over the seconds since the first of them (at least 1).
      expect(p.throughput).toBeGreaterThan(0);
      expect(p.throughput).toBeLessThanOrEqual(2);
      expect(p.etaSeconds).toBe(Math.round(p.remaining / p.throughput));
      expect(p.etaSeconds).toBeGreaterThan(0);
      // etaAt is the server's clock at the answer plus the ETA.
      const eta = Date.parse(p.etaAt!);
      expect(eta).toBeGreaterThanOrEqual(asked + p.etaSeconds! * 1000 - 1);
      expect(eta).toBeLessThanOrEqual(answered + p.etaSeconds! * 1000 + 1);
    } finally {
      open();
    }
    expect(await exited(worker.child), worker.out()).toBe(0);

    const finished = ok<RunBody>("GET", path, await call("GET", path, tokens.ada));
    expect(finished.status).toBe("completed-with-errors");
    expect(finished.progress).toMatchObject({ done: 4, failed: 1, remaining: 0, inFlight: 0, total: 5, etaSeconds: 0 });
    expect(finished.failedJobs).toHaveLength(1);
    expect(finished.failedJobs[0]).toMatchObject({ provider: "target" });
    expect(finished.failedJobs[0].error).toMatch(/HTTP 400/);

    // The results page's figures, as runResultsAll computes them on the database.
    const resultsPath = `${path}/results`;
    const results = ok<{ run: { id: number; status: string }; judges: unknown[]; calibration: unknown[] }>(
      "GET",
      resultsPath,
      await call("GET", resultsPath, tokens.adaRead),
    );
    const expected = await withDb(async (db) =>
      JSON.parse(JSON.stringify(await runResultsAll(db, (await runRow(db, law.project.id, run.id))!))),
    );
    expect(results.judges).toEqual(expected);
    // RefineBench's tables, not an empty shell: one judge, its two verdicts' checklists parsed.
    expect(expected).toHaveLength(1);
    expect(expected[0].metrics).not.toBeNull();
    expect(expected[0].parse.ok).toBeGreaterThan(0);
    expect(results.run).toMatchObject({ id: run.id, status: "completed-with-errors" });
    expect(results.calibration).toEqual([]);
    // One judge, by its id; a judge that is not the run's is named in the refusal.
    const judgeId = finished.judges[0].id;
    const one = ok<{ judges: unknown[] }>(
      "GET",
      `${resultsPath}?judge=${judgeId}`,
      await call("GET", `${resultsPath}?judge=${judgeId}`, tokens.ada),
    );
    const expectedOne = await withDb(async (db) =>
      JSON.parse(JSON.stringify(await runResults(db, (await runRow(db, law.project.id, run.id))!, judgeId))),
    );
    expect(one.judges).toEqual([expectedOne]);
    expect(problemOf(await call("GET", `${resultsPath}?judge=999999`, tokens.ada), 400).errors?.[0]).toMatchObject({ field: "judge" });
    expect(problemOf(await call("GET", `${resultsPath}?judge=x`, tokens.ada), 400).errors?.[0]).toMatchObject({ field: "judge" });

    // Retry the failed job with the endpoint healthy: the run is queued again and completes.
    fake.setScript(refineScript());
    const retried = ok<RunBody>("POST", `${path}/retry-failed`, await call("POST", `${path}/retry-failed`, tokens.ada));
    expect(retried.status).toBe("queued");
    expect(retried.progress.failed).toBe(0);
    await drain();
    const done = ok<RunBody>("GET", path, await call("GET", path, tokens.ada));
    expect(done.status).toBe("completed");
    expect(done.progress).toMatchObject({ done: 6, failed: 0, remaining: 0, total: 6 });
    expect(problemOf(await call("POST", `${path}/retry-failed`, tokens.ada), 409).detail).toBe("cannot retry-failed a completed run");
    const after = ok<{ judges: unknown[] }>("GET", resultsPath, await call("GET", resultsPath, tokens.ada));
    const expectedAfter = await withDb(async (db) =>
      JSON.parse(JSON.stringify(await runResultsAll(db, (await runRow(db, law.project.id, run.id))!))),
    );
    expect(after.judges).toEqual(expectedAfter);
  });
});

describe("the list and access", () => {
  it("lists the project's runs newest first in cursor pages, each once", async () => {
    const all = await withDb((db) =>
      db
        .select({ id: schema.runs.id })
        .from(schema.runs)
        .where(eq(schema.runs.projectId, law.project.id))
        .all()
        .map((r) => r.id)
        .sort((a, b) => b - a),
    );
    expect(all.length).toBeGreaterThanOrEqual(3);
    const seen: number[] = [];
    let next: string | null = `${runs()}?limit=2`;
    while (next) {
      const url = new URL(next, app.url);
      const page: { data: { id: number }[]; next: string | null } = ok(
        "GET",
        url.pathname,
        await call("GET", url.pathname + url.search, tokens.adaRead),
      );
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((r) => r.id));
      next = page.next;
    }
    expect(seen).toEqual(all);
    expect(seen).not.toContain(medRunId);
  });

  it("a read token cannot POST (403); an annotator gets 403; another project's run, or a project the user is not in, 404", async () => {
    const before = await runCount();
    expect(problemOf(await call("POST", runs(), tokens.adaRead, definition()), 403).type).toBe("urn:concord:problem:insufficient-scope");
    const anyRun = (await withDb((db) => db.select().from(schema.runs).where(eq(schema.runs.projectId, law.project.id)).all()))[0].id;
    expect(problemOf(await call("POST", `${runs()}/${anyRun}/pause`, tokens.adaRead), 403).status).toBe(403);
    // eve is an annotator in law: the runs are the researchers'.
    for (const [method, path] of [
      ["GET", runs()],
      ["POST", runs()],
      ["GET", `${runs()}/${anyRun}`],
      ["GET", `${runs()}/${anyRun}/results`],
      ["POST", `${runs()}/${anyRun}/cancel`],
    ])
      expect(problemOf(await call(method, path, tokens.eve, method === "POST" ? definition() : undefined), 403).detail).toMatch(
        /needs the researcher role/,
      );
    // med's run through law's address: 404, as a run that does not exist.
    for (const [method, path] of [
      ["GET", `${runs()}/${medRunId}`],
      ["GET", `${runs()}/${medRunId}/results`],
      ["POST", `${runs()}/${medRunId}/pause`],
      ["GET", `${runs()}/999999`],
      ["GET", `${runs()}/abc`],
    ])
      expect(problemOf(await call(method, path, tokens.ada), 404).detail).toBe("Run not found.");
    // bob is not in law at all: the project is not found, whichever run is asked for.
    expect(problemOf(await call("GET", runs(), tokens.bob), 404).detail).toMatch(/No such project/);
    expect(problemOf(await call("POST", `${runs()}/${anyRun}/pause`, tokens.bob), 404).detail).toMatch(/No such project/);
    expect(await runCount()).toBe(before);
    // med's run is untouched, and readable where it lives.
    const med = ok<RunBody>(
      "GET",
      `/api/v1/projects/med/runs/${medRunId}`,
      await call("GET", `/api/v1/projects/med/runs/${medRunId}`, tokens.bob),
    );
    expect(med.status).toBe("paused");
  });
});
