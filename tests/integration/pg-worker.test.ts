/**
 * Workers on PostgreSQL (issue 17): a RefineBench file in the released format
 * (refinebench_samples.json's field names, written here) is imported through the
 * `refinebench` preset into SQLite and a guided run is created; `npm run
 * db:copy` moves the deployment to a throw-away PostgreSQL cluster, where 3
 * worker processes (scripts/worker.ts with DATABASE_URL=postgres://…) drain the
 * run against the local fake OpenAI-compatible endpoint. The same run on the
 * SQLite original, by the SQLite worker, is the reference: the PostgreSQL
 * database, copied back to SQLite by the same command, must give every result
 * figure of the run and the same verdicts. What the endpoint sees — from each
 * request's arrival to its reply — never exceeds either provider's
 * concurrency; no request is made twice.
 *
 * The second test kills one worker with SIGKILL midway and starts another: the
 * run still completes, every job is stored exactly once, and the figures are
 * still the SQLite run's.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, schema } from "../../db/client";
import { createRun } from "../../app/runs/runner.server";
import { tempDir } from "../support/db";
import { exited, spawnWorker } from "../support/worker-process";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import {
  addProviders,
  guidedJudgeReply,
  importThrough,
  messagesOf,
  projectIdOf,
  runToEnd,
  runFigures,
  writeRefineBench,
} from "./runs-protocol-support";

const NO_PG = pgSkipReason();

const ROOT = path.resolve(__dirname, "../..");
const ITEMS = 30;
const MAX_TURNS = 3;
const LIMIT = 3;
const exec = promisify(execFile);

let testPg: TestPg;
let fake: FakeLlm;
const dir = tempDir("concord-pg-worker-");

/** At the endpoint, per model: requests between arrival and reply, now and at most. */
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();

/**
 * The target answers `Answer v<turn>`; the judge finds item q satisfied at turn t when (code-point sum of q) mod
 * 3 < t, so guided conversations run 1 to 3 turns. 20 ms of latency, so calls overlap.
 */
async function script(req: { body: Record<string, unknown> }) {
  const model = String(req.body.model);
  inFlight.set(model, (inFlight.get(model) ?? 0) + 1);
  maxInFlight.set(model, Math.max(maxInFlight.get(model) ?? 0, inFlight.get(model)!));
  await new Promise((ok) => setTimeout(ok, 20));
  inFlight.set(model, inFlight.get(model)! - 1); // the reply is written right after this returns
  const msgs = messagesOf(req.body);
  if (model === "target-model") return `Answer v${msgs.filter((m) => m.role === "user").length}`;
  return guidedJudgeReply(msgs[msgs.length - 1]?.content ?? "");
}

type Prepared = { file: string; runId: number };

/** Imports the file, adds the providers (each at concurrency LIMIT) and creates the queued run, on a new SQLite file. */
async function prepare(name: string): Promise<Prepared> {
  const file = path.join(dir, `${name}.db`);
  const slug = "pgw";
  const db = openDatabase(file);
  db.insert(schema.projects).values({ slug, name: "PG workers" }).run();
  db.$client.close();
  const datasetId = await importThrough(file, slug, "refinebench", path.join(dir, "refinebench.json"));
  const db2 = openDatabase(file);
  const projectId = projectIdOf(db2, slug);
  // No API key: a PostgreSQL deployment decrypts keys with CONCORD_ENCRYPTION_KEY, not the key file beside the SQLite file.
  addProviders(db2, projectId, fake.baseUrl);
  db2.update(schema.providers).set({ concurrency: LIMIT, apiKey: null }).run();
  const run = await createRun(db2, projectId, {
    name: "guided on workers",
    protocol: "refinebench",
    datasetId,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "guided", maxTurns: MAX_TURNS },
  });
  db2.$client.close();
  return { file, runId: run.id };
}

async function dbCopy(from: string, to: string) {
  const { stdout } = await exec(process.execPath, ["scripts/cli.mjs", "db-copy", "--from", from, "--to", to], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "" },
  });
  return stdout;
}

let reference: Awaited<ReturnType<typeof runFigures>>;
let referenceCalls = 0;
let prepared: Prepared;

beforeAll(async () => {
  if (NO_PG) return;
  testPg = await startTestPg();
  fake = await startFakeLlm(script);
  writeRefineBench(path.join(dir, "refinebench.json"), ITEMS);
  // The reference: the same run drained by the SQLite worker in this process.
  const ref = await prepare("reference");
  const db = openDatabase(ref.file);
  const done = await runToEnd(db, ref.runId);
  expect(done.status).toBe("completed");
  reference = await runFigures(db, ref.runId);
  db.$client.close();
  referenceCalls = fake.requests.length;
  prepared = await prepare("original");
}, 120_000);

afterAll(async () => {
  await fake?.close();
  testPg?.stop();
});

/** Copies the prepared SQLite deployment to a new PostgreSQL database. */
async function toPostgres(name: string): Promise<string> {
  const url = await testPg.createDatabase(name);
  await dbCopy(prepared.file, url);
  return url;
}

/** The PostgreSQL database copied back to SQLite by the same command: the SQLite run's status, jobs, responses, verdicts and every result figure. */
async function expectReferenceFigures(url: string, name: string) {
  const file = path.join(dir, `${name}.db`);
  await dbCopy(url, file);
  const back = openDatabase(file);
  const got = await runFigures(back, prepared.runId);
  back.$client.close();
  expect(got.status).toBe("completed");
  expect(got.jobs).toEqual(reference.jobs);
  expect(got.responses).toEqual(reference.responses);
  expect(got.verdicts).toEqual(reference.verdicts);
  expect(got.results).toEqual(reference.results);
}

it.skipIf(Boolean(NO_PG))(
  "3 worker processes on PostgreSQL drain a RefineBench run: the providers' concurrency held at the endpoint, no request twice, the SQLite run's figures",
  async () => {
    expect(reference.status).toBe("completed");
    const url = await toPostgres("three_workers");
    fake.requests.length = 0;
    maxInFlight.clear();
    const workers = [spawnWorker(url, 30_000), spawnWorker(url, 30_000), spawnWorker(url, 30_000)];
    const codes = await Promise.all(workers.map((w) => exited(w.child)));
    const logs = workers.map((w) => w.out()).join("\n");
    expect(codes, logs).toEqual([0, 0, 0]);

    // At the endpoint: every call once, never more than each provider's 3 at once, and the workers worked in parallel.
    expect(fake.requests).toHaveLength(referenceCalls);
    expect(new Set(fake.requests.map((r) => JSON.stringify(r.body))).size).toBe(referenceCalls);
    expect(maxInFlight.get("target-model")).toBeLessThanOrEqual(LIMIT);
    expect(maxInFlight.get("judge-model")).toBeLessThanOrEqual(LIMIT);
    expect(Math.max(...maxInFlight.values())).toBeGreaterThan(1);

    // On PostgreSQL: every call logged once and completed, by more than one worker; no worker left registered.
    const pgc = new pg.Client({ connectionString: url });
    await pgc.connect();
    try {
      const calls = await pgc.query(`SELECT state, COUNT(*)::int AS n FROM provider_calls GROUP BY state`);
      expect(calls.rows).toEqual([{ state: "done", n: referenceCalls }]);
      const owners = await pgc.query(`SELECT COUNT(DISTINCT owner)::int AS n FROM provider_calls`);
      expect(owners.rows[0].n).toBeGreaterThan(1);
      expect((await pgc.query(`SELECT COUNT(*)::int AS n FROM workers`)).rows[0].n).toBe(0);
    } finally {
      await pgc.end();
    }

    await expectReferenceFigures(url, "three_workers_back");
  },
  180_000,
);

it.skipIf(Boolean(NO_PG))(
  "a worker killed with SIGKILL midway: another takes its jobs, the run completes, every job stored once, the same figures",
  async () => {
    const url = await toPostgres("killed_worker");
    fake.requests.length = 0;
    const workers = [spawnWorker(url, 30_000), spawnWorker(url, 30_000), spawnWorker(url, 30_000)];
    // Kill the first worker once a third of the calls have reached the endpoint, then start another.
    for (let i = 0; fake.requests.length < referenceCalls / 3; i++) {
      if (i > 3000) throw new Error(`no progress: ${workers.map((w) => w.out()).join("\n")}`);
      await new Promise((ok) => setTimeout(ok, 10));
    }
    workers[0].child.kill("SIGKILL");
    await exited(workers[0].child);
    workers.push(spawnWorker(url, 30_000));
    const codes = await Promise.all(workers.slice(1).map((w) => exited(w.child)));
    expect(codes, workers.map((w) => w.out()).join("\n")).toEqual([0, 0, 0]);
    expect(workers[0].child.signalCode).toBe("SIGKILL");

    const pgc = new pg.Client({ connectionString: url });
    await pgc.connect();
    try {
      // The killed worker's calls in flight were interrupted by the sweep, not left holding a slot; all others done.
      const calls = await pgc.query(`SELECT state, COUNT(*)::int AS n FROM provider_calls GROUP BY state ORDER BY state`);
      const byState = Object.fromEntries(calls.rows.map((r) => [r.state, r.n]));
      expect(byState.sent ?? 0).toBe(0);
      // Calls repeated after the kill are at most the killed worker's 8 slots.
      expect(fake.requests.length).toBeGreaterThanOrEqual(referenceCalls);
      expect(fake.requests.length).toBeLessThanOrEqual(referenceCalls + 8);
      // Every request that reached the endpoint was logged before it was sent: the received requests are contained in
      // the logged ones, each as often as it arrived. A logged call may never have arrived (the worker was killed between
      // logging it and sending it): such a call is one of the killed worker's, marked interrupted, never done.
      const said = (body: unknown) =>
        JSON.stringify((body as { messages?: unknown; prompt?: unknown }).messages ?? (body as { prompt?: unknown }).prompt);
      const logged = (await pgc.query(`SELECT state, request FROM provider_calls ORDER BY id`)).rows as {
        state: string;
        request: unknown;
      }[];
      const unmatched = new Map<string, { state: string }[]>();
      for (const c of logged) unmatched.set(said(c.request), [...(unmatched.get(said(c.request)) ?? []), c]);
      for (const r of fake.requests) {
        const same = unmatched.get(said(r.body));
        expect(same?.length, `a request that reached the endpoint without being logged: ${said(r.body).slice(0, 120)}`).toBeGreaterThan(0);
        same!.splice(same!.findIndex((c) => c.state === "done") >= 0 ? same!.findIndex((c) => c.state === "done") : 0, 1);
      }
      const neverArrived = [...unmatched.values()].flat();
      expect(neverArrived.every((c) => c.state === "interrupted")).toBe(true);
      expect(neverArrived.length).toBeLessThanOrEqual(byState.interrupted ?? 0);
      expect((byState.done ?? 0) + (byState.interrupted ?? 0)).toBe(fake.requests.length + neverArrived.length);
    } finally {
      await pgc.end();
    }
    await expectReferenceFigures(url, "killed_worker_back");
  },
  180_000,
);
