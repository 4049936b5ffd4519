/**
 * The run queue and the provider limits on PostgreSQL (app/runs/pg/queue.server.ts), on a throw-away cluster:
 * many claimers on separate connections (as workers on separate machines are) never take the same job and never
 * wait for each other's locked rows; an expired lease goes to another worker and the old owner's store is refused;
 * outcomes, errors and run endings are stored as on SQLite; and the provider's concurrency and requests per minute
 * hold across connections, checked by the test's own counts; a dead worker's calls and leases are let go
 * (app/runs/pg/workers.server.ts); a worker (app/runs/pg/worker.server.ts) without CONCORD_ENCRYPTION_KEY fails
 * a keyed provider's jobs with a message naming the variable.
 */
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase, type PgDb } from "../../db/client-pg";
import * as s from "../../db/schema.pg";
import type { ClaimedJob } from "../../app/runs/jobs.server";
import type { Outcome } from "../../app/runs/protocols/types";
import { RunStopped } from "../../app/runs/providers/shared-limits.server";
import { admitCallPg, claimJobsPg, endCallPg, renewLeasesPg, storeOutcomePg } from "../../app/runs/pg/queue.server";
import { heartbeatPg, sweepDeadWorkersPg } from "../../app/runs/pg/workers.server";
import { PgWorker } from "../../app/runs/pg/worker.server";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();

let testPg: TestPg;
const opened: PgDb[] = [];
let dbCount = 0;

/** A database of its own for a test, and `extra` more pools on it (separate connections, as separate workers have). */
async function freshDb(extra = 0, max = 2): Promise<PgDb[]> {
  const name = `queue_${++dbCount}`;
  const url = await testPg.createDatabase(name);
  const pools: PgDb[] = [];
  for (let i = 0; i <= extra; i++) pools.push(await openPgDatabase(url, { max }));
  opened.push(...pools);
  return pools;
}

/** The minimal rows of a run: a project, a dataset with one item, a provider, a queued run and its `jobs` queued jobs. */
async function seed(db: PgDb, opts: { jobs: number; concurrency?: number; requestsPerMinute?: number | null }) {
  const [project] = await db
    .insert(s.projects)
    .values({ slug: `q-${Math.random().toString(36).slice(2, 8)}`, name: "Queue" })
    .returning();
  const [dataset] = await db.insert(s.datasets).values({ projectId: project.id, name: "RB mini", source: "test" }).returning();
  const [item] = await db
    .insert(s.items)
    .values({ datasetId: dataset.id, sourceId: "rb-0", query: "Problem 0?", domain: "Law", taskType: "free-form" })
    .returning();
  const [check] = await db.insert(s.checklistItems).values({ itemId: item.id, text: "Does it mention point 1?", position: 0 }).returning();
  const [provider] = await db
    .insert(s.providers)
    .values({
      projectId: project.id,
      name: "target",
      kind: "openai-compatible",
      baseUrl: "http://127.0.0.1:9",
      model: "tiny-model",
      concurrency: opts.concurrency ?? 4,
      requestsPerMinute: opts.requestsPerMinute ?? null,
    })
    .returning();
  const [judge] = await db
    .insert(s.judges)
    .values({ projectId: project.id, name: "judge", provider: "target", model: "judge-model" })
    .returning();
  const run = await addRun(db, project.id, dataset.id, provider.id, opts.jobs);
  return { project, dataset, item, check, provider, judge, run };
}

async function addRun(db: PgDb, projectId: number, datasetId: number, providerId: number, n: number) {
  const [run] = await db
    .insert(s.runs)
    .values({ projectId, datasetId, name: "run", protocol: "refinebench", status: "queued" })
    .returning();
  for (let i = 0; i < n; i += 500)
    await db.insert(s.jobs).values(
      Array.from({ length: Math.min(500, n - i) }, (_, k) => ({
        runId: run.id,
        key: `gen:${i + k}`,
        payload: { step: "generate", providerId, request: { messages: [{ role: "user", content: `Problem ${i + k}?` }] }, state: {} },
      })),
    );
  return run;
}

const answer = (itemId: number, job: ClaimedJob, extra: Partial<Outcome> = {}): Outcome => ({
  responses: [{ itemId, model: "tiny-model", turn: 1, text: `answer for ${job.key}`, sourceKey: job.key, metadata: {} }],
  verdicts: [],
  next: [],
  result: { stored: job.key },
  ...extra,
});

const rows = async <T>(db: PgDb, q: ReturnType<typeof sql>) => (await db.execute(q)).rows as T[];
const runStatus = async (db: PgDb, runId: number) =>
  (await rows<{ status: string; finished_at: number | null }>(db, sql`SELECT status, finished_at FROM runs WHERE id = ${runId}`))[0];

describe.skipIf(NO_PG)(`the run queue on PostgreSQL${NO_PG ? ` (skipped: ${NO_PG})` : ""}`, () => {
  beforeAll(async () => {
    testPg = await startTestPg();
  }, 120_000);

  afterAll(async () => {
    for (const p of opened) await p.$client.end();
    testPg?.stop();
  });

  it("hands 1,000 jobs to 8 concurrent claimers on 4 pools in batches of 7: each claimed once, stored done once, the run completed", async () => {
    const pools = await freshDb(3);
    const { item, run } = await seed(pools[0], { jobs: 1000 });
    const claimedBy = new Map<number, string>();
    const twice: number[] = [];
    let stores = 0;
    let refused = 0;
    let claiming = 0;
    let mostClaiming = 0;
    const claimMs: number[] = [];
    const loop = async (db: PgDb, owner: string) => {
      for (;;) {
        const t0 = performance.now();
        mostClaiming = Math.max(mostClaiming, ++claiming);
        const got = await claimJobsPg(db, owner, 7, 60_000, { runId: run.id });
        claiming--;
        claimMs.push(performance.now() - t0);
        if (got.length === 0) return;
        expect(got.length).toBeLessThanOrEqual(7);
        for (const j of got) {
          if (claimedBy.has(j.id)) twice.push(j.id);
          claimedBy.set(j.id, owner);
          expect(j.attempts).toBe(1);
          expect(j.protocol).toBe("refinebench");
        }
        for (const j of got) {
          if (await storeOutcomePg(db, owner, j, { outcome: answer(item.id, j) })) stores++;
          else refused++;
        }
      }
    };
    const t0 = performance.now();
    await Promise.all(pools.flatMap((db, p) => [loop(db, `w${p}a`), loop(db, `w${p}b`)]));
    const totalMs = performance.now() - t0;
    claimMs.sort((a, b) => a - b);
    console.log(
      `pg-queue: 1000 jobs, 8 claimers: ${totalMs.toFixed(0)} ms in all; ${claimMs.length} claims, ` +
        `median ${claimMs[claimMs.length >> 1].toFixed(1)} ms, max ${claimMs.at(-1)!.toFixed(1)} ms; ${mostClaiming} claims at once at most; ` +
        `jobs per owner ${JSON.stringify(Object.fromEntries([...new Set(claimedBy.values())].sort().map((o) => [o, [...claimedBy.values()].filter((x) => x === o).length])))}`,
    );

    expect(twice).toEqual([]);
    expect(claimedBy.size).toBe(1000);
    expect(stores).toBe(1000);
    expect(refused).toBe(0);
    // The claims did overlap (several transactions were open at once), so the test exercised concurrent claiming.
    expect(mostClaiming).toBeGreaterThan(1);
    const [jobs] = await rows<{ done: number; once: number; leased: number; results: number }>(
      pools[0],
      sql`SELECT count(*) FILTER (WHERE status = 'done') AS done, count(*) FILTER (WHERE attempts = 1) AS once,
                 count(*) FILTER (WHERE lease_owner IS NOT NULL OR lease_expires_at IS NOT NULL) AS leased,
                 count(*) FILTER (WHERE result ->> 'stored' = key) AS results
          FROM jobs WHERE run_id = ${run.id}`,
    );
    expect(jobs).toEqual({ done: 1000, once: 1000, leased: 0, results: 1000 });
    const [resp] = await rows<{ n: number; keys: number }>(
      pools[0],
      sql`SELECT count(*) AS n, count(DISTINCT source_key) AS keys FROM responses WHERE run_id = ${run.id}`,
    );
    expect(resp).toEqual({ n: 1000, keys: 1000 });
    const r = await runStatus(pools[0], run.id);
    expect(r.status).toBe("completed");
    expect(r.finished_at).not.toBeNull();
  });

  it("does not wait for jobs another transaction holds locked: it claims the next ones (SKIP LOCKED)", async () => {
    const [db, other] = await freshDb(1);
    const { run } = await seed(db, { jobs: 30 });
    const holder = await db.$client.connect();
    try {
      await holder.query("BEGIN");
      const held = (
        await holder.query<{ id: number }>(
          `SELECT id FROM jobs WHERE run_id = $1 AND status = 'queued' ORDER BY id DESC LIMIT 7 FOR UPDATE`,
          [run.id],
        )
      ).rows.map((r) => r.id);
      expect(held).toHaveLength(7);
      // The rows really are locked: a plain FOR UPDATE on them gives up after its lock timeout.
      const probe = await other.$client.connect();
      try {
        await probe.query("BEGIN");
        await probe.query("SET LOCAL lock_timeout = '200ms'");
        await expect(probe.query(`SELECT id FROM jobs WHERE id = $1 FOR UPDATE`, [held[0]])).rejects.toThrow(/lock timeout/);
        await probe.query("ROLLBACK");
      } finally {
        probe.release();
      }
      const t0 = performance.now();
      const got = await Promise.race([claimJobsPg(other, "w2", 7, 60_000), sleep(5_000).then(() => "waited" as const)]);
      const ms = performance.now() - t0;
      expect(got).not.toBe("waited");
      const ids = (got as ClaimedJob[]).map((j) => j.id);
      // The 7 newest queued jobs that are not held, in the order they were created.
      const all = (await rows<{ id: number }>(db, sql`SELECT id FROM jobs WHERE run_id = ${run.id} ORDER BY id DESC`)).map((r) => r.id);
      expect(ids).toEqual(
        all
          .filter((id) => !held.includes(id))
          .slice(0, 7)
          .reverse(),
      );
      console.log(`pg-queue: a claim beside a transaction holding 7 locked jobs took ${ms.toFixed(1)} ms`);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    // Once the holder is gone its jobs are claimable again.
    const next = await claimJobsPg(db, "w3", 7, 60_000);
    expect(next.map((j) => j.attempts)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(next.map((j) => j.id).sort((a, b) => a - b)).toEqual(
      (await rows<{ id: number }>(db, sql`SELECT id FROM jobs WHERE run_id = ${run.id} AND lease_owner = 'w3' ORDER BY id`)).map(
        (r) => r.id,
      ),
    );
  });

  it("gives an expired lease to another owner and refuses the old owner's store; renewed leases are kept", async () => {
    const [a, b] = await freshDb(1);
    const { item, run } = await seed(a, { jobs: 2 });
    const kept = await claimJobsPg(a, "keeper", 1, 300);
    expect(kept).toHaveLength(1);
    const first = await claimJobsPg(a, "old", 1, 1);
    expect(first).toHaveLength(1);
    expect(await renewLeasesPg(a, "keeper", [kept[0].id], 60_000)).toEqual([kept[0].id]);
    await sleep(400);
    // Only the expired lease is taken (the renewed one is still valid), with its attempt counted.
    const again = await claimJobsPg(b, "new", 7, 60_000);
    expect(again.map((j) => [j.id, j.attempts])).toEqual([[first[0].id, 2]]);
    expect(await claimJobsPg(b, "third", 7, 60_000)).toEqual([]);
    expect(await renewLeasesPg(a, "old", [first[0].id], 60_000)).toEqual([]);

    expect(await storeOutcomePg(a, "old", first[0], { outcome: answer(item.id, first[0]) })).toBe(false);
    expect(await storeOutcomePg(a, "old", first[0], { error: "late error" })).toBe(false);
    const [job] = await rows<{ status: string; lease_owner: string; error: string | null }>(
      a,
      sql`SELECT status, lease_owner, error FROM jobs WHERE id = ${first[0].id}`,
    );
    expect(job).toEqual({ status: "leased", lease_owner: "new", error: null });
    expect(await rows(a, sql`SELECT id FROM responses`)).toEqual([]);

    expect(await storeOutcomePg(b, "new", again[0], { outcome: answer(item.id, again[0]) })).toBe(true);
    expect((await runStatus(a, run.id)).status).toBe("running");
    expect(await storeOutcomePg(a, "keeper", kept[0], { outcome: answer(item.id, kept[0]) })).toBe(true);
    expect((await runStatus(a, run.id)).status).toBe("completed");
    expect((await rows<{ n: number }>(a, sql`SELECT count(*) AS n FROM responses WHERE run_id = ${run.id}`))[0].n).toBe(2);
  });

  it("stores a failed job with its reason; a run with some failed jobs ends completed-with-errors, one with all failed ends failed", async () => {
    const [db] = await freshDb();
    const { item, run, project, dataset, provider } = await seed(db, { jobs: 3 });
    const got = await claimJobsPg(db, "w", 3, 60_000);
    expect(got).toHaveLength(3);
    expect(await storeOutcomePg(db, "w", got[0], { outcome: answer(item.id, got[0]) })).toBe(true);
    expect(await storeOutcomePg(db, "w", got[1], { error: "HTTP 500 from the provider: upstream overloaded" })).toBe(true);
    expect((await runStatus(db, run.id)).status).toBe("running");
    expect(await storeOutcomePg(db, "w", got[2], { outcome: answer(item.id, got[2]) })).toBe(true);
    const failed = await rows<{ status: string; error: string; finished_at: number | null; lease_owner: string | null }>(
      db,
      sql`SELECT status, error, finished_at, lease_owner FROM jobs WHERE id = ${got[1].id}`,
    );
    expect(failed[0]).toMatchObject({ status: "failed", error: "HTTP 500 from the provider: upstream overloaded", lease_owner: null });
    expect(failed[0].finished_at).not.toBeNull();
    expect((await runStatus(db, run.id)).status).toBe("completed-with-errors");

    const allFail = await addRun(db, project.id, dataset.id, provider.id, 2);
    for (const j of await claimJobsPg(db, "w", 7, 60_000, { runId: allFail.id }))
      expect(await storeOutcomePg(db, "w", j, { error: "timeout" })).toBe(true);
    expect((await runStatus(db, allFail.id)).status).toBe("failed");
  });

  it("ends a run whose last jobs are stored at the same moment by workers on different connections", async () => {
    // Each store must see the other's committed job when it checks whether the run is drained; 40 runs of 2 jobs,
    // each pair stored at once from two pools, give that race many chances.
    const [a, b] = await freshDb(1);
    const { item, project, dataset, provider, run: first } = await seed(a, { jobs: 2 });
    // A webhook on run.finished: each run's end must be announced exactly once, by the one store that ended it.
    await a
      .insert(s.webhooks)
      .values({ projectId: project.id, url: "https://hooks.example/run", secret: "enc:v1:x", events: ["run.finished"] });
    const runIds = [first.id];
    for (let i = 1; i < 40; i++) runIds.push((await addRun(a, project.id, dataset.id, provider.id, 2)).id);
    for (const runId of runIds) {
      const [x] = await claimJobsPg(a, "wa", 1, 60_000, { runId });
      const [y] = await claimJobsPg(b, "wb", 1, 60_000, { runId });
      const stored = await Promise.all([
        storeOutcomePg(a, "wa", x, { outcome: answer(item.id, { ...x, key: `${runId}:${x.key}` }) }),
        storeOutcomePg(b, "wb", y, { error: "judge reply unparseable" }),
      ]);
      expect(stored).toEqual([true, true]);
    }
    const statuses = await rows<{ status: string; n: number }>(a, sql`SELECT status, count(*) AS n FROM runs GROUP BY status`);
    expect(statuses).toEqual([{ status: "completed-with-errors", n: 40 }]);
    const events = await rows<{ payload: string }>(a, sql`SELECT payload FROM webhook_deliveries WHERE event = 'run.finished'`);
    const announced = events.map((e) => (JSON.parse(e.payload) as { data: { id: number; status: string } }).data);
    expect(announced.map((d) => d.id).sort((x, y) => x - y)).toEqual([...runIds].sort((x, y) => x - y));
    expect(new Set(announced.map((d) => d.status))).toEqual(new Set(["completed-with-errors"]));
  });

  it("stores responses, verdicts and follow-up jobs with the done mark; an outcome that cannot be stored fails its job alone", async () => {
    const [db] = await freshDb();
    const { item, check, judge, run } = await seed(db, { jobs: 2 });
    const [gen, bad] = await claimJobsPg(db, "w", 2, 60_000);
    const verdicts = [
      {
        judgeId: judge.id,
        itemId: item.id,
        responseSourceKey: gen.key,
        checklistItemId: check.id,
        value: "Yes",
        score: 1,
        rawOutput: "Q1: Yes",
        parseStatus: "ok" as const,
      },
      {
        judgeId: judge.id,
        itemId: item.id,
        responseSourceKey: gen.key,
        checklistItemId: null,
        value: "7",
        score: 7,
        rawOutput: "7",
        parseStatus: "ok" as const,
      },
    ];
    const followUp = {
      key: "judge:0",
      payload: { step: "judge" as const, providerId: 1, request: { kind: "chat" as const, messages: [] }, state: { turn: 2 } },
    };
    expect(await storeOutcomePg(db, "w", gen, { outcome: answer(item.id, gen, { verdicts, next: [followUp] }) })).toBe(true);
    // A verdict for a response that does not exist: the job fails with the reason and none of its writes stay.
    const orphan = { ...verdicts[0], responseSourceKey: "no-such-response" };
    expect(
      await storeOutcomePg(db, "w", bad, {
        outcome: answer(item.id, bad, { verdicts: [orphan], next: [{ ...followUp, key: "judge:1" }] }),
      }),
    ).toBe(true);
    const jobsNow = await rows<{ key: string; status: string; error: string | null }>(
      db,
      sql`SELECT key, status, error FROM jobs WHERE run_id = ${run.id} ORDER BY id`,
    );
    expect(jobsNow.map((j) => [j.key, j.status])).toEqual([
      ["gen:0", "done"],
      ["gen:1", "failed"],
      ["judge:0", "queued"],
    ]);
    expect(jobsNow[1].error).toMatch(/^storing the outcome failed: .*unknown response no-such-response/);
    expect((await rows<{ source_key: string }>(db, sql`SELECT source_key FROM responses`)).map((r) => r.source_key)).toEqual(["gen:0"]);
    expect((await runStatus(db, run.id)).status).toBe("running");

    // The follow-up stores the same response and verdicts again (a replay): each is kept once.
    const [next] = await claimJobsPg(db, "w", 7, 60_000);
    expect(next.key).toBe("judge:0");
    expect(next.payload).toEqual(followUp.payload);
    expect(await storeOutcomePg(db, "w", next, { outcome: { ...answer(item.id, gen), verdicts, result: undefined } })).toBe(true);
    const v = await rows<{ checklist_item_id: number | null; value: string }>(
      db,
      sql`SELECT checklist_item_id, value FROM verdicts ORDER BY id`,
    );
    expect(v).toEqual([
      { checklist_item_id: check.id, value: "Yes" },
      { checklist_item_id: null, value: "7" },
    ]);
    expect((await rows<{ n: number }>(db, sql`SELECT count(*) AS n FROM responses`))[0].n).toBe(1);
    expect((await rows<{ result: unknown }>(db, sql`SELECT result FROM jobs WHERE key = 'judge:0'`))[0].result).toBeNull();
    expect((await runStatus(db, run.id)).status).toBe("completed-with-errors");
  });

  it("fails the job alone when the database refuses its outcome (a response for an item that does not exist)", async () => {
    const [db] = await freshDb();
    const { item, run } = await seed(db, { jobs: 1 });
    const [job] = await claimJobsPg(db, "w", 1, 60_000);
    const outcome = answer(item.id, job);
    outcome.responses.push({ ...outcome.responses[0], itemId: item.id + 1000, sourceKey: "elsewhere" });
    expect(await storeOutcomePg(db, "w", job, { outcome })).toBe(true);
    const [row] = await rows<{ status: string; error: string; result: unknown }>(
      db,
      sql`SELECT status, error, result FROM jobs WHERE id = ${job.id}`,
    );
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/^storing the outcome failed: .*violates foreign key constraint/);
    expect(row.error).not.toContain("answer for");
    expect(row.result).toBeNull();
    expect(await rows(db, sql`SELECT id FROM responses`)).toEqual([]);
    expect((await runStatus(db, run.id)).status).toBe("failed");
  });

  it("stores an outcome's text, numbers and follow-up payload exactly as given; a NUL character fails the job alone", async () => {
    // The outcome reaches the database as JSON text parsed inside concord_store_job: what a reply may contain
    // (LaTeX, replacement patterns, backslashes, quotes, non-Latin text, emoji, a float's last digit) must come back
    // unchanged, and what PostgreSQL cannot hold (NUL in text) must fail that job with the reason, not the worker.
    const [db] = await freshDb();
    const { item, check, judge, run } = await seed(db, { jobs: 2 });
    const [gen, nul] = await claimJobsPg(db, "w", 2, 60_000);
    const text = 'Display $$\\int_0^1 x\\,dx$$, $& $\' $` "quoted" \\n not a newline,\n a newline, Ω ∑ 你好 🙂';
    const score = 0.1 + 0.2; // 0.30000000000000004: the last digit must survive
    const payload = {
      step: "judge" as const,
      providerId: 1,
      request: { kind: "chat" as const, messages: [{ role: "user" as const, content: text }] },
      state: { turn: 2, p: score },
    };
    const outcome = answer(item.id, gen, {
      verdicts: [
        {
          judgeId: judge.id,
          itemId: item.id,
          responseSourceKey: gen.key,
          checklistItemId: check.id,
          value: text,
          score,
          rawOutput: text,
          parseStatus: "ok" as const,
        },
      ],
      next: [{ key: "judge:0", payload }],
      result: { text, score },
    });
    outcome.responses[0] = { ...outcome.responses[0], text, metadata: { note: text, n: score } };
    expect(await storeOutcomePg(db, "w", gen, { outcome })).toBe(true);
    const [resp] = await rows<{ text: string; metadata: unknown }>(db, sql`SELECT text, metadata FROM responses`);
    expect(resp).toEqual({ text, metadata: { note: text, n: score } });
    const [v] = await rows<{ value: string; score: number; raw_output: string }>(db, sql`SELECT value, score, raw_output FROM verdicts`);
    expect(v).toEqual({ value: text, score, raw_output: text });
    const [done] = await rows<{ result: unknown }>(db, sql`SELECT result FROM jobs WHERE id = ${gen.id}`);
    expect(done.result).toEqual({ text, score });
    const [next] = await claimJobsPg(db, "w", 7, 60_000);
    expect(next.payload).toEqual(payload);

    const bad = answer(item.id, nul);
    bad.responses[0].text = "before\u0000after";
    expect(await storeOutcomePg(db, "w", nul, { outcome: bad })).toBe(true);
    const [failed] = await rows<{ status: string; error: string }>(db, sql`SELECT status, error FROM jobs WHERE id = ${nul.id}`);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^storing the outcome failed: unsupported Unicode escape sequence/);
    expect(failed.error).not.toContain("before");
    expect((await rows<{ n: number }>(db, sql`SELECT count(*) AS n FROM responses`))[0].n).toBe(1);
    expect((await runStatus(db, run.id)).status).toBe("running");
  });

  it("stores nothing into a cancelled run: the job goes back to the queue, and a cancelled run's jobs are not claimed", async () => {
    const [db] = await freshDb();
    const { item, run } = await seed(db, { jobs: 2 });
    const [j1, j2] = await claimJobsPg(db, "w", 2, 60_000);
    expect(await storeOutcomePg(db, "w", j2, { stopped: true })).toBe(false);
    await db.execute(sql`UPDATE runs SET status = 'cancelled' WHERE id = ${run.id}`);
    expect(await storeOutcomePg(db, "w", j1, { outcome: answer(item.id, j1) })).toBe(false);
    expect(await rows(db, sql`SELECT status, attempts, lease_owner FROM jobs WHERE run_id = ${run.id} ORDER BY id`)).toEqual([
      { status: "queued", attempts: 0, lease_owner: null },
      { status: "queued", attempts: 0, lease_owner: null },
    ]);
    expect(await rows(db, sql`SELECT id FROM responses`)).toEqual([]);
    expect(await claimJobsPg(db, "w", 7, 60_000)).toEqual([]);
    expect((await runStatus(db, run.id)).status).toBe("cancelled");
  });

  it("completes a job's answered call with its store, stored, refused or stopped alike; a reply it cannot hold is dropped with the reason", async () => {
    const [db] = await freshDb();
    const { item, provider, run } = await seed(db, { jobs: 4, concurrency: 8 });
    const jobsNow = await claimJobsPg(db, "w", 4, 60_000);
    const admitFor = async (job: ClaimedJob) => {
      const a = await admitCallPg(db, {
        providerId: provider.id,
        concurrency: 8,
        requestsPerMinute: null,
        owner: "w",
        runId: run.id,
        jobId: job.id,
        requestJson: JSON.stringify({ n: job.key }),
      });
      return a.id!;
    };
    const ids: number[] = [];
    for (const j of jobsNow) ids.push(await admitFor(j));
    const answered = (i: number, reply: unknown = { choices: [{ message: { content: `reply ${i}` } }] }) => ({
      id: ids[i],
      o: { reply, status: 200, latencyMs: 50 + i, promptTokens: 10 + i, completionTokens: 20 + i, error: null },
    });
    // Stored: the job done and its call completed with the reply and tokens.
    expect(await storeOutcomePg(db, "w", jobsNow[0], { outcome: answer(item.id, jobsNow[0]) }, answered(0))).toBe(true);
    // Refused (the lease is another owner's): the job untouched, the call still completed.
    expect(await storeOutcomePg(db, "someone-else", jobsNow[1], { outcome: answer(item.id, jobsNow[1]) }, answered(1))).toBe(false);
    // A reply with a NUL character: the call completed without it, with the reason; the job stored.
    expect(await storeOutcomePg(db, "w", jobsNow[2], { outcome: answer(item.id, jobsNow[2]) }, answered(2, { text: "a\u0000b" }))).toBe(
      true,
    );
    // Stopped (the run cancelled): nothing of the job stored, the call completed.
    await db.execute(sql`UPDATE runs SET status = 'cancelled' WHERE id = ${run.id}`);
    expect(await storeOutcomePg(db, "w", jobsNow[3], { outcome: answer(item.id, jobsNow[3]) }, answered(3))).toBe(false);
    const calls = await rows<{
      state: string;
      reply: unknown;
      status: number;
      latency_ms: number;
      prompt_tokens: number;
      completion_tokens: number;
      error: string | null;
    }>(db, sql`SELECT state, reply, status, latency_ms, prompt_tokens, completion_tokens, error FROM provider_calls ORDER BY id`);
    expect(calls.map((c) => c.state)).toEqual(["done", "done", "done", "done"]);
    expect(calls[0]).toEqual({
      state: "done",
      reply: answered(0).o.reply,
      status: 200,
      latency_ms: 50,
      prompt_tokens: 10,
      completion_tokens: 20,
      error: null,
    });
    expect(calls[1].reply).toEqual(answered(1).o.reply);
    expect(calls[2].reply).toBeNull();
    expect(calls[2].error).toMatch(/^the reply could not be stored: unsupported Unicode escape sequence/);
    expect(calls[2].completion_tokens).toBe(22);
    expect(calls[3].reply).toEqual(answered(3).o.reply);
    expect(await rows(db, sql`SELECT status, lease_owner FROM jobs WHERE run_id = ${run.id} ORDER BY id`)).toEqual([
      { status: "done", lease_owner: null },
      { status: "leased", lease_owner: "w" },
      { status: "done", lease_owner: null },
      { status: "queued", lease_owner: null },
    ]);
  });

  it("never has more than the provider's concurrency in flight with 6 admitters on 3 pools, and reaches it", async () => {
    const pools = await freshDb(3);
    const { provider, run } = await seed(pools[0], { jobs: 0, concurrency: 4 });
    const TOTAL = 60;
    let admitted = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    let waits = 0;
    const admitter = async (db: PgDb, owner: string) => {
      while (admitted < TOTAL) {
        const a = await admitCallPg(db, {
          providerId: provider.id,
          concurrency: 4,
          requestsPerMinute: null,
          owner,
          runId: run.id,
          jobId: null,
          requestJson: JSON.stringify({ n: admitted }),
        });
        if (a.id === undefined) {
          waits++;
          await sleep(Math.min(a.waitMs, 5));
          continue;
        }
        admitted++;
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        await sleep(15 + Math.random() * 15);
        inFlight--;
        await endCallPg(db, a.id, { reply: { ok: true }, status: 200, latencyMs: 20, promptTokens: 11, completionTokens: 5, error: null });
      }
    };
    // An observer on a connection of its own samples the rows in 'sent' while the admitters run.
    let sampling = true;
    let mostSent = 0;
    const observer = (async () => {
      while (sampling) {
        const [r] = await rows<{ n: number }>(
          pools[3],
          sql`SELECT count(*) AS n FROM provider_calls WHERE provider_id = ${provider.id} AND state = 'sent'`,
        );
        mostSent = Math.max(mostSent, r.n);
        await sleep(1);
      }
    })();
    await Promise.all([0, 1, 2].flatMap((p) => [admitter(pools[p], `a${p}x`), admitter(pools[p], `a${p}y`)]));
    sampling = false;
    await observer;
    console.log(
      `pg-queue: concurrency 4, 6 admitters: ${admitted} admitted, at most ${mostInFlight} in flight (observer: ${mostSent} 'sent' rows), ${waits} waits`,
    );
    expect(mostInFlight).toBeLessThanOrEqual(4);
    expect(mostSent).toBeLessThanOrEqual(4);
    expect(mostInFlight).toBe(4);
    const calls = await rows<{ state: string; n: number; tokens: number }>(
      pools[0],
      sql`SELECT state, count(*) AS n, min(prompt_tokens) AS tokens FROM provider_calls GROUP BY state`,
    );
    expect(calls).toEqual([{ state: "done", n: admitted, tokens: 11 }]);

    // A call for a run that stopped is not admitted.
    await pools[0].execute(sql`UPDATE runs SET status = 'paused' WHERE id = ${run.id}`);
    await expect(
      admitCallPg(pools[0], {
        providerId: provider.id,
        concurrency: 4,
        requestsPerMinute: null,
        owner: "a",
        runId: run.id,
        jobId: null,
        requestJson: JSON.stringify({}),
      }),
    ).rejects.toBeInstanceOf(RunStopped);
  });

  it("never admits more than the requests per minute within any window across 6 admitters", async () => {
    const pools = await freshDb(2);
    const { provider } = await seed(pools[0], { jobs: 0, concurrency: 100, requestsPerMinute: 30 });
    // The code's window is 1,200 ms here; the test checks 1,000 ms of its own clock, the 200 ms being the margin
    // the real window has over 60 s for the time between admission and arrival.
    const WINDOW = 1_000;
    const sent: number[] = [];
    const until = Date.now() + 2_600;
    const admitter = async (db: PgDb, owner: string) => {
      while (Date.now() < until) {
        const a = await admitCallPg(db, {
          providerId: provider.id,
          concurrency: 100,
          requestsPerMinute: 30,
          owner,
          runId: null,
          jobId: null,
          requestJson: JSON.stringify({}),
          windowMs: WINDOW + 200,
        });
        if (a.id === undefined) {
          await sleep(Math.min(a.waitMs, until - Date.now() + 1));
          continue;
        }
        sent.push(Date.now());
        await endCallPg(db, a.id, { reply: null, status: 200, latencyMs: 1, promptTokens: null, completionTokens: null, error: null });
      }
    };
    await Promise.all([0, 1, 2].flatMap((p) => [admitter(pools[p], `r${p}x`), admitter(pools[p], `r${p}y`)]));
    sent.sort((x, y) => x - y);
    // Any 31 admissions in a row span at least the window.
    let tightest = Infinity;
    for (let i = 0; i + 30 < sent.length; i++) tightest = Math.min(tightest, sent[i + 30] - sent[i]);
    console.log(`pg-queue: 30 per ${WINDOW} ms, 6 admitters, 2.6 s: ${sent.length} admitted; tightest 31 admissions span ${tightest} ms`);
    expect(tightest).toBeGreaterThanOrEqual(WINDOW);
    // The limit was reached in each window (0 s, 1.2 s, 2.4 s): the test is not passing by admitting little.
    expect(sent.length).toBeGreaterThanOrEqual(60);
    const starts = (await rows<{ started_at: number }>(pools[0], sql`SELECT started_at FROM provider_calls ORDER BY started_at`)).map(
      (r) => r.started_at,
    );
    expect(starts).toHaveLength(sent.length);
    for (let i = 0; i + 30 < starts.length; i++) expect(starts[i + 30] - starts[i]).toBeGreaterThanOrEqual(WINDOW + 200);
  });

  it("frees a dead worker's provider slots and hands its jobs on at once; a live worker keeps both", async () => {
    const [db] = await freshDb();
    const { provider, run } = await seed(db, { jobs: 3, concurrency: 2 });
    const admit = (owner: string, jobId: number) =>
      admitCallPg(db, {
        providerId: provider.id,
        concurrency: 2,
        requestsPerMinute: null,
        owner,
        runId: run.id,
        jobId,
        requestJson: JSON.stringify({ owner }),
      });
    // "silent" stops renewing a 1 s heartbeat; "crashed" ran on this host as a process that has exited; "alive" is this one.
    const gone = spawnSync(process.execPath, ["-e", ""]).pid!;
    await heartbeatPg(db, "silent", 1_000);
    const silentSince = Date.now();
    await heartbeatPg(db, "crashed", 60_000, { pid: gone });
    await heartbeatPg(db, "alive", 60_000);
    const [js, jc, ja] = [
      ...(await claimJobsPg(db, "silent", 1, 60_000)),
      ...(await claimJobsPg(db, "crashed", 1, 60_000)),
      ...(await claimJobsPg(db, "alive", 1, 60_000)),
    ];
    expect((await admit("silent", js.id)).id).toBeDefined();
    expect((await admit("crashed", jc.id)).id).toBeDefined();
    // Both slots are held: the live worker waits.
    expect((await admit("alive", ja.id)).waitMs).toBeGreaterThan(0);
    expect(await sweepDeadWorkersPg(db, "alive")).toEqual(["crashed"]);
    await sleep(Math.max(0, silentSince + 1_100 - Date.now()));
    expect(await sweepDeadWorkersPg(db, "alive")).toEqual(["silent"]);
    expect(await sweepDeadWorkersPg(db, "alive")).toEqual([]);
    const calls = await rows<{ owner: string; state: string; error: string }>(
      db,
      sql`SELECT owner, state, error FROM provider_calls ORDER BY id`,
    );
    expect(calls).toEqual([
      { owner: "silent", state: "interrupted", error: "the worker stopped during the call" },
      { owner: "crashed", state: "interrupted", error: "the worker stopped during the call" },
    ]);
    expect((await admit("alive", ja.id)).id).toBeDefined();
    // The dead workers' jobs are claimable now (their leases had 60 s left), the live worker's is not.
    const taken = await claimJobsPg(db, "alive", 7, 60_000);
    expect(taken.map((j) => [j.id, j.attempts]).sort((x, y) => x[0] - y[0])).toEqual(
      [
        [js.id, 2],
        [jc.id, 2],
      ].sort((x, y) => x[0] - y[0]),
    );
    expect((await rows<{ id: string }>(db, sql`SELECT id FROM workers`)).map((w) => w.id)).toEqual(["alive"]);
  });

  it("a worker on PostgreSQL without CONCORD_ENCRYPTION_KEY fails a keyed provider's jobs with a message naming the variable, never the key", async () => {
    const [db] = await freshDb();
    const { provider, run } = await seed(db, { jobs: 2 });
    const sealed = "v1:c2VhbGVkLWtleS1ieXRlcw:bm9uY2U:dGFn"; // what an encrypted key looks like in the column; never decrypted here
    await db.execute(sql`UPDATE providers SET api_key = ${sealed} WHERE id = ${provider.id}`);
    const saved = process.env.CONCORD_ENCRYPTION_KEY;
    delete process.env.CONCORD_ENCRYPTION_KEY;
    try {
      const worker = new PgWorker(db, { untilIdle: true, runId: run.id, pollMs: 20, leaseMs: 5_000 }).start();
      await worker.done;
    } finally {
      if (saved !== undefined) process.env.CONCORD_ENCRYPTION_KEY = saved;
    }
    const got = await rows<{ status: string; error: string }>(db, sql`SELECT status, error FROM jobs WHERE run_id = ${run.id} ORDER BY id`);
    expect(got).toHaveLength(2);
    for (const j of got) {
      expect(j.status).toBe("failed");
      expect(j.error).toMatch(/provider target has an API key: set CONCORD_ENCRYPTION_KEY/);
      expect(j.error).not.toContain(sealed);
    }
    expect((await runStatus(db, run.id)).status).toBe("failed");
    // The provider was never called: no call was logged.
    expect(await rows(db, sql`SELECT id FROM provider_calls`)).toEqual([]);
  });
});
