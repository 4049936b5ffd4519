/**
 * Kill -9 for real: a worker process is SIGKILLed mid-run and restarted. The
 * run finishes; the fake server saw each request once, except at most the
 * calls whose jobs were leased at the kill (in flight, or replied and not yet
 * committed); no result is duplicated.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, schema } from "../../db/client";
import { createRun, defaultPrefetch } from "../../app/runs/runner.server";
import { tempDir } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

const ROOT = path.resolve(__dirname, "../..");
const CONCURRENCY = 6;
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(refineScript(), { latencyMs: 25 });
});
afterAll(() => fake.close());

function spawnWorker(file: string): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "scripts/worker.ts", "--until-idle"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: file, WORKER_CONCURRENCY: String(CONCURRENCY), WORKER_LEASE_MS: "800", WORKER_POLL_MS: "20" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

it("SIGKILL mid-run, restart: the run completes with no duplicate result and no repeated call beyond those in flight", async () => {
  const file = path.join(tempDir(), "kill.db");
  const db = openDatabase(file);
  const fx = makeRunsFixture(db, { baseUrl: fake.baseUrl, items: 20, checklist: 2, concurrency: CONCURRENCY });
  const run = createRun(db, fx.project.id, {
    name: "kill",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: 3 },
  });
  const expectedJobs = 20 * 3 * 2;
  const doneCount = () => (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done'`).get(run.id) as { n: number }).n;

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
  const leasedAtKill = (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='leased'`).get(run.id) as { n: number }).n;
  // Leased at the kill: jobs calling, replied but not yet committed, or prefetched (never more than CONCURRENCY + prefetch).
  expect(leasedAtKill).toBeLessThanOrEqual(CONCURRENCY + defaultPrefetch(CONCURRENCY));

  const second = spawnWorker(file);
  second.stdout!.on("data", (d) => (out += d));
  second.stderr!.on("data", (d) => (out += d));
  const code = await new Promise((r) => second.once("exit", r));
  expect(code, out).toBe(0);

  const status = db.select({ status: schema.runs.status }).from(schema.runs).all()[0].status;
  expect(status).toBe("completed");
  const jobs = db.$client.prepare(`SELECT status, COUNT(*) AS n FROM jobs WHERE run_id=? GROUP BY status`).all(run.id);
  expect(jobs).toEqual([{ status: "done", n: expectedJobs }]);
  // No duplicated results.
  const responses = db.$client.prepare(`SELECT COUNT(*) AS n, COUNT(DISTINCT item_id || '/' || source_key) AS d FROM responses WHERE run_id=?`).get(run.id) as { n: number; d: number };
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
  // provider_calls agrees with the server, minus calls cut off before they were logged.
  const logged = (db.$client.prepare(`SELECT COUNT(*) AS n FROM provider_calls`).get() as { n: number }).n;
  expect(logged).toBeGreaterThanOrEqual(expectedJobs);
  expect(logged).toBeLessThanOrEqual(fake.requests.length);
  db.$client.close();
}, 60_000);
