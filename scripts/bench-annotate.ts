/**
 * npm run bench:annotate — starts the production server on a temporary
 * database seeded with 50 annotators and three tasks, then drives 50
 * concurrent annotators over loopback: each signs in, opens its next unit and
 * submits a label, again and again, with one in five submits retried with the
 * same idempotency token (a double click). Bounded in count (units per
 * annotator) and time (BENCH_SECONDS, default 60). Reports submit latency
 * (p50, p95) and throughput, then counts rows to prove that nothing was lost
 * or duplicated. Options: BENCH_ANNOTATORS (50), BENCH_ITEMS (200), BENCH_THINK_MS
 * (1000: each annotator pauses 0.5–1.5 s on a unit before submitting, as people
 * do; 0 turns the bench into a closed-loop saturation test).
 *
 * --with-import: while the annotators work, a researcher imports a
 * BENCH_IMPORT_ROWS-row (100,000) responses CSV through the import page over
 * HTTP (upload, preview, confirm); submit latency is reported for the time the
 * import runs, with the import's own durations and how long it held the
 * database's write lock (the longest hold, how many, all together).
 * BENCH_ITEMS defaults to 1000 then, so the annotators have work for the
 * whole import. BENCH_IMPORT_PRESET=labels-long imports a labels file of as
 * many rows instead (units × 4 annotators: a new dataset and task), where the
 * responses file adds rows to existing items (copied in chunks marked with
 * the import, shown by the last transaction: see the README's import section).
 *
 * What does not depend on how busy the machine is, reported beside the
 * latencies (which do): every write-lock hold of the import, from the import
 * process's own log (CONCORD_IMPORT_LOCK_LOG, app/formats/stage.server.ts) —
 * how many, rows per hold, CPU milliseconds per hold next to wall-clock ones —
 * and the server's CPU time per POST (from /proc), with the load average at
 * the start and the end of the import. --server-cpu-prof DIR writes the
 * server's CPU profile into DIR.
 *
 * --database postgres: the seeded database is copied (db:copy's copyDatabase) into a throw-away PostgreSQL
 * cluster (tests/support/pg.ts: Debian's postgresql, fsync off) and the server runs on it
 * (DATABASE_URL=postgres://…); the cluster's CPU and the transactions PostgreSQL rolled back (each a
 * serialization conflict the server retried) are reported too, and the rows are counted in a copy back to SQLite.
 */
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql, type SQL } from "drizzle-orm";
import { seedAnnotationScenario } from "../app/annotation/synthetic.server";
import { countOf, dalOf } from "../app/dal.server";
import { openDatabase } from "../db/client";
import { copyDatabase } from "../db/copy";
import { postgresCopy } from "../tests/support/pg";
import { SERVER_NODE_FLAGS } from "./server-flags";
import { csrfToken, importOverHttp, signInOverHttp, writeResponsesFile, type ImportOutcome } from "./import-http";
import { procCpuS } from "../tests/support/proc-cpu";

const root = path.resolve(import.meta.dirname, "..");
const ANNOTATORS = Number(process.env.BENCH_ANNOTATORS ?? 50);
const WITH_IMPORT = process.argv.includes("--with-import");
/** --server-cpu-prof DIR: the server writes a CPU profile into DIR when it ends (diagnostics). */
const PROF_AT = process.argv.indexOf("--server-cpu-prof");
const SERVER_PROF_DIR = PROF_AT >= 0 ? process.argv[PROF_AT + 1] : undefined;
const ITEMS = Number(process.env.BENCH_ITEMS ?? (WITH_IMPORT ? 1000 : 200));
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const IMPORT_PRESET = process.env.BENCH_IMPORT_PRESET ?? "responses";
if (!["responses", "labels-long"].includes(IMPORT_PRESET)) throw new Error("BENCH_IMPORT_PRESET: responses or labels-long");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
/** Mean pause between opening a unit and submitting it (a person reading); 0 = closed loop, saturation. */
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000);
const PASSWORD = "bench-annotate-2026";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ROUTE = "routes/p.$slug.tasks.$taskId.annotate";
const DATABASE = process.argv.includes("--database") ? process.argv[process.argv.indexOf("--database") + 1] : "sqlite";
if (DATABASE !== "sqlite" && DATABASE !== "postgres") throw new Error(`--database: sqlite or postgres, not ${DATABASE}`);

/** A labels-long CSV of `rows` labels: rows / 4 units, each labelled by the same 4 annotators. */
function writeLabelsFile(file: string, rows: number): number {
  const annotators = ["coder-1", "coder-2", "coder-3", "coder-4"];
  const lines = ["unit,annotator,label,text"];
  for (let u = 1; lines.length <= rows; u++)
    for (const a of annotators)
      if (lines.length <= rows) lines.push(`unit-${u},${a},${(u + a.length) % 3 ? "Yes" : "No"},What unit ${u} shows`);
  fs.writeFileSync(file, lines.join("\n") + "\n");
  return lines.length - 1;
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); 0 elsewhere. */
const serverCpuMs = (pid: number | undefined): number => (procCpuS(pid) ?? 0) * 1000;

function quantile(sorted: number[], q: number) {
  if (sorted.length === 0) return NaN;
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (i - lo);
}

async function main() {
  if (!fs.existsSync(path.join(root, "build", "index.js"))) {
    console.log("Building the app…");
    execFileSync(process.execPath, [path.join(root, "node_modules/@remix-run/dev/dist/cli.js"), "build"], { cwd: root, stdio: "inherit" });
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-bench-annotate-"));
  const file = path.join(dir, "bench.db");
  const db = openDatabase(file);
  console.log(`Seeding ${ANNOTATORS} annotators, ${ITEMS} items, three tasks (k = 2)…`);
  const scenario = await seedAnnotationScenario(db, {
    annotators: ANNOTATORS,
    items: ITEMS,
    overlap: 2,
    password: PASSWORD,
    kinds: ["checklist-appropriateness", "writing-quality", "best-of-n"],
  });
  db.$client.close();
  const onPg = DATABASE === "postgres" ? await postgresCopy(file, "bench_annotate") : null;
  if (onPg) console.log("Copied into a throw-away PostgreSQL cluster; the server runs on it.");

  const lockLog = path.join(dir, "lock-holds.jsonl");
  const profFlags = SERVER_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(SERVER_PROF_DIR)}`] : [];
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...profFlags, "scripts/cli.mjs", "server"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: onPg ? onPg.url : file,
      ...(onPg ? { CONCORD_STATE_DIR: path.join(dir, "state") } : {}),
      PORT: "0",
      NODE_ENV: "production",
      CONCORD_IMPORT_LOCK_LOG: lockLog,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 30_000);
    child.stdout!.on("data", () => {
      const m = out.match(/running at (http:\/\/localhost:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace("localhost", "127.0.0.1"));
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  const host = new URL(base).host;

  const latencies: number[] = [];
  /** [start, latency] of every submit, to pick those sent while the import ran. */
  const timed: [number, number][] = [];
  let submits = 0;
  let retries = 0;
  let failures = 0;
  let deadline = Date.now() + SECONDS * 1000;
  let importRunning = false;

  const signIn = (email: string) => signInOverHttp(base, email, PASSWORD);

  async function annotator(cookie: string, index: number) {
    const csrf = await csrfToken(base, cookie);
    // People do not all arrive in the same millisecond: starts are spread over the first two seconds.
    if (THINK_MS > 0) await sleep((2000 * index) / ANNOTATORS);
    let n = 0;
    for (const [kind, taskId] of Object.entries(scenario.tasks)) {
      const pathName = `/p/${scenario.slug}/tasks/${taskId}/annotate`;
      while (Date.now() < deadline || importRunning) {
        const res = await fetch(`${base}${pathName}?_data=${encodeURIComponent(ROUTE)}`, { headers: { Cookie: cookie } });
        if (res.status !== 200) throw new Error(`GET ${pathName}: ${res.status}`);
        const data = (await res.json()) as {
          page: null | { unit: { unitId: number; responses: { letter: string }[] } };
          clientToken: string;
          openedAt: number;
        };
        if (!data.page) break;
        const form = new URLSearchParams({
          intent: "submit",
          unitId: String(data.page.unit.unitId),
          clientToken: data.clientToken,
          durationMs: String(1000 + n),
        });
        if (csrf) form.set("_csrf", csrf);
        if (kind === "checklist-appropriateness") form.set("answer", n % 3 ? "Yes" : "No");
        else if (kind === "writing-quality")
          data.page.unit.responses.forEach((r, i) => form.set(`score.${r.letter}`, String(3 + ((i + n) % 3))));
        else form.set("best", data.page.unit.responses[n % data.page.unit.responses.length].letter);
        if (THINK_MS > 0) await sleep(THINK_MS * (0.5 + Math.random()));
        const send = async () => {
          const t0 = performance.now();
          const r = await fetch(`${base}${pathName}`, {
            method: "POST",
            redirect: "manual",
            headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Host: host, Cookie: cookie },
            body: form,
          });
          await r.arrayBuffer();
          latencies.push(performance.now() - t0);
          timed.push([t0, performance.now() - t0]);
          if (r.status !== 302) failures++;
          return r.status;
        };
        if (n % 5 === index % 5) {
          // A double click: the same form twice at once.
          await Promise.all([send(), send()]);
          retries++;
        } else await send();
        submits++;
        n++;
      }
    }
  }

  // Sign-in (scrypt) is not what is measured: everyone signs in first.
  const cookies = await Promise.all(scenario.annotators.map((a) => signIn(a.email)));
  let importFile = "";
  let importRows = 0;
  if (WITH_IMPORT && IMPORT_PRESET === "responses") {
    importFile = path.join(dir, "responses-100k.csv");
    const models = Math.ceil(IMPORT_ROWS / ITEMS);
    importRows = writeResponsesFile(importFile, ITEMS, models);
    console.log(`Import file: ${importRows} responses (${(fs.statSync(importFile).size / 1024 / 1024).toFixed(1)} MB)`);
  } else if (WITH_IMPORT) {
    importFile = path.join(dir, "labels-100k.csv");
    importRows = writeLabelsFile(importFile, IMPORT_ROWS);
    console.log(`Import file: ${importRows} labels (${(fs.statSync(importFile).size / 1024 / 1024).toFixed(1)} MB)`);
  }
  const researcherCookie = WITH_IMPORT ? await signIn("researcher@lab.test") : "";
  // A backend reports its statistics when idle, at most 10 s later: the sign-ins' are counted before the start.
  if (onPg) await sleep(11_000);
  deadline = Date.now() + SECONDS * 1000;
  const t0 = performance.now();
  const cpu0 = serverCpuMs(child.pid);
  const pgCpu0 = onPg?.cpuS() ?? null;
  const rollbacks0 = onPg ? await onPg.rollbacks() : 0;
  let loadAtImport: number[] = [];
  let importWindow: [number, number] | undefined;
  let imported: ImportOutcome | undefined;
  let importError: unknown;
  const importRun = WITH_IMPORT
    ? (async () => {
        await sleep(3000); // the annotators are at work first
        importRunning = true;
        loadAtImport = os.loadavg();
        const start = performance.now();
        try {
          imported = await importOverHttp(base, researcherCookie, {
            slug: scenario.slug,
            preset: IMPORT_PRESET,
            file: importFile,
            fileName: path.basename(importFile),
          });
        } catch (err) {
          importError = err;
        } finally {
          importWindow = [start, performance.now()];
          importRunning = false;
          // As long again after the import (up to 20 s), for the latency without it under the same load.
          deadline = Date.now() + Math.min(20_000, performance.now() - start);
        }
      })()
    : Promise.resolve();
  const results = await Promise.allSettled([...cookies.map((c, i) => annotator(c, i)), importRun]);
  const seconds = (performance.now() - t0) / 1000;
  const serverCpu = serverCpuMs(child.pid) - cpu0;
  const pgCpu = onPg && pgCpu0 !== null ? (onPg.cpuS() ?? pgCpu0) - pgCpu0 : null;
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  // The server's connections have closed, so their statistics have reached pg_stat_database.
  const rollbacks = onPg ? (await onPg.rollbacks()) - rollbacks0 : 0;
  if (onPg) {
    await copyDatabase({ kind: "postgres", url: onPg.url }, { kind: "sqlite", file: path.join(dir, "back.db") });
    await onPg.stop();
  }
  const errors = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];

  const check = openDatabase(onPg ? path.join(dir, "back.db") : file);
  const checkDal = dalOf(check);
  const q = (query: SQL) => countOf(checkDal, query);
  // The annotators' tasks only (an imported labels file brings submitted labels of its own).
  const ours = sql`(select a.id from assignments a join units u on u.id = a.unit_id where u.task_id in (${sql.join(
    Object.values(scenario.tasks).map((id) => sql`${id}`),
    sql`, `,
  )}))`;
  const annotations = await q(sql`select count(*) as n from annotations where status = 'submitted' and assignment_id in ${ours}`);
  const submittedAssignments = await q(sql`select count(*) as n from assignments where status = 'submitted' and id in ${ours}`);
  const duplicates = await q(
    sql`select count(*) as n from (select assignment_id from annotations where assignment_id in ${ours} group by assignment_id having count(*) > 1)`,
  );
  const orphans = await q(
    sql`select count(*) as n from assignments a where a.status = 'submitted' and a.id in ${ours} and not exists (select 1 from annotations an where an.assignment_id = a.id and an.status = 'submitted')`,
  );
  const importedRows =
    IMPORT_PRESET === "responses"
      ? await q(sql`select count(*) as n from responses where model like 'bench-model-%'`)
      : await q(
          sql`select count(*) as n from annotations an join assignments a on a.id = an.assignment_id join units u on u.id = a.unit_id join tasks t on t.id = u.task_id where t.kind = 'imported-labels'`,
        );
  check.$client.close();
  const holds = fs.existsSync(lockLog)
    ? fs
        .readFileSync(lockLog, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { kind: string; rows: number; wallMs: number; cpuMs: number; commitMs?: number })
    : [];
  fs.rmSync(dir, { recursive: true, force: true });

  const sorted = latencies.sort((a, b) => a - b);
  const p50 = quantile(sorted, 0.5);
  const p95 = quantile(sorted, 0.95);
  console.log(
    `\n${ANNOTATORS} concurrent annotators on ${DATABASE === "postgres" ? "PostgreSQL" : "SQLite"}, think time ${THINK_MS} ms mean, ${seconds.toFixed(1)} s`,
  );
  console.log(
    `submits: ${submits} labels (${retries} sent twice as double clicks), ${latencies.length} POSTs, ${failures} non-redirect answers`,
  );
  console.log(`submit latency: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (target p95 < 50 ms: ${p95 < 50 ? "met" : "MISSED"})`);
  console.log(`throughput: ${(submits / seconds).toFixed(1)} labels/s (${(latencies.length / seconds).toFixed(1)} POST/s)`);
  if (serverCpu > 0)
    console.log(
      `server CPU: ${(serverCpu / 1000).toFixed(1)} s for ${latencies.length} POSTs and their page loads, ${(serverCpu / latencies.length).toFixed(1)} ms per POST`,
    );
  if (onPg)
    console.log(
      `PostgreSQL: ${pgCpu === null ? "CPU not reported" : `${pgCpu.toFixed(1)} s of CPU, ${((1000 * pgCpu) / latencies.length).toFixed(1)} ms per POST`}; ${rollbacks} transactions rolled back (serialization conflicts the server retried)`,
    );
  console.log(
    `rows: ${annotations} submitted annotations, ${submittedAssignments} submitted assignments, ${duplicates} duplicated, ${orphans} lost`,
  );
  if (WITH_IMPORT) {
    if (importError || !imported || !importWindow) console.log(`import FAILED: ${importError}`);
    else {
      const during = timed
        .filter(([start]) => start >= importWindow![0] && start <= importWindow![1])
        .map(([, ms]) => ms)
        .sort((a, b) => a - b);
      const d50 = quantile(during, 0.5);
      const d95 = quantile(during, 0.95);
      const outside = timed
        .filter(([start]) => start < importWindow![0] || start > importWindow![1])
        .map(([, ms]) => ms)
        .sort((a, b) => a - b);
      console.log(
        `submit latency without the import, same run (${outside.length} POSTs): p50 ${quantile(outside, 0.5).toFixed(1)} ms, p95 ${quantile(outside, 0.95).toFixed(1)} ms; load average ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(" ")}`,
      );
      const { lockMs, lockHolds, lockTotalMs } = imported.summary as { lockMs: number; lockHolds?: number; lockTotalMs?: number };
      console.log(
        `import: ${importRows} ${IMPORT_PRESET === "responses" ? "responses" : "labels"} through the import page: preview ${imported.previewSeconds.toFixed(1)} s, confirm ${imported.confirmSeconds.toFixed(1)} s, ` +
          `write lock held at most ${lockMs.toFixed(0)} ms at a time (${lockHolds ?? 1} holds, ${(lockTotalMs ?? lockMs).toFixed(0)} ms in all), ${importedRows} rows on disk`,
      );
      console.log(
        `submit latency during the import (${during.length} POSTs): p50 ${d50.toFixed(1)} ms, p95 ${d95.toFixed(1)} ms (target p95 < 100 ms: ${d95 < 100 ? "met" : "MISSED"})`,
      );
      // Split at the end of the preview (the check alone) and the confirm (the check again, then the write).
      const cut = importWindow[0] + imported.previewSeconds * 1000;
      const part = (lo: number, hi: number) => {
        const xs = timed
          .filter(([start]) => start >= lo && start < hi)
          .map(([, ms]) => ms)
          .sort((a, b) => a - b);
        return `${xs.length} POSTs, p50 ${quantile(xs, 0.5).toFixed(1)} ms, p95 ${quantile(xs, 0.95).toFixed(1)} ms`;
      };
      console.log(`  during the preview: ${part(importWindow[0], cut)}; during the confirm: ${part(cut, importWindow[1] + 1)}`);
      console.log(
        `  load average at the import's start ${loadAtImport.map((x) => x.toFixed(1)).join(" ")}, at its end ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(" ")}`,
      );
      for (const kind of ["reserve", "chunk", "final", "delete"]) {
        const hs = holds.filter((h) => h.kind === kind);
        if (hs.length === 0) continue;
        const q = (f: (h: (typeof hs)[number]) => number) => {
          const xs = hs.map(f).sort((a, b) => a - b);
          return `p50 ${quantile(xs, 0.5).toFixed(1)}, p95 ${quantile(xs, 0.95).toFixed(1)}, max ${xs.at(-1)!.toFixed(1)}`;
        };
        const rows = hs.map((h) => h.rows).sort((a, b) => a - b);
        console.log(
          `  lock holds, ${kind}: ${hs.length}, rows ${rows.reduce((a, b) => a + b, 0)} (per hold p50 ${quantile(rows, 0.5).toFixed(0)}, max ${rows.at(-1)}); ` +
            `CPU ms ${q((h) => h.cpuMs)}; wall ms ${q((h) => h.wallMs)}` +
            (hs.some((h) => h.commitMs !== undefined) ? `; of which COMMIT ms ${q((h) => h.commitMs ?? 0)}` : ""),
        );
      }
    }
  }
  const importOk = !WITH_IMPORT || (!importError && importedRows === importRows && imported?.summary.committed === true);
  const ok =
    importOk &&
    errors.length === 0 &&
    failures === 0 &&
    annotations === submits &&
    submittedAssignments === submits &&
    duplicates === 0 &&
    orphans === 0;
  if (errors.length) console.log(`errors: ${errors.length}; first: ${errors[0].reason}`);
  console.log(ok ? "Nothing lost, nothing duplicated." : "CHECK FAILED");
  process.exit(ok ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
