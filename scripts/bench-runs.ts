/**
 * npm run bench:runs — 1,000 RefineBench items × 5 turns × (generation + judge)
 * against the local fake OpenAI-compatible server with 50 ms latency and
 * concurrency 32, through the real runner (SQLite, leases, call log).
 * Reports wall time against the ideal (calls × latency / concurrency) and
 * heap/RSS over the run.
 *   options: --items N --turns T --latency MS --concurrency C
 */
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import { openDatabase } from "../db/client";
import { createRun, Worker } from "../app/runs/runner.server";
import { spawn } from "node:child_process";
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

async function serverProcess(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const code = `import { startFakeLlm } from "./tests/support/fake-llm.ts"; import { refineScript } from "./tests/unit/runs/fixtures.ts"; const f = await startFakeLlm(refineScript(), { latencyMs: ${LATENCY}, log: false }); console.log(f.baseUrl);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: path.resolve(import.meta.dirname, ".."), stdio: ["ignore", "pipe", "inherit"] });
  const baseUrl = await new Promise<string>((ok) => child.stdout!.once("data", (d) => ok(String(d).trim())));
  return { baseUrl, close: async () => void child.kill("SIGTERM") };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-runs-"));
  const db = openDatabase(path.join(dir, "bench.db"));
  // The fake server runs in its own process (the other core), so the bench measures the runner, not the server.
  const fake = argv.includes("--same-process") ? await startFakeLlm(refineScript(), { latencyMs: LATENCY, log: false }) : await serverProcess();
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
  const t0 = performance.now();
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    mem.push({ t: performance.now() - t0, heap: m.heapUsed, rss: m.rss });
  }, 250);
  const worker = new Worker(db, { concurrency: CONCURRENCY, pollMs: 20, untilIdle: true, runId: run.id, leaseMs: 60_000 }).start();
  await worker.done;
  const wall = performance.now() - t0;
  clearInterval(sampler);
  await fake.close();
  const done = (db.$client.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE run_id=? AND status='done'`).get(run.id) as { n: number }).n;
  const logged = (db.$client.prepare(`SELECT COUNT(*) AS n FROM provider_calls`).get() as { n: number }).n;
  const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
  const q = (xs: typeof mem) => (xs.length ? { heap: Math.max(...xs.map((x) => x.heap)), rss: Math.max(...xs.map((x) => x.rss)) } : { heap: 0, rss: 0 });
  const firstQ = q(mem.filter((x) => x.t < wall / 4));
  const lastQ = q(mem.filter((x) => x.t >= (3 * wall) / 4));
  console.log(`bench:runs — ${ITEMS} items × ${TURNS} turns × (generation + judge) = ${calls} calls, ${LATENCY} ms latency, concurrency ${CONCURRENCY}`);
  console.log(`  jobs done:       ${done} / ${calls} (provider_calls logged: ${logged})`);
  console.log(`  wall time:       ${(wall / 1000).toFixed(2)} s`);
  console.log(`  ideal:           ${(ideal / 1000).toFixed(2)} s (calls × latency / concurrency)`);
  console.log(`  ratio:           ${(wall / ideal).toFixed(3)}× (target ≤ 1.25×) ${wall / ideal <= 1.25 ? "OK" : "OVER"}`);
  console.log(`  memory:          peak heap first quarter ${mb(firstQ.heap)}, last quarter ${mb(lastQ.heap)}; peak RSS first ${mb(firstQ.rss)}, last ${mb(lastQ.rss)}`);
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(done === calls ? 0 : 1);
}

main();
