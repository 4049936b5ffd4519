/**
 * Rows an import is still copying in. An import that adds responses to
 * existing items (or verdicts of an existing judge) copies them in short
 * chunks, each marked with its pending_imports row, so that it never holds
 * the database's write lock for long; every reader of responses and verdicts
 * leaves such rows out until the import's last, short transaction deletes
 * the pending_imports row, and they all appear at once. The mark is left on
 * the rows afterwards: a mark without its pending_imports row is visible.
 */
import { sql, type SQL } from "drizzle-orm";
import type { AnyColumn } from "drizzle-orm";

/** A WHERE condition, as raw SQL text: the row of `alias` (a responses or verdicts alias) is visible. */
export function visibleSql(alias: string): string {
  return `(${alias}.pending_import_id IS NULL OR ${alias}.pending_import_id NOT IN (SELECT id FROM pending_imports))`;
}

/** The same condition for drizzle queries, on the table's `pendingImportId` column. */
export function visible(pendingImportId: AnyColumn): SQL {
  return sql`(${pendingImportId} IS NULL OR ${pendingImportId} NOT IN (SELECT id FROM pending_imports))`;
}
