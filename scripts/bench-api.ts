/**
 * npm run bench:api [-- --responses N] [--annotations N] [--runs N] [--clients N] [--requests N] [--keep]
 *
 * The HTTP API's figures (issue 37), each against the real production server (scripts/server.ts on the
 * Remix build in build/, built first when missing or older than app/) on a fresh temporary database:
 *
 *  (a) push: 100,000 responses (10,000 items × 10 models) as ONE JSONL body, POST
 *      /api/v1/projects/bench/imports?preset=responses, timed from the request until the import is answered
 *      (a large body is answered 202 and polled every 50 ms until it succeeded), against `npm run import` of
 *      the same file (the command as users run it, node start-up included), each on a fresh database holding
 *      the same 10,000 items. The median of --runs (default 3) of each, alternating. Target: API ≤ 1.3 ×
 *      the command. Meanwhile the server process's resident set (VmRSS, /proc) is sampled every 20 ms; the
 *      peak is printed (target < 300 MB), with the peak of the server and its import child together (the
 *      server runs an import in a child process, as the Import page does).
 *  (b) pull: 100,000 annotations (tests/support/big-annotations.ts: three annotators, a Yes/No task)
 *      through GET /api/v1/projects/big/exports/annotations, as JSON pages of 10,000 following `next`
 *      (every row parsed; target ≥ 50,000 rows/s) and as one CSV stream (rows counted as they arrive;
 *      target ≥ 200,000 rows/s). The median of --runs of each, after one untimed pull of each.
 *  (c) an authenticated small GET: GET /api/v1/projects/small (a project with 20 items) from 50 concurrent
 *      clients (--clients), each with its own token and one keep-alive connection, each sending --requests
 *      (default 40) one after another after 5 untimed ones; p50, p95 and p99 of the latencies (target p95 <
 *      20 ms). 50 × 45 requests stay within a token's default rate limit (600 a minute) since each client has
 *      its own token.
 *
 * Prints one line per figure with its target and OK or OVER. The client runs on the same machine as the server
 * (loopback), so on a small machine the figures include the client's own CPU use.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { createUser, setMembership } from "../app/auth/accounts.server";
import { createApiToken } from "../app/auth/tokens.server";
import { runImport } from "../app/formats/import.server";
import { openDatabase, schema } from "../db/client";
import { writeBigAnnotationProject } from "../tests/support/big-annotations";
import { procCpuS } from "../tests/support/proc-cpu";
import { median } from "./bench-median";
import { RowCounter } from "./remote";
import { SERVER_NODE_FLAGS } from "./server-flags";

const { values } = parseArgs({
  options: {
    responses: { type: "string", default: "100000" },
    annotations: { type: "string", default: "100000" },
    runs: { type: "string", default: "3" },
    clients: { type: "string", default: "50" },
    requests: { type: "string", default: "40" },
    only: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const RESPONSES = Number(values.responses);
const ANNOTATIONS = Number(values.annotations);
const RUNS = Number(values.runs);
const CLIENTS = Number(values.clients);
const REQUESTS = Number(values.requests);
const MODELS = 10;
for (const [name, v, min] of [
  ["responses", RESPONSES, MODELS],
  ["annotations", ANNOTATIONS, 3],
  ["runs", RUNS, 1],
  ["clients", CLIENTS, 1],
  ["requests", REQUESTS, 1],
] as const)
  if (!Number.isInteger(v) || v < min) {
    console.error(`bench:api: --${name} must be a whole number ≥ ${min}`);
    process.exit(2);
  }
const ONLY = new Set((values.only ?? "push,pull,get").split(","));

const root = path.resolve(import.meta.dirname, "..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-api-"));
const PASSWORD = "bench password 123";
const fmt = (n: number) => Math.round(n).toLocaleString("en");
const verdict = (ok: boolean) => (ok ? "OK" : "OVER");

// ─── server ─────────────────────────────────────────────────────────────────

type Server = { url: string; pid: number; stop: () => Promise<void> };

async function startServer(file: string): Promise<Server> {
  const env = { ...process.env, DATABASE_URL: file, PORT: "0", NODE_ENV: "production" as const };
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, "scripts/cli.mjs", "server"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    child.stdout!.on("data", (d) => {
      out += d;
      const m = out.match(/running at (http:\/\/localhost:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace("localhost", "127.0.0.1"));
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** build/index.js is missing, or older than a file under app/ (then the server would run old code). */
function buildIsStale(): boolean {
  const built = path.join(root, "build", "index.js");
  if (!fs.existsSync(built)) return true;
  const t = fs.statSync(built).mtimeMs;
  const newest = (d: string): number =>
    fs.readdirSync(d, { withFileTypes: true }).reduce((m, e) => {
      const p = path.join(d, e.name);
      return Math.max(m, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
    }, 0);
  return newest(path.join(root, "app")) > t;
}

/** Resident set (kB) of a process, 0 once it is gone. */
function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** The process ids below `pid` (children, grandchildren …), from /proc. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let tasks: string[] = [];
    try {
      tasks = fs.readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      let kids = "";
      try {
        kids = fs.readFileSync(`/proc/${p}/task/${t}/children`, "utf8");
      } catch {
        continue;
      }
      for (const k of kids.trim().split(/\s+/).filter(Boolean).map(Number)) {
        out.push(k);
        walk(k);
      }
    }
  };
  walk(pid);
  return out;
}

/** Samples the server's RSS (and with its children) every `ms` until stopped; peaks in MB. */
function rssSampler(pid: number, ms = 20) {
  let server = 0;
  let tree = 0;
  const sample = () => {
    const s = rssKb(pid);
    server = Math.max(server, s);
    tree = Math.max(tree, s + descendants(pid).reduce((sum, k) => sum + rssKb(k), 0));
  };
  sample();
  const timer = setInterval(sample, ms);
  return () => {
    clearInterval(timer);
    sample();
    return { serverMb: server / 1024, treeMb: tree / 1024 };
  };
}

/** A database with a researcher and a project `slug`; returns the researcher's id and a write token. */
async function freshProject(file: string, slug: string): Promise<{ userId: number; token: string }> {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  const db = openDatabase(file);
  try {
    const user = await createUser({ email: `${slug}@bench.test`, name: "Bench Researcher", password: PASSWORD }, db);
    const projectId = db
      .insert(schema.projects)
      .values({ slug, name: `Bench ${slug}` })
      .returning({ id: schema.projects.id })
      .get().id;
    await setMembership(projectId, user.id, "researcher", db);
    const { token } = await createApiToken(user.id, { name: "bench", scope: "write", projects: "all" }, db);
    return { userId: user.id, token };
  } finally {
    db.$client.close();
  }
}

// ─── (a) push ───────────────────────────────────────────────────────────────

const ITEMS = Math.ceil(RESPONSES / MODELS);

function writeFiles(itemsFile: string, responsesFile: string) {
  let buf = "";
  const items = fs.openSync(itemsFile, "w");
  for (let i = 1; i <= ITEMS; i++)
    buf += `${JSON.stringify({ id: `q-${i}`, prompt: `Question ${i}: explain topic ${i % 97} in detail.` })}\n`;
  fs.writeSync(items, buf);
  fs.closeSync(items);
  const out = fs.openSync(responsesFile, "w");
  buf = "";
  for (let m = 1, n = 0; m <= MODELS; m++)
    for (let i = 1; i <= ITEMS && n < RESPONSES; i++, n++) {
      const text = `Answer of model ${m} to question ${i}: first a short plan, then the steps, "quoted" once, and a conclusion.`;
      buf += `${JSON.stringify({ item: `q-${i}`, model: `model-${m}`, turn: 1, text })}\n`;
      if (buf.length > 1 << 20) {
        fs.writeSync(out, buf);
        buf = "";
      }
    }
  fs.writeSync(out, buf);
  fs.closeSync(out);
}

async function withItems(file: string, slug: string, itemsFile: string) {
  const p = await freshProject(file, slug);
  const s = await runImport({ databaseFile: file, projectSlug: slug, preset: "items-jsonl", file: itemsFile });
  if (s.errorCount || s.items !== ITEMS) throw new Error(`bench:api: the items did not import: ${JSON.stringify(s.errors.slice(0, 3))}`);
  return p;
}

async function pushOnce(n: number, itemsFile: string, responsesFile: string) {
  const file = path.join(dir, `push-${n}.db`);
  const { token } = await withItems(file, "bench", itemsFile);
  const server = await startServer(file);
  try {
    const auth = { Authorization: `Bearer ${token}` };
    const stop = rssSampler(server.pid);
    const cpu0 = procCpuS(server.pid, { reaped: true }) ?? NaN;
    const t0 = performance.now();
    const res = await fetch(`${server.url}/api/v1/projects/bench/imports?preset=responses`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/x-ndjson", "Content-Length": String(fs.statSync(responsesFile).size) },
      body: Readable.toWeb(fs.createReadStream(responsesFile)) as ReadableStream,
      duplex: "half",
    } as RequestInit);
    let body = (await res.json()) as { id?: number; status?: string; summary?: { responses?: number }; responses?: number };
    if (res.status === 202) {
      const location = new URL(res.headers.get("Location")!, server.url).href;
      while (body.status !== "succeeded" && body.status !== "failed") {
        await new Promise((r) => setTimeout(r, 50));
        body = (await (await fetch(location, { headers: auth })).json()) as typeof body;
      }
      if (body.status === "failed") throw new Error(`bench:api: the API import failed: ${JSON.stringify(body).slice(0, 500)}`);
    } else if (res.status !== 201)
      throw new Error(`bench:api: the API import answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    const ms = performance.now() - t0;
    const rss = stop();
    // The import child has ended (its record says so) but may not be reaped yet: wait for its CPU to be counted.
    for (let i = 0; i < 50 && descendants(server.pid).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const cpuS = (procCpuS(server.pid, { reaped: true }) ?? NaN) - cpu0;
    const responses = body.summary?.responses ?? body.responses;
    if (responses !== RESPONSES) throw new Error(`bench:api: the API import wrote ${responses} responses, not ${RESPONSES}`);
    return { ms, cpuS, ...rss };
  } finally {
    await server.stop();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  }
}

async function cliOnce(n: number, itemsFile: string, responsesFile: string) {
  const file = path.join(dir, `cli-${n}.db`);
  await withItems(file, "bench", itemsFile);
  const t0 = performance.now();
  const report =
    'data:text/javascript,process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("\\ncpu-us="+(u.userCPUTime+u.systemCPUTime)+"\\n")})';
  const args = ["--import", report, "scripts/cli.mjs", "import", "--preset", "responses", "--project", "bench", responsesFile];
  const r = spawnSync(process.execPath, args, {
    cwd: root,
    env: { ...process.env, DATABASE_URL: file },
    encoding: "utf8",
  });
  const ms = performance.now() - t0;
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  if (r.status !== 0 || !r.stdout.includes(`${RESPONSES} responses`))
    throw new Error(`bench:api: npm run import failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  return { ms, cpuS: Number(/cpu-us=(\d+)/.exec(r.stderr)?.[1]) / 1e6 };
}

async function push() {
  const itemsFile = path.join(dir, "items.jsonl");
  const responsesFile = path.join(dir, "responses.jsonl");
  writeFiles(itemsFile, responsesFile);
  const mb = fs.statSync(responsesFile).size / 1e6;
  const api: Awaited<ReturnType<typeof pushOnce>>[] = [];
  const cli: { ms: number; cpuS: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    cli.push(await cliOnce(i, itemsFile, responsesFile));
    api.push(await pushOnce(i, itemsFile, responsesFile));
  }
  const a = median(api.map((x) => x.ms));
  const c = median(cli.map((x) => x.ms));
  const ratio = a / c;
  const server = Math.max(...api.map((x) => x.serverMb));
  const tree = Math.max(...api.map((x) => x.treeMb));
  const runs = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(", ");
  console.log(
    `(a) push ${fmt(RESPONSES)} responses as one JSONL body (${mb.toFixed(1)} MB): API ${(a / 1000).toFixed(2)} s [${runs(api.map((x) => x.ms))}] vs npm run import ${(c / 1000).toFixed(2)} s [${runs(cli.map((x) => x.ms))}]: ${ratio.toFixed(2)}× (target ≤ 1.30×) ${verdict(ratio <= 1.3)}`,
  );
  const apiCpu = median(api.map((x) => x.cpuS));
  const cliCpu = median(cli.map((x) => x.cpuS));
  console.log(
    `(a) CPU time (less sensitive to a busy machine): server and its import child ${apiCpu.toFixed(2)} s vs npm run import ${cliCpu.toFixed(2)} s: ${(apiCpu / cliCpu).toFixed(2)}×`,
  );
  console.log(
    `(a) server peak RSS during the push: ${server.toFixed(0)} MB (target < 300 MB) ${verdict(server < 300)}; with its import child process: ${tree.toFixed(0)} MB`,
  );
}

// ─── (b) pull ───────────────────────────────────────────────────────────────

async function pullJson(url: string, token: string): Promise<number> {
  let next: string | null = `${url}/api/v1/projects/big/exports/annotations?format=json&limit=10000`;
  let rows = 0;
  while (next) {
    const res = await fetch(next, { headers: { Authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`bench:api: JSON page answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const page = (await res.json()) as { data: unknown[]; next: string | null };
    rows += page.data.length;
    // The next link names the server as it saw the request; ask the same address.
    next = page.next ? url + new URL(page.next).pathname + new URL(page.next).search : null;
  }
  return rows;
}

async function pullCsv(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/projects/big/exports/annotations?format=csv`, { headers: { Authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) throw new Error(`bench:api: CSV answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const counter = new RowCounter(true);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) counter.add(chunk);
  return counter.rows();
}

async function pull() {
  const file = path.join(dir, "pull.db");
  const t = performance.now();
  const big = await writeBigAnnotationProject(file, ANNOTATIONS, {
    slug: "big",
    researcher: { email: "big@bench.test", name: "Big Researcher", password: PASSWORD },
  });
  const db = openDatabase(file);
  const { token } = await createApiToken(big.researcherId, { name: "bench", scope: "read", projects: "all" }, db);
  db.$client.close();
  const buildS = (performance.now() - t) / 1000;
  const server = await startServer(file);
  try {
    const cpu: Record<"json" | "csv", number[]> = { json: [], csv: [] };
    const timed = async (f: () => Promise<number>, kind?: "json" | "csv") => {
      const c0 = procCpuS(server.pid) ?? NaN;
      const t0 = performance.now();
      const rows = await f();
      const s = (performance.now() - t0) / 1000;
      if (kind) cpu[kind].push((procCpuS(server.pid) ?? NaN) - c0);
      if (rows !== ANNOTATIONS) throw new Error(`bench:api: pulled ${rows} rows, not ${ANNOTATIONS}`);
      return rows / s;
    };
    await timed(() => pullJson(server.url, token));
    await timed(() => pullCsv(server.url, token));
    const json: number[] = [];
    const csv: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      json.push(await timed(() => pullJson(server.url, token), "json"));
      csv.push(await timed(() => pullCsv(server.url, token), "csv"));
    }
    const j = median(json);
    const c = median(csv);
    const runs = (xs: number[]) => xs.map(fmt).join(", ");
    console.log(
      `(b) pull ${fmt(ANNOTATIONS)} annotations as JSON pages of 10,000: ${fmt(j)} rows/s [${runs(json)}] (target ≥ 50,000) ${verdict(j >= 50_000)}  (database built in ${buildS.toFixed(1)} s)`,
    );
    console.log(
      `(b) pull ${fmt(ANNOTATIONS)} annotations as a CSV stream: ${fmt(c)} rows/s [${runs(csv)}] (target ≥ 200,000) ${verdict(c >= 200_000)}`,
    );
    const perCpu = (k: "json" | "csv") => fmt(ANNOTATIONS / median(cpu[k]));
    console.log(
      `(b) rows per second of the server's CPU time (less sensitive to a busy machine): JSON pages ${perCpu("json")}, CSV ${perCpu("csv")}`,
    );
  } finally {
    await server.stop();
  }
}

// ─── (c) small GET under concurrency ──────────────────────────────────────────

function getOnce(agent: http.Agent, url: URL, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, agent, headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        res.on("data", () => {});
        res.on("end", () =>
          res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`GET answered ${res.statusCode}`)),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function smallGet() {
  const file = path.join(dir, "get.db");
  const { userId } = await freshProject(file, "small");
  const itemsFile = path.join(dir, "small-items.jsonl");
  fs.writeFileSync(
    itemsFile,
    Array.from({ length: 20 }, (_, i) => `${JSON.stringify({ id: `s-${i}`, prompt: `Prompt ${i}` })}\n`).join(""),
  );
  await runImport({ databaseFile: file, projectSlug: "small", preset: "items-jsonl", file: itemsFile });
  const db = openDatabase(file);
  const tokens: string[] = [];
  for (let i = 0; i < CLIENTS; i++)
    tokens.push((await createApiToken(userId, { name: `client ${i}`, scope: "read", projects: "all" }, db)).token);
  db.$client.close();
  const server = await startServer(file);
  try {
    const url = new URL(`${server.url}/api/v1/projects/small`);
    const latencies: number[] = [];
    const c0 = procCpuS(server.pid) ?? NaN;
    const t0 = performance.now();
    await Promise.all(
      tokens.map(async (token) => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        try {
          for (let i = 0; i < 5; i++) await getOnce(agent, url, token);
          for (let i = 0; i < REQUESTS; i++) latencies.push(await getOnce(agent, url, token));
        } finally {
          agent.destroy();
        }
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const cpuMs = (((procCpuS(server.pid) ?? NaN) - c0) * 1000) / (CLIENTS * (REQUESTS + 5));
    const sorted = [...latencies].sort((a, b) => a - b);
    const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    console.log(
      `(c) GET /api/v1/projects/{slug}, ${CLIENTS} concurrent clients × ${REQUESTS} requests: p50 ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms (target p95 < 20 ms) ${verdict(q(0.95) < 20)}; ${fmt((CLIENTS * (REQUESTS + 5)) / wall)} requests/s, ${cpuMs.toFixed(2)} ms of server CPU a request`,
    );
  } finally {
    await server.stop();
  }
}

// ─── main ───────────────────────────────────────────────────────────────────

if (buildIsStale()) {
  console.log("Building the Remix app (build/ missing or older than app/)…");
  execFileSync(process.execPath, [path.join(root, "node_modules/@remix-run/dev/dist/cli.js"), "build"], { cwd: root, stdio: "inherit" });
}
const load0 = os.loadavg();
console.log(
  `bench:api — ${RUNS} runs of each timed figure; ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(" ")}`,
);
try {
  if (ONLY.has("push")) await push();
  if (ONLY.has("pull")) await pull();
  if (ONLY.has("get")) await smallGet();
} finally {
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  if (values.keep) console.log(`kept: ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}
