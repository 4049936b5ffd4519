/**
 * npm run bench:runs — 1,000 RefineBench items × 5 turns × (generation + judge)
 * against the local fake OpenAI-compatible server with 50 ms latency and
 * concurrency 32, through the real runner (SQLite, leases, call log).
 * The fake server runs in its own process. Reports wall time against the
 * ideal (calls × latency / concurrency), the measured HTTP round trip, event
 * loop delay (the monitor samples every 5 ms, so ~5 ms is "no delay"), peak
 * heap/RSS in each quarter of the run, CPU time of the runner and of the
 * server, and the machine's load average (other processes share the cores).
 * Then the same run again with 3 worker processes (scripts/worker.ts) sharing
 * the provider's limit of C requests in flight through the database: the
 * ideal is unchanged (the provider's concurrency bounds it), so the ratio
 * shows what sharing the limit across processes costs.
 *   options: --items N --turns T --latency MS --concurrency C --compact-log --same-process
 *            --workers N (only the N-process run; 1 = only the in-process run)
 *            --gc (with NODE_OPTIONS=--expose-gc: heap after a full collection, once a second)
 */
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import { openDatabase } from "../db/client";
import { controlRun, createRun, Worker } from "../app/runs/runner.server";
import { spawn } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startFakeLlm } from "../tests/support/fake-llm";
import { makeRunsFixture, refineScript } from "../tests/unit/runs/fixtures";

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

/** The fake server in its own process; on SIGTERM it prints the CPU time it used, then exits. */
async function serverProcess(): Promise<{ baseUrl: string; close: () => Promise<number | null> }> {
  const code = `import { startFakeLlm } from "./tests/support/fake-llm.ts"; import { refineScript } from "./tests/unit/runs/fixtures.ts"; const f = await startFakeLlm(refineScript(), { latencyMs: ${LATENCY}, log: false }); let cpu0 = process.cpuUsage(); process.stdin.on("data", () => { cpu0 = process.cpuUsage(); }); process.on("SIGTERM", () => { const c = process.cpuUsage(cpu0); process.stdout.write("cpu " + (c.user + c.system) / 1000 + "\\n", () => process.exit(0)); }); console.log(f.baseUrl);`;
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
      const cpu = Number((await Promise.race([line, new Promise<string>((ok) => setTimeout(() => ok(""), 2000))])).slice(4));
      return Number.isFinite(cpu) && cpu > 0 ? cpu : null;
    },
  } as { baseUrl: string; mark: () => void; close: () => Promise<number | null> };
}

/**
 * N worker processes on a fresh run: they start on a paused run (so process
 * start-up is not timed), the run is resumed, and the clock stops when it is
 * completed. Returns the wall time in ms.
 */
async function multiProcess(n: number, baseUrl: string): Promise<{ wall: number; done: number; owners: number }> {
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
  const run = createRun(db, fx.project.id, {
    name: "bench",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: TURNS },
  });
  controlRun(db, run.id, "pause");
  const root = path.resolve(import.meta.dirname, "..");
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, ["--import", "tsx", "scripts/worker.ts", "--run", String(run.id), "--call-log", CALL_LOG], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: file, WORKER_CONCURRENCY: String(CONCURRENCY), WORKER_POLL_MS: "20" },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  await Promise.all(children.map((c) => new Promise<void>((ok) => c.stdout!.on("data", (d) => String(d).includes("started") && ok()))));
  const status = db.$client.prepare(`SELECT status FROM runs WHERE id = ?`).pluck();
  const t0 = performance.now();
  controlRun(db, run.id, "resume");
  while (!["completed", "completed-with-errors", "failed"].includes(String(status.get(run.id))))
    await new Promise((ok) => setTimeout(ok, 10));
  const wall = performance.now() - t0;
  await Promise.all(children.map((c) => new Promise<void>((ok) => (c.once("exit", () => ok()), c.kill("SIGTERM")))));
  const done = (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done'`).get(run.id) as { n: number }).n;
  const owners = (db.$client.prepare(`SELECT COUNT(DISTINCT owner) AS n FROM provider_calls`).get() as { n: number }).n;
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { wall, done, owners };
}

async function main() {
  const workersArg = argv.includes("--workers") ? num("workers", 1) : null;
  if (workersArg !== null && workersArg > 1) {
    const fake = await serverProcess();
    const calls = ITEMS * TURNS * 2;
    const ideal = (calls * LATENCY) / CONCURRENCY;
    const r = await multiProcess(workersArg, fake.baseUrl);
    await fake.close();
    console.log(`bench:runs — ${calls} calls, ${LATENCY} ms latency, provider concurrency ${CONCURRENCY}, ${workersArg} worker processes`);
    console.log(
      `  ${workersArg} workers: ${(r.wall / 1000).toFixed(2)} s, ideal ${(ideal / 1000).toFixed(2)} s, ratio ${(r.wall / ideal).toFixed(3)}× (${r.done}/${calls} jobs done; calls made by ${r.owners} processes)`,
    );
    process.exit(r.done === calls ? 0 : 1);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-runs-"));
  const db = openDatabase(path.join(dir, "bench.db"));
  // The fake server runs in its own process (the other core), so the bench measures the runner, not the server.
  const fake: { baseUrl: string; mark?: () => void; close: () => Promise<number | null | void> } = argv.includes("--same-process")
    ? await startFakeLlm(refineScript(), { latencyMs: LATENCY, log: false })
    : await serverProcess();
  const fx = makeRunsFixture(db, {
    baseUrl: fake.baseUrl,
    items: ITEMS,
    checklist: 5,
    concurrency: CONCURRENCY,
    providerSettings: { timeoutMs: 30_000 },
  });
  const run = createRun(db, fx.project.id, {
    name: "bench",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: TURNS },
  });
  const calls = ITEMS * TURNS * 2;
  const ideal = (calls * LATENCY) / CONCURRENCY;
  const mem: { t: number; heap: number; rss: number }[] = [];
  const load0 = os.loadavg();
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
  const load1 = os.loadavg();
  clearInterval(sampler);
  const serverCpu = await fake.close();
  const done = (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done'`).get(run.id) as { n: number }).n;
  const logged = (db.$client.prepare(`SELECT COUNT(*) AS n FROM provider_calls`).get() as { n: number }).n;
  const lat = db.$client.prepare(`SELECT AVG(latency_ms) AS avg, SUM(latency_ms) AS sum FROM provider_calls`).get() as {
    avg: number;
    sum: number;
  };
  const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
  const q = (xs: typeof mem) =>
    xs.length ? { heap: Math.max(...xs.map((x) => x.heap)), rss: Math.max(...xs.map((x) => x.rss)) } : { heap: 0, rss: 0 };
  const quarters = [0, 1, 2, 3].map((k) => q(mem.filter((x) => x.t >= (k * wall) / 4 && x.t < ((k + 1) * wall) / 4)));
  const workerCpuMs = (cpu.user + cpu.system) / 1000;
  console.log(
    `bench:runs — ${ITEMS} items × ${TURNS} turns × (generation + judge) = ${calls} calls, ${LATENCY} ms latency, concurrency ${CONCURRENCY}`,
  );
  console.log(`  jobs done:       ${done} / ${calls} (provider_calls logged: ${logged})`);
  console.log(`  wall time:       ${(wall / 1000).toFixed(2)} s`);
  console.log(`  ideal:           ${(ideal / 1000).toFixed(2)} s (calls × latency / concurrency)`);
  console.log(
    `  ratio:           ${(wall / ideal).toFixed(3)}× (target ≤ 1.1×) ${wall / ideal <= 1.1 ? "OK" : "OVER"}; against the measured round trip: ${((wall * CONCURRENCY) / lat.sum).toFixed(3)}×`,
  );
  console.log(
    `  HTTP:            mean call latency ${lat.avg.toFixed(1)} ms (server sleeps ${LATENCY} ms); slots busy in HTTP ${((100 * lat.sum) / (wall * CONCURRENCY)).toFixed(0)}% of the time`,
  );
  console.log(
    `  event loop delay: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms`,
  );
  console.log(`  memory (peak per quarter of the run${forceGc ? ", after full GC" : ""}):`);
  quarters.forEach((x, k) => console.log(`    Q${k + 1}: heap ${mb(x.heap)}, RSS ${mb(x.rss)}`));
  console.log(
    `  CPU:             runner ${(workerCpuMs / 1000).toFixed(2)} s (${(workerCpuMs / calls).toFixed(3)} ms per call, ${((100 * workerCpuMs) / wall).toFixed(0)}% of a core)${serverCpu ? `; fake server ${(serverCpu / 1000).toFixed(2)} s` : ""}; call log: ${CALL_LOG}`,
  );
  console.log(
    `  machine:         ${os.cpus().length} cores, load average ${load0.map((x) => x.toFixed(2)).join(" ")} at start, ${load1.map((x) => x.toFixed(2)).join(" ")} at end`,
  );
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  if (workersArg === 1) process.exit(done === calls ? 0 : 1);
  // The same run with 3 worker processes sharing the provider's limit.
  const fake3 = argv.includes("--same-process")
    ? await startFakeLlm(refineScript(), { latencyMs: LATENCY, log: false })
    : await serverProcess();
  const r3 = await multiProcess(3, fake3.baseUrl);
  await fake3.close();
  console.log(
    `  3 worker processes (sharing the provider's ${CONCURRENCY} slots through the database): ${(r3.wall / 1000).toFixed(2)} s, ratio ${(r3.wall / ideal).toFixed(3)}× (${r3.done}/${calls} jobs done; calls made by ${r3.owners} processes)`,
  );
  console.log(
    `  summary:         ratio to ideal — 1 worker ${(wall / ideal).toFixed(3)}×, 3 workers ${(r3.wall / ideal).toFixed(3)}× (target ≤ 1.1×)`,
  );
  process.exit(done === calls && r3.done === calls ? 0 : 1);
}

main().catch((err) => {
  // The fake endpoint runs in a child process: exit so it is not left behind.
  console.error(`bench:runs: ${(err as Error).message}`);
  process.exit(1);
});
