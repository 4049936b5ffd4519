/**
 * A throw-away PostgreSQL cluster for tests: initdb in a fresh temp folder,
 * started on a free loopback port, trust authentication, no fsync; stopped and
 * deleted by `stop()`. Uses Debian's packages (apt-get install postgresql).
 * initdb and pg_ctl refuse to run as root, so as root they run as the
 * `postgres` user.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { procCpuS } from "./proc-cpu";
import { runTemplate } from "./run-templates";

export type TestPg = {
  /** The cluster's `postgres` database. */
  url: string;
  /** The URL of another database of the cluster. */
  urlOf(database: string): string;
  /** Creates a database (a lower-case SQL name) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * CPU seconds (user + system) the cluster's processes have used so far: the postmaster and its live children
   * (backends, background processes) and the children it has reaped (Linux /proc; null elsewhere).
   */
  cpuS(): number | null;
  stop(): void;
};

/** The newest PostgreSQL bin folder Debian installed, or null. */
export function pgBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], "bin") : null;
}

export type TestDialect = "sqlite" | "postgres";

/** CONCORD_TEST_DATABASE: `sqlite` or `postgres` runs the scenario tests on that database only; unset, on both. */
function chosenDatabase(): TestDialect | null {
  const v = process.env.CONCORD_TEST_DATABASE?.trim();
  if (!v) return null;
  if (v !== "sqlite" && v !== "postgres") throw new Error(`CONCORD_TEST_DATABASE: sqlite or postgres, not ${JSON.stringify(v)}`);
  return v;
}

/** The databases the scenario tests (`*-dialects.test.ts`) run on: both, or the one CONCORD_TEST_DATABASE names. */
export function testDialects(): TestDialect[] {
  const v = chosenDatabase();
  return v ? [v] : ["sqlite", "postgres"];
}

/**
 * Why the PostgreSQL tests are skipped, or null when they run: CONCORD_TEST_DATABASE=sqlite, or PostgreSQL not
 * installed. Under CI=1 a missing PostgreSQL is an error instead, so CI never passes on SQLite alone.
 */
export function pgSkipReason(): string | null {
  if (chosenDatabase() === "sqlite") return "CONCORD_TEST_DATABASE=sqlite";
  if (pgBinDir()) return null;
  const why = "PostgreSQL is not installed (apt-get install -y postgresql): initdb and pg_ctl are needed";
  if (process.env.CI) throw new Error(`${why}; CI runs every PostgreSQL test`);
  return why;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

type Run = (cmd: string, args: string[]) => Buffer;

function initdb(run: Run, data: string): void {
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]);
}

/**
 * The run's initdb'd data directory (tests/support/run-templates.ts), which the clusters of a test run copy
 * (`cp -a`, owner and modes kept) instead of each running initdb (about 0.6 s of CPU against 0.1 s). Null outside a
 * test run (the benchmarks): each cluster runs initdb.
 */
async function templateDataDir(run: Run): Promise<string | null> {
  return runTemplate("pg-data", (at) => {
    if (process.getuid?.() === 0) execFileSync("chown", ["postgres", path.dirname(at)]);
    initdb(run, at);
  });
}

/** `maxConnections`: the server's max_connections (PostgreSQL's default, 100, when not given). */
export async function startTestPg(options: { maxConnections?: number } = {}): Promise<TestPg> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql): the PostgreSQL tests need initdb and pg_ctl");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync("chown", ["postgres", dir]);
  const run = (cmd: string, args: string[]) =>
    asRoot
      ? execFileSync(
          "su",
          ["postgres", "-s", "/bin/sh", "-c", [path.join(bin, cmd), ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")],
          {
            stdio: "pipe",
          },
        )
      : execFileSync(path.join(bin, cmd), args, { stdio: "pipe" });
  const data = path.join(dir, "data");
  const template = await templateDataDir(run);
  if (template) execFileSync("cp", ["-a", template, data]);
  else initdb(run, data);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off${options.maxConnections ? ` -c max_connections=${Math.floor(options.maxConnections)}` : ""}`;
  run("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-o", opts, "-w", "start"]);
  let stopped = false;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const urlOf = (database: string) => url.replace(/\/postgres$/, `/${database}`);
  return {
    url,
    urlOf,
    async createDatabase(name: string) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`createDatabase: ${JSON.stringify(name)} is not a lower-case SQL name`);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return urlOf(name);
    },
    cpuS() {
      try {
        const pid = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
        const children = fs
          .readdirSync(`/proc/${pid}/task`)
          .flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
        const postmaster = procCpuS(pid, { reaped: true });
        if (postmaster === null) return null;
        // A child that exited meanwhile (null) is counted in the postmaster's reaped children once it is reaped.
        return children.reduce((total, c) => total + (procCpuS(c, { reaped: true }) ?? 0), postmaster);
      } catch {
        return null;
      }
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A throw-away cluster holding a copy of a SQLite deployment (the benchmarks' PostgreSQL runs). */
export type PgCopy = {
  url: string;
  client: pg.Client;
  /** The cluster's CPU seconds so far (TestPg.cpuS). */
  cpuS: () => number | null;
  /** Transactions rolled back in the database so far (pg_stat_database.xact_rollback: a serialization failure retried is one). */
  rollbacks: () => Promise<number>;
  stop: () => Promise<void>;
};

/**
 * Starts a throw-away cluster and copies the SQLite deployment `file` into its database `name` with db:copy's
 * copyDatabase; the cluster is stopped however the process ends (an error, Ctrl-C).
 */
export async function postgresCopy(file: string, name: string, options: { maxConnections?: number } = {}): Promise<PgCopy> {
  // Room for every worker's pool and server's pool when trying larger pools.
  const cluster = await startTestPg({ maxConnections: options.maxConnections ?? 400 });
  process.once("exit", () => cluster.stop());
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130));
  try {
    const url = await cluster.createDatabase(name);
    const { copyDatabase } = await import("../../db/copy");
    await copyDatabase({ kind: "sqlite", file }, { kind: "postgres", url });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      url,
      client,
      cpuS: () => cluster.cpuS(),
      rollbacks: async () => {
        // Statistics a backend has not yet reported are flushed at its exit or within a second.
        await client.query("SELECT pg_stat_clear_snapshot()");
        const { rows } = await client.query(`SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()`);
        return Number(rows[0].xact_rollback);
      },
      stop: async () => {
        await client.end();
        cluster.stop();
      },
    };
  } catch (err) {
    cluster.stop();
    throw err;
  }
}
