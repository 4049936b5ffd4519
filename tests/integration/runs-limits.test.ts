/**
 * The database-backed provider limits, with two connections to one database
 * file standing for two processes (the multi-worker test does it with real
 * processes): the provider's concurrency holds across both; every call is
 * logged "sent" before it leaves and "done" after; a stopped run admits no
 * call; a dead worker's calls become "interrupted" and its jobs are reclaimed.
 */
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, schema, type Db } from "../../db/client";
import { claimJobs, controlRun, createRun } from "../../app/runs/runner.server";
import { heartbeat, RunStopped, SharedLimits, sweepDeadWorkers } from "../../app/runs/providers/shared-limits.server";
import { tempDir } from "../support/db";
import { makeRunsFixture } from "../unit/runs/fixtures";

let a: Db;
let b: Db;
let fx: ReturnType<typeof makeRunsFixture>;
beforeAll(() => {
  const file = path.join(tempDir(), "limits.db");
  a = openDatabase(file);
  b = openDatabase(file);
  fx = makeRunsFixture(a, { baseUrl: "http://127.0.0.1:9/v1", items: 2, checklist: 1, concurrency: 3 });
});
afterAll(() => {
  a?.$client.close();
  b?.$client.close();
});

const ctx = (owner: string, runId: number | null = null) => ({
  providerId: fx.target.id,
  concurrency: 3,
  requestsPerMinute: null,
  owner,
  runId,
  jobId: null,
});
const states = (db: Db) =>
  db
    .select()
    .from(schema.providerCalls)
    .all()
    .filter((c) => c.providerId === fx.target.id)
    .map((c) => c.state);
const tick = () => new Promise((ok) => setTimeout(ok, 30));

describe("shared provider limits", () => {
  it("two connections share 3 slots: the 4th call waits until one ends, whatever connection ends it", async () => {
    heartbeat(a, "A", 60_000);
    heartbeat(b, "B", 60_000);
    const la = new SharedLimits(a);
    const lb = new SharedLimits(b);
    const t1 = await la.gate(ctx("A")).begin({ n: 1 }, 5);
    const t2 = await la.gate(ctx("A")).begin({ n: 2 }, 5);
    const t3 = await lb.gate(ctx("B")).begin({ n: 3 }, 5);
    expect(states(a)).toEqual(["sent", "sent", "sent"]);
    let fourth = false;
    const p4 = lb
      .gate(ctx("B"))
      .begin({ n: 4 }, 5)
      .then((t) => ((fourth = true), t));
    await tick();
    expect(fourth).toBe(false); // B waits although B holds only one slot: the limit is the provider's
    t1.end({ reply: { ok: 1 }, status: 200, latencyMs: 3, promptTokens: 7, completionTokens: 2, error: null });
    la.flushEnds();
    const t4 = await p4; // B sees A's freed slot
    expect(fourth).toBe(true);
    const rows = a
      .select()
      .from(schema.providerCalls)
      .all()
      .filter((c) => c.providerId === fx.target.id);
    expect(rows.map((r) => [r.state, r.owner])).toEqual([
      ["done", "A"],
      ["sent", "A"],
      ["sent", "B"],
      ["sent", "B"],
    ]);
    expect(rows[0]).toMatchObject({ status: 200, promptTokens: 7, completionTokens: 2, latencyMs: 3 });
    expect(rows[1].promptTokens).toBe(5); // the estimate, until the reply says otherwise
    for (const [t, l] of [
      [t2, la],
      [t3, lb],
      [t4, lb],
    ] as const) {
      t.end({ reply: null, status: 500, latencyMs: 1, promptTokens: null, completionTokens: null, error: "HTTP 500" });
      l.flushEnds();
    }
    expect(states(a)).toEqual(["done", "done", "done", "done"]);
  });

  it("a paused run admits no call, and a waiting call is stopped by the pause", async () => {
    const run = await createRun(a, fx.project.id, {
      name: "gate",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { maxTurns: 1 },
    });
    const la = new SharedLimits(a);
    const held = await Promise.all([1, 2, 3].map((n) => la.gate(ctx("A", run.id)).begin({ n }, 1)));
    const waiting = la.gate(ctx("A", run.id)).begin({ n: 4 }, 1);
    expect(await controlRun(b, run.id, "pause")).toBe("paused");
    held[0].end({ reply: null, status: 200, latencyMs: 1, promptTokens: 1, completionTokens: 1, error: null });
    await expect(waiting).rejects.toBeInstanceOf(RunStopped);
    await expect(la.gate(ctx("A", run.id)).begin({ n: 5 }, 1)).rejects.toThrow("the run is paused");
    for (const t of held.slice(1)) t.end({ reply: null, status: 200, latencyMs: 1, promptTokens: 1, completionTokens: 1, error: null });
    la.flushEnds();
    expect(states(a).filter((s) => s === "sent")).toEqual([]);
  });

  it("a dead worker's calls in flight become interrupted and its jobs are reclaimed at once", async () => {
    const run = await createRun(a, fx.project.id, {
      name: "dead",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { maxTurns: 1 },
    });
    // A process that has exited: its pid is gone.
    const gone = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
    const deadPid = Number(gone.stdout.trim());
    a.$client
      .prepare(`INSERT INTO workers (id, host, pid, heartbeat_at, lease_ms, started_at) VALUES ('D', ?, ?, ?, 600000, ?)`)
      .run(os.hostname(), deadPid, Date.now(), Date.now());
    const jobs = claimJobs(a, "D", 10, 600_000, Date.now(), run.id);
    expect(jobs).toHaveLength(2);
    await new SharedLimits(a).gate({ ...ctx("D", run.id), jobId: jobs[0].id }).begin({ n: 1 }, 11);
    expect(claimJobs(b, "E", 10, 60_000, Date.now(), run.id)).toEqual([]); // leased for ten minutes
    expect(sweepDeadWorkers(b, "E")).toEqual(["D"]);
    const call = b
      .select()
      .from(schema.providerCalls)
      .all()
      .find((c) => c.owner === "D")!;
    expect(call).toMatchObject({ state: "interrupted", promptTokens: 11, error: "the worker stopped during the call" });
    expect(
      claimJobs(b, "E", 10, 60_000, Date.now(), run.id)
        .map((j) => j.id)
        .sort(),
    ).toEqual(jobs.map((j) => j.id).sort());
    expect(b.$client.prepare(`SELECT COUNT(*) FROM workers WHERE id = 'D'`).pluck().get()).toBe(0);
  });
});
