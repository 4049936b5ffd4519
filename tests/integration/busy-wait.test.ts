/**
 * Issue 18, major 4: a submit that finds the write lock held (an import's
 * chunk, in another process) waits for it on a timer, never in SQLite's busy
 * handler, which would hold the server's whole event loop while it sleeps.
 * Another connection to the same file holds the lock, as the import's own
 * process does; the real saveAnnotation-shaped write (one IMMEDIATE
 * transaction through drizzle) goes in as soon as the lock is free.
 */
import Database from "better-sqlite3";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { BUSY_TIMEOUT_MS, isBusyError, writeWithoutBusyWait } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { withoutBusyWait } from "../../app/runs/providers/shared-limits.server";

const { file, db } = useTempDatabase();

/** One write transaction, as saveAnnotation's: BEGIN IMMEDIATE, a row, COMMIT. */
const write = (value: string) =>
  db().transaction((tx) => tx.run(sql`insert into busy_probe (value) values (${value})`), { behavior: "immediate" });

const count = () => (db().$client.prepare("select count(*) as n from busy_probe").get() as { n: number }).n;

function holder(): Database.Database {
  const other = new Database(file);
  other.pragma("busy_timeout = 0");
  other.exec("begin immediate");
  return other;
}

describe("writeWithoutBusyWait", () => {
  it("waits for a held lock with the event loop free, then writes once", async () => {
    db().$client.exec("create table if not exists busy_probe (id integer primary key, value text not null)");
    const other = holder();
    // Without the helper the write would sleep in the busy handler; with the timeout at 0 it fails at once instead.
    db().$client.pragma("busy_timeout = 0");
    expect(() => write("direct")).toThrow(/locked|busy/i);
    db().$client.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);

    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const releaseAfterMs = 150;
    const released = new Promise<number>((resolve) =>
      setTimeout(() => {
        other.exec("commit");
        resolve(performance.now());
      }, releaseAfterMs),
    );
    const t0 = performance.now();
    await writeWithoutBusyWait(db(), () => write("after the lock"));
    const done = performance.now();
    clearInterval(ticker);
    const releasedAt = await released;
    other.close();
    // It went in after the lock was given back, not before (the holder's transaction was open until then)...
    expect(done).toBeGreaterThanOrEqual(releasedAt);
    expect(done - t0).toBeGreaterThanOrEqual(releaseAfterMs - 5);
    // ...and the event loop ran meanwhile: a 5 ms interval ticked (a busy-handler sleep would have let it tick at most once).
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect(count()).toBe(1);
    // The connection's busy timeout is what it was.
    expect(db().$client.pragma("busy_timeout", { simple: true })).toBe(BUSY_TIMEOUT_MS);
  });

  it("gives up after its timeout with SQLITE_BUSY and writes nothing; other errors are thrown at once", async () => {
    const other = holder();
    const t0 = performance.now();
    const err = await writeWithoutBusyWait(db(), () => write("never"), 100).catch((e: unknown) => e);
    expect(isBusyError(err)).toBe(true);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
    other.exec("rollback");
    other.close();
    expect(count()).toBe(1);
    expect(db().$client.pragma("busy_timeout", { simple: true })).toBe(BUSY_TIMEOUT_MS);

    let calls = 0;
    const bad = await writeWithoutBusyWait(db(), () => {
      calls++;
      return db().$client.prepare("insert into no_such_table values (1)").run();
    }).catch((e: unknown) => e);
    expect(String(bad)).toMatch(/no such table/);
    expect(calls).toBe(1);
  });
});

describe("withoutBusyWait (the runs worker's turn transaction)", () => {
  it("fails at once with SQLITE_BUSY while another process holds the lock, every time, and puts the timeout back", () => {
    db().$client.exec("create table if not exists busy_probe (id integer primary key, value text not null)");
    const before = count();
    const other = holder();
    // Twice: a prepared `PRAGMA busy_timeout = 0` run again would leave the timeout at 5 s from the second call on
    // (SQLite applies the pragma while preparing it), and the worker's event loop would sleep in the busy handler.
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      let err: unknown = null;
      try {
        withoutBusyWait(db(), () => write(`turn ${i}`));
      } catch (e) {
        err = e;
      }
      const waited = performance.now() - t0;
      expect(isBusyError(err), String(err)).toBe(true);
      // The busy handler would have slept up to BUSY_TIMEOUT_MS (5 s) before failing.
      expect(waited).toBeLessThan(BUSY_TIMEOUT_MS / 5);
      expect(db().$client.pragma("busy_timeout", { simple: true })).toBe(BUSY_TIMEOUT_MS);
    }
    other.exec("rollback");
    other.close();
    withoutBusyWait(db(), () => write("free"));
    expect(count()).toBe(before + 1);
  });
});
