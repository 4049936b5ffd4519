export { getDb, closeDb, schema } from "../db/client";
export type { Db } from "../db/client";
export { visible, visibleSql } from "../db/visibility";
