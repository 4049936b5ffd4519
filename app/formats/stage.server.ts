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
import os from "node:os";
import type Database from "better-sqlite3";
import { deleteReserved } from "./stage-cleanup.server";
import { STAGE_BASE } from "./stage-file.server";
import {
  CHUNK_TARGET_MS,
  ChunkGaps,
  endHold,
  type Hold,
  type HoldRecord,
  LOCK_LOG,
  MAX_CHUNK_ROWS,
  MAX_STEP,
  MIN_STEP,
  sleep,
  startHold,
  unboost,
  writeLockLog,
} from "./stage-lock.server";
import { MARKED, orderCopies, type Plan, planTables } from "./stage-plan.server";

export { cleanupLeftovers } from "./stage-cleanup.server";
export { attachFilledStage, attachStage, detachStage, STAGE_BASE, STAGED_TABLES } from "./stage-file.server";
export { CHUNK_GAP_MS, CHUNK_TARGET_MS, type HoldRecord, MAX_CHUNK_ROWS } from "./stage-lock.server";

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
  /** Gaps between chunks that were long because a writer had waited for the lock, and because LONG_GAP_EVERY_MS of holds had passed; the others were IDLE_GAP_MS. */
  longGaps: { waited: number; periodic: number };
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
  /**
   * Stops the copy when aborted (scripts/import-job.ts: its server has gone): looked at before the reservation, after
   * every chunk and just before the final transaction; the rows copied so far are deleted, as on any failure.
   */
  signal?: AbortSignal;
};

/**
 * Copies the staged rows into the database (steps 1–3 above). The write lock
 * is never held across an await: each transaction begins and ends within
 * one synchronous stretch. Throws (after deleting whatever it had copied) if
 * SQLite refuses a row.
 */
export async function commitStage(conn: Database.Database, opts: CommitOptions = {}): Promise<CommitStats> {
  const target = opts.targetMs ?? CHUNK_TARGET_MS;
  opts.signal?.throwIfAborted();
  const plans = planTables(conn);
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
    longGaps: { waited: 0, periodic: 0 },
  };
  const gaps = new ChunkGaps(conn);
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

  const ordered = orderCopies(conn, plans);
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
  const checkpoint = () => (conn.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0];
  // After the chunks, as often as SQLite's automatic checkpoint would run (every `autockpt` pages of WAL, 1,000 unless
  // set): the pages the last checkpoint found per chunk say how many chunks that is. A WAL that could not be reset (a
  // reader still on an old snapshot) makes the estimate high, and the checkpoint comes after every chunk.
  let chunksSinceCheckpoint = 0;
  let checkpointEvery = 1;
  const checkpointIfDue = () => {
    if (++chunksSinceCheckpoint < checkpointEvery) return;
    const pagesPerChunk = Math.max(1, checkpoint().log / chunksSinceCheckpoint);
    checkpointEvery = Math.max(1, Math.floor((autockpt > 0 ? autockpt : 1000) / pagesPerChunk));
    chunksSinceCheckpoint = 0;
  };
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
        checkpointIfDue();
        stats.chunkedRows += n;
        await opts.onChunk?.({ table: p.t, rows: n, holdMs: ms, chunk: chunk++ });
        opts.signal?.throwIfAborted();
        // The lock let go: for twice as long as it was held (at least CHUNK_GAP_MS) when a writer waited for it, so the
        // waiter goes first; otherwise for a moment.
        await sleep(gaps.after(ms));
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
    opts.signal?.throwIfAborted();
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
  stats.longGaps = { ...gaps.long };
  return stats;
}
