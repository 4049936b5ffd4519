/**
 * What commitStage copies of each staged table, read before the lock: its
 * columns and foreign keys, which of its rows no reader can reach (copied in
 * chunks) and which go in the final transaction, and the copy order.
 */
import type Database from "better-sqlite3";
import { STAGE_BASE, STAGED_TABLES } from "./stage-file.server";

/** The gates, and the tables every user's pages list whole: always written by the final transaction. */
const ALWAYS_FINAL = new Set<string>(["projects", "users", "datasets", "judges", "tasks"]);

/** Foreign keys no reader follows to reach the row (see the header); checked by hand in the chunk. */
const NOT_FOLLOWED = new Set<string>(["assignments.annotator_id"]);

/**
 * Tables whose rows are copied in chunks even when they hang off live rows
 * (responses added to an existing item, verdicts of an existing judge):
 * such a row carries `pending_import_id`, and every reader leaves it out
 * while the import's pending_imports row exists (db/visibility.ts). Their
 * keys to live rows are checked by hand in the chunk.
 */
export const MARKED = new Set<string>(["responses", "verdicts"]);

/**
 * Tables copied in another order than the file's: by these columns. Responses
 * go in by item: a file often holds one model's answers to every item, then
 * the next model's, and copied in that order every row of a chunk lands on
 * another page of the (item, …) indexes, so each chunk writes about as many
 * pages as rows to the WAL. By item, a chunk's rows share their index pages.
 * Their IDs follow the copy order (a mapping table in the stage, made before
 * the lock), so the table itself is still filled in ID order; the responses
 * of one item keep the file's order among themselves.
 */
const COPY_ORDER: Record<string, string> = { responses: "item_id, id" };

/**
 * `unreachable`: the condition for a staged row no reader can reach (every key points into the import); `chunked`: the
 * rows copied in chunks (the unreachable ones, and every row of a MARKED table); `liveKeys`: the key columns a chunked
 * row may point at a live row with, checked by hand.
 */
export type Plan = {
  t: string;
  cols: string[];
  fks: Map<string, string>;
  unreachable: string;
  chunked: string;
  liveKeys: [string, string][];
  maxStage: number;
};

/** Column lists, foreign keys and what is unreachable of every staged table, read before the lock. */
export function planTables(conn: Database.Database): Plan[] {
  return STAGED_TABLES.map((t) => {
    const cols = (conn.prepare(`select name from pragma_table_info(?, 'main')`).all(t) as { name: string }[]).map((c) => c.name);
    const fks = new Map(
      (conn.prepare(`select "from", "table" from pragma_foreign_key_list(?, 'main')`).all(t) as { from: string; table: string }[]).map(
        (f) => [f.from, f.table],
      ),
    );
    const conds = [...fks].map(([c, ref]) =>
      NOT_FOLLOWED.has(`${t}.${c}`)
        ? "1"
        : (STAGED_TABLES as readonly string[]).includes(ref)
          ? `("${c}" is null or "${c}" >= ${STAGE_BASE})`
          : `"${c}" is null`,
    );
    const unreachable = ALWAYS_FINAL.has(t) || conds.length === 0 ? "0" : conds.join(" and ");
    const marked = MARKED.has(t);
    const chunked = marked ? "1" : unreachable;
    const liveKeys = [...fks].filter(([c]) => marked || NOT_FOLLOWED.has(`${t}.${c}`));
    const maxStage = (conn.prepare(`select coalesce(max(id), 0) as m from stage."${t}"`).get() as { m: number }).m;
    return { t, cols, fks, unreachable, chunked, liveKeys, maxStage };
  });
}

/**
 * The copy order of COPY_ORDER tables: new staged ID (dense, from STAGE_BASE, so within the reserved range) by old ID.
 * Returns the tables copied in such an order.
 */
export function orderCopies(conn: Database.Database, plans: Plan[]): Set<string> {
  const ordered = new Set<string>();
  for (const p of plans) {
    const order = COPY_ORDER[p.t];
    if (!order || p.maxStage === 0) continue;
    const o = `stage."order_${p.t}"`;
    conn.exec(`drop table if exists ${o}`);
    conn.exec(`create table ${o} (new_id integer primary key, old_id integer not null)`);
    conn.exec(`insert into ${o} (new_id, old_id) select ${STAGE_BASE - 1} + row_number() over (order by ${order}), id from stage."${p.t}"`);
    conn.exec(`create unique index stage."order_${p.t}_old" on "order_${p.t}" (old_id)`);
    ordered.add(p.t);
  }
  return ordered;
}
