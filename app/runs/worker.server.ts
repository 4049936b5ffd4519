/**
 * The in-process worker of the web server: started on first use by the runs
 * pages unless CONCORD_WORKER=external (then run `npm run worker`, one or
 * several processes sharing the database).
 */
import { getDb } from "../db.server";
import { Worker } from "./runner.server";

let worker: Worker | null = null;

export function ensureInProcessWorker(): Worker | null {
  if (process.env.CONCORD_WORKER === "external" || process.env.NODE_ENV === "test") return null;
  if (!worker) {
    worker = new Worker(getDb(), {
      concurrency: Number(process.env.WORKER_CONCURRENCY ?? 16),
      leaseMs: Number(process.env.WORKER_LEASE_MS ?? 60_000),
      pollMs: Number(process.env.WORKER_POLL_MS ?? 500),
    }).start();
  }
  return worker;
}
