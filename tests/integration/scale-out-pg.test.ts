/**
 * Scale-out on PostgreSQL (issue 17): one deployment — 50 annotator accounts
 * with a Yes/No task (k = 2) and a RefineBench guided run of a few hundred
 * calls, made in SQLite through the real seeding, the real `refinebench`
 * import preset and createRun — is moved to a throw-away PostgreSQL cluster
 * with the real db:copy (copyDatabase). Two production app server processes
 * (scripts/server.ts, CONCORD_WORKER=external, one SESSION_SECRET) and three
 * worker processes (scripts/worker.ts) serve it, the workers calling the local
 * fake OpenAI-compatible endpoint. 25 annotators per server sign in and submit
 * over HTTP as the annotate page does (page data, then the form with its CSRF
 * token, our Origin and an idempotency token); the workers start once a quarter
 * of the labels is in, and from then on the annotators' pace follows the run's,
 * so both are under way together. When a third of the labels and a third of
 * the calls are done, one app server and one worker are killed with
 * SIGKILL and started again (the server on the same port, so its annotators
 * carry on with the same session cookies; a request that failed on the dead
 * server is sent again, with the same form and idempotency token).
 *
 * No submission may be refused: an error answer is a failure of the test, not
 * something to send again. Proved afterwards:
 *   - every submission a server acknowledged (its 302) is stored exactly once,
 *     with the label sent, and every assignment is labelled once — no
 *     annotation row twice, none lost;
 *   - the run completes, every job once, no response or verdict twice; calls
 *     repeated after the kill are only the killed worker's interrupted ones;
 *   - at the endpoint, neither provider ever had more calls in flight than its
 *     concurrency limit, though the workers did work in parallel;
 *   - every report figure equals the same data on SQLite: the agreement report,
 *     the project overviews and every export, computed by the app on PostgreSQL,
 *     equal the same computations on the database copied back to SQLite; and an
 *     independent SQLite deployment — the same start, the run drained by the
 *     SQLite worker, the acknowledged labels saved through the same annotation
 *     code — gives the run's jobs, responses, verdicts and result figures, and
 *     the task's agreement report, figure for figure.
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { eq } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, openDatabase, schema } from "../../db/client";
import { openPgDatabase, type PgDb } from "../../db/client-pg";
import { copyDatabase } from "../../db/copy";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { findTask } from "../../app/annotation/tasks.server";
import { closeDal, first, getDal, initDal, pgDal, type DalLike } from "../../app/dal.server";
import { exportRows } from "../../app/formats/export.server";
import { datasetSummaries, projectCounts } from "../../app/projects/projects.server";
import { listTasks } from "../../app/reports/load.server";
import { clearReportCache, taskReport } from "../../app/reports/report.server";
import { runResultsAll } from "../../app/runs/results.server";
import { createRun } from "../../app/runs/runner.server";
import { SERVER_NODE_FLAGS } from "../../scripts/server-flags";
import { AppClient, ROOT, type AppResponse } from "../support/app-server";
import { tempDir } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";
import { exited, spawnWorker, type WorkerProcess } from "../support/worker-process";
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

const ANNOTATORS = 50;
/** Items of the annotation dataset, one checklist item each: 150 units, k = 2, so 300 assignments (6 per annotator). */
const UNIT_ITEMS = 150;
/** RefineBench items of the run; guided conversations of 1 to 3 turns, a target and a judge call per turn. */
const RUN_ITEMS = 80;
const MAX_TURNS = 3;
/** Each provider's concurrency limit, shared by all workers. */
const LIMIT = 4;
/** Each worker takes up to this many jobs at once (tests/support/worker-process.ts), so a kill interrupts at most as many calls. */
const WORKER_SLOTS = 8;
const PASSWORD = "scale-out-2026";
const SESSION_SECRET = "scale-out-test-session-secret-0123456789";
const ROUTE = "routes/p.$slug.tasks.$taskId.annotate";
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
/** A fixed, uneven pattern of Yes/No per annotator and unit, so the annotators agree on some units only. */
const answerOf = (annotator: number, unitId: number) =>
  (unitId * 7 + annotator * 3 + (unitId % 4 === 0 ? annotator : 0)) % 5 < 3 ? "Yes" : "No";

const dir = tempDir("concord-scale-out-");
const stateDir = path.join(dir, "state");

/** At the endpoint, per model: requests between arrival and reply, now and at most. */
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();

/**
 * The target answers `Answer v<turn>`; the judge finds item q satisfied at turn t when (code-point sum of q) mod
 * 3 < t, so guided conversations run 1 to 3 turns (as tests/integration/pg-worker.test.ts). 40 ms of latency.
 */
async function script(req: { body: Record<string, unknown> }) {
  const model = String(req.body.model);
  inFlight.set(model, (inFlight.get(model) ?? 0) + 1);
  maxInFlight.set(model, Math.max(maxInFlight.get(model) ?? 0, inFlight.get(model)!));
  await sleep(40);
  inFlight.set(model, inFlight.get(model)! - 1); // the reply is written right after this returns
  const msgs = messagesOf(req.body);
  if (model === "target-model") return `Answer v${msgs.filter((m) => m.role === "user").length}`;
  return guidedJudgeReply(msgs[msgs.length - 1]?.content ?? "");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

type Server = { port: number; url: string; child: ChildProcess; output: () => string };

/** The production server (scripts/server.ts on the build) on PostgreSQL, on a given port, as an operator starts it. */
async function startServer(databaseUrl: string, port: number): Promise<Server> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, "scripts/cli.mjs", "server"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      CONCORD_STATE_DIR: stateDir,
      SESSION_SECRET,
      CONCORD_WORKER: "external",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${out}`)), 60_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    };
    child.on("exit", onExit);
    child.stdout!.on("data", () => {
      const m = out.match(/running at (http:\/\/localhost:\d+)/);
      if (m) {
        clearTimeout(timer);
        child.off("exit", onExit);
        resolve(m[1]);
      }
    });
  });
  expect(url).toBe(`http://localhost:${port}`);
  return { port, url, child, output: () => out };
}

const gone = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;

async function killHard(c: ChildProcess) {
  if (gone(c)) return;
  const done = exited(c);
  c.kill("SIGKILL");
  await done;
}

/** A connection the dead (or not yet restarted) server could not take or finish: the request was not answered. */
function isConnectionError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return ["ECONNREFUSED", "ECONNRESET", "EPIPE"].includes(code ?? "") || /socket hang up/.test(String((err as Error).message));
}

/** The columns of the annotations export that say when, not what: the wall clock of each deployment. */
const WHEN = ["started_at", "submitted_at", "annotated_at"];
const withoutWhen = (rows: Record<string, unknown>[]) =>
  rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !WHEN.includes(k))));

/**
 * Every report figure of the projects, through the app's own code on the process's database (DATABASE_URL): the
 * task list, each task's agreement report (seeded bootstrap), the project overview, and every export.
 */
async function reportFigures(projects: { id: number; slug: string }[]) {
  clearReportCache();
  const d = getDal();
  const out: Record<string, unknown> = {};
  for (const p of projects) {
    const tasks = await listTasks(p.id);
    const reports: Record<number, unknown> = {};
    for (const t of tasks) reports[t.id] = await taskReport(p.id, t.id, { rule: null, delta: 0.05, slug: p.slug });
    const exports: Record<string, unknown> = {};
    for (const what of ["annotations", "agreement", "judge-agreement", "judge-confusion", "runs"] as const)
      exports[what] = await exportRows(d, p.id, what);
    out[p.slug] = { tasks, reports, summaries: await datasetSummaries(p.id), counts: await projectCounts(p.id), exports };
  }
  clearReportCache();
  return JSON.parse(JSON.stringify(out)) as Record<string, { reports: Record<number, unknown>; exports: Record<string, unknown> }>;
}

/** reportFigures on the database at `url` (a SQLite file or a postgres:// URL), through the process's data-access layer. */
async function reportFiguresOn(url: string, projects: { id: number; slug: string }[]) {
  const saved = process.env.DATABASE_URL;
  await closeDal();
  closeDb();
  process.env.DATABASE_URL = url;
  try {
    await initDal();
    return await reportFigures(projects);
  } finally {
    await closeDal();
    closeDb();
    process.env.DATABASE_URL = saved;
  }
}

type Prepared = {
  file: string;
  runId: number;
  runProject: { id: number; slug: string };
  labProject: { id: number; slug: string };
  taskId: number;
  annotators: { id: number; email: string; units: number }[];
  assignments: number;
};

describe.skipIf(Boolean(pgSkipReason()))("scale-out on PostgreSQL: 2 app servers, 3 workers, 50 annotators, a run, kill -9 midway", () => {
  let testPg: TestPg | undefined;
  let fake: FakeLlm | undefined;
  let prepared: Prepared;
  let referenceFile = "";
  let reference: Awaited<ReturnType<typeof runFigures>>;
  let referenceCalls = 0;
  const servers: Server[] = [];
  const workers: WorkerProcess[] = [];
  const pools: PgDb[] = [];
  const clients: pg.Client[] = [];
  /** Set when the test ends (passed or not): the annotators and the run watcher stop. */
  let stopped = false;

  beforeAll(async () => {
    testPg = await startTestPg();
    fake = await startFakeLlm(script);
    const bench = path.join(dir, "refinebench.json");
    writeRefineBench(bench, RUN_ITEMS);

    // The deployment in SQLite: 50 annotators and a Yes/No task over 150 units (k = 2), and a project with a queued run.
    const file = path.join(dir, "original.db");
    const db = openDatabase(file);
    const scenario = await seedAnnotationScenario(db, {
      annotators: ANNOTATORS,
      items: UNIT_ITEMS,
      overlap: 2,
      password: PASSWORD,
      kinds: ["checklist-appropriateness"],
    });
    db.insert(schema.projects).values({ slug: "scale", name: "Scale-out run" }).run();
    db.$client.close();
    const datasetId = await importThrough(file, "scale", "refinebench", bench);
    const db2 = openDatabase(file);
    const runProjectId = projectIdOf(db2, "scale");
    // No API key: a PostgreSQL deployment decrypts keys with CONCORD_ENCRYPTION_KEY, not the key file beside the SQLite file.
    addProviders(db2, runProjectId, fake.baseUrl);
    db2.update(schema.providers).set({ concurrency: LIMIT, apiKey: null }).run();
    const run = await createRun(db2, runProjectId, {
      name: "guided while annotators work",
      protocol: "refinebench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "guided", maxTurns: MAX_TURNS },
    });
    const taskId = scenario.tasks["checklist-appropriateness"];
    const perAnnotator = new Map(
      (
        db2.$client
          .prepare(
            `SELECT a.annotator_id AS id, COUNT(*) AS n FROM assignments a JOIN units u ON u.id = a.unit_id WHERE u.task_id = ? GROUP BY 1`,
          )
          .all(taskId) as { id: number; n: number }[]
      ).map((r) => [r.id, r.n]),
    );
    db2.$client.close();
    prepared = {
      file,
      runId: run.id,
      runProject: { id: runProjectId, slug: "scale" },
      labProject: { id: scenario.projectId, slug: scenario.slug },
      taskId,
      annotators: scenario.annotators.map((a) => ({ ...a, units: perAnnotator.get(a.id) ?? 0 })),
      assignments: [...perAnnotator.values()].reduce((a, b) => a + b, 0),
    };
    expect(prepared.assignments).toBe(UNIT_ITEMS * 2);
    expect(prepared.annotators.every((a) => a.units >= 3)).toBe(true);

    // The reference: the same deployment, row for row (VACUUM INTO), its run drained by the SQLite worker in this process.
    referenceFile = path.join(dir, "reference.db");
    const original = openDatabase(file);
    original.$client.exec(`VACUUM INTO '${referenceFile.replace(/'/g, "''")}'`);
    original.$client.close();
    const ref = openDatabase(referenceFile);
    const done = await runToEnd(ref, run.id);
    expect(done.status).toBe("completed");
    reference = await runFigures(ref, run.id);
    ref.$client.close();
    referenceCalls = fake.requests.length;
    // "A few hundred calls".
    expect(referenceCalls).toBeGreaterThanOrEqual(200);
  }, 300_000);

  afterAll(async () => {
    stopped = true;
    for (const s of servers) await killHard(s.child);
    for (const w of workers) await killHard(w.child);
    for (const c of clients) await c.end().catch(() => {});
    for (const p of pools) await p.$client.end().catch(() => {});
    await fake?.close();
    testPg?.stop();
  });

  it("every acknowledged label stored once, the run complete without duplicates, the providers' limits held, SQLite's figures", async () => {
    const startedAt = performance.now();
    const url = await testPg!.createDatabase("scale_out");
    const copied = await copyDatabase({ kind: "sqlite", file: prepared.file }, { kind: "postgres", url });
    expect(copied.filter((c) => !c.same)).toEqual([]);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    clients.push(db);
    const rows = async <T>(text: string, values: unknown[] = []) => (await db.query(text, values)).rows as T[];

    // Two app servers on the same database, each on a port of its own; started together, as a deployment does.
    const ports = [await freePort(), await freePort()];
    servers.push(...(await Promise.all(ports.map((p) => startServer(url, p)))));

    const { labProject, taskId } = prepared;
    const taskPath = `/p/${labProject.slug}/tasks/${taskId}/annotate`;
    const serverOf = (i: number) => (i < ANNOTATORS / 2 ? 0 : 1);
    /** Connection errors each server's annotators met (a request not answered, sent again). */
    const connectionErrors = [0, 0];
    /** Submissions sent again after a connection error (same form, same idempotency token). */
    let resent = 0;
    const deadline = Date.now() + 240_000;

    /** Sends a request until a server answers it; only a connection error (no answer) is retried. */
    async function answered(s: number, send: () => Promise<AppResponse>, onRetry = () => {}): Promise<AppResponse> {
      for (;;) {
        try {
          return await send();
        } catch (err) {
          if (!isConnectionError(err) || stopped || Date.now() > deadline) throw err;
          connectionErrors[s]++;
          onRetry();
          await sleep(100);
        }
      }
    }

    // Everyone signs in first (scrypt is not what this test is about); half on each server.
    const annotatorClients = prepared.annotators.map((_, i) => new AppClient(servers[serverOf(i)].url));
    await Promise.all(prepared.annotators.map((a, i) => annotatorClients[i].signIn(a.email, PASSWORD)));
    const csrf = await Promise.all(annotatorClients.map((c) => c.csrfToken("/?_data=root")));

    type Ack = { annotator: number; userId: number; unitId: number; token: string; answer: string; durationMs: number };
    const acks: Ack[] = [];
    const refused: string[] = [];
    let runFinished = false;
    fake!.requests.length = 0;
    maxInFlight.clear();
    const calls = () => fake!.requests.length;

    /** The workers start once a quarter of the labels is in: the run then drains while the annotators work. */
    const startWorkers = () => {
      if (workers.length === 0) workers.push(spawnWorker(url, 30_000), spawnWorker(url, 30_000), spawnWorker(url, 30_000));
    };

    /**
     * One annotator: opens its next unit (the page's data), chooses, submits, until its queue is empty. Its first two
     * units go at once; its j-th of n waits until (j - 1)/n of the run's calls have reached the endpoint, so labels
     * never run ahead of the run and the last ones go while it still drains.
     */
    async function annotator(i: number) {
      const s = serverOf(i);
      const client = annotatorClients[i];
      const user = prepared.annotators[i];
      for (let j = 0; !stopped; j++) {
        while (!runFinished && !stopped && calls() < (referenceCalls * (j - 1)) / user.units) await sleep(20);
        await sleep(Math.random() * 150);
        const page = await answered(s, () => client.get(`${taskPath}?_data=${encodeURIComponent(ROUTE)}`));
        if (page.status !== 200) {
          refused.push(`GET ${user.email}: ${page.status} ${page.text.slice(0, 200)}`);
          return;
        }
        const data = JSON.parse(page.text) as { page: null | { unit: { unitId: number } }; clientToken: string | null };
        if (!data.page) return;
        const unitId = data.page.unit.unitId;
        const answer = answerOf(i, unitId);
        const durationMs = 1000 + 37 * j;
        const form = { intent: "submit", unitId: String(unitId), clientToken: data.clientToken!, durationMs: String(durationMs), answer };
        let again = false;
        const res = await answered(
          s,
          () => client.postForm(taskPath, form, { token: csrf[i] }),
          () => (again = true),
        );
        if (again) resent++;
        if (res.status !== 302) {
          refused.push(`POST ${user.email} unit ${unitId}: ${res.status} ${res.text.slice(0, 200)}`);
          return;
        }
        acks.push({ annotator: i, userId: user.id, unitId, token: data.clientToken!, answer, durationMs });
        if (acks.length >= prepared.assignments / 4) startWorkers();
      }
    }

    const working = Promise.all(prepared.annotators.map((_, i) => annotator(i)));
    working.catch(() => {}); // awaited below; a failure before then must not be an unhandled rejection
    const watching = (async () => {
      while (!runFinished && !stopped && Date.now() < deadline) {
        const [r] = await rows<{ status: string }>(`SELECT status FROM runs WHERE id = $1`, [prepared.runId]);
        if (["completed", "failed", "cancelled"].includes(r.status)) runFinished = true;
        else await sleep(100);
      }
    })();
    watching.catch(() => {}); // awaited below, as the annotators are

    // Midway — a third of the labels acknowledged and a third of the calls made — kill -9 app server 2 and worker 1.
    while (!(acks.length >= prepared.assignments / 3 && calls() >= referenceCalls / 3)) {
      if (Date.now() > deadline || refused.length || runFinished || workers.some((w) => gone(w.child)))
        throw new Error(
          `no progress to midway: ${refused.join("\n")}\n${workers.map((w) => w.out()).join("\n")}\n${servers.map((s) => s.output()).join("\n")}`,
        );
      await sleep(10);
    }
    const atKill = { acks: acks.length, calls: calls() };
    const [killedServer, killedWorker] = [servers[1], workers[0]];
    await Promise.all([killHard(killedServer.child), killHard(killedWorker.child)]);
    const killedAt = performance.now();
    expect(killedServer.child.signalCode).toBe("SIGKILL");
    expect(killedWorker.child.signalCode).toBe("SIGKILL");
    // Both were under way: labels and calls were left to do.
    expect(atKill.acks).toBeLessThan(prepared.assignments * 0.8);
    expect(atKill.calls).toBeLessThan(referenceCalls * 0.8);

    // Started again: a new worker, and the server on the same port (its annotators keep their address and cookies).
    workers.push(spawnWorker(url, 30_000));
    servers[1] = await startServer(url, killedServer.port);
    const downMs = performance.now() - killedAt;

    await working;
    // No submission or page was refused: an error answer (a 500) is a failure here, not something to send again.
    expect(refused, [killedServer, ...servers].map((s) => s.output()).join("\n")).toEqual([]);
    const codes = await Promise.all(workers.slice(1).map((w) => exited(w.child)));
    expect(codes, workers.map((w) => w.out()).join("\n")).toEqual([0, 0, 0]);
    await watching;
    expect(runFinished).toBe(true);

    // The killed server's annotators met its death (requests not answered, sent again); the other server's never did.
    expect(connectionErrors[1]).toBeGreaterThan(0);
    expect(connectionErrors[0]).toBe(0);

    // Every acknowledged submission exactly once, with the label sent; every assignment labelled, none twice.
    expect(acks).toHaveLength(prepared.assignments);
    expect(new Set(acks.map((a) => `${a.userId}/${a.unitId}`)).size).toBe(prepared.assignments);
    const stored = await rows<{ token: string; user_id: number; unit_id: number; label: unknown; duration_ms: number; status: string }>(
      `SELECT an.client_token AS token, a.annotator_id AS user_id, a.unit_id, an.label, an.duration_ms, an.status
       FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id WHERE u.task_id = $1`,
      [taskId],
    );
    expect(stored).toHaveLength(prepared.assignments);
    const byToken = new Map(stored.map((r) => [r.token, r]));
    for (const a of acks)
      expect(byToken.get(a.token), `acknowledged label of annotator ${a.annotator} on unit ${a.unitId}`).toEqual({
        token: a.token,
        user_id: a.userId,
        unit_id: a.unitId,
        label: a.answer,
        duration_ms: a.durationMs,
        status: "submitted",
      });
    expect(await rows(`SELECT assignment_id FROM annotations GROUP BY assignment_id HAVING COUNT(*) > 1`)).toEqual([]);
    expect(
      await rows(
        `SELECT a.status, COUNT(*)::int AS n FROM assignments a JOIN units u ON u.id = a.unit_id WHERE u.task_id = $1 GROUP BY 1`,
        [taskId],
      ),
    ).toEqual([{ status: "submitted", n: prepared.assignments }]);

    // The run: completed, every job once and done, no response or verdict twice, no call left holding a slot, no worker registered.
    const [run] = await rows<{ status: string }>(`SELECT status FROM runs WHERE id = $1`, [prepared.runId]);
    expect(run.status).toBe("completed");
    expect(
      await rows(`SELECT key, status, (attempts > 0) AS tried FROM jobs WHERE run_id = $1 ORDER BY key COLLATE "C"`, [prepared.runId]),
    ).toEqual(reference.jobs.map((j) => ({ ...(j as Record<string, unknown>), tried: (j as { tried: number }).tried === 1 })));
    expect(
      await rows(`SELECT item_id, source_key FROM responses WHERE run_id = $1 GROUP BY 1, 2 HAVING COUNT(*) > 1`, [prepared.runId]),
    ).toEqual([]);
    expect(
      await rows(`SELECT response_id, judge_id, checklist_item_id FROM verdicts WHERE run_id = $1 GROUP BY 1, 2, 3 HAVING COUNT(*) > 1`, [
        prepared.runId,
      ]),
    ).toEqual([]);
    const byState = Object.fromEntries(
      (await rows<{ state: string; n: number }>(`SELECT state, COUNT(*)::int AS n FROM provider_calls GROUP BY state`)).map((r) => [
        r.state,
        r.n,
      ]),
    );
    expect(byState.sent ?? 0).toBe(0);
    expect((await rows<{ n: number }>(`SELECT COUNT(*)::int AS n FROM workers`))[0].n).toBe(0);

    // At the endpoint: never more than a provider's limit in flight, across all workers; they did work in parallel.
    expect(maxInFlight.get("target-model")).toBeLessThanOrEqual(LIMIT);
    expect(maxInFlight.get("judge-model")).toBeLessThanOrEqual(LIMIT);
    expect(Math.max(...maxInFlight.values())).toBeGreaterThan(1);
    // Every call made, each once, but for the killed worker's calls in flight (at most its slots), sent again.
    const said = (body: unknown) =>
      JSON.stringify((body as { messages?: unknown; prompt?: unknown }).messages ?? (body as { prompt?: unknown }).prompt);
    expect(new Set(fake!.requests.map((r) => said(r.body))).size).toBe(referenceCalls);
    expect(fake!.requests.length).toBeGreaterThanOrEqual(referenceCalls);
    expect(fake!.requests.length).toBeLessThanOrEqual(referenceCalls + WORKER_SLOTS);
    // Each request that reached the endpoint was logged before it was sent; a logged one that never arrived or was sent
    // again is one the killed worker had in flight, marked interrupted by the sweep, never done.
    const logged = await rows<{ state: string; request: unknown }>(`SELECT state, request FROM provider_calls ORDER BY id`);
    const unmatched = new Map<string, { state: string }[]>();
    for (const c of logged) unmatched.set(said(c.request), [...(unmatched.get(said(c.request)) ?? []), c]);
    for (const r of fake!.requests) {
      const same = unmatched.get(said(r.body));
      expect(same?.length, `a request that reached the endpoint without being logged: ${said(r.body).slice(0, 120)}`).toBeGreaterThan(0);
      const done = same!.findIndex((c) => c.state === "done");
      same!.splice(done >= 0 ? done : 0, 1);
    }
    const neverArrived = [...unmatched.values()].flat();
    expect(neverArrived.every((c) => c.state === "interrupted")).toBe(true);
    expect((byState.done ?? 0) + (byState.interrupted ?? 0)).toBe(fake!.requests.length + neverArrived.length);
    expect(byState.done).toBe(referenceCalls);

    // The servers stop cleanly, having logged no error.
    for (const s of servers) {
      const stopped = exited(s.child);
      s.child.kill("SIGTERM");
      expect(await stopped).toBe(0);
    }
    for (const s of [killedServer, ...servers]) expect(s.output()).not.toMatch(/Something went wrong|Error|\n\s+at /);
    const workedMs = performance.now() - startedAt;

    // Every report figure, by the app on PostgreSQL, equals the same data's on SQLite (copied back by db:copy).
    const projects = [labProject, prepared.runProject];
    const onPg = await reportFiguresOn(url, projects);
    const backFile = path.join(dir, "back.db");
    const back = await copyDatabase({ kind: "postgres", url }, { kind: "sqlite", file: backFile });
    expect(back.filter((c) => !c.same)).toEqual([]);
    const onBack = await reportFiguresOn(backFile, projects);
    expect(onPg).toEqual(onBack);
    expect(Object.keys(onPg[labProject.slug].reports)).toEqual([String(taskId)]);
    expect((onPg[labProject.slug].exports.agreement as unknown[]).length).toBeGreaterThan(0);
    expect((onPg[labProject.slug].exports.annotations as unknown[]).length).toBe(prepared.assignments);

    // The run's figures — on the copy back and by the app on PostgreSQL — are those of the run the SQLite worker did.
    const backDb = openDatabase(backFile);
    const got = await runFigures(backDb, prepared.runId);
    backDb.$client.close();
    expect(got).toEqual(reference);
    const pgDb = await openPgDatabase(url, { max: 2 });
    pools.push(pgDb);
    const d = pgDal(pgDb);
    const pgRun = first(await d.q.select().from(d.t.runs).where(eq(d.t.runs.id, prepared.runId)))!;
    expect(await runResultsAll(d as DalLike, pgRun)).toEqual(reference.results);

    // The acknowledged labels, saved through the same annotation code on the SQLite reference: the task's report
    // and the agreement and annotations exports (but for the wall-clock columns) are PostgreSQL's, figure for figure.
    const ref = openDatabase(referenceFile);
    const task = (await findTask(labProject.id, taskId, ref))!;
    for (const a of acks) {
      const form = new URLSearchParams({
        intent: "submit",
        unitId: String(a.unitId),
        clientToken: a.token,
        durationMs: String(a.durationMs),
        answer: a.answer,
      });
      const saved = await saveAnnotation({ task, userId: a.userId, unitId: a.unitId, intent: "submit", form }, ref);
      expect(saved).toMatchObject({ ok: true, status: "submitted" });
    }
    ref.$client.close();
    const onRef = await reportFiguresOn(referenceFile, projects);
    expect(onRef[labProject.slug].reports).toEqual(onPg[labProject.slug].reports);
    expect(onRef[labProject.slug].exports.agreement).toEqual(onPg[labProject.slug].exports.agreement);
    expect(withoutWhen(onRef[labProject.slug].exports.annotations as Record<string, unknown>[])).toEqual(
      withoutWhen(onPg[labProject.slug].exports.annotations as Record<string, unknown>[]),
    );

    console.log(
      `scale-out: ${acks.length} labels over 2 servers (${resent} resent after a connection error, ${connectionErrors[1]} connection errors), ` +
        `${fake!.requests.length} calls for ${referenceCalls} (max in flight ${JSON.stringify(Object.fromEntries(maxInFlight))}); ` +
        `killed at ${atKill.acks} labels / ${atKill.calls} calls, server down ${(downMs / 1000).toFixed(1)} s; ` +
        `work ${(workedMs / 1000).toFixed(1)} s, all ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
    );
  }, 300_000);
});
