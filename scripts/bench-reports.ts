/**
 * npm run bench:reports — server time of the report pages for a task with
 * 50,000 annotations (25,000 Yes/No units, k = 2 rotating over a pool of
 * three annotators, two judges with a verdict on every unit).
 *
 * Builds a temporary database, starts the real production server on it
 * (Remix build in build/; built first if missing) and times each page over
 * HTTP on localhost: the first request after start (cold: nothing memoised)
 * and the median of further requests (warm: the memoised report, valid until
 * a label or adjudication changes). The target is < 500 ms.
 *
 * Options: --annotations N (default 50000), --runs N (default 5), --revisions N (default 3: label
 * revisions, each followed by one cold request per page; one page view after a revision varies by
 * ±30% on a busy 2-core machine, so comparisons between builds use 15 or more), --kind writing-quality
 * (the same count of annotations on a writing-quality task: each annotation scores the
 * three responses of a unit 1–5, so 50,000 annotations are 150,000 scores; two judges
 * score every response 1–10).
 *
 * --against DIR compares this build with another checkout (e.g. `git worktree add /tmp/old COMMIT`, its
 * node_modules installed or linked, `npm run build` run there): both servers run at once, each on its own copy of
 * the generated database, and each of --revisions pairs revises a label in both and requests the page from both,
 * so the machine's changing load falls on both builds alike (pairedAgainst). The other checkout's server is started
 * with its own `npm start` command; its migrations must be a prefix of ours (it opens a database ours made).
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { createUser, setMembership } from "../app/auth/accounts.server";
import { countOf, dalOf } from "../app/dal.server";
import { openDatabase } from "../db/client";
import { SERVER_NODE_FLAGS } from "./server-flags";
import { median } from "./bench-median";
import { signInOverHttp } from "./import-http";

const root = path.resolve(import.meta.dirname, "..");
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ANNOTATIONS = arg("annotations", 50_000);
const KIND = process.argv.includes("--kind") ? process.argv[process.argv.indexOf("--kind") + 1] : "response-satisfaction";
if (KIND !== "response-satisfaction" && KIND !== "writing-quality")
  throw new Error(`--kind: response-satisfaction or writing-quality, not ${KIND}`);
const RUNS = arg("runs", 5);
const REVISIONS = Math.max(1, arg("revisions", 3));
/** --server-cpu-prof DIR: the server writes a CPU profile into DIR when it ends (diagnostics, as in bench:annotate). */
const PROF_AT = process.argv.indexOf("--server-cpu-prof");
const SERVER_PROF_DIR = PROF_AT >= 0 ? process.argv[PROF_AT + 1] : undefined;
const TARGET_MS = 500;
/** --against DIR: another checkout (its build and node_modules in place) measured in pairs with this one (pairedAgainst). */
const AGAINST_AT = process.argv.indexOf("--against");
const AGAINST = AGAINST_AT >= 0 ? path.resolve(process.argv[AGAINST_AT + 1] ?? ".") : undefined;

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Rows that need no id back are written this many to an INSERT (a dozen columns each: far below SQLite's 32,766 parameters). */
const BATCH = 500;

/** The id of the one row an `INSERT … RETURNING id` wrote. */
const idOf = async (insert: PromiseLike<{ id: number }[]>): Promise<number> => (await insert)[0].id;

/** Rows buffered in order and written BATCH at a time by `write` (in the caller's transaction). */
function batched<T>(write: (rows: T[]) => PromiseLike<unknown>) {
  let rows: T[] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    const out = rows;
    rows = [];
    await write(out);
  };
  return {
    add: async (row: T) => {
      rows.push(row);
      if (rows.length >= BATCH) await flush();
    },
    flush,
  };
}

async function buildDatabase(file: string) {
  const db = openDatabase(file);
  const d = dalOf(db);
  const t = d.t;
  const rand = rng(42);
  const password = "bench password 123";
  const researcher = await createUser({ email: "bench@example.test", name: "Bench Researcher", password }, db);
  const project = {
    id: await d.tx((q) => idOf(q.insert(t.projects).values({ slug: "bench", name: "Bench" }).returning({ id: t.projects.id }))),
  };
  await setMembership(project.id, researcher.id, "researcher", db);
  const annotators: number[] = [];
  for (let i = 0; i < 3; i++) {
    const u = await createUser({ email: `ann${i}@example.test`, name: `Annotator ${i}`, password }, db);
    await setMembership(project.id, u.id, "annotator", db);
    annotators.push(u.id);
  }
  const units = Math.ceil(ANNOTATIONS / 2);
  const domains = ["Math", "Law", "Chemistry", "Engineering", "CS/AI", "Humanities"];
  const models = ["Alpha-7B", "Beta-13B", "Gamma-70B", "Delta-8B"];
  /** What the generated task holds, read back once the transaction has committed. */
  const built = async (taskName: string) => {
    const [task] = await d.rows<{ id: number }>(sql`SELECT id FROM tasks WHERE name = ${taskName}`);
    const annotations = await countOf(d, sql`SELECT COUNT(*) AS n FROM annotations`);
    db.$client.close();
    return { taskId: Number(task.id), password, annotations, units };
  };
  if (KIND === "writing-quality") {
    await d.tx(async (q) => {
      const ds = await idOf(q.insert(t.datasets).values({ projectId: project.id, name: "Bench writing" }).returning({ id: t.datasets.id }));
      const judges: number[] = [];
      for (const [k, name] of ["judge-alpha", "judge-beta"].entries())
        judges.push(
          await idOf(
            q
              .insert(t.judges)
              .values({ projectId: project.id, name, provider: "replay", model: ["Alpha-70B", "Beta-34B"][k] })
              .returning({ id: t.judges.id }),
          ),
        );
      const task = await idOf(
        q
          .insert(t.tasks)
          .values({ projectId: project.id, datasetId: ds, kind: "writing-quality", name: "Bench writing", overlap: 2, seed: 3 })
          .returning({ id: t.tasks.id }),
      );
      const anns = batched<typeof t.annotations.$inferInsert>((rows) => q.insert(t.annotations).values(rows));
      const vers = batched<typeof t.verdicts.$inferInsert>((rows) => q.insert(t.verdicts).values(rows));
      for (let u = 0; u < units; u++) {
        const domain = domains[u % domains.length];
        const item = await idOf(
          q
            .insert(t.items)
            .values({
              datasetId: ds,
              sourceId: `w-${u}`,
              query: `Write piece ${u}: ${"lorem ipsum ".repeat(8)}`,
              domain,
              subject: `${domain} sub ${u % 3}`,
              taskType: u % 2 ? "Edit" : "Cloze",
            })
            .returning({ id: t.items.id }),
        );
        const quality = [0, 1, 2].map(() => 1 + Math.floor(rand() * 5));
        const ids: number[] = [];
        for (let k = 0; k < quality.length; k++)
          ids.push(
            await idOf(
              q
                .insert(t.responses)
                .values({
                  itemId: item,
                  model: models[(u + k) % models.length],
                  turn: 1,
                  text: `Piece ${u}/${k} `.repeat(8),
                  origin: "import",
                  sourceKey: `m${k}`,
                })
                .returning({ id: t.responses.id }),
            ),
          );
        const unit = await idOf(
          q.insert(t.units).values({ taskId: task, itemId: item, responseIds: ids, position: u }).returning({ id: t.units.id }),
        );
        const first = u % 3;
        for (const a of [first, (first + 1) % 3]) {
          if (u * 2 + (a === first ? 0 : 1) >= ANNOTATIONS) continue;
          const order = a === first ? ids : [...ids].reverse();
          const asg = await idOf(
            q
              .insert(t.assignments)
              .values({ unitId: unit, annotatorId: annotators[a], status: "submitted", shownOrder: order })
              .returning({ id: t.assignments.id }),
          );
          const scores = Object.fromEntries(
            ids.map((id, k) => [String(id), Math.min(5, Math.max(1, quality[k] + (rand() < 0.3 ? (rand() < 0.5 ? -1 : 1) : 0)))]),
          );
          await anns.add({
            assignmentId: asg,
            revision: 1,
            label: { scores },
            status: "submitted",
            durationMs: Math.round(20000 + rand() * 90000),
            shownOrder: order,
          });
        }
        for (const j of judges)
          for (const [k, id] of ids.entries()) {
            const score = Math.min(10, Math.max(1, 2 * quality[k] + Math.round((rand() - 0.5) * 3)));
            await vers.add({ judgeId: j, responseId: id, value: String(score), score, parseStatus: "ok" });
          }
      }
      await anns.flush();
      await vers.flush();
    });
    return built("Bench writing");
  }
  await d.tx(async (q) => {
    const ds = await idOf(q.insert(t.datasets).values({ projectId: project.id, name: "Bench set" }).returning({ id: t.datasets.id }));
    const j1 = await idOf(
      q
        .insert(t.judges)
        .values({ projectId: project.id, name: "judge-alpha", provider: "replay", model: "Alpha-70B" })
        .returning({ id: t.judges.id }),
    );
    const j2 = await idOf(
      q
        .insert(t.judges)
        .values({ projectId: project.id, name: "judge-beta", provider: "replay", model: "Beta-34B" })
        .returning({ id: t.judges.id }),
    );
    const task = await idOf(
      q
        .insert(t.tasks)
        .values({ projectId: project.id, datasetId: ds, kind: "response-satisfaction", name: "Bench satisfaction", overlap: 2, seed: 3 })
        .returning({ id: t.tasks.id }),
    );
    const anns = batched<typeof t.annotations.$inferInsert>((rows) => q.insert(t.annotations).values(rows));
    const vers = batched<typeof t.verdicts.$inferInsert>((rows) => q.insert(t.verdicts).values(rows));
    const PER_ITEM = 10; // checklist items per item; 2 responses per item
    let item = 0;
    let ckIds: number[] = [];
    let respIds: number[] = [];
    for (let u = 0; u < units; u++) {
      const slot = u % (PER_ITEM * 2);
      if (slot === 0) {
        const domain = domains[item % domains.length];
        item = await idOf(
          q
            .insert(t.items)
            .values({
              datasetId: ds,
              sourceId: `b-${u}`,
              query: `Bench question ${u}: ${"lorem ipsum ".repeat(20)}`,
              domain,
              subject: `${domain} sub ${item % 3}`,
              taskType: item % 2 ? "free-form" : "exact-match",
            })
            .returning({ id: t.items.id }),
        );
        ckIds = [];
        for (let k = 0; k < PER_ITEM; k++)
          ckIds.push(
            await idOf(
              q
                .insert(t.checklistItems)
                .values({ itemId: item, text: `Does the response satisfy criterion ${k}?`, position: k })
                .returning({ id: t.checklistItems.id }),
            ),
          );
        respIds = [];
        for (const k of [0, 1])
          respIds.push(
            await idOf(
              q
                .insert(t.responses)
                .values({
                  itemId: item,
                  model: models[((u / 20 + k) % models.length) | 0],
                  turn: 1 + k,
                  text: `Response text ${u}/${k} `.repeat(30),
                  origin: "import",
                  sourceKey: `m${k}`,
                })
                .returning({ id: t.responses.id }),
            ),
          );
      }
      const ck = ckIds[slot % PER_ITEM];
      const resp = respIds[slot < PER_ITEM ? 0 : 1];
      const truth = rand() < 0.8;
      const isGold = u % 200 === 0;
      const unit = await idOf(
        q
          .insert(t.units)
          .values({
            taskId: task,
            itemId: item,
            checklistItemId: ck,
            responseId: resp,
            position: u,
            isGold,
            goldLabel: isGold ? JSON.stringify(truth ? "Yes" : "No") : null,
          })
          .returning({ id: t.units.id }),
      );
      const first = u % 3;
      for (const a of [first, (first + 1) % 3]) {
        if (u * 2 + (a === first ? 0 : 1) >= ANNOTATIONS) continue;
        const asg = await idOf(
          q
            .insert(t.assignments)
            .values({ unitId: unit, annotatorId: annotators[a], status: "submitted" })
            .returning({ id: t.assignments.id }),
        );
        const label = rand() < [0.04, 0.07, 0.12][a] ? !truth : truth;
        await anns.add({
          assignmentId: asg,
          revision: 1,
          label: label ? "Yes" : "No",
          status: "submitted",
          durationMs: Math.round(3000 + rand() * 40000),
        });
      }
      for (const [j, err, fail] of [
        [j1, 0.08, 0],
        [j2, 0.15, 0.01],
      ] as const) {
        const failed = rand() < fail;
        const v = rand() < err ? !truth : truth;
        await vers.add({
          judgeId: j,
          responseId: resp,
          checklistItemId: ck,
          value: failed ? null : v ? "Yes" : "No",
          parseStatus: failed ? "failed" : "ok",
        });
      }
    }
    await anns.flush();
    await vers.flush();
  });
  return built("Bench satisfaction");
}

/**
 * Starts a production server on `file`: this checkout's as `npm start` runs it, or (`against`) another checkout's
 * through that checkout's own `npm start` command, in its own process group so stopping it stops the whole tree.
 */
async function startServer(file: string, against?: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const env = { ...process.env, DATABASE_URL: file, PORT: "0", NODE_ENV: "production" as const };
  const child = against
    ? spawn("sh", ["-c", startCommandOf(against)], { cwd: against, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
    : spawn(
        process.execPath,
        [
          ...SERVER_NODE_FLAGS,
          ...(SERVER_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(SERVER_PROF_DIR)}`] : []),
          "scripts/cli.mjs",
          "server",
        ],
        { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
      );
  let out = "";
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    child.stdout!.on("data", (d) => {
      out += d;
      const m = out.match(/running at (http:\/\/localhost:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      if (against) process.kill(-child.pid!, "SIGTERM");
      else child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The `start` script of another checkout's package.json (`--against`), which must have its build and node_modules. */
function startCommandOf(dir: string): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const start = pkg.scripts?.start;
  if (!start) throw new Error(`--against ${dir}: its package.json has no start script`);
  if (!fs.existsSync(path.join(dir, "build", "index.js"))) throw new Error(`--against ${dir}: no build/index.js (run npm run build there)`);
  return start;
}

/** One timed GET of a page: wall-clock ms, bytes, charts. */
async function timePage(url: string, cookie: string, p: string) {
  const t0 = performance.now();
  const res = await fetch(url + p, { headers: { Cookie: cookie }, redirect: "manual" });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${p}: ${res.status} ${body.slice(0, 200)}`);
  return { ms: performance.now() - t0, bytes: body.length, svg: (body.match(/<svg/g) ?? []).length };
}

/**
 * A label revision in the database `file` (a new data version: every memoised figure is recomputed): the first
 * assignment's latest label flips (Yes/No), or is given again (scores), as a new revision.
 */
function reviser(file: string) {
  const w = openDatabase(file);
  const dw = dalOf(w);
  return {
    revise: () =>
      dw.tx(async (q) => {
        const [asg] = await dw.rows<{ assignment_id: number; rev: number; label: string }>(
          sql`SELECT assignment_id, MAX(revision) AS rev, label FROM annotations GROUP BY assignment_id ORDER BY assignment_id LIMIT 1`,
          q,
        );
        const next = asg.label === '"Yes"' ? '"No"' : asg.label === '"No"' ? '"Yes"' : asg.label;
        await q.insert(dw.t.annotations).values({
          assignmentId: asg.assignment_id,
          revision: Number(asg.rev) + 1,
          label: JSON.parse(next) as unknown,
          status: "submitted",
          durationMs: 5000,
        });
      }),
    close: () => w.$client.close(),
  };
}

/**
 * --against DIR: this build and another checkout's, each on its own copy of the same database, measured in pairs.
 * Each pair revises a label in both databases and requests the page from both, the order alternating (A B, B A, …),
 * so a change in the machine's load (other tenants of a shared VM) falls on both sides of a pair alike, instead of on
 * whichever build ran in that minute. The ratio per pair (ours / theirs) is summarised by its geometric mean with a
 * 95% interval (normal approximation on the log ratios: t-quantiles differ by under 2% from 30 pairs on).
 */
async function pairedAgainst(dir: string, file: string, password: string, pages: readonly (readonly [string, string])[]) {
  const theirFile = file.replace(/\.db$/, "-against.db");
  fs.copyFileSync(file, theirFile);
  const sides = [
    { name: "this build", file, server: await startServer(file) },
    { name: path.basename(dir), file: theirFile, server: await startServer(theirFile, dir) },
  ];
  try {
    const s = await Promise.all(
      sides.map(async (x) => ({ ...x, cookie: await signInOverHttp(x.server.url, "bench@example.test", password), db: reviser(x.file) })),
    );
    // Warm both processes (route modules, rendering, the connection), then three unmeasured revisions per page each.
    for (const x of s) {
      await timePage(x.server.url, x.cookie, "/p/bench/reports");
      for (const [, p] of pages)
        for (let i = 0; i < 3; i++) {
          await x.db.revise();
          await timePage(x.server.url, x.cookie, p);
        }
    }
    console.log(`\nAfter a label revision, ${REVISIONS} pairs per page against ${dir} (order alternating within pairs):`);
    for (const [name, p] of pages) {
      const ms: [number[], number[]] = [[], []];
      const logRatios: number[] = [];
      for (let i = 0; i < REVISIONS; i++) {
        const got: number[] = [];
        for (const k of i % 2 ? [1, 0] : [0, 1]) {
          await s[k].db.revise();
          got[k] = (await timePage(s[k].server.url, s[k].cookie, p)).ms;
          ms[k].push(got[k]);
        }
        logRatios.push(Math.log(got[0] / got[1]));
      }
      const m = logRatios.reduce((a, b) => a + b, 0) / logRatios.length;
      const sd = Math.sqrt(logRatios.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, logRatios.length - 1));
      const se = sd / Math.sqrt(logRatios.length);
      console.log(
        `${name.padEnd(22)} ${s[1].name} median ${median(ms[1]).toFixed(0)} ms, this build median ${median(ms[0]).toFixed(0)} ms; ` +
          `ratio (this / ${s[1].name}) ${Math.exp(m).toFixed(3)}, 95% CI ${Math.exp(m - 1.96 * se).toFixed(3)}–${Math.exp(m + 1.96 * se).toFixed(3)}`,
      );
    }
    for (const x of s) x.db.close();
  } finally {
    for (const x of sides) await x.server.stop();
    fs.rmSync(theirFile, { force: true });
  }
}

/** build/index.js is missing, or older than a file under app/ (then the server would run old code). */
function buildIsStale(): boolean {
  const built = path.join(root, "build", "index.js");
  if (!fs.existsSync(built)) return true;
  const t = fs.statSync(built).mtimeMs;
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = path.join(dir, e.name);
      return Math.max(m, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
    }, 0);
  return newest(path.join(root, "app")) > t;
}

async function main() {
  if (buildIsStale()) {
    console.log("Building the Remix app (build/ missing or older than app/)…");
    execFileSync(process.execPath, [path.join(root, "node_modules/@remix-run/dev/dist/cli.js"), "build"], { cwd: root, stdio: "inherit" });
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-reports-"));
  const file = path.join(dir, "bench.db");
  const t = performance.now();
  const { taskId, password, annotations, units } = await buildDatabase(file);
  const perUnit = KIND === "writing-quality" ? 3 : 1;
  console.log(
    `Database: ${KIND} task, ${annotations} annotations on ${units} units${perUnit > 1 ? ` (${perUnit} responses scored per annotation: ${annotations * perUnit} scores)` : ""}, 3 annotators, 2 judges × ${units * perUnit} verdicts (${((performance.now() - t) / 1000).toFixed(1)} s to build)`,
  );
  if (process.argv.includes("--profile")) {
    // In-process phases of the agreement page, to see where cold time goes.
    process.env.DATABASE_URL = file;
    const { findTask, loadTaskData } = await import("../app/reports/load.server");
    const { interAnnotatorAgreement, perAnnotator, breakdowns, biasChecks } = await import("../app/reports/agreement");
    const { finalLabels } = await import("../app/reports/finalLabels");
    const phase = <T>(name: string, f: () => T): T => {
      const t0 = performance.now();
      const v = f();
      console.log(`  ${name.padEnd(28)} ${(performance.now() - t0).toFixed(0).padStart(6)} ms`);
      return v;
    };
    const phaseAsync = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const v = await f();
      console.log(`  ${name.padEnd(28)} ${(performance.now() - t0).toFixed(0).padStart(6)} ms`);
      return v;
    };
    for (const pass of ["first pass (cold JIT)", "second pass"]) {
      console.log(pass);
      const task = (await phaseAsync("findTask", () => findTask(1, taskId)))!;
      const data = await phaseAsync("loadTaskData", () => loadTaskData(task));
      const final = phase("finalLabels", () => finalLabels(data, "majority"));
      phase("interAnnotatorAgreement", () => interAnnotatorAgreement(data));
      phase("perAnnotator", () => perAnnotator(data));
      phase("breakdowns", () => breakdowns(data, final));
      phase("biasChecks", () => biasChecks(data));
    }
  }
  const pages = [
    ["Agreement page", `/p/bench/reports/${taskId}`],
    ["Judge–human page", `/p/bench/reports/${taskId}/judges`],
    ["Disagreements page", `/p/bench/reports/${taskId}/disagreements`],
    ["CSV (IAA table)", `/p/bench/reports/${taskId}/csv?table=iaa`],
    ["Agreement page, rule=adjudication", `/p/bench/reports/${taskId}?rule=adjudication`],
  ] as const;
  if (AGAINST) {
    try {
      await pairedAgainst(AGAINST, file, password, pages.slice(0, 2));
    } finally {
      if (!process.argv.includes("--keep")) fs.rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const server = await startServer(file);
  try {
    const cookie = await signInOverHttp(server.url, "bench@example.test", password);
    const time = (p: string) => timePage(server.url, cookie, p);
    // Warm the process (route modules, React rendering, the DB connection) with the reports list page,
    // which computes no report: "cold" below means no report figure is memoised yet, not a fresh process.
    const first = await time(`/p/bench/reports`);
    console.log(`Process warm-up (reports list, first request after start): ${first.ms.toFixed(0)} ms`);
    console.log(
      `\n${"Page".padEnd(36)} ${"cold ms".padStart(9)} ${"warm ms (median)".padStart(17)} ${"KB".padStart(6)} ${"SVGs".padStart(5)}  target ${TARGET_MS} ms`,
    );
    let worstWarm = 0;
    for (const [name, p] of pages) {
      const cold = await time(p);
      const warm: number[] = [];
      for (let i = 0; i < RUNS; i++) warm.push((await time(p)).ms);
      warm.sort((a, b) => a - b);
      const med = warm[Math.floor(warm.length / 2)];
      worstWarm = Math.max(worstWarm, med);
      console.log(
        `${name.padEnd(36)} ${cold.ms.toFixed(0).padStart(9)} ${med.toFixed(1).padStart(17)} ${(cold.bytes / 1024).toFixed(0).padStart(6)} ${String(cold.svg).padStart(5)}  ${med < TARGET_MS ? "ok" : "SLOW"}${cold.ms < TARGET_MS ? "" : " (cold over target)"}`,
      );
    }
    // A label is revised: the data version changes, every memoised figure is recomputed (the realistic cold case).
    const w = reviser(file);
    const revise = w.revise;
    let worstCold = 0;
    console.log(`\nAfter a label revision (new data version, nothing memoised):`);
    for (const [name, p] of pages.slice(0, 2)) {
      const runs: number[] = [];
      for (let i = 0; i < REVISIONS; i++) {
        await revise();
        runs.push((await time(p)).ms);
      }
      runs.sort((a, b) => a - b);
      const q = (f: number) => runs[Math.min(runs.length - 1, Math.floor(f * runs.length))];
      const med = median(runs);
      worstCold = Math.max(worstCold, med);
      const shown = runs.length <= 5 ? runs.map((x) => x.toFixed(0)).join(", ") : `quartiles ${q(0.25).toFixed(0)}–${q(0.75).toFixed(0)}`;
      console.log(
        `${name.padEnd(36)} cold after revision (${runs.length}): ${shown} ms (median ${med.toFixed(0)})  ${med < TARGET_MS ? "ok" : "SLOW"}`,
      );
    }
    w.close();
    console.log(
      `\nWarm: every page under ${TARGET_MS} ms: ${worstWarm < TARGET_MS ? "yes" : "NO"} (worst median ${worstWarm.toFixed(1)} ms).`,
    );
    console.log(
      `Cold after a label revision: every page under ${TARGET_MS} ms: ${worstCold < TARGET_MS ? "yes" : "NO"} (worst median ${worstCold.toFixed(0)} ms).`,
    );
    console.log(
      `Machine load (uptime): ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(", ")} on ${os.cpus().length} cores.`,
    );
    console.log(
      "Cold = first request for the page's figures (nothing memoised; the process was warmed by the reports list); warm = memoised report for the same data version.",
    );
  } finally {
    await server.stop();
    if (!process.argv.includes("--keep")) fs.rmSync(dir, { recursive: true, force: true });
    else console.log(`Kept ${file}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
