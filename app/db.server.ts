import { isPostgresUrl } from "../db/client-pg";
import { getDb as sqliteDb, type Db } from "../db/client";

export { closeDb, schema, writeWithoutBusyWait } from "../db/client";
export type { Db } from "../db/client";
export { visible, visibleSql } from "../db/visibility";

/**
 * The SQLite database of this process, for the server's in-process run worker (app/runs/worker.server.ts); pages
 * go through the data-access layer (app/dal.server.ts). Never opened at a postgres:// URL: that would make an empty
 * SQLite file named after it.
 */
export function getDb(): Db {
  if (isPostgresUrl(process.env.DATABASE_URL)) throw new Error("getDb: the database is PostgreSQL; use the data-access layer (getDal).");
  return sqliteDb();
}
