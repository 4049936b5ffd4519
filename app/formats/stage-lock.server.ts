/**
 * The write lock as the import holds it: how long a chunk may hold it, the
 * gap left between chunks, the higher CPU priority while it is held, and the
 * record of every hold.
 */
import fs from "node:fs";
import os from "node:os";
import type Database from "better-sqlite3";
import { lastWriteWaiter } from "../../db/client";

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

/**
 * The gap after a chunk during which a writer waited for the lock (ms): at
 * least this, and at least twice the chunk's hold, so the waiter goes first.
 */
export const CHUNK_GAP_MS = 10;

/**
 * The gap after a chunk during which no writer marked that it waited (ms):
 * the lock is let go and taken again a moment later. Long enough for a writer
 * whose retry is due to take it; a writer that sleeps in SQLite's busy handler
 * (which leaves no mark) is also let in by the long gap every LONG_GAP_EVERY_MS.
 */
export const IDLE_GAP_MS = 1;

/** However quiet the database looks, after this much holding (ms) the next gap is a long one. */
export const LONG_GAP_EVERY_MS = 100;

/** Staged IDs per statement inside a chunk: adapted between these bounds. */
export const MIN_STEP = 32;
export const MAX_STEP = 1024;

/**
 * How long the lock is left free after each chunk. An import that paused the
 * same 10 ms after every chunk spent more time asleep than copying when nobody
 * was waiting; now it pauses that long only when a writer found the lock held
 * since the last chunk (the waiting-writer mark, db/client.ts), or after
 * LONG_GAP_EVERY_MS of holds, and otherwise IDLE_GAP_MS.
 */
export class ChunkGaps {
  /** The mark as the last check saw it: a newer one means a writer waited since. */
  private seen: number;
  private heldSinceLong = 0;
  /** Long gaps taken because a writer waited, and because of LONG_GAP_EVERY_MS (diagnostics, tests). */
  readonly long = { waited: 0, periodic: 0 };

  constructor(private readonly conn: Database.Database) {
    this.seen = lastWriteWaiter(conn);
  }

  /** The gap (ms) after a hold of `holdMs` that has just ended. */
  after(holdMs: number): number {
    const mark = lastWriteWaiter(this.conn);
    const waited = mark > this.seen;
    this.seen = mark;
    this.heldSinceLong += holdMs;
    if (!waited && this.heldSinceLong < LONG_GAP_EVERY_MS) return IDLE_GAP_MS;
    if (waited) this.long.waited++;
    else this.long.periodic++;
    this.heldSinceLong = 0;
    return Math.max(CHUNK_GAP_MS, 2 * holdMs);
  }
}

/**
 * Diagnostics: when CONCORD_IMPORT_LOCK_LOG names a file, every hold of the
 * write lock by an import is appended to it as a JSON line (kind, table,
 * rows, wall-clock and CPU milliseconds), written after the copy (no I/O
 * during it). scripts/bench-annotate.ts reads it.
 */
export const LOCK_LOG = process.env.CONCORD_IMPORT_LOCK_LOG;

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

export function unboost(): void {
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

export type Hold = { t0: number; cpu0: NodeJS.CpuUsage; commitAt?: number };

/** Starts timing a hold. CPU time is the process's (user + system): during the copy its other thread is idle, waiting for it. */
export function startHold(): Hold {
  boost();
  return { t0: performance.now(), cpu0: process.cpuUsage() };
}

export function endHold(h: Hold, kind: HoldRecord["kind"], table: string, rows: number): HoldRecord {
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

export function writeLockLog(log: HoldRecord[]): void {
  if (!LOCK_LOG || log.length === 0) return;
  try {
    fs.appendFileSync(LOCK_LOG, log.map((r) => JSON.stringify(r)).join("\n") + "\n");
  } catch {
    // diagnostics only
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
