import { isPostgresUrl } from "../db/client-pg";
import { getDb as sqliteDb, type Db } from "../db/client";

export { closeDb, schema, writeWithoutBusyWait } from "../db/client";
export type { Db } from "../db/client";
export { visible, visibleSql } from "../db/visibility";

/**
 * The SQLite client of the pages not yet on the data-access layer (automated runs,
 * providers). On PostgreSQL they answer 501 with a plain sentence instead of
 * reading an empty SQLite file (issue 17).
 */
export function getDb(): Db {
  if (isPostgresUrl(process.env.DATABASE_URL))
    throw new Response("Automated runs and providers are not available yet when Concord runs on PostgreSQL.", { status: 501 });
  return sqliteDb();
}
