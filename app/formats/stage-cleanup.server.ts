/**
 * Deleting an import's rows by their reserved ID ranges: its own when it
 * fails, and those of an import whose process died (cleanupLeftovers, at the
 * next start or import).
 */
import os from "node:os";
import type Database from "better-sqlite3";
import { processGone, STAGED_TABLES } from "./stage-file.server";
import {
  CHUNK_TARGET_MS,
  ChunkGaps,
  endHold,
  type HoldRecord,
  MAX_CHUNK_ROWS,
  MAX_STEP,
  MIN_STEP,
  sleep,
  startHold,
  unboost,
} from "./stage-lock.server";

/**
 * Deletes the rows in an import's reserved ranges, children first, in short
 * transactions bounded like the copy's chunks (about `targetMs` of work or
 * MAX_CHUNK_ROWS rows), the lock given back between them, then its
 * pending_imports row.
 */
export async function deleteReserved(
  conn: Database.Database,
  pendingId: number,
  ranges: Record<string, [number, number]>,
  targetMs = CHUNK_TARGET_MS,
  log?: HoldRecord[],
): Promise<void> {
  conn.pragma("foreign_keys = OFF");
  const gaps = new ChunkGaps(conn);
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
        await sleep(gaps.after(rec.wallMs));
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
  return processGone(pid);
}

/**
 * Deletes what imports that died midway (kill -9, power loss) left in their
 * reserved ranges: rows no reader could reach (their stage files: see
 * removeOrphanStageFiles). Imports still running (their process is alive) are
 * left alone. Returns the number of imports cleaned.
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
