/**
 * Runs a worker as its own process on the database named by DATABASE_URL.
 * Several workers may share one database; each claims jobs under a lease,
 * renews a heartbeat while alive (a restarted worker takes a dead one's jobs
 * at once when its process is gone), and every provider's concurrency and
 * requests per minute hold across all of them (app/runs/providers/shared-limits.server.ts).
 *
 *   npm run worker [-- --concurrency 16 --prefetch 4 --lease-ms 60000 --poll-ms 500 --until-idle --run RUN_ID --call-log full|compact]
 * Environment equivalents: WORKER_CONCURRENCY, WORKER_PREFETCH, WORKER_LEASE_MS, WORKER_POLL_MS, WORKER_CALL_LOG.
 */
import { databasePathFromEnv, openDatabase } from "../db/client";
import { defaultPrefetch, Worker } from "../app/runs/runner.server";

const argv = process.argv.slice(2);
const opt = (name: string, env: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  const v = i >= 0 ? argv[i + 1] : process.env[env];
  return v ? Number(v) : dflt;
};

const db = openDatabase(databasePathFromEnv());
const runIdx = argv.indexOf("--run");
const concurrency = opt("concurrency", "WORKER_CONCURRENCY", 16);
const callLogIdx = argv.indexOf("--call-log");
const callLog = (callLogIdx >= 0 ? argv[callLogIdx + 1] : process.env.WORKER_CALL_LOG) === "compact" ? "compact" : "full";
const worker = new Worker(db, {
  concurrency,
  prefetch: opt("prefetch", "WORKER_PREFETCH", defaultPrefetch(concurrency)),
  callLog,
  leaseMs: opt("lease-ms", "WORKER_LEASE_MS", 60_000),
  pollMs: opt("poll-ms", "WORKER_POLL_MS", 500),
  untilIdle: argv.includes("--until-idle"),
  runId: runIdx >= 0 ? Number(argv[runIdx + 1]) : undefined,
}).start();
console.log(`Concord worker ${worker.id} started on ${databasePathFromEnv()}`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log("Concord worker: finishing in-flight jobs…");
  await worker.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
worker.done.then(() => {
  console.log(`Concord worker ${worker.id}: idle, ${worker.processed} jobs processed.`);
  process.exit(0);
});
