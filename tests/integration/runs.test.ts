/** The durable runner end to end, in-process, against the fake OpenAI-compatible server. */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { claimJobs, completeJob, controlRun, createRun, runProgress, storeAndClaim, Worker } from "../../app/runs/runner.server";
import { useTempDatabase } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

const { db } = useTempDatabase();
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(refineScript());
});
afterAll(() => fake.close());

const until = (w: Worker) => w.start().done;

describe("runner", () => {
  it("runs RefineBench self-refinement to completion: every turn generated and judged once, calls logged without keys", async () => {
    fake.setScript(refineScript());
    fake.requests.length = 0;
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 3, checklist: 2 });
    const run = await createRun(db(), fx.project.id, {
      name: "rb",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "self-refinement", maxTurns: 3 },
    });
    expect(run.jobs).toBe(3);
    await until(new Worker(db(), { concurrency: 4, pollMs: 10, untilIdle: true, runId: run.id }));
    const r = db().select().from(schema.runs).where(eq(schema.runs.id, run.id)).get()!;
    expect(r.status).toBe("completed");
    const responses = db().select().from(schema.responses).where(eq(schema.responses.runId, run.id)).all();
    expect(responses).toHaveLength(9); // 3 items × 3 turns
    expect(responses.every((x) => x.origin === "run" && x.model === "tiny-model")).toBe(true);
    const verdicts = db().select().from(schema.verdicts).where(eq(schema.verdicts.runId, run.id)).all();
    expect(verdicts).toHaveLength(18);
    expect(fake.requests).toHaveLength(18);
    const calls = db().select().from(schema.providerCalls).all();
    expect(calls.length).toBe(18);
    expect(calls.every((c) => c.latencyMs !== null && c.promptTokens === 10)).toBe(true);
    expect(JSON.stringify(calls)).not.toMatch(/SECRET/);
    const p = (await runProgress(db(), run.id))!;
    expect(p).toMatchObject({ done: 18, failed: 0, remaining: 0, total: 18, status: "completed" });
    expect(p.cost).toBeGreaterThan(0);
  });

  it("a judge that leaves out checklist lines is re-asked, then stored as failed verdicts, never as No", async () => {
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 2, checklist: 3 });
    fake.setScript(refineScript(() => "Q1: Yes\nQ3: No"));
    const run = await createRun(db(), fx.project.id, {
      name: "gaps",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "guided", maxTurns: 2, parseRetries: 1 },
    });
    await until(new Worker(db(), { concurrency: 4, pollMs: 10, untilIdle: true, runId: run.id }));
    const verdicts = db().select().from(schema.verdicts).where(eq(schema.verdicts.runId, run.id)).all();
    const failed = verdicts.filter((v) => v.parseStatus === "failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((v) => v.value === null && v.score === null && v.rawOutput === "Q1: Yes\nQ3: No")).toBe(true);
    // Q3 was a real "No", so guided feedback asked for turn 2
    expect(
      db()
        .select()
        .from(schema.responses)
        .where(and(eq(schema.responses.runId, run.id), eq(schema.responses.turn, 2)))
        .all(),
    ).toHaveLength(2);
  });

  it("retries flaky endpoints (429 with Retry-After, 500, malformed JSON) and records a failed job when a call never succeeds", async () => {
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 2, checklist: 1, providerSettings: { maxRetries: 2 } });
    let n = 0;
    const base = refineScript();
    fake.setScript((req) => {
      const last = JSON.stringify(req.body.messages);
      if (last.includes("Problem 1?") && !last.includes("Checklist")) return { status: 500 }; // item 1's generation always fails
      if (last.includes("Problem 0?") && !last.includes("Checklist")) n++;
      if (n === 1) return { status: 429, headers: { "Retry-After": "0.05" } };
      if (n === 2) {
        n++;
        return { raw: "{oops" };
      }
      return base(req);
    });
    const run = await createRun(db(), fx.project.id, {
      name: "flaky",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "self-refinement", maxTurns: 1 },
    });
    await until(new Worker(db(), { concurrency: 2, pollMs: 10, untilIdle: true, runId: run.id }));
    const jobs = db().select().from(schema.jobs).where(eq(schema.jobs.runId, run.id)).all();
    expect(jobs.filter((j) => j.status === "failed")).toHaveLength(1);
    expect(jobs.find((j) => j.status === "failed")!.error).toMatch(/HTTP 500.*after 3 attempts/);
    expect(jobs.filter((j) => j.status === "done")).toHaveLength(2);
    const calls = db()
      .select()
      .from(schema.providerCalls)
      .all()
      .filter((c) => jobs.some((j) => j.id === c.jobId));
    expect(calls.map((c) => c.status)).toContain(429);
    expect(calls.some((c) => /malformed/.test(c.error ?? ""))).toBe(true);
    // A run with a failed job does not end "completed".
    expect(await runProgress(db(), run.id)).toMatchObject({ status: "completed-with-errors", failed: 1, done: 2 });
    // Requeue the failure: with the endpoint healthy it completes.
    fake.setScript(base);
    expect(await controlRun(db(), run.id, "retry-failed")).toBe("queued");
    await until(new Worker(db(), { concurrency: 2, pollMs: 10, untilIdle: true, runId: run.id }));
    expect(await runProgress(db(), run.id)).toMatchObject({ status: "completed", failed: 0, done: 4 });
  });

  it("a lost lease writes nothing, and a repeated completion cannot duplicate results", async () => {
    fake.setScript(refineScript());
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 1, checklist: 1 });
    const run = await createRun(db(), fx.project.id, {
      name: "lease",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
    });
    const [job] = claimJobs(db(), "A", 1, 10, Date.now()).filter((j) => j.runId === run.id);
    expect(job).toBeDefined();
    // A's lease expires; B claims the same job.
    const [again] = claimJobs(db(), "B", 10, 60_000, Date.now() + 1_000).filter((j) => j.runId === run.id);
    expect(again.id).toBe(job.id);
    const outcome = {
      responses: [{ itemId: fx.items[0].id, model: "m", turn: 1, text: "t", sourceKey: "k", metadata: {} }],
      verdicts: [],
      next: [],
    };
    expect(completeJob(db(), "A", job, outcome)).toBe(false);
    expect(completeJob(db(), "B", again, outcome)).toBe(true);
    expect(completeJob(db(), "B", again, outcome)).toBe(false);
    expect(db().select().from(schema.responses).where(eq(schema.responses.runId, run.id)).all()).toHaveLength(1);
  });

  it("a batch stores many jobs in one transaction; one bad outcome fails only its own job", async () => {
    fake.setScript(refineScript());
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 3, checklist: 1 });
    const run = await createRun(db(), fx.project.id, {
      name: "batch",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
    });
    const jobs = claimJobs(db(), "W", 10, 60_000, Date.now(), run.id);
    expect(jobs).toHaveLength(3);
    const good = (i: number) => ({
      responses: [{ itemId: fx.items[i].id, model: "m", turn: 1, text: `t${i}`, sourceKey: `k${i}`, metadata: {} }],
      verdicts: [],
      next: [],
    });
    const bad = {
      responses: [],
      verdicts: [
        {
          judgeId: 1,
          itemId: fx.items[1].id,
          responseSourceKey: "nope",
          checklistItemId: null,
          value: "1",
          score: 1,
          rawOutput: "",
          parseStatus: "ok" as const,
        },
      ],
      next: [],
    };
    const call = {
      request: { model: "m", messages: [{ role: "user", content: "hello" }] },
      reply: { ok: 1 },
      status: 200,
      latencyMs: 5,
      promptTokens: 1,
      completionTokens: 1,
      error: null,
    };
    const { claimed } = storeAndClaim(
      db(),
      "W",
      [
        { job: jobs[0], outcome: good(0), calls: [call] },
        { job: jobs[1], outcome: bad, calls: [call] },
        { job: jobs[2], outcome: good(2), calls: [call] },
      ],
      5,
      60_000,
      { runId: run.id, detail: "compact" },
    );
    expect(claimed).toEqual([]);
    const rows = db()
      .select()
      .from(schema.jobs)
      .where(eq(schema.jobs.runId, run.id))
      .all()
      .sort((a, b) => a.id - b.id);
    expect(rows.map((r) => [r.id, r.status])).toEqual(jobs.map((j, i) => [j.id, i === 1 ? "failed" : "done"]));
    expect(rows[1].error).toMatch(/verdict for unknown response nope/);
    expect(
      db()
        .select()
        .from(schema.responses)
        .where(eq(schema.responses.runId, run.id))
        .all()
        .map((r) => r.text)
        .sort(),
    ).toEqual(["t0", "t2"]);
    // Every call is logged, compactly: the shape of the request, not its messages.
    const calls = db()
      .select()
      .from(schema.providerCalls)
      .all()
      .filter((c) => rows.some((j) => j.id === c.jobId));
    expect(calls).toHaveLength(3);
    expect(calls[0].request).toEqual({ model: "m", messages: 1, chars: 5, see: "jobs.payload" });
    expect(await runProgress(db(), run.id)).toMatchObject({ status: "completed-with-errors", done: 2, failed: 1 });
  });

  it("prefetched jobs of a paused run are handed back uncalled; resume finishes the run", async () => {
    let open!: () => void;
    const gate = new Promise<void>((ok) => (open = ok));
    const base = refineScript();
    fake.setScript(async (req) => {
      await gate;
      return base(req);
    });
    fake.requests.length = 0;
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 6, checklist: 1 });
    const run = await createRun(db(), fx.project.id, {
      name: "prefetch",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { maxTurns: 1 },
    });
    const w = new Worker(db(), { concurrency: 2, prefetch: 2, pollMs: 10, runId: run.id }).start();
    const leased = () =>
      db()
        .select()
        .from(schema.jobs)
        .where(and(eq(schema.jobs.runId, run.id), eq(schema.jobs.status, "leased")))
        .all().length;
    await expect.poll(() => fake.requests.length).toBe(2);
    expect(leased()).toBe(4); // two calling, two prefetched
    expect(await controlRun(db(), run.id, "pause")).toBe("paused");
    open();
    await expect.poll(leased).toBe(0);
    await w.stop();
    expect(fake.requests).toHaveLength(2); // the prefetched two were never called
    expect(await controlRun(db(), run.id, "resume")).toBe("queued");
    fake.setScript(base);
    await until(new Worker(db(), { concurrency: 2, pollMs: 10, untilIdle: true, runId: run.id }));
    expect(await runProgress(db(), run.id)).toMatchObject({ status: "completed", done: 12, failed: 0 });
    expect(fake.requests).toHaveLength(12);
  });

  it("pause is prompt: calls waiting for the provider's slot never start after the answer; cancel aborts the call in flight and stores nothing", async () => {
    let release!: () => void;
    let held = new Promise<void>((ok) => (release = ok));
    const base = refineScript();
    fake.setScript(async (req) => {
      await held;
      return base(req);
    });
    fake.requests.length = 0;
    // One slot at the provider; the worker would run 4 jobs at once: three wait for the slot.
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 4, checklist: 1, concurrency: 1 });
    const run = await createRun(db(), fx.project.id, {
      name: "prompt",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { maxTurns: 1 },
    });
    const w = new Worker(db(), { concurrency: 4, prefetch: 0, pollMs: 10, runId: run.id }).start();
    await expect.poll(() => fake.requests.length).toBe(1);
    const callsOf = () =>
      db()
        .select()
        .from(schema.providerCalls)
        .all()
        .filter((c) => c.providerId === fx.target.id);
    expect(callsOf().map((c) => c.state)).toEqual(["sent"]); // logged before it was sent
    expect(await controlRun(db(), run.id, "pause")).toBe("paused");
    const answeredAt = Date.now();
    release(); // the call in flight finishes and is stored
    const leased = () =>
      db()
        .select()
        .from(schema.jobs)
        .where(and(eq(schema.jobs.runId, run.id), eq(schema.jobs.status, "leased")))
        .all().length;
    await expect.poll(leased).toBe(0);
    await new Promise((ok) => setTimeout(ok, 100));
    expect(fake.requests).toHaveLength(1);
    expect(callsOf().filter((c) => (c.startedAt ?? 0) >= answeredAt)).toEqual([]);
    expect(await runProgress(db(), run.id)).toMatchObject({ status: "paused", done: 1, failed: 0 });
    expect(db().select().from(schema.responses).where(eq(schema.responses.runId, run.id)).all()).toHaveLength(1);

    // Resume; then cancel while a call hangs: it is aborted, and nothing more is stored into the run.
    held = new Promise<void>((ok) => (release = ok));
    expect(await controlRun(db(), run.id, "resume")).toBe("queued");
    // (The first item's judge call, on the judge provider, and the next generation hang together.)
    await expect.poll(() => fake.requests.length).toBe(3);
    const responsesBefore = db().select().from(schema.responses).where(eq(schema.responses.runId, run.id)).all().length;
    expect(await controlRun(db(), run.id, "cancel")).toBe("cancelled");
    const sentCalls = () =>
      db()
        .select()
        .from(schema.providerCalls)
        .all()
        .filter((c) => c.state === "sent").length;
    await expect.poll(sentCalls).toBe(0); // the hanging calls were aborted
    release();
    await w.stop();
    expect(fake.requests).toHaveLength(3);
    expect(db().select().from(schema.responses).where(eq(schema.responses.runId, run.id)).all()).toHaveLength(responsesBefore);
    expect(db().select().from(schema.verdicts).where(eq(schema.verdicts.runId, run.id)).all()).toHaveLength(0);
    expect(await runProgress(db(), run.id)).toMatchObject({ status: "cancelled", failed: 0 });
    await expect(controlRun(db(), run.id, "pause")).rejects.toThrow(/cannot pause a cancelled run/);
    fake.setScript(refineScript());
  });

  it("pause stops claiming, resume continues, cancel stops; bad definitions are refused with the field named", async () => {
    fake.setScript(refineScript());
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 2, checklist: 1 });
    const run = await createRun(db(), fx.project.id, {
      name: "ctl",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
    });
    expect(await controlRun(db(), run.id, "pause")).toBe("paused");
    expect(claimJobs(db(), "X", 10, 1000).filter((j) => j.runId === run.id)).toEqual([]);
    expect(await controlRun(db(), run.id, "resume")).toBe("queued");
    expect(await controlRun(db(), run.id, "cancel")).toBe("cancelled");
    expect(claimJobs(db(), "X", 10, 1000).filter((j) => j.runId === run.id)).toEqual([]);
    await expect(controlRun(db(), run.id, "resume")).rejects.toThrow(/cannot resume a cancelled run/);
    await expect(
      createRun(db(), fx.project.id, {
        name: "x",
        protocol: "refinebench",
        datasetId: fx.dataset.id,
        models: [{ provider: "nope" }],
        judges: [{ provider: "judge" }],
      }),
    ).rejects.toThrow(/models\[0\]\.provider: no provider named "nope"/);
    await expect(
      createRun(db(), fx.project.id, {
        name: "x",
        protocol: "refinebench",
        datasetId: fx.dataset.id,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
        settings: { maxTurns: 0 },
      }),
    ).rejects.toThrow(/settings\.maxTurns/);
  });
});
