/**
 * The in-process worker of the web server: started on first use by the runs
 * pages unless CONCORD_WORKER=external (then run `npm run worker`, one or
 * several processes sharing the database).
 */
import { isPostgresUrl } from "../../db/client-pg";
import { getDb } from "../db.server";
import { env } from "../env.server";
import { Worker } from "./runner.server";

let worker: Worker | null = null;

export function ensureInProcessWorker(): Worker | null {
  const e = env();
  if (e.CONCORD_WORKER === "external" || e.NODE_ENV === "test" || isPostgresUrl(e.DATABASE_URL)) return null;
  if (!worker) {
    worker = new Worker(getDb(), {
      concurrency: e.WORKER_CONCURRENCY,
      leaseMs: e.WORKER_LEASE_MS,
      pollMs: e.WORKER_POLL_MS,
    }).start();
  }
  return worker;
}
