/**
 * Worker liveness on PostgreSQL (the workers table), as on SQLite
 * (app/runs/providers/shared-limits.server.ts): a worker renews a heartbeat
 * while alive; sweepDeadWorkersPg marks the calls a dead worker had in flight
 * "interrupted" (they no longer hold a concurrency slot, but stay in the
 * requests-per-minute window, since the provider may have received them) and
 * expires its job leases so the next claim takes them at once. Without it a
 * worker that crashed mid-call would hold its provider slots for good.
 *
 * A worker is dead when its heartbeat is older than its lease, or when it ran
 * on this host and its pid is gone. Heartbeats are stamped with the database
 * server's clock, the one the leases use, so machines whose clocks differ
 * agree on who is silent. Two sweepers at once: each locks the dead workers'
 * rows with SKIP LOCKED, so a worker's calls and leases are handled once.
 */
import { and, eq, inArray, isNull, notInArray, or, sql } from "drizzle-orm";
import type { PgDb } from "../../../db/client-pg";
import { jobs, providerCalls, providers, workers } from "../../../db/schema.pg";
import { HOST } from "../providers/shared-limits.server";

const NOW_MS = sql`(floor(extract(epoch from clock_timestamp()) * 1000)::bigint)`;

type Tx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];
/** provider_id IN (providers): the calls in flight are found through the (provider_id, state) index, not a scan of the call log. */
const calledProviders = (tx: Tx) => tx.select({ id: providers.id }).from(providers);

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Registers (or renews) a worker's heartbeat; `pid` is this process's unless given. */
export async function heartbeatPg(db: PgDb, id: string, leaseMs: number, opts: { host?: string; pid?: number } = {}): Promise<void> {
  await db
    .insert(workers)
    .values({ id, host: opts.host ?? HOST, pid: opts.pid ?? process.pid, heartbeatAt: NOW_MS, leaseMs, startedAt: NOW_MS })
    .onConflictDoUpdate({ target: workers.id, set: { heartbeatAt: NOW_MS, leaseMs } });
}

export async function unregisterWorkerPg(db: PgDb, id: string): Promise<void> {
  await db.delete(workers).where(eq(workers.id, id));
}

/**
 * Finds the workers that are gone, marks their calls in flight interrupted,
 * expires their job leases and forgets them; calls in flight whose owner is
 * no registered worker are interrupted too. Returns the dead workers' ids.
 */
export async function sweepDeadWorkersPg(db: PgDb, self?: string): Promise<string[]> {
  const isDead = (w: { id: string; host: string; pid: number; silent: boolean }) =>
    w.id !== self && (w.silent || (w.host === HOST && w.pid !== process.pid && !pidAlive(w.pid)));
  const seen = {
    id: workers.id,
    host: workers.host,
    pid: workers.pid,
    silent: sql<boolean>`${workers.heartbeatAt} + ${workers.leaseMs} < ${NOW_MS}`,
  };
  return db.transaction(async (tx) => {
    const suspects = (await tx.select(seen).from(workers)).filter(isDead).map((w) => w.id);
    // Locked (and looked at again: a heartbeat may have come in since) only the suspects, so live workers'
    // heartbeats never wait for a sweep; one another sweeper holds is skipped.
    const dead = suspects.length
      ? (await tx.select(seen).from(workers).where(inArray(workers.id, suspects)).for("update", { skipLocked: true }))
          .filter(isDead)
          .map((w) => w.id)
      : [];
    if (dead.length) {
      await tx
        .update(jobs)
        .set({ leaseExpiresAt: 0 })
        .where(and(eq(jobs.status, "leased"), inArray(jobs.leaseOwner, dead)));
      await tx
        .update(providerCalls)
        .set({ state: "interrupted", error: sql`COALESCE(${providerCalls.error}, 'the worker stopped during the call')` })
        .where(
          and(inArray(providerCalls.providerId, calledProviders(tx)), eq(providerCalls.state, "sent"), inArray(providerCalls.owner, dead)),
        );
      await tx.delete(workers).where(inArray(workers.id, dead));
    }
    const live = tx.select({ id: workers.id }).from(workers);
    await tx
      .update(providerCalls)
      .set({ state: "interrupted", error: sql`COALESCE(${providerCalls.error}, 'the caller stopped during the call')` })
      .where(
        and(
          inArray(providerCalls.providerId, calledProviders(tx)),
          eq(providerCalls.state, "sent"),
          or(isNull(providerCalls.owner), notInArray(providerCalls.owner, live)),
        ),
      );
    return dead;
  });
}
