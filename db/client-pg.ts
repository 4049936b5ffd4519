/**
 * The PostgreSQL client (DATABASE_URL=postgres://…): a connection pool and the
 * committed PostgreSQL migrations (db/migrations-pg), applied at open so an
 * older database is upgraded in place, as db/client.ts does for SQLite.
 *
 * bigint columns come back as JavaScript numbers (SQLite's INTEGER does the
 * same); Concord's ids and epoch milliseconds are far below 2^53.
 */
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { repoPath } from "./repo-path";
import * as schema from "./schema.pg";

export type PgDb = NodePgDatabase<typeof schema> & { $client: pg.Pool };

/** db/migrations-pg, found from this file (db/), the server build (build/) or a command's bundle (repoPath). */
export const PG_MIGRATIONS_DIR = repoPath("db/migrations-pg", import.meta.url);

// int8 (bigint, count(*)) as a number, not a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/** Whether DATABASE_URL names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(url: string | undefined): boolean {
  return /^postgres(ql)?:\/\//i.test(url?.trim() ?? "");
}

/** A pool on `url`, without touching the database (connections open on first use). */
export function pgPool(url: string, opts: { max?: number } = {}): PgDb {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10 });
  return drizzle(pool, { schema }) as PgDb;
}

/** Any number, the same in every Concord process: the advisory lock that lets one process migrate at a time. */
const MIGRATION_LOCK = 4_172_017;

/**
 * Applies the committed migrations that `db` has not had yet. App servers and
 * workers started together take turns on an advisory lock, so one applies them
 * and the others find them applied (without it two would both create the
 * first table and one would fail).
 */
export async function migratePg(db: PgDb): Promise<void> {
  const client = await db.$client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client, { schema }), { migrationsFolder: PG_MIGRATIONS_DIR });
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** Opens a pool on `url` and applies the migrations. */
export async function openPgDatabase(url: string, opts: { max?: number } = {}): Promise<PgDb> {
  const db = pgPool(url, opts);
  const pool = db.$client;
  try {
    await migratePg(db);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return db;
}

export { schema as pgSchema };
