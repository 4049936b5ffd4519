/**
 * Runs from the command line, on the database named by DATABASE_URL.
 *
 *   npm run runs -- start --project SLUG --config FILE [--detach]
 *   npm run runs -- status RUN_ID
 *   npm run runs -- pause|resume|cancel|retry-failed RUN_ID
 *
 * `start` runs the jobs in this process until the run finishes (progress on
 * stderr); with --detach it only queues them for `npm run worker` or the server.
 * The config file is JSON: see RunDefinition in app/runs/runner.server.ts. On SQLite and on PostgreSQL
 * (DATABASE_URL=postgres://…; the API keys then need CONCORD_ENCRYPTION_KEY).
 */
import { eq } from "drizzle-orm";
import { readJsonFile } from "../app/files.server";
import { env } from "../app/env.server";
import { databasePathFromEnv, getDb } from "../db/client";
import { isPostgresUrl, openPgDatabase } from "../db/client-pg";
import { closeDal, first, initDal, type Dal } from "../app/dal.server";
import { controlRun, runProgress, Worker, type RunControl } from "../app/runs/runner.server";
import { RunDefinitionError, startRun } from "../app/runs/run-form.server";
import { PgWorker } from "../app/runs/pg/worker.server";

const [cmd, ...rest] = process.argv.slice(2);
const flag = (name: string) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? rest[i + 1] : undefined;
};
const fail = (msg: string): never => {
  console.error(`runs: ${msg}`);
  process.exit(1);
};

const location = databasePathFromEnv();
const onPostgres = isPostgresUrl(location);

async function show(d: Dal, runId: number) {
  const p = (await runProgress(d, runId)) ?? fail(`run ${runId} not found`);
  const eta = p.etaSeconds == null ? "?" : `${p.etaSeconds}s`;
  return `run ${runId} ${p.status}: ${p.done} done, ${p.failed} failed, ${p.remaining} remaining of ~${p.total}; ${p.throughput.toFixed(1)} jobs/s, ETA ${eta}; tokens ${p.promptTokens}+${p.completionTokens}${p.cost != null ? `, cost ${p.cost.toFixed(4)}` : ""}; ${p.calls} provider calls${p.interruptedCalls ? ` (${p.interruptedCalls} interrupted: prompt tokens estimated)` : ""}`;
}

async function main() {
  const d = await initDal(location);
  if (cmd === "start") {
    const slug = flag("project") ?? fail("--project SLUG is required");
    const file = flag("config") ?? fail("--config FILE is required");
    const project = first(await d.q.select().from(d.t.projects).where(eq(d.t.projects.slug, slug))) ?? fail(`no project "${slug}"`);
    let def: unknown;
    try {
      // Never the database file (opening it again would drop this process's locks), and never its content in the message.
      def = readJsonFile(file, { databaseFile: onPostgres ? undefined : location });
    } catch (err) {
      fail(`cannot read ${file}: ${(err as Error).message}`);
    }
    let run;
    try {
      // The Runs page's and the HTTP API's path: the same definition check (every problem, each naming its field), then createRun.
      run = await startRun(d, project.id, def, null);
    } catch (err) {
      if (err instanceof RunDefinitionError) fail(`${file}: ${err.problems.map((p) => p.message).join(" ")}`);
      fail(`${file}: ${(err as Error).message}`);
    }
    console.log(`run ${run!.id} created with ${run!.jobs} initial jobs`);
    if (rest.includes("--detach")) return;
    const options = { concurrency: env().WORKER_CONCURRENCY, pollMs: 100, untilIdle: true, runId: run!.id };
    // This process drains the run, beside any workers already serving the database (the provider's limits hold across all).
    const pg = onPostgres ? await openPgDatabase(location, { max: env().WORKER_PG_POOL }) : null;
    const worker = pg ? new PgWorker(pg, options).start() : new Worker(getDb(), options).start();
    const timer = setInterval(() => void show(d, run!.id).then((line) => console.error(line)), 2000);
    await worker.done;
    clearInterval(timer);
    await pg?.$client.end();
    console.log(await show(d, run!.id));
    return;
  }
  const id = Number(rest[0]);
  if (!Number.isInteger(id)) fail(`usage: runs start --project SLUG --config FILE | runs status|pause|resume|cancel|retry-failed RUN_ID`);
  if (cmd === "status") console.log(await show(d, id));
  else if (["pause", "resume", "cancel", "retry-failed"].includes(cmd)) {
    try {
      console.log(`run ${id}: ${await controlRun(d, id, cmd as RunControl)}`);
    } catch (err) {
      fail((err as Error).message);
    }
  } else fail(`unknown command "${cmd ?? ""}"`);
}

main().then(
  async () => {
    await closeDal();
    process.exit(0);
  },
  (err: unknown) => fail((err as Error).message),
);
