/**
 * Limits that hold for the provider, not for the process (issue 13): three
 * worker processes share one run whose single provider allows 4 requests in
 * flight and 60 per minute. What the fake server sees — measured at the server,
 * from the arrival of each request to its reply — must never exceed 4 at once
 * nor 60 in any 60 s window; no request is made twice; the run completes.
 *
 * 35 RefineBench items × (generation + judge) = 70 calls, so the minute limit
 * binds: 60 calls go at once, the last 10 only once the first have left the
 * window (the test therefore takes a little over a minute; that is the
 * behaviour under test, not a speed measurement).
 */
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, schema } from "../../db/client";
import { createRun } from "../../app/runs/runner.server";
import { tempDir } from "../support/db";
import { exited, spawnWorker } from "../support/worker-process";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";
import { eq } from "drizzle-orm";

const ITEMS = 35;
const CALLS = ITEMS * 2;
const LIMIT = 4;
const RPM = 60;

let fake: FakeLlm;
let inFlight = 0;
let maxInFlight = 0;
const arrivals: number[] = [];
beforeAll(async () => {
  const reply = refineScript();
  fake = await startFakeLlm(async (req) => {
    arrivals.push(Date.now());
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // 200 ms: long enough that calls overlap even when a loaded machine admits them slowly (the run's length is set
    // by the minute limit, not by this).
    await new Promise((ok) => setTimeout(ok, 200));
    inFlight--; // the reply is written right after this returns
    return reply(req);
  });
});
afterAll(() => fake.close());

it("3 worker processes, one provider at concurrency 4 and 60/min: never more than 4 in flight or 60 in any 60 s at the server, no duplicates, the run completes", async () => {
  const file = path.join(tempDir(), "multi.db");
  const db = openDatabase(file);
  const fx = makeRunsFixture(db, { baseUrl: fake.baseUrl, items: ITEMS, checklist: 1, concurrency: LIMIT });
  db.update(schema.providers).set({ requestsPerMinute: RPM }).where(eq(schema.providers.id, fx.target.id)).run();
  // The model and its judge are the same provider: one set of limits for every call.
  const run = await createRun(db, fx.project.id, {
    name: "shared limits",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "target", name: "self-judge" }],
    settings: { setting: "self-refinement", maxTurns: 1 },
  });
  const workers = [spawnWorker(file, 10_000), spawnWorker(file, 10_000), spawnWorker(file, 10_000)];
  const codes = await Promise.all(workers.map((w) => exited(w.child)));
  const logs = workers.map((w) => w.out()).join("\n");
  expect(codes, logs).toEqual([0, 0, 0]);

  expect(db.select({ status: schema.runs.status }).from(schema.runs).where(eq(schema.runs.id, run.id)).get()!.status).toBe("completed");
  expect(db.$client.prepare(`SELECT status, COUNT(*) AS n FROM jobs WHERE run_id = ? GROUP BY status`).all(run.id)).toEqual([
    { status: "done", n: CALLS },
  ]);

  // At the server: every call once.
  expect(fake.requests).toHaveLength(CALLS);
  expect(new Set(fake.requests.map((r) => JSON.stringify(r.body))).size).toBe(CALLS);
  // Never more than 4 at once.
  expect(maxInFlight).toBeLessThanOrEqual(LIMIT);
  expect(maxInFlight).toBeGreaterThan(1); // the workers did work in parallel
  // Never more than 60 arrivals in any 60 s window (each window starting at an arrival is the worst case).
  const t = [...arrivals].sort((a, b) => a - b);
  let worst = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (j < t.length && t[j] < t[i] + 60_000) j++;
    worst = Math.max(worst, j - i);
  }
  expect(worst).toBeLessThanOrEqual(RPM);
  // The limit did bind: the 61st call came more than a minute after the first.
  expect(t[RPM] - t[0]).toBeGreaterThanOrEqual(60_000);
  // The call log agrees with the server: every call logged once, completed.
  const calls = db.$client.prepare(`SELECT state, COUNT(*) AS n FROM provider_calls GROUP BY state`).all();
  expect(calls).toEqual([{ state: "done", n: CALLS }]);
  // More than one process made calls.
  const owners = db.$client.prepare(`SELECT COUNT(DISTINCT owner) AS n FROM provider_calls`).get() as { n: number };
  expect(owners.n).toBeGreaterThan(1);
  db.$client.close();
}, 150_000);
