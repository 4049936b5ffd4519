/**
 * npm run bench:runs — 1,000 RefineBench items × 5 turns × (generation + judge)
 * against the local fake OpenAI-compatible server with 50 ms latency and
 * concurrency 32, through the real runner (SQLite, leases, call log).
 * The fake server runs in its own process. Reports wall time against the
 * ideal, the measured HTTP round trip, event loop delay (the monitor samples
 * every 5 ms, so ~5 ms is "no delay"), peak heap/RSS in each quarter of the
 * run, CPU time of the runner and of the server, and the machine's load
 * average (other processes share the cores). Then the same run again with 3
 * worker processes (scripts/worker.ts) sharing each provider's limit of C
 * requests in flight through the database.
 *
 * The ideal is derived from the run's job graph (built by the protocol from
 * the fake server's replies, see jobGraph), the server's latency and each
 * provider's concurrency and requests per minute, and the workers' slots: the
 * model and the judge are two providers with C slots each, so one worker
 * (C jobs in flight) is bound by its own slots, three workers by the
 * providers'. The script prints each bound with its numbers.
 *   options: --items N --turns T --latency MS --concurrency C --compact-log --same-process
 *            --workers N (only the N-process run; 1 = only the in-process run)
 *            --gc (with NODE_OPTIONS=--expose-gc: heap after a full collection, once a second)
 *            --worker-cpu-prof DIR (each worker process writes a V8 CPU profile into DIR)
 *            --database postgres (the N-process run on PostgreSQL: the run prepared in SQLite is copied
 *              into a throw-away cluster (tests/support/pg.ts: Debian's postgresql, fsync off), the
 *              workers claim with FOR UPDATE SKIP LOCKED, and the figures are read from the database
 *              copied back into SQLite by the same copy; needs --workers N > 1)
 */
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../db/client";
import { controlRun, createRun, Worker } from "../app/runs/runner.server";
import { getProtocol } from "../app/runs/protocols";
import { encryptionKey } from "../app/runs/providers/secrets.server";
import type { JobPayload } from "../app/runs/protocols/types";
import { spawn } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { copyDatabase } from "../db/copy";
import { openPgDatabase } from "../db/client-pg";
import { countOf, dalOf, first, pgDal } from "../app/dal.server";
import { startFakeLlm } from "../tests/support/fake-llm";
import { postgresCopy } from "../tests/support/pg";
import { procCpuS } from "../tests/support/proc-cpu";
import { makeRunsFixture, refineScript } from "../tests/unit/runs/fixtures";

// The fake endpoint listens on 127.0.0.1: allowed for this process and the workers it starts (they inherit it).
process.env.CONCORD_EGRESS_ALLOW ??= "127.0.0.1,::1";

const argv = process.argv.slice(2);
const num = (name: string, d: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : d;
};
const ITEMS = num("items", 1000);
const TURNS = num("turns", 5);
const LATENCY = num("latency", 50);
const CONCURRENCY = num("concurrency", 32);
const CALL_LOG = argv.includes("--compact-log") ? "compact" : "full";
const DATABASE = argv.includes("--database") ? argv[argv.indexOf("--database") + 1] : "sqlite";
if (DATABASE !== "sqlite" && DATABASE !== "postgres") throw new Error(`--database: sqlite or postgres, not ${DATABASE}`);
/** --worker-cpu-prof DIR: each worker process writes a V8 CPU profile into DIR (diagnostics). */
const WORKER_PROF = argv.includes("--worker-cpu-prof") ? ["--cpu-prof", "--cpu-prof-dir", argv[argv.indexOf("--worker-cpu-prof") + 1]] : [];

// ─── The ideal: what the run's job graph and the limits allow ─────────────────

/** One call of the run's job graph: its provider, and the calls that must finish before it and that follow it. */
type GraphCall = { providerId: number; children: number[]; depth: number; height: number };
type Limits = { name: string; concurrency: number; requestsPerMinute: number | null };

/**
 * The run's job graph, built as the worker builds it but without HTTP: each
 * job's request is answered by the fake server's script, and the protocol's
 * onReply gives the jobs that follow (keys already seen are dropped, as the
 * jobs table's unique key drops them). depth = calls on the longest chain
 * ending at the call (itself included), height = on the longest chain starting at it.
 */
async function jobGraph(db: Db, runId: number, reply: (body: Record<string, unknown>, n: number) => string): Promise<GraphCall[]> {
  const d = dalOf(db);
  const row = first(await d.rows<{ protocol: string; config: string }>(sql`SELECT protocol, config FROM runs WHERE id = ${runId}`))!;
  const protocol = getProtocol(row.protocol);
  const settings = protocol.configSchema.parse((JSON.parse(row.config) as { settings?: unknown }).settings ?? {});
  const initial = await d.rows<{ key: string; payload: string }>(sql`SELECT key, payload FROM jobs WHERE run_id = ${runId} ORDER BY id`);
  const calls: GraphCall[] = [];
  const seen = new Set<string>();
  const queue: { payload: JobPayload; parent: number | null }[] = [];
  for (const j of initial) {
    seen.add(j.key);
    queue.push({ payload: JSON.parse(j.payload) as JobPayload, parent: null });
  }
  for (let q = 0; q < queue.length; q++) {
    const { payload, parent } = queue[q];
    const id = calls.length;
    calls.push({ providerId: payload.providerId, children: [], depth: parent === null ? 1 : calls[parent].depth + 1, height: 1 });
    if (parent !== null) calls[parent].children.push(id);
    const r = payload.request as { messages?: unknown; prompt?: unknown };
    const outcome = protocol.onReply(payload, reply({ messages: r.messages, prompt: r.prompt }, id + 1), settings);
    for (const n of outcome.next)
      if (!seen.has(n.key)) {
        seen.add(n.key);
        queue.push({ payload: n.payload, parent: id });
      }
  }
  // Children come after their parent in `calls`, so one backward pass gives the heights.
  for (let i = calls.length - 1; i >= 0; i--)
    for (const c of calls[i].children) calls[i].height = Math.max(calls[i].height, calls[c].height + 1);
  return calls;
}

/**
 * The least wall time any scheduler could take on this graph, each call
 * taking `latency`, with at most `slots` calls in flight in the workers and
 * each provider's concurrency and requests per minute. It is the largest of
 * these lower bounds:
 *   - per provider p with n_p calls and concurrency c_p:
 *       head_p + ⌈n_p / c_p⌉ × L + tail_p
 *     (its calls, of length L and at most c_p at once, take ⌈n_p / c_p⌉ rounds;
 *     none can start before the calls it depends on, head_p = the fewest calls
 *     before any of p's calls × L, and the calls that follow each of p's calls
 *     take at least tail_p = the fewest calls after any of p's calls × L);
 *   - per provider with r_p requests per minute: head_p + (⌈n_p / r_p⌉ − 1) × 60 s + L + tail_p;
 *   - the workers' slots: ⌈N / slots⌉ × L for N calls in all;
 *   - the longest chain of calls × L.
 * A greedy schedule of the same graph (free slots go to the calls with the
 * longest chain after them) is simulated too: it shows how close to the bound
 * a schedule can actually get.
 */
function idealTime(calls: GraphCall[], providers: Map<number, Limits>, latency: number, slots: number) {
  const L = latency;
  const lines: string[] = [];
  const bounds: number[] = [];
  const ids = [...new Set(calls.map((c) => c.providerId))].sort((a, b) => a - b);
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  for (const p of ids) {
    const lim = providers.get(p)!;
    const mine = calls.filter((c) => c.providerId === p);
    const n = mine.length;
    const head = Math.min(...mine.map((c) => c.depth - 1)) * L;
    const tail = Math.min(...mine.map((c) => c.height - 1)) * L;
    const rounds = Math.ceil(n / lim.concurrency);
    const b = head + rounds * L + tail;
    bounds.push(b);
    lines.push(
      `provider "${lim.name}": ${n} calls at concurrency ${lim.concurrency}: ${head} ms before its first call + ⌈${n}/${lim.concurrency}⌉ = ${rounds} × ${L} ms + ${tail} ms after its last = ${s(b)}`,
    );
    if (lim.requestsPerMinute) {
      const rb = head + (Math.ceil(n / lim.requestsPerMinute) - 1) * 60_000 + L + tail;
      bounds.push(rb);
      lines.push(
        `provider "${lim.name}" at ${lim.requestsPerMinute}/min: ${head} ms + (⌈${n}/${lim.requestsPerMinute}⌉ − 1) × 60 s + ${L} ms + ${tail} ms = ${s(rb)}`,
      );
    }
  }
  const rounds = Math.ceil(calls.length / slots);
  bounds.push(rounds * L);
  lines.push(
    `worker slots: ${calls.length} calls, ${slots} in flight at most: ⌈${calls.length}/${slots}⌉ = ${rounds} × ${L} ms = ${s(rounds * L)}`,
  );
  const chain = Math.max(...calls.map((c) => c.depth));
  bounds.push(chain * L);
  lines.push(`longest chain: ${chain} calls × ${L} ms = ${s(chain * L)}`);
  const ideal = Math.max(...bounds);
  return { ideal, lines, greedy: greedySchedule(calls, providers, L, slots) };
}

/** Wall time of a greedy list schedule of the graph under the same limits (every call takes `L`). */
function greedySchedule(calls: GraphCall[], providers: Map<number, Limits>, L: number, slots: number): number {
  const ready = new Map<number, number[][]>(); // provider → calls by height
  const push = (i: number) => {
    const c = calls[i];
    let byHeight = ready.get(c.providerId);
    if (!byHeight) ready.set(c.providerId, (byHeight = []));
    (byHeight[c.height] ??= []).push(i);
  };
  const inFlight = new Map<number, number>();
  const starts = new Map<number, number[]>(); // per provider, start times in the last minute
  const running: { end: number; i: number }[] = []; // ends in start order (every call takes L)
  let head = 0;
  calls.forEach((c, i) => c.depth === 1 && push(i));
  let t = 0;
  let left = calls.length;
  while (left > 0) {
    let nextRpm = Infinity;
    for (;;) {
      if (running.length - head >= slots) break;
      let best = -1;
      let bestP = -1;
      for (const [p, byHeight] of ready) {
        const lim = providers.get(p)!;
        if ((inFlight.get(p) ?? 0) >= lim.concurrency) continue;
        let h = byHeight.length - 1;
        while (h > 0 && !byHeight[h]?.length) h--;
        if (h <= 0) continue;
        if (lim.requestsPerMinute) {
          const st = starts.get(p) ?? [];
          while (st.length && st[0] <= t - 60_000) st.shift();
          if (st.length >= lim.requestsPerMinute) {
            nextRpm = Math.min(nextRpm, st[0] + 60_000);
            continue;
          }
        }
        if (h > best) {
          best = h;
          bestP = p;
        }
      }
      if (bestP < 0) break;
      const i = ready.get(bestP)![best].pop()!;
      inFlight.set(bestP, (inFlight.get(bestP) ?? 0) + 1);
      if (providers.get(bestP)!.requestsPerMinute) {
        const st = starts.get(bestP) ?? [];
        st.push(t);
        starts.set(bestP, st);
      }
      running.push({ end: t + L, i });
    }
    t = Math.min(head < running.length ? running[head].end : Infinity, nextRpm);
    while (head < running.length && running[head].end <= t) {
      const { i } = running[head++];
      inFlight.set(calls[i].providerId, inFlight.get(calls[i].providerId)! - 1);
      left--;
      for (const c of calls[i].children) push(c);
    }
  }
  return t;
}

/** The fake server in its own process; on SIGTERM it prints the CPU time it used, then exits. */
/** What the fake server measured: its CPU time, and how long it held each request (arrival to the reply's end). */
type ServerStats = { cpuMs: number | null; heldMs: number | null };
type FakeServer = { baseUrl: string; mark?: () => void; close: () => Promise<ServerStats> };

async function serverProcess(): Promise<FakeServer> {
  const code = `import { startFakeLlm } from "./tests/support/fake-llm.ts"; import { refineScript } from "./tests/unit/runs/fixtures.ts"; const f = await startFakeLlm(refineScript(), { latencyMs: ${LATENCY}, log: false }); let cpu0 = process.cpuUsage(); process.stdin.on("data", () => { cpu0 = process.cpuUsage(); }); let s0 = { ...f.served }; process.stdin.on("data", () => { s0 = { ...f.served }; }); process.on("SIGTERM", () => { const c = process.cpuUsage(cpu0); const n = f.served.n - s0.n; process.stdout.write("cpu " + (c.user + c.system) / 1000 + " " + (n ? (f.served.ms - s0.ms) / n : 0) + "\\n", () => process.exit(0)); }); console.log(f.baseUrl);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: path.resolve(import.meta.dirname, ".."),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const baseUrl = await new Promise<string>((ok) => child.stdout!.once("data", (d) => ok(String(d).trim())));
  return {
    baseUrl,
    /** Marks the start of the measured phase (resets the server's CPU counter). */
    mark: () => void child.stdin!.write("mark\n"),
    close: async () => {
      const line = new Promise<string>((ok) => child.stdout!.on("data", (d) => String(d).startsWith("cpu ") && ok(String(d))));
      child.kill("SIGTERM");
      const [cpu, held] = (await Promise.race([line, new Promise<string>((ok) => setTimeout(() => ok(""), 2000))]))
        .slice(4)
        .split(" ")
        .map(Number);
      return { cpuMs: Number.isFinite(cpu) && cpu > 0 ? cpu : null, heldMs: Number.isFinite(held) && held > 0 ? held : null };
    },
  };
}

const replyOf = refineScript();

/** The run's job graph and limits; `at(latency)` gives the ideal for calls of that latency. */
async function runIdeal(db: Db, runId: number, slots: number) {
  const calls = await jobGraph(db, runId, (body, n) => replyOf({ body, n }));
  const rows = await dalOf(db).rows<{ id: number; name: string; concurrency: number; rpm: number | null }>(
    sql`SELECT id, name, concurrency, requests_per_minute AS rpm FROM providers`,
  );
  const providers = new Map(rows.map((r) => [r.id, { name: r.name, concurrency: r.concurrency, requestsPerMinute: r.rpm }]));
  return { calls: calls.length, at: (latency: number) => idealTime(calls, providers, latency, slots) };
}

type Measured = { wall: number; done: number; calls: number; meanLatency: number; busy: { name: string; pct: number }[] };

/** Round trip and how busy each provider's slots were, from the call log. */
async function measured(db: Db, wall: number, runId: number): Promise<Omit<Measured, "wall" | "calls">> {
  const d = dalOf(db);
  const done = await countOf(d, sql`SELECT COUNT(*) AS n FROM jobs WHERE run_id=${runId} AND status='done'`);
  const lat = first(await d.rows<{ lat: number }>(sql`SELECT AVG(latency_ms) AS lat FROM provider_calls`))!.lat;
  const busy = (
    await d.rows<{ name: string; pct: number }>(
      sql`SELECT p.name AS name, 100.0 * SUM(c.latency_ms) / (${wall} * p.concurrency) AS pct FROM provider_calls c JOIN providers p ON p.id = c.provider_id GROUP BY p.id ORDER BY p.id`,
    )
  ).map((b) => ({ name: b.name, pct: b.pct }));
  return { done, meanLatency: lat, busy };
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** Prints the ideal with its bounds, and the ratio, for one run. */
function report(
  label: string,
  r: Measured,
  ideal: Awaited<ReturnType<typeof runIdeal>>,
  load0: string,
  load1: string,
  serverHeldMs: number | null,
): number {
  const at = ideal.at(LATENCY);
  const atRtt = ideal.at(r.meanLatency);
  const ratio = r.wall / at.ideal;
  console.log(`  ${label}:`);
  console.log(`    jobs done:     ${r.done} / ${r.calls}`);
  console.log(`    wall time:     ${(r.wall / 1000).toFixed(2)} s (load average ${load0} at start, ${load1} at end)`);
  console.log(
    `    ideal:         ${(at.ideal / 1000).toFixed(2)} s, the largest of these lower bounds for the run's job graph, every call taking the server's ${LATENCY} ms:`,
  );
  for (const l of at.lines) console.log(`                     ${l}`);
  console.log(`                   (a greedy schedule of the graph under the same limits takes ${(at.greedy / 1000).toFixed(2)} s)`);
  console.log(
    `    ratio:         ${ratio.toFixed(3)}× (target ≤ 1.1×) ${ratio <= 1.1 ? "OK" : "OVER"}; against the measured round trip of ${r.meanLatency.toFixed(1)} ms (ideal ${(atRtt.ideal / 1000).toFixed(2)} s): ${(r.wall / atRtt.ideal).toFixed(3)}×`,
  );
  if (serverHeldMs !== null)
    console.log(
      `    round trip:    ${r.meanLatency.toFixed(1)} ms = ${serverHeldMs.toFixed(1)} ms in the fake server (from a request's arrival to its reply's end, the ${LATENCY} ms sleep included) + ${(r.meanLatency - serverHeldMs).toFixed(1)} ms outside it (the client's send and reply paths: request building, the sockets, and each process's event loop busy with other work)`,
    );
  console.log(
    `    slots busy:    ${r.busy.map((b) => `provider "${b.name}" ${b.pct.toFixed(0)}%`).join(", ")} of the wall time (a call holds its slot for its round trip)`,
  );
  return ratio;
}

/**
 * N worker processes on a fresh run: they start on a paused run (so process
 * start-up is not timed), the run is resumed, and the clock stops when it is
 * completed.
 */
async function multiProcess(
  n: number,
  baseUrl: string,
): Promise<{
  r: Measured;
  ideal: Awaited<ReturnType<typeof runIdeal>>;
  owners: number;
  load0: string;
  load1: string;
  workerCpuS: number | null;
  /** The workers' CPU between resume and completion (from /proc), start-up left out; null off Linux. */
  runCpuS: number | null;
  /** On PostgreSQL: the database server's CPU (every process of the cluster) between resume and completion. */
  pgCpuS: number | null;
}> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-runs-"));
  const file = path.join(dir, "bench.db");
  const db = openDatabase(file);
  const fx = makeRunsFixture(db, {
    baseUrl,
    items: ITEMS,
    checklist: 5,
    concurrency: CONCURRENCY,
    providerSettings: { timeoutMs: 30_000 },
  });
  const run = await createRun(db, fx.project.id, {
    name: "bench",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: TURNS },
  });
  await controlRun(db, run.id, "pause");
  const ideal = await runIdeal(db, run.id, n * CONCURRENCY);
  // On PostgreSQL: the prepared deployment copied into a throw-away cluster, the run resumed and watched there.
  const onPg = DATABASE === "postgres" ? await postgresCopy(file, "bench_runs") : null;
  const root = path.resolve(import.meta.dirname, "..");
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, [...WORKER_PROF, "scripts/cli.mjs", "worker", "--run", String(run.id), "--call-log", CALL_LOG], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: onPg?.url ?? file,
        WORKER_CONCURRENCY: String(CONCURRENCY),
        WORKER_POLL_MS: "20",
        // On PostgreSQL the providers' API keys are decrypted with the key of the SQLite deployment they came from.
        ...(onPg ? { CONCORD_ENCRYPTION_KEY: encryptionKey(file).toString("base64") } : {}),
      },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  await Promise.all(children.map((c) => new Promise<void>((ok) => c.stdout!.on("data", (d) => String(d).includes("started") && ok()))));
  // On SQLite one cheap read per poll: the layer prepares the statement once and runs it on its read-only connection.
  const sqliteDal = dalOf(db);
  const sqliteStatus = sql`SELECT status FROM runs WHERE id = ${run.id}`;
  const status = async () =>
    onPg
      ? String((await onPg.client.query(`SELECT status FROM runs WHERE id = $1`, [run.id])).rows[0]?.status)
      : String(first(await sqliteDal.rows<{ status: string }>(sqliteStatus))?.status);
  // On PostgreSQL a pool of one connection for the resume (opened before the clock starts).
  const pgPool = onPg ? await openPgDatabase(onPg.url, { max: 1 }) : null;
  const pgControl = pgPool ? pgDal(pgPool) : null;
  const load0 = load();
  const cpuAtStart = children.map((c) => procCpuS(c.pid));
  const pgCpuAtStart = onPg?.cpuS() ?? null;
  const t0 = performance.now();
  // Resumed as the runs page and `npm run runs resume` do: controlRun, through the data-access layer of either dialect.
  await controlRun(pgControl ?? db, run.id, "resume");
  let final = "";
  while (!["completed", "completed-with-errors", "failed"].includes((final = await status())))
    await new Promise((ok) => setTimeout(ok, 10));
  const wall = performance.now() - t0;
  if (final !== "completed" && onPg)
    console.error(
      JSON.stringify((await onPg.client.query(`SELECT status, COUNT(*)::int AS n, MIN(error) AS error FROM jobs GROUP BY status`)).rows),
    );
  const load1 = load();
  const cpuAtEnd = children.map((c) => procCpuS(c.pid));
  const pgCpuAtEnd = onPg?.cpuS() ?? null;
  const runCpu =
    cpuAtStart.every((x) => x !== null) && cpuAtEnd.every((x) => x !== null)
      ? cpuAtEnd.reduce((a, x, i) => a + x! - cpuAtStart[i]!, 0)
      : null;
  // Each worker prints its CPU time as it stops ("… s of CPU."): start-up included, a few tenths of a second each.
  const cpus: number[] = [];
  for (const c of children)
    c.stdout!.on("data", (d) => {
      const m = /([\d.]+) s of CPU/.exec(String(d));
      if (m) cpus.push(Number(m[1]));
    });
  await Promise.all(children.map((c) => new Promise<void>((ok) => (c.once("exit", () => ok()), c.kill("SIGTERM")))));
  await pgPool?.$client.end();
  // The figures are read from SQLite: on PostgreSQL, from the run copied back by the same copy.
  let figures = db;
  if (onPg) {
    const back = path.join(dir, "back.db");
    await copyDatabase({ kind: "postgres", url: onPg.url }, { kind: "sqlite", file: back });
    await onPg.stop();
    figures = openDatabase(back);
  }
  const owners = await countOf(dalOf(figures), sql`SELECT COUNT(DISTINCT owner) AS n FROM provider_calls`);
  const r: Measured = { wall, calls: ideal.calls, ...(await measured(figures, wall, run.id)) };
  if (figures !== db) figures.$client.close();
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    r,
    ideal,
    owners,
    load0,
    load1,
    workerCpuS: cpus.length === n ? cpus.reduce((a, b) => a + b, 0) : null,
    runCpuS: runCpu,
    pgCpuS: pgCpuAtStart !== null && pgCpuAtEnd !== null ? pgCpuAtEnd - pgCpuAtStart : null,
  };
}

/** The fake server in this process (--same-process): no CPU figure of its own. */
async function inProcessServer(): Promise<FakeServer> {
  const f = await startFakeLlm(refineScript(), { latencyMs: LATENCY, log: false });
  let s0 = { ...f.served };
  return {
    baseUrl: f.baseUrl,
    mark: () => void (s0 = { ...f.served }),
    close: async () => {
      const n = f.served.n - s0.n;
      await f.close();
      return { cpuMs: null, heldMs: n ? (f.served.ms - s0.ms) / n : null };
    },
  };
}

async function nProcesses(n: number): Promise<{ ratio: number; ok: boolean }> {
  const fake = argv.includes("--same-process") ? await inProcessServer() : await serverProcess();
  fake.mark?.();
  const m = await multiProcess(n, fake.baseUrl);
  const server = await fake.close();
  const ratio = report(
    `${n} worker processes on ${DATABASE === "postgres" ? "PostgreSQL" : "SQLite"} (scripts/worker.ts, ${CONCURRENCY} jobs each, sharing each provider's ${CONCURRENCY} slots through the database; calls made by ${m.owners} processes)`,
    m.r,
    m.ideal,
    m.load0,
    m.load1,
    server.heldMs,
  );
  console.log(
    `    CPU:           ${m.workerCpuS !== null ? `the ${n} workers ${m.workerCpuS.toFixed(2)} s (start-up included; ${((1000 * m.workerCpuS) / m.r.calls).toFixed(3)} ms per call)` : "workers: not reported"}${server.cpuMs ? `; fake server ${(server.cpuMs / 1000).toFixed(2)} s` : ""}; wall ${(m.r.wall / 1000).toFixed(2)} s on ${os.cpus().length} cores`,
  );
  if (m.runCpuS !== null && server.cpuMs) {
    // The machine's own bound: the CPU the run took (workers and fake server), spread over every core with none idle.
    const cores = os.cpus().length;
    const pg = m.pgCpuS ?? 0;
    const cpuBound = (m.runCpuS + server.cpuMs / 1000 + pg) / cores;
    const idealS = m.ideal.at(LATENCY).ideal / 1000;
    const pgText = m.pgCpuS === null ? "" : `, PostgreSQL ${pg.toFixed(2)} s (${((1000 * pg) / m.r.calls).toFixed(3)} ms per call)`;
    console.log(
      `    CPU bound:     during the run the workers used ${m.runCpuS.toFixed(2)} s (${((1000 * m.runCpuS) / m.r.calls).toFixed(3)} ms per call)${pgText} and the fake server ${(server.cpuMs / 1000).toFixed(2)} s: / ${cores} cores = ${cpuBound.toFixed(2)} s with every core busy all the time, ${(cpuBound / idealS).toFixed(2)}× the ideal, the least this machine could take with the endpoint on it`,
    );
  }
  return { ratio, ok: m.r.done === m.r.calls };
}

async function main() {
  const workersArg = argv.includes("--workers") ? num("workers", 1) : null;
  const calls = ITEMS * TURNS * 2;
  console.log(
    `bench:runs — ${ITEMS} items × ${TURNS} turns × (generation + judge) = ${calls} calls, ${LATENCY} ms latency, each provider's concurrency ${CONCURRENCY}`,
  );
  if (DATABASE === "postgres" && !(workersArg !== null && workersArg > 1)) throw new Error("--database postgres: with --workers N (N > 1)");
  if (workersArg !== null && workersArg > 1) {
    const r = await nProcesses(workersArg);
    process.exit(r.ok ? 0 : 1);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-runs-"));
  const db = openDatabase(path.join(dir, "bench.db"));
  // The fake server runs in its own process (the other core), so the bench measures the runner, not the server.
  const fake = argv.includes("--same-process") ? await inProcessServer() : await serverProcess();
  const fx = makeRunsFixture(db, {
    baseUrl: fake.baseUrl,
    items: ITEMS,
    checklist: 5,
    concurrency: CONCURRENCY,
    providerSettings: { timeoutMs: 30_000 },
  });
  const run = await createRun(db, fx.project.id, {
    name: "bench",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: TURNS },
  });
  const ideal = await runIdeal(db, run.id, CONCURRENCY);
  const mem: { t: number; heap: number; rss: number }[] = [];
  const load0 = load();
  fake.mark?.();
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // With --gc (run under node --expose-gc), each sample follows a full collection: the heap figures are then live data, not garbage awaiting collection.
  const forceGc = argv.includes("--gc") ? (globalThis as { gc?: () => void }).gc : undefined;
  if (argv.includes("--gc") && !forceGc) throw new Error("--gc needs node --expose-gc (NODE_OPTIONS=--expose-gc)");
  const sampler = setInterval(
    () => {
      forceGc?.();
      const m = process.memoryUsage();
      mem.push({ t: performance.now() - t0, heap: m.heapUsed, rss: m.rss });
    },
    forceGc ? 1000 : 250,
  );
  const worker = new Worker(db, {
    concurrency: CONCURRENCY,
    pollMs: 20,
    untilIdle: true,
    runId: run.id,
    leaseMs: 60_000,
    callLog: CALL_LOG,
  }).start();
  await worker.done;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loopDelay.disable();
  const load1 = load();
  clearInterval(sampler);
  const server = await fake.close();
  const serverCpu = server.cpuMs;
  const logged = await countOf(dalOf(db), sql`SELECT COUNT(*) AS n FROM provider_calls`);
  const r: Measured = { wall, calls: ideal.calls, ...(await measured(db, wall, run.id)) };
  const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
  const q = (xs: typeof mem) =>
    xs.length ? { heap: Math.max(...xs.map((x) => x.heap)), rss: Math.max(...xs.map((x) => x.rss)) } : { heap: 0, rss: 0 };
  const quarters = [0, 1, 2, 3].map((k) => q(mem.filter((x) => x.t >= (k * wall) / 4 && x.t < ((k + 1) * wall) / 4)));
  const workerCpuMs = (cpu.user + cpu.system) / 1000;
  const ratio1 = report(
    `1 worker (in this process, ${CONCURRENCY} jobs in flight; provider_calls logged: ${logged})`,
    r,
    ideal,
    load0,
    load1,
    server.heldMs,
  );
  console.log(
    `    HTTP:          mean call latency ${r.meanLatency.toFixed(1)} ms (server sleeps ${LATENCY} ms); event loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms`,
  );
  console.log(`    memory (peak per quarter of the run${forceGc ? ", after full GC" : ""}):`);
  quarters.forEach((x, k) => console.log(`      Q${k + 1}: heap ${mb(x.heap)}, RSS ${mb(x.rss)}`));
  console.log(
    `    CPU:           runner ${(workerCpuMs / 1000).toFixed(2)} s (${(workerCpuMs / calls).toFixed(3)} ms per call, ${((100 * workerCpuMs) / wall).toFixed(0)}% of a core)${serverCpu ? `; fake server ${(serverCpu / 1000).toFixed(2)} s` : ""}; call log: ${CALL_LOG}; ${os.cpus().length} cores`,
  );
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  if (workersArg === 1) process.exit(r.done === r.calls ? 0 : 1);
  // The same run with 3 worker processes sharing the providers' limits.
  const r3 = await nProcesses(3);
  console.log(`  summary: ratio to ideal — 1 worker ${ratio1.toFixed(3)}×, 3 workers ${r3.ratio.toFixed(3)}× (target ≤ 1.1×)`);
  process.exit(r.done === r.calls && r3.ok ? 0 : 1);
}

main().catch((err) => {
  // The fake endpoint runs in a child process: exit so it is not left behind.
  console.error(`bench:runs: ${(err as Error).message}`);
  process.exit(1);
});
