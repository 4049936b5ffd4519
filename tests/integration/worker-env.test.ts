/**
 * Worker settings are part of the validated environment: a mistyped value stops
 * `npm run worker` with one line naming the variable, before it touches the database.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { tempDir } from "../support/db";

function worker(env: Record<string, string>, args: string[] = []) {
  const file = path.join(tempDir(), "worker-env.db");
  const r = spawnSync(process.execPath, ["scripts/cli.mjs", "worker", "--until-idle", ...args], {
    cwd: path.resolve(__dirname, "../.."),
    env: { ...process.env, DATABASE_URL: file, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { ...r, dbCreated: fs.existsSync(file) };
}

it.each([
  [{ WORKER_CONCURRENCY: "lots" }, [], "WORKER_CONCURRENCY"],
  [{ WORKER_LEASE_MS: "5" }, [], "WORKER_LEASE_MS"],
  [{ WORKER_CALL_LOG: "verbose" }, [], "WORKER_CALL_LOG"],
  [{ CONCORD_WORKER: "elsewhere" }, [], "CONCORD_WORKER"],
  [{}, ["--poll-ms", "-3"], "WORKER_POLL_MS"],
  [{ WORKER_PG_POOL: "0" }, [], "WORKER_PG_POOL"],
  [{}, ["--pg-pool", "many"], "WORKER_PG_POOL"],
])("refuses %j %j with one line naming %s", (env, args, name) => {
  const r = worker(env, args);
  expect(r.status).toBe(2);
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^Invalid environment variable ${name}: `));
  expect(r.dbCreated).toBe(false);
});

it("starts and stops when idle with valid settings", () => {
  const r = worker({ WORKER_CONCURRENCY: "4", WORKER_POLL_MS: "20" }, ["--lease-ms", "5000"]);
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/Concord worker .* started/);
});
