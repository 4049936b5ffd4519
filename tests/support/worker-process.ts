/**
 * A run worker as its own process (`scripts/worker.ts --until-idle`), as an operator starts it: each would take
 * 8 jobs at once on its own (WORKER_CONCURRENCY=8), so only the limits shared through the database keep a
 * provider at its concurrency.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

export type WorkerProcess = { child: ChildProcess; out: () => string };

/** Starts a worker on `databaseUrl` (a SQLite file or a postgres:// URL); `out` is what it printed so far. */
export function spawnWorker(databaseUrl: string, leaseMs: number): WorkerProcess {
  const child = spawn(process.execPath, ["scripts/cli.mjs", "worker", "--until-idle"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, WORKER_CONCURRENCY: "8", WORKER_POLL_MS: "20", WORKER_LEASE_MS: String(leaseMs) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  return { child, out: () => out };
}

/** The process's exit code once it has exited (null when a signal ended it). */
export const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve(c.exitCode)
    : new Promise<number | null>((ok) => c.once("exit", (code) => ok(code)));
