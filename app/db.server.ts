export { getDb, closeDb, schema, writeWithoutBusyWait } from "../db/client";
export type { Db } from "../db/client";
export { visible, visibleSql } from "../db/visibility";
