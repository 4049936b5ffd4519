/**
 * Kill -9 for real: a worker process is SIGKILLed mid-run and restarted. The
 * run finishes; the fake server saw each request once, except at most the
 * calls whose jobs were leased at the kill (in flight, or replied and not yet
 * committed); no result is duplicated.
 *
 * The leases are long (60 s): the restarted worker sees that the dead one's
 * process is gone (same host, pid not running) and takes its jobs at once,
 * without waiting for the leases to expire. Calls are logged before they are
 * sent, so the calls cut off by the kill stay in the log ("interrupted"),
 * counted in the run's calls and tokens.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, schema } from "../../db/client";
import { createRun, defaultPrefetch, runProgress } from "../../app/runs/runner.server";
import { tempDir } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

const ROOT = path.resolve(__dirname, "../..");
const CONCURRENCY = 6;
const LEASE_MS = 60_000;
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(refineScript(), { latencyMs: 25 });
});
afterAll(() => fake.close());

function spawnWorker(file: string): ChildProcess {
  return spawn(process.execPath, ["scripts/cli.mjs", "worker", "--until-idle"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: file,
      WORKER_CONCURRENCY: String(CONCURRENCY),
      WORKER_LEASE_MS: String(LEASE_MS),
      WORKER_POLL_MS: "20",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

it("SIGKILL mid-run, restart: the run completes with no duplicate result and no repeated call beyond those in flight", async () => {
  const file = path.join(tempDir(), "kill.db");
  const db = openDatabase(file);
  const fx = makeRunsFixture(db, { baseUrl: fake.baseUrl, items: 20, checklist: 2, concurrency: CONCURRENCY });
  const run = await createRun(db, fx.project.id, {
    name: "kill",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: 3 },
  });
  const expectedJobs = 20 * 3 * 2;
  const doneCount = () =>
    (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done'`).get(run.id) as { n: number }).n;

  const first = spawnWorker(file);
  let out = "";
  first.stdout!.on("data", (d) => (out += d));
  first.stderr!.on("data", (d) => (out += d));
  // Wait until a good part of the run is done, then kill -9.
  const t0 = Date.now();
  while (doneCount() < 40) {
    if (Date.now() - t0 > 30_000) throw new Error(`worker made no progress:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const exited = new Promise((r) => first.once("exit", r));
  first.kill("SIGKILL");
  await exited;
  const doneAtKill = doneCount();
  expect(doneAtKill).toBeLessThan(expectedJobs);
  const leasedAtKill = (
    db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='leased'`).get(run.id) as { n: number }
  ).n;
  // Leased at the kill: jobs calling, replied but not yet committed, or prefetched (never more than CONCURRENCY + prefetch).
  expect(leasedAtKill).toBeLessThanOrEqual(CONCURRENCY + defaultPrefetch(CONCURRENCY));
  const leaseEnd = (
    db.$client.prepare(`SELECT MIN(lease_expires_at) AS t FROM jobs WHERE run_id=? AND status='leased'`).get(run.id) as { t: number | null }
  ).t;

  const second = spawnWorker(file);
  second.stdout!.on("data", (d) => (out += d));
  second.stderr!.on("data", (d) => (out += d));
  const code = await new Promise((r) => second.once("exit", r));
  expect(code, out).toBe(0);
  // The dead worker's jobs were taken before their leases would have expired.
  if (leaseEnd !== null) expect(Date.now()).toBeLessThan(leaseEnd);

  const status = db.select({ status: schema.runs.status }).from(schema.runs).all()[0].status;
  expect(status).toBe("completed");
  const jobs = db.$client.prepare(`SELECT status, COUNT(*) AS n FROM jobs WHERE run_id=? GROUP BY status`).all(run.id);
  expect(jobs).toEqual([{ status: "done", n: expectedJobs }]);
  // No duplicated results.
  const responses = db.$client
    .prepare(`SELECT COUNT(*) AS n, COUNT(DISTINCT item_id || '/' || source_key) AS d FROM responses WHERE run_id=?`)
    .get(run.id) as { n: number; d: number };
  expect(responses).toEqual({ n: 20 * 3, d: 20 * 3 });
  const verdicts = db.$client.prepare(`SELECT COUNT(*) AS n FROM verdicts WHERE run_id=?`).get(run.id) as { n: number };
  expect(verdicts.n).toBe(20 * 3 * 2);
  // The server's log: every job's request arrived; repeats only for jobs leased at the kill.
  const seen = new Map<string, number>();
  for (const r of fake.requests) {
    const k = JSON.stringify(r.body);
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  const repeats = [...seen.values()].reduce((a, n) => a + (n - 1), 0);
  expect(seen.size).toBe(expectedJobs);
  // A repeated call is one whose job was leased at the kill: calling, or replied but not yet committed
  // (a reply's slot goes to a prefetched job before the next store, so this can exceed CONCURRENCY by the prefetch).
  expect(repeats).toBeLessThanOrEqual(leasedAtKill);
  expect(fake.requests.length).toBe(expectedJobs + repeats);
  // provider_calls holds every request the server saw (each was logged before it was sent), plus at most
  // the calls logged by the dead worker that never left it; the calls it had in flight are "interrupted", none left "sent".
  const states = Object.fromEntries(
    (db.$client.prepare(`SELECT state, COUNT(*) AS n FROM provider_calls GROUP BY state`).all() as { state: string; n: number }[]).map(
      (r) => [r.state, r.n],
    ),
  );
  const logged = (states.done ?? 0) + (states.interrupted ?? 0);
  expect(states.sent).toBeUndefined();
  expect(logged).toBeGreaterThanOrEqual(fake.requests.length);
  expect(states.done).toBeLessThanOrEqual(fake.requests.length);
  expect(states.interrupted ?? 0).toBeLessThanOrEqual(leasedAtKill);
  const progress = (await runProgress(db, run.id))!;
  expect(progress.calls).toBe(logged);
  expect(progress.interruptedCalls).toBe(states.interrupted ?? 0);
  db.$client.close();
}, 60_000);
