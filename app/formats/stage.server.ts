/**
 * Staging for imports: the checked rows are first written to a scratch SQLite
 * file attached as `stage` (its own write lock, not the database's), then
 * copied into the database by `commitStage`, which never holds the
 * database's write lock for longer than one short chunk.
 *
 * Staged rows get IDs from STAGE_BASE upwards (the stage tables'
 * AUTOINCREMENT counters start there), so a staged ID never equals a live
 * one and the writer can look rows up in `main` and `stage` alike.
 *
 * The copy, in three steps:
 *
 * 1. Reserve (one short transaction): for every table, the next IDs after
 *    the database's highest (max(id) and its sqlite_sequence counter), as
 *    many as the stage holds; the counter is moved past them, so no other
 *    writer ever gets an ID in the range. The ranges are recorded in
 *    `pending_imports` with the owner process.
 * 2. Chunks (short transactions, each ended after about CHUNK_TARGET_MS of
 *    work or MAX_CHUNK_ROWS rows, whichever comes first; the lock released
 *    and the event loop given back between them for at least twice as long
 *    as it was held, so a submit waiting for the lock goes first): the rows
 *    that no reader can reach yet. A row is
 *    unreachable when every foreign key it has points at a row of this same
 *    import: its chain of parents then ends at a "gate" row that is not in
 *    the database yet — the new project, dataset version, judge or task, all
 *    written in step 3. Readers find items through their dataset, units
 *    through their task, responses through their item, verdicts through
 *    their response and judge, so none of them can see these rows. (The one
 *    key not followed is an assignment's annotator: every reader of
 *    assignments goes through the unit's task, and placeholder annotators
 *    cannot sign in.) Foreign keys are not enforced by SQLite here (the gates
 *    are missing on purpose); the one key to a live row that a chunked row
 *    can carry (the annotator) is checked by hand in the chunk, and once the
 *    chunk is in, the annotator cannot be deleted (no cascade: the delete
 *    fails). Unique indexes are enforced as always.
 *    Responses and verdicts that hang off live rows (responses added to an
 *    existing item, verdicts of an existing judge or on an existing
 *    response) have no gate to hide behind: they go in chunks too, marked
 *    with the import's pending_imports row (`pending_import_id`), and every
 *    reader of responses and verdicts leaves marked rows out while that row
 *    exists (db/visibility.ts). Their keys to live rows are checked by hand
 *    in each chunk; a live row deleted after its chunk takes the marked rows
 *    with it (the foreign keys cascade).
 * 3. Final (one transaction, foreign keys enforced): the gate rows, and the
 *    other rows that point at a live row and so would be visible at once
 *    (units of an existing item), then the `pending_imports` row is
 *    deleted. Everything of the file becomes visible at this commit, or
 *    nothing does. Rows that conflict with rows written since the check
 *    (unique indexes; a project, dataset, judge, item or response deleted
 *    meanwhile) make it roll back.
 *
 * The final transaction writes a handful of rows for the usual imports: a new
 * dataset, task or judge, and responses or verdicts added to existing ones.
 *
 * A failure or kill between chunks leaves chunked rows that nothing can
 * reach. The import deletes its own at once (in chunks, by ID range); those
 * of a process that died (kill -9) are deleted by the next import
 * (`cleanupLeftovers`). Only the reserved ranges are deleted, so no one
 * else's row is ever touched. Report-freshness triggers see nothing of the
 * chunked rows (the task or judge they would bump does not exist yet); the
 * gates' own triggers give a new task its counter and bump the project's
 * verdict version when a judge is added.
 */
import fs from "node:fs";
import os from "node:os";
import type Database from "better-sqlite3";

/** First ID of staged rows (well inside 2^53, far above any real table). */
export const STAGE_BASE = 1e15;

/**
 * How long one chunk may hold the database's write lock (ms). A chunk is a
 * run of short INSERT … SELECT statements over consecutive staged IDs inside
 * one transaction; it commits once this long has passed or MAX_CHUNK_ROWS
 * rows are in, whichever comes first. Each statement is sized (from the last
 * one's time) to about a quarter of this, so a hold overruns it by about one
 * short statement, not by a misjudged chunk. The COMMIT, which writes the
 * chunk's pages to the WAL, comes on top (about 1 ms on an idle disk).
 */
export const CHUNK_TARGET_MS = 5;

/** The most rows one chunk copies, however fast they go in (a bound that does not depend on the clock). */
export const MAX_CHUNK_ROWS = 1000;

/** The least time the lock is left free between two chunks (ms); after a hold of h ms it is free for at least 2h. */
export const CHUNK_GAP_MS = 10;

/** Staged IDs per statement inside a chunk: adapted between these bounds. */
const MIN_STEP = 32;
const MAX_STEP = 1024;

const gapAfter = (holdMs: number) => Math.max(CHUNK_GAP_MS, 2 * holdMs);

/**
 * Diagnostics: when CONCORD_IMPORT_LOCK_LOG names a file, every hold of the
 * write lock by an import is appended to it as a JSON line (kind, table,
 * rows, wall-clock and CPU milliseconds), written after the copy (no I/O
 * during it). scripts/bench-annotate.ts reads it.
 */
const LOCK_LOG = process.env.CONCORD_IMPORT_LOCK_LOG;

/**
 * While it holds the write lock, the importing thread runs at a higher CPU
 * priority (nice HOLD_NICE) than the web server and everything else on the
 * machine, and goes back to its own priority as soon as it lets go: every
 * writer waits for the holder, so a holder preempted by unrelated work stalls
 * them all (priority inversion; raising the holder's priority for the time it
 * holds the lock is the priority-ceiling remedy, Sha, Rajkumar and Lehoczky,
 * "Priority Inheritance Protocols", IEEE Trans. Computers 39(9), 1990, §4).
 * A hold lasts a few ms, so the rest of the machine loses little. Only where
 * the process may raise its priority (root, CAP_SYS_NICE); elsewhere the
 * first refusal turns it off. Linux nice values are per thread: this is the
 * calling thread only.
 */
const HOLD_NICE = -5;
let boostable = true;
let ownNice: number | undefined;

function boost(): void {
  if (!boostable) return;
  try {
    ownNice = os.getPriority(0);
    if (ownNice > HOLD_NICE) os.setPriority(0, HOLD_NICE);
    else ownNice = undefined;
  } catch {
    boostable = false;
    ownNice = undefined;
  }
}

function unboost(): void {
  if (ownNice === undefined) return;
  try {
    os.setPriority(0, ownNice);
  } catch {
    // cannot happen (lowering one's priority is always allowed); the next boost tries again
  }
  ownNice = undefined;
}

/** One hold of the write lock: what it was for, how many rows, how long (wall clock) and how much CPU the process spent. */
export type HoldRecord = {
  kind: "reserve" | "chunk" | "final" | "delete";
  table: string;
  rows: number;
  wallMs: number;
  cpuMs: number;
  /** Of wallMs, the COMMIT (the dirty pages written to the WAL), where measured. */
  commitMs?: number;
};

type Hold = { t0: number; cpu0: NodeJS.CpuUsage; commitAt?: number };

/** Starts timing a hold. CPU time is the process's (user + system): during the copy its other thread is idle, waiting for it. */
function startHold(): Hold {
  boost();
  return { t0: performance.now(), cpu0: process.cpuUsage() };
}

function endHold(h: Hold, kind: HoldRecord["kind"], table: string, rows: number): HoldRecord {
  unboost();
  const c = process.cpuUsage(h.cpu0);
  const end = performance.now();
  return {
    kind,
    table,
    rows,
    wallMs: end - h.t0,
    cpuMs: (c.user + c.system) / 1000,
    ...(h.commitAt !== undefined ? { commitMs: end - h.commitAt } : {}),
  };
}

function writeLockLog(log: HoldRecord[]): void {
  if (!LOCK_LOG || log.length === 0) return;
  try {
    fs.appendFileSync(LOCK_LOG, log.map((r) => JSON.stringify(r)).join("\n") + "\n");
  } catch {
    // diagnostics only
  }
}

/** The tables an import writes, parents before children. */
export const STAGED_TABLES = [
  "projects",
  "datasets",
  "items",
  "checklist_items",
  "users",
  "responses",
  "references",
  "judges",
  "verdicts",
  "tasks",
  "units",
  "assignments",
  "annotations",
] as const;

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
const MARKED = new Set<string>(["responses", "verdicts"]);

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
 * Attaches a fresh scratch file as `stage` with empty copies of the tables
 * (no triggers, no foreign keys enforced: the connection's foreign key
 * checks are turned off while staging).
 */
export function attachStage(conn: Database.Database, file: string): void {
  fs.rmSync(file, { force: true });
  conn.prepare("attach database ? as stage").run(file);
  conn.pragma("stage.journal_mode = OFF");
  conn.pragma("stage.synchronous = OFF");
  // The staged rows stay in memory up to this size, so the copy under the lock reads no disk (a constant bound, not the file's size).
  conn.pragma("stage.cache_size = -65536");
  const ddl = conn.prepare("select sql from main.sqlite_master where type = 'table' and name = ?");
  for (const t of STAGED_TABLES) {
    const row = ddl.get(t) as { sql: string } | undefined;
    if (!row) throw new Error(`table ${t} is missing`);
    conn.exec(row.sql.replace(/^CREATE TABLE\s+(`[^`]+`|"[^"]+"|\w+)/i, (_m, name) => `CREATE TABLE stage.${name}`));
  }
  const seq = conn.prepare("insert into stage.sqlite_sequence (name, seq) values (?, ?)");
  for (const t of STAGED_TABLES) seq.run(t, STAGE_BASE - 1);
  // What the writer looks up in staged rows; the response keys seen in the file (not copied).
  conn.exec(`
    create table stage.response_keys (item_id integer not null, source_key text not null, id integer not null, primary key (item_id, source_key)) without rowid;
    create index stage.s_items_dataset on items (dataset_id, source_id);
    create index stage.s_checklist_item on checklist_items (item_id, position);
    create index stage.s_responses_key on responses (item_id, source_key);
    create index stage.s_responses_model on responses (item_id, model);
    create index stage.s_references_item on "references" (item_id);
    create index stage.s_judges_name on judges (project_id, name);
    create index stage.s_users_email on users (email);
  `);
}

/** Attaches a stage that another connection filled (the commit on its own thread: scripts/import-job.ts). */
export function attachFilledStage(conn: Database.Database, file: string): void {
  if (!fs.existsSync(file)) throw new Error("the staged rows are missing");
  conn.prepare("attach database ? as stage").run(file);
  conn.pragma("stage.journal_mode = OFF");
  conn.pragma("stage.cache_size = -65536");
}

export function detachStage(conn: Database.Database, file: string): void {
  try {
    if (conn.inTransaction) conn.exec("rollback");
    conn.exec("detach database stage");
  } catch {
    // already detached
  }
  fs.rmSync(file, { force: true });
}

export type CommitStats = {
  rows: number;
  /** The longest the write lock was held at a time (ms): the reservation, one chunk or the final transaction. */
  lockMs: number;
  /** All holds together (ms). */
  lockTotalMs: number;
  /** How many times the lock was taken. */
  holds: number;
  /** The most CPU time the importing process spent in one hold (ms), and in all holds together: what the clock does not blur. */
  lockCpuMs: number;
  lockCpuTotalMs: number;
  /** The most rows one hold wrote. */
  maxHoldRows: number;
  /** Rows copied in chunks, before they were visible; rows written by the final transaction. */
  chunkedRows: number;
  finalRows: number;
  /** How long the final transaction held the lock (ms). */
  finalMs: number;
};

/** What an observer of the copy is told after each chunk (the lock is free then). */
export type ChunkEvent = { table: string; rows: number; holdMs: number; chunk: number };

export type CommitOptions = {
  /** Target hold per chunk (ms), default CHUNK_TARGET_MS. */
  targetMs?: number;
  /** Called after every chunk's commit, before the next one; may await. A throw fails the import (the rows are deleted). */
  onChunk?: (e: ChunkEvent) => void | Promise<void>;
};

/**
 * `unreachable`: the condition for a staged row no reader can reach (every key points into the import); `chunked`: the
 * rows copied in chunks (the unreachable ones, and every row of a MARKED table); `liveKeys`: the key columns a chunked
 * row may point at a live row with, checked by hand.
 */
type Plan = {
  t: string;
  cols: string[];
  fks: Map<string, string>;
  unreachable: string;
  chunked: string;
  liveKeys: [string, string][];
  maxStage: number;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Copies the staged rows into the database (steps 1–3 above). The write lock
 * is never held across an await: each transaction begins and ends within
 * one synchronous stretch. Throws (after deleting whatever it had copied) if
 * SQLite refuses a row.
 */
export async function commitStage(conn: Database.Database, opts: CommitOptions = {}): Promise<CommitStats> {
  const target = opts.targetMs ?? CHUNK_TARGET_MS;
  // Column lists, foreign keys and what is unreachable, read before the lock.
  const plans: Plan[] = STAGED_TABLES.map((t) => {
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
  const stats: CommitStats = {
    rows: 0,
    lockMs: 0,
    lockTotalMs: 0,
    holds: 0,
    lockCpuMs: 0,
    lockCpuTotalMs: 0,
    maxHoldRows: 0,
    chunkedRows: 0,
    finalRows: 0,
    finalMs: 0,
  };
  const log: HoldRecord[] = [];
  const held = (h: Hold, kind: HoldRecord["kind"], table: string, rows: number) => {
    const r = endHold(h, kind, table, rows);
    stats.holds++;
    stats.lockTotalMs += r.wallMs;
    stats.lockMs = Math.max(stats.lockMs, r.wallMs);
    stats.lockCpuTotalMs += r.cpuMs;
    stats.lockCpuMs = Math.max(stats.lockCpuMs, r.cpuMs);
    stats.maxHoldRows = Math.max(stats.maxHoldRows, rows);
    if (LOCK_LOG) log.push(r);
    return r.wallMs;
  };

  // The copy order of COPY_ORDER tables: new staged ID (dense, from STAGE_BASE, so within the reserved range) by old ID.
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
  /** The staged rows of a table as `s` (with `m`, the copy order, for COPY_ORDER tables) and the key chunks range over. */
  const source = (p: Plan) =>
    ordered.has(p.t)
      ? { from: `stage."order_${p.t}" m join stage."${p.t}" s on s.id = m.old_id`, key: "m.new_id" }
      : { from: `stage."${p.t}" s`, key: "s.id" };

  // 1. Reserve the IDs.
  const base = new Map<string, number>();
  const ranges: Record<string, [number, number]> = {};
  let pendingId = 0;
  const reserve = startHold();
  conn.exec("begin immediate");
  try {
    const seq = conn.prepare("select seq from main.sqlite_sequence where name = ?");
    const setSeq = conn.prepare("update main.sqlite_sequence set seq = ? where name = ?");
    const addSeq = conn.prepare("insert into main.sqlite_sequence (name, seq) values (?, ?)");
    for (const p of plans) {
      const max = (conn.prepare(`select coalesce(max(id), 0) as m from main."${p.t}"`).get() as { m: number }).m;
      const s = seq.get(p.t) as { seq: number } | undefined;
      const b = Math.max(max, s?.seq ?? 0);
      base.set(p.t, b);
      if (p.maxStage === 0) continue;
      const last = b + p.maxStage - (STAGE_BASE - 1);
      ranges[p.t] = [b + 1, last];
      if (s) setSeq.run(last, p.t);
      else addSeq.run(p.t, last);
    }
    pendingId = Number(
      conn
        .prepare("insert into main.pending_imports (owner, ranges) values (?, ?)")
        .run(`${os.hostname()}:${process.pid}`, JSON.stringify(ranges)).lastInsertRowid,
    );
    conn.exec("commit");
  } catch (err) {
    if (conn.inTransaction) conn.exec("rollback");
    unboost();
    throw err;
  }
  held(reserve, "reserve", "pending_imports", 1);

  const select = (p: Plan) =>
    p.cols
      .map((c) => {
        if (c === "id") return `${ordered.has(p.t) ? "m.new_id" : "id"} - ${STAGE_BASE - 1} + ${base.get(p.t)}`;
        if (c === "pending_import_id" && MARKED.has(p.t)) return `case when (${p.unreachable}) then null else ${pendingId} end`;
        const ref = p.fks.get(c);
        if (ref && base.has(ref)) {
          const staged = ordered.has(ref) ? `(select o.new_id from stage."order_${ref}" o where o.old_id = "${c}")` : `"${c}"`;
          return `case when "${c}" >= ${STAGE_BASE} then ${staged} - ${STAGE_BASE - 1} + ${base.get(ref)} else "${c}" end`;
        }
        return `"${c}"`;
      })
      .join(", ");
  const colList = (p: Plan) => p.cols.map((c) => `"${c}"`).join(", ");

  // Checkpoints are run by hand between the transactions: SQLite's automatic one runs inside COMMIT (after the lock is released,
  // but before the call returns), which would blur the measured holds.
  const autockpt = conn.pragma("wal_autocheckpoint", { simple: true }) as number;
  conn.pragma("wal_autocheckpoint = 0");
  const checkpoint = () => conn.pragma("wal_checkpoint(PASSIVE)");
  try {
    // A page cache large enough for the indexes the copy touches (a constant bound, not the file's size), so a chunk
    // under the lock rarely reads a page back.
    conn.pragma("cache_size = -131072");
    // 2. The unreachable rows, in chunks.
    conn.pragma("foreign_keys = OFF");
    let chunk = 0;
    for (const p of plans) {
      if (p.maxStage === 0 || p.chunked === "0") continue;
      const src = source(p);
      const ins = conn.prepare(
        `insert into main."${p.t}" (${colList(p)}) select ${select(p)} from ${src.from} where ${src.key} > ? and ${src.key} <= ? and (${p.chunked}) order by ${src.key}`,
      );
      // A chunked row's keys to live rows (the annotator of an assignment when the import reuses a placeholder, the item
      // of a response added to an existing item, the judge or response of such a verdict): the live row must still exist.
      const missingParent = p.liveKeys.length
        ? conn.prepare(
            `select 1 from ${src.from} where ${src.key} > ? and ${src.key} <= ? and (${p.liveKeys
              .map(([c, ref]) => `(s."${c}" < ${STAGE_BASE} and not exists (select 1 from main."${ref}" r where r.id = s."${c}"))`)
              .join(" or ")}) limit 1`,
          )
        : undefined;
      // The next staged row that goes in a chunk (rows added to existing ones go in the final transaction), found before the lock.
      const nextChunked = conn.prepare(`select min(${src.key}) as id from ${src.from} where ${src.key} > ? and (${p.chunked})`);
      // Rows cost differently per table (indexes, triggers): each table starts with small statements.
      let step = 64;
      for (let from = STAGE_BASE - 1; from < p.maxStage;) {
        const next = (nextChunked.get(from) as { id: number | null }).id;
        if (next === null) break;
        from = next - 1;
        const hold = startHold();
        const deadline = hold.t0 + target;
        let n = 0;
        conn.exec("begin immediate");
        try {
          // Statements of `step` staged IDs each, until the hold has taken `target` ms or MAX_CHUNK_ROWS rows: a chunk ends
          // on time even when a statement costs more than the last one did (bigger rows, colder pages, a busy machine).
          do {
            // At most as many IDs as rows may still go in (a staged ID is at most one row), so a chunk stops at MAX_CHUNK_ROWS.
            const to = Math.min(from + Math.min(step, MAX_CHUNK_ROWS - n), p.maxStage);
            const s0 = performance.now();
            if (missingParent?.get(from, to)) throw new Error(`FOREIGN KEY constraint failed (a row that ${p.t} refer to was deleted)`);
            n += ins.run(from, to).changes;
            from = to;
            // The next statement about a quarter of the target: at most twice as many IDs, at least half as many.
            const ms = performance.now() - s0;
            step = Math.max(MIN_STEP, Math.min(MAX_STEP, Math.round(step * Math.min(2, Math.max(0.5, target / 4 / Math.max(ms, 0.05))))));
          } while (from < p.maxStage && n < MAX_CHUNK_ROWS && performance.now() < deadline);
          hold.commitAt = performance.now();
          conn.exec("commit");
        } catch (err) {
          if (conn.inTransaction) conn.exec("rollback");
          unboost();
          throw err;
        }
        const ms = held(hold, "chunk", p.t, n);
        checkpoint();
        stats.chunkedRows += n;
        await opts.onChunk?.({ table: p.t, rows: n, holdMs: ms, chunk: chunk++ });
        // The lock free for twice as long as it was held (at least CHUNK_GAP_MS): a submit waiting for it goes first.
        await sleep(gapAfter(ms));
      }
    }

    // 3. The gates and the rows reachable from live ones; the pending row goes with them.
    conn.pragma("foreign_keys = ON");
    const finals = plans.filter((p) => p.maxStage > 0 && p.chunked !== "1");
    // The indexes the final copy touches, warmed before the lock.
    for (const p of finals) {
      if (!conn.prepare(`select 1 from stage."${p.t}" where not (${p.chunked}) limit 1`).get()) continue;
      for (const idx of conn.prepare(`select name, partial from pragma_index_list(?, 'main')`).all(p.t) as {
        name: string;
        partial: number;
      }[]) {
        if (!idx.partial) conn.prepare(`select count(*) from main."${p.t}" indexed by "${idx.name}"`).get();
      }
    }
    // Only the tables that have rows for it: each statement scans its staged table, and that scan would be under the lock.
    const withFinal = finals.filter((p) => conn.prepare(`select 1 from stage."${p.t}" where not (${p.chunked}) limit 1`).get());
    const stmts = withFinal.map((p) =>
      conn.prepare(
        `insert into main."${p.t}" (${colList(p)}) select ${select(p)} from stage."${p.t}" where not (${p.chunked}) order by id`,
      ),
    );
    // The freshness counters the chunked rows' triggers could not bump (their task or judge was not there yet): bumped as
    // many times as the one-transaction copy would have, so a new task's version and the project's verdict version come
    // out the same.
    const map = (t: string, id: number) => (id >= STAGE_BASE ? id - (STAGE_BASE - 1) + base.get(t)! : id);
    const verdictsPlan = plans.find((p) => p.t === "verdicts")!;
    const bumps: [Database.Statement, number, number][] = [];
    const bumpTask = conn.prepare("update main.task_data_versions set version = version + ? where task_id = ?");
    for (const r of conn
      .prepare(
        `select u.task_id as id, count(*) as n from stage.annotations an join stage.assignments a on a.id = an.assignment_id
         join stage.units u on u.id = a.unit_id where an.status = 'submitted' and u.task_id >= ${STAGE_BASE} group by u.task_id`,
      )
      .all() as { id: number; n: number }[])
      bumps.push([bumpTask, r.n, map("tasks", r.id)]);
    const bumpProject = conn.prepare("update main.project_verdict_versions set version = version + ? where project_id = ?");
    for (const r of conn
      .prepare(
        `select j.project_id as id, count(*) as n from stage.verdicts v join stage.judges j on j.id = v.judge_id
         where (${verdictsPlan.unreachable.replace(/"(\w+)"/g, 'v."$1"')}) group by j.project_id`,
      )
      .all() as { id: number; n: number }[])
      bumps.push([bumpProject, r.n, map("projects", r.id)]);
    // Verdicts of a live judge bumped its project's version as each chunk went in, while readers could not see them yet:
    // once more now, as they become visible, so no report memoised in between is kept.
    for (const r of conn
      .prepare(
        `select j.project_id as id from main.judges j where j.id in (select judge_id from stage.verdicts where judge_id < ${STAGE_BASE})`,
      )
      .all() as { id: number }[])
      bumps.push([bumpProject, 1, r.id]);
    const done = conn.prepare("delete from main.pending_imports where id = ?");
    // The marked rows (responses and verdicts added to existing ones) become visible by this one-row delete, not by an
    // UPDATE over them; the freshness counters are one-row updates too (by how many, not once per row).
    const final = startHold();
    conn.exec("begin immediate");
    try {
      for (const s of stmts) stats.finalRows += s.run().changes;
      for (const [s, n, id] of bumps) s.run(n, id);
      done.run(pendingId);
      conn.exec("commit");
    } catch (err) {
      if (conn.inTransaction) conn.exec("rollback");
      unboost();
      throw err;
    }
    stats.finalMs = held(final, "final", "pending_imports", stats.finalRows + bumps.length + 1);
  } catch (err) {
    if (conn.inTransaction) conn.exec("rollback");
    unboost();
    conn.pragma(`wal_autocheckpoint = ${autockpt}`);
    await deleteReserved(conn, pendingId, ranges, target, LOCK_LOG ? log : undefined);
    writeLockLog(log);
    throw err;
  }
  // Committed: nothing after this point deletes anything.
  conn.pragma(`wal_autocheckpoint = ${autockpt}`);
  checkpoint();
  writeLockLog(log);
  stats.rows = stats.chunkedRows + stats.finalRows;
  return stats;
}

/**
 * Deletes the rows in an import's reserved ranges, children first, in short
 * transactions bounded like the copy's chunks (about `targetMs` of work or
 * MAX_CHUNK_ROWS rows), the lock given back between them, then its
 * pending_imports row.
 */
async function deleteReserved(
  conn: Database.Database,
  pendingId: number,
  ranges: Record<string, [number, number]>,
  targetMs = CHUNK_TARGET_MS,
  log?: HoldRecord[],
): Promise<void> {
  conn.pragma("foreign_keys = OFF");
  try {
    for (const t of [...STAGED_TABLES].reverse()) {
      const r = ranges[t];
      if (!r) continue;
      const del = conn.prepare(`delete from main."${t}" where id >= ? and id <= ?`);
      let step = 64;
      for (let from = r[0]; from <= r[1];) {
        const h = startHold();
        const deadline = h.t0 + targetMs;
        let n = 0;
        conn.exec("begin immediate");
        try {
          do {
            const s0 = performance.now();
            const to = Math.min(from + Math.min(step, MAX_CHUNK_ROWS - n) - 1, r[1]);
            n += del.run(from, to).changes;
            from = to + 1;
            const ms = performance.now() - s0;
            step = Math.max(MIN_STEP, Math.min(MAX_STEP, Math.round(step * Math.min(2, Math.max(0.5, targetMs / 4 / Math.max(ms, 0.05))))));
          } while (from <= r[1] && n < MAX_CHUNK_ROWS && performance.now() < deadline);
          conn.exec("commit");
        } catch (err) {
          if (conn.inTransaction) conn.exec("rollback");
          unboost();
          throw err;
        }
        const rec = endHold(h, "delete", t, n);
        log?.push(rec);
        await sleep(gapAfter(rec.wallMs));
      }
    }
    conn.prepare("delete from main.pending_imports where id = ?").run(pendingId);
  } finally {
    conn.pragma("foreign_keys = ON");
  }
}

/** Whether the process that wrote a pending_imports row is gone (same host, no such process; other hosts: after a day). */
function ownerGone(owner: string, createdAt: number): boolean {
  const i = owner.lastIndexOf(":");
  const host = owner.slice(0, i);
  const pid = Number(owner.slice(i + 1));
  if (host !== os.hostname()) return Date.now() / 1000 - createdAt > 86_400;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Deletes what imports that died midway (kill -9, power loss) left in their
 * reserved ranges: rows no reader could reach. Imports still running (their
 * process is alive) are left alone. Returns the number of imports cleaned.
 */
export async function cleanupLeftovers(conn: Database.Database): Promise<number> {
  const rows = conn.prepare("select id, owner, ranges, created_at from main.pending_imports").all() as {
    id: number;
    owner: string;
    ranges: string;
    created_at: number;
  }[];
  let n = 0;
  for (const r of rows) {
    if (!ownerGone(r.owner, r.created_at)) continue;
    await deleteReserved(conn, r.id, JSON.parse(r.ranges) as Record<string, [number, number]>);
    n++;
  }
  return n;
}
