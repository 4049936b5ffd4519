/**
 * npm run bench:runs — 1,000 RefineBench items × 5 turns × (generation + judge)
 * against the local fake OpenAI-compatible server with 50 ms latency and
 * concurrency 32, through the real runner (SQLite, leases, call log).
 * The fake server runs in its own process. Reports wall time against the
 * ideal (calls × latency / concurrency), the measured HTTP round trip, event
 * loop delay (the monitor samples every 5 ms, so ~5 ms is "no delay"), peak
 * heap/RSS in each quarter of the run, CPU time of the runner and of the
 * server, and the machine's load average (other processes share the cores).
 *   options: --items N --turns T --latency MS --concurrency C --compact-log --same-process
 *            --gc (with NODE_OPTIONS=--expose-gc: heap after a full collection, once a second)
 */
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import { openDatabase } from "../db/client";
import { createRun, Worker } from "../app/runs/runner.server";
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
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: path.resolve(import.meta.dirname, ".."), stdio: ["pipe", "pipe", "inherit"] });
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

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-runs-"));
  const db = openDatabase(path.join(dir, "bench.db"));
  // The fake server runs in its own process (the other core), so the bench measures the runner, not the server.
  const fake: { baseUrl: string; mark?: () => void; close: () => Promise<number | null | void> } = argv.includes("--same-process")
    ? await startFakeLlm(refineScript(), { latencyMs: LATENCY, log: false })
    : await serverProcess();
  const fx = makeRunsFixture(db, { baseUrl: fake.baseUrl, items: ITEMS, checklist: 5, concurrency: CONCURRENCY, providerSettings: { timeoutMs: 30_000 } });
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
  const sampler = setInterval(() => {
    forceGc?.();
    const m = process.memoryUsage();
    mem.push({ t: performance.now() - t0, heap: m.heapUsed, rss: m.rss });
  }, forceGc ? 1000 : 250);
  const worker = new Worker(db, { concurrency: CONCURRENCY, pollMs: 20, untilIdle: true, runId: run.id, leaseMs: 60_000, callLog: CALL_LOG }).start();
  await worker.done;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loopDelay.disable();
  const load1 = os.loadavg();
  clearInterval(sampler);
  const serverCpu = await fake.close();
  const done = (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done'`).get(run.id) as { n: number }).n;
  const logged = (db.$client.prepare(`SELECT COUNT(*) AS n FROM provider_calls`).get() as { n: number }).n;
  const lat = db.$client.prepare(`SELECT AVG(latency_ms) AS avg, SUM(latency_ms) AS sum FROM provider_calls`).get() as { avg: number; sum: number };
  const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
  const q = (xs: typeof mem) => (xs.length ? { heap: Math.max(...xs.map((x) => x.heap)), rss: Math.max(...xs.map((x) => x.rss)) } : { heap: 0, rss: 0 });
  const quarters = [0, 1, 2, 3].map((k) => q(mem.filter((x) => x.t >= (k * wall) / 4 && x.t < ((k + 1) * wall) / 4)));
  const workerCpuMs = (cpu.user + cpu.system) / 1000;
  console.log(`bench:runs — ${ITEMS} items × ${TURNS} turns × (generation + judge) = ${calls} calls, ${LATENCY} ms latency, concurrency ${CONCURRENCY}`);
  console.log(`  jobs done:       ${done} / ${calls} (provider_calls logged: ${logged})`);
  console.log(`  wall time:       ${(wall / 1000).toFixed(2)} s`);
  console.log(`  ideal:           ${(ideal / 1000).toFixed(2)} s (calls × latency / concurrency)`);
  console.log(`  ratio:           ${(wall / ideal).toFixed(3)}× (target ≤ 1.25×) ${wall / ideal <= 1.25 ? "OK" : "OVER"}`);
  console.log(`  HTTP:            mean call latency ${lat.avg.toFixed(1)} ms (server sleeps ${LATENCY} ms); slots busy in HTTP ${((100 * lat.sum) / (wall * CONCURRENCY)).toFixed(0)}% of the time`);
  console.log(`  event loop delay: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms`);
  console.log(`  memory (peak per quarter of the run${forceGc ? ", after full GC" : ""}):`);
  quarters.forEach((x, k) => console.log(`    Q${k + 1}: heap ${mb(x.heap)}, RSS ${mb(x.rss)}`));
  console.log(`  CPU:             runner ${(workerCpuMs / 1000).toFixed(2)} s (${(workerCpuMs / calls).toFixed(3)} ms per call, ${((100 * workerCpuMs) / wall).toFixed(0)}% of a core)${serverCpu ? `; fake server ${(serverCpu / 1000).toFixed(2)} s` : ""}; call log: ${CALL_LOG}`);
  console.log(`  machine:         ${os.cpus().length} cores, load average ${load0.map((x) => x.toFixed(2)).join(" ")} at start, ${load1.map((x) => x.toFixed(2)).join(" ")} at end`);
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(done === calls ? 0 : 1);
}

main().catch((err) => {
  // The fake endpoint runs in a child process: exit so it is not left behind.
  console.error(`bench:runs: ${(err as Error).message}`);
  process.exit(1);
});
