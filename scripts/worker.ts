/**
 * Runs a worker as its own process on the database named by DATABASE_URL.
 * Several workers may share one database; each claims jobs under a lease,
 * renews a heartbeat while alive (a restarted worker takes a dead one's jobs
 * at once when its process is gone), and every provider's concurrency and
 * requests per minute hold across all of them (app/runs/providers/shared-limits.server.ts).
 *
 *   npm run worker [-- --concurrency 16 --prefetch 4 --lease-ms 60000 --poll-ms 500 --until-idle --run RUN_ID --call-log full|compact --pg-pool 4]
 * Environment equivalents: WORKER_CONCURRENCY, WORKER_PREFETCH, WORKER_LEASE_MS, WORKER_POLL_MS, WORKER_CALL_LOG;
 * WORKER_PG_POOL (4, --pg-pool): the PostgreSQL worker's connections.
 *
 * DATABASE_URL=postgres://… runs the PostgreSQL worker (app/runs/pg/worker.server.ts) on any number of
 * machines; API keys are then decrypted with CONCORD_ENCRYPTION_KEY (there is no key file beside the database).
 */
import { databasePathFromEnv, openDatabase } from "../db/client";
import { isPostgresUrl, openPgDatabase } from "../db/client-pg";
import { env, type Env } from "../app/env.server";
import { PgWorker } from "../app/runs/pg/worker.server";
import { defaultPrefetch, Worker } from "../app/runs/runner.server";
import { sendDueDeliveries, WebhookSender } from "../app/webhooks/sender.server";

const argv = process.argv.slice(2);
// A flag overrides its environment variable; both are checked by the env schema.
const FLAGS = {
  concurrency: "WORKER_CONCURRENCY",
  prefetch: "WORKER_PREFETCH",
  "lease-ms": "WORKER_LEASE_MS",
  "poll-ms": "WORKER_POLL_MS",
  "call-log": "WORKER_CALL_LOG",
  "pg-pool": "WORKER_PG_POOL",
} as const;
for (const [flag, name] of Object.entries(FLAGS)) {
  const i = argv.indexOf(`--${flag}`);
  if (i >= 0) process.env[name] = argv[i + 1] ?? "";
}
let settings: Env;
try {
  settings = env();
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

const runIdx = argv.indexOf("--run");
const concurrency = settings.WORKER_CONCURRENCY;
const options = {
  concurrency,
  prefetch: settings.WORKER_PREFETCH ?? defaultPrefetch(concurrency),
  callLog: settings.WORKER_CALL_LOG,
  leaseMs: settings.WORKER_LEASE_MS,
  pollMs: settings.WORKER_POLL_MS,
  untilIdle: argv.includes("--until-idle"),
  runId: runIdx >= 0 ? Number(argv[runIdx + 1]) : undefined,
};
const url = settings.DATABASE_URL;
let worker: Worker | PgWorker;
let closeDb: () => Promise<void> = async () => {};
if (isPostgresUrl(url)) {
  let pg: Awaited<ReturnType<typeof openPgDatabase>>;
  try {
    // A few connections serve every job: each claim, admission and store is one short statement (app/runs/pg/queue.server.ts),
    // and fewer server processes cost the database less CPU (bench:runs: 36 connections per worker took 2.4× the CPU of 2).
    pg = await openPgDatabase(url, { max: settings.WORKER_PG_POOL });
  } catch (err) {
    // The driver's message, never the URL (it may hold a password).
    console.error(`Concord worker: cannot open the PostgreSQL database: ${(err as Error).message}`);
    process.exit(2);
  }
  worker = new PgWorker(pg, options).start();
  closeDb = () => pg.$client.end();
  console.log(`Concord worker ${worker.id} started on PostgreSQL`);
} else {
  worker = new Worker(openDatabase(databasePathFromEnv()), options).start();
  console.log(`Concord worker ${worker.id} started on ${databasePathFromEnv()}`);
}

// Webhook deliveries (app/webhooks/sender.server.ts): the run.finished events this worker emits go out from here
// (and from any server or other worker: deliveries are claimed under a lease).
const webhookSender = new WebhookSender().start();
/** Stops the sender; with `flush`, sends what is due once more (an --until-idle worker's last run.finished). */
const stopWebhooks = async (flush: boolean) => {
  await webhookSender.stop();
  if (flush) await sendDueDeliveries().catch(() => 0);
};

/** CPU time this process used (user + system), for the operator and bench:runs. */
const cpuSeconds = () => {
  const c = process.cpuUsage();
  return ((c.user + c.system) / 1e6).toFixed(2);
};

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log("Concord worker: finishing in-flight jobs…");
  await worker.stop();
  await stopWebhooks(false);
  await closeDb();
  console.log(`Concord worker ${worker.id}: stopped, ${worker.processed} jobs processed, ${cpuSeconds()} s of CPU.`);
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
worker.done.then(
  async () => {
    await stopWebhooks(true);
    await closeDb();
    console.log(`Concord worker ${worker.id}: idle, ${worker.processed} jobs processed, ${cpuSeconds()} s of CPU.`);
    process.exit(0);
  },
  (err: unknown) => {
    console.error(`Concord worker ${worker.id} stopped on an error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
