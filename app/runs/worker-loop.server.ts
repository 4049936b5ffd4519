/**
 * The worker: schedules jobs — claims them, calls providers (provider-calls.server.ts;
 * each HTTP attempt admitted by the provider's shared limits), and stores what
 * finished (jobs.server.ts: claiming and persistence). Several workers — processes, and the web
 * server's in-process worker — share one database.
 *
 * Throughput (bench:runs): the outcomes of all replies that arrive in one
 * event-loop turn are stored, and the freed slots claimed, in ONE transaction
 * with statements prepared once per connection; a few jobs are leased ahead
 * (prefetch) so a reply's slot is refilled at once; providers and run
 * settings are built once per worker; HTTP goes through a shared keep-alive
 * agent (providers/node-fetch.server.ts).
 */
import { startCheckpointer } from "../../db/checkpointer";
import { isBusyError, type Db } from "../../db/client";
import { getProtocol } from "./protocols";
import {
  hasPendingJobs,
  renewLeases,
  runStatuses,
  stmts,
  storeAndClaim,
  type CallLogDetail,
  type ClaimedJob,
  type Finished,
  type StoreResult,
} from "./jobs.server";
import { callProvider, ProviderCache } from "./provider-calls.server";
import { encryptPlaintextKeys } from "./providers/secrets.server";
import {
  BUSY_RETRY_MS,
  heartbeat,
  RunStopped,
  sharedLimits,
  sweepDeadWorkers,
  unregisterWorker,
  withoutBusyWait,
} from "./providers/shared-limits.server";
import type { CallRecord } from "./providers/types";
import type { StoredRunConfig } from "./runner.server";

// ─── Worker ──────────────────────────────────────────────────────────────────

export type WorkerOptions = {
  id?: string;
  /** Jobs in flight at once (each provider's own limit still applies). */
  concurrency?: number;
  /**
   * Jobs leased ahead of a free slot, so a reply's slot is refilled at once
   * instead of after the next store (default ceil(concurrency / 4); 0 = none).
   * They are calls not yet made: a crash repeats none of them.
   */
  prefetch?: number;
  leaseMs?: number;
  pollMs?: number;
  /** Stop once no claimable work remains (CLI and tests). */
  untilIdle?: boolean;
  /** Only work on this run. */
  runId?: number;
  /** Log every HTTP attempt to provider_calls (default true). */
  logCalls?: boolean;
  /** How much of each request body provider_calls keeps (default "full"). */
  callLog?: CallLogDetail;
  /**
   * Least time between two stores (default 4 ms): replies arriving meanwhile
   * share one transaction. Prefetched jobs keep the slots busy in between; a
   * crash loses at most this window's replies (their calls are repeated).
   */
  storeEveryMs?: number;
};

export const defaultPrefetch = (concurrency: number) => Math.ceil(concurrency / 4);

/** How often a worker's claim also looks for expired leases (see claimWithin). */
const EXPIRED_CHECK_MS = 250;
/** How often a worker looks whether the runs of its prefetched jobs were stopped. */
const HELD_CHECK_MS = 50;

export class Worker {
  readonly id: string;
  private readonly o: Required<Omit<WorkerOptions, "runId" | "id">> & { runId?: number };
  private providers: ProviderCache;
  /** Per executing job: `stop` ends waiting for a slot (pause or cancel), `cancel` also aborts the request in flight. */
  private controls = new Map<number, JobControl>();
  private watcher: NodeJS.Timeout | null = null;
  private runs = new Map<number, { protocol: ReturnType<typeof getProtocol>; settings: unknown }>();
  /** Jobs calling their provider now. */
  private executing = new Map<number, Promise<void>>();
  /** Replied, waiting for the next store. */
  private finished: Finished[] = [];
  /** Leased, not started (prefetched). */
  private ready: ClaimedJob[] = [];
  private stopped = false;
  private wake: (() => void) | null = null;
  private wakeQueued = false;
  private lastTick = 0;
  private lastExpiredCheck = -Infinity;
  private lastHeldCheck = -Infinity;
  /** A store that failed in a turn the provider limits ran (see start): the loop rethrows it. */
  private fatal: unknown = null;
  private heartbeat: NodeJS.Timeout | null = null;
  done: Promise<void> = Promise.resolve();
  processed = 0;

  constructor(
    private readonly db: Db,
    opts: WorkerOptions = {},
  ) {
    this.id = opts.id ?? `w-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.providers = new ProviderCache(db);
    const concurrency = opts.concurrency ?? 8;
    this.o = {
      leaseMs: 60_000,
      pollMs: 500,
      untilIdle: false,
      logCalls: true,
      callLog: "full",
      prefetch: defaultPrefetch(concurrency),
      storeEveryMs: 4,
      ...opts,
      concurrency,
    };
  }

  /** Every job this worker holds a lease on. */
  private held(): number[] {
    return [...this.executing.keys(), ...this.finished.map((f) => f.job.id), ...this.ready.map((j) => j.id)];
  }

  start(): this {
    this.stopped = false;
    // Registered before the first claim, and a dead worker's jobs and calls reclaimed at once.
    heartbeat(this.db, this.id, this.o.leaseMs);
    try {
      sweepDeadWorkers(this.db, this.id);
    } catch {
      /* retried by the heartbeat */
    }
    // Keys stored in plaintext by an older release are encrypted (the next start tries again if this fails).
    void encryptPlaintextKeys(this.db).catch(() => undefined);
    this.heartbeat = setInterval(
      () => {
        try {
          heartbeat(this.db, this.id, this.o.leaseMs);
          renewLeases(this.db, this.id, this.held(), this.o.leaseMs);
          sweepDeadWorkers(this.db, this.id);
        } catch {
          /* the next beat retries */
        }
      },
      Math.min(5_000, Math.max(50, Math.floor(this.o.leaseMs / 3))),
    );
    this.heartbeat.unref?.();
    // Pause and cancel reach the jobs of this worker promptly: no new call starts once the run is stopped.
    this.watcher = setInterval(() => this.watchRuns(), Math.min(200, this.o.pollMs));
    this.watcher.unref?.();
    // The provider limits' turns (a call answered, a call waiting for a slot) run through this worker's store:
    // one transaction writes the answered calls, admits the waiting ones, stores what finished and claims.
    const undrive = sharedLimits(this.db).drive(() => {
      try {
        this.tick(!this.stopped);
      } catch (err) {
        this.fatal ??= err;
        this.wake?.();
      }
    });
    // WAL checkpoints run in a thread of their own, not inside this worker's commits (db/checkpointer.ts).
    const checkpointer = startCheckpointer(this.db);
    this.done = this.loop().finally(async () => {
      undrive();
      if (this.heartbeat) clearInterval(this.heartbeat);
      if (this.watcher) clearInterval(this.watcher);
      try {
        sharedLimits(this.db).flushEnds();
        unregisterWorker(this.db, this.id);
      } catch {
        /* a stale row is swept by the next worker */
      }
      await checkpointer?.stop();
    });
    return this;
  }

  private watchRuns(): void {
    if (this.controls.size === 0) return;
    const ids = [...new Set([...this.controls.values()].map((c) => c.runId))];
    let rows: { id: number; status: string }[];
    try {
      rows = runStatuses(this.db, ids);
    } catch {
      return;
    }
    stopJobsOfStoppedRuns(this.controls.values(), rows);
  }

  /** Stops claiming; resolves when in-flight jobs have finished and been stored. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.done;
  }

  /**
   * Starts prefetched jobs while slots are free; a job whose run was paused or
   * cancelled meanwhile waits to be handed back. A job of a gated provider is
   * not checked here: the shared limits' admitting transaction checks its run
   * before the call is logged and sent (a stopped run's job comes back
   * "stopped" and is handed back), so only ungated (replay) jobs cost a read.
   */
  private startReady(): void {
    if (this.ready.length === 0 || this.executing.size >= this.o.concurrency) return;
    const st = stmts(this.db);
    const active = new Map<number, boolean>();
    const isActive = (runId: number) => {
      let a = active.get(runId);
      if (a === undefined) active.set(runId, (a = st.isActive.get(runId) !== undefined));
      return a;
    };
    for (let i = 0; i < this.ready.length && this.executing.size < this.o.concurrency;) {
      const job = this.ready[i];
      if (!this.gated(job) && !isActive(job.runId)) {
        i++;
        continue;
      }
      this.ready.splice(i, 1);
      this.executing.set(job.id, this.execute(job));
    }
  }

  private gated(job: ClaimedJob): boolean {
    try {
      return this.providers.get(job.payload.providerId).gated;
    } catch {
      return false; // the provider is gone: execute() fails the job
    }
  }

  /**
   * Stores what has finished, hands back prefetched jobs of paused or
   * cancelled runs, and claims for the free slots plus the prefetch, in one
   * transaction; starts what the slots allow. Returns the number claimed.
   */
  private tick(claim: boolean): number {
    const batch = this.finished;
    const want = claim ? Math.max(0, this.o.concurrency - this.executing.size + this.o.prefetch - this.ready.length) : 0;
    const now = performance.now();
    // Held jobs of a stopped run are looked for a few times a second (a gated job started meanwhile is stopped by its gate).
    const checkHeld = this.ready.length > 0 && (!claim || now - this.lastHeldCheck >= HELD_CHECK_MS);
    // The provider limits' answered calls and admissions go into the same transaction.
    const join = sharedLimits(this.db).join();
    if (batch.length === 0 && want === 0 && !checkHeld && !join) return 0;
    this.finished = [];
    this.lastTick = now;
    // Expired leases (a dead worker's jobs, expired at once by the sweep) are looked for a few times a second.
    const expired = want > 0 && now - this.lastExpiredCheck >= EXPIRED_CHECK_MS;
    let r: StoreResult;
    try {
      r = withoutBusyWait(this.db, () =>
        storeAndClaim(this.db, this.id, batch, want, this.o.leaseMs, {
          runId: this.o.runId,
          detail: this.o.callLog,
          held: checkHeld ? this.ready : [],
          releaseAll: !claim,
          expired,
          join,
        }),
      );
      if (expired) this.lastExpiredCheck = now;
      if (checkHeld) this.lastHeldCheck = now;
    } catch (err) {
      this.finished = batch.concat(this.finished);
      if (isBusyError(err)) {
        // Another process holds the write lock: try again shortly, without sleeping in the event loop.
        setTimeout(() => this.wake?.(), BUSY_RETRY_MS);
        return 0;
      }
      throw err;
    }
    this.processed += batch.length;
    if (r.released.length) {
      const gone = new Set(r.released);
      this.ready = this.ready.filter((j) => !gone.has(j.id));
    }
    this.ready.push(...r.claimed);
    this.startReady();
    return r.claimed.length;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (this.fatal) throw this.fatal;
      const claimed = this.tick(true);
      if (
        claimed === 0 &&
        this.executing.size === 0 &&
        this.finished.length === 0 &&
        this.ready.length === 0 &&
        this.o.untilIdle &&
        !this.hasPendingWork()
      )
        break;
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, this.o.pollMs);
        this.wake = () => {
          clearTimeout(t);
          this.wake = null;
          ok();
        };
      });
    }
    for (;;) {
      await Promise.allSettled([...this.executing.values()]);
      if (this.fatal) throw this.fatal;
      this.tick(false);
      if (this.executing.size === 0 && this.finished.length === 0 && this.ready.length === 0) break;
      await new Promise((ok) => setTimeout(ok, Math.min(this.o.pollMs, 100))); // the store was busy; retry
    }
  }

  /** A reply's slot goes to a prefetched job at once; replies of one event-loop turn (or of storeEveryMs) are stored together. */
  private finish(f: Finished): void {
    this.executing.delete(f.job.id);
    this.finished.push(f);
    if (!this.stopped) this.startReady();
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    const fire = () => {
      this.wakeQueued = false;
      this.wake?.();
    };
    const wait = this.lastTick + this.o.storeEveryMs - performance.now();
    if (wait > 1) setTimeout(fire, wait);
    else setImmediate(fire);
  }

  private hasPendingWork(): boolean {
    return hasPendingJobs(this.db, this.o.runId);
  }

  /** The run's protocol and parsed settings, read once per run (settings do not change after creation). */
  private run(runId: number) {
    let r = this.runs.get(runId);
    if (!r) {
      const row = stmts(this.db).runSettings.get(runId) as { protocol: string; config: string } | undefined;
      if (!row) throw new Error(`run ${runId} no longer exists`);
      const protocol = getProtocol(row.protocol);
      const settings = (JSON.parse(row.config) as Partial<StoredRunConfig>).settings ?? {};
      r = { protocol, settings: protocol.configSchema.parse(settings) };
      this.runs.set(runId, r);
    }
    return r;
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const calls: CallRecord[] = [];
    const onCall = this.o.logCalls ? (c: CallRecord) => void calls.push(c) : undefined;
    const control = { stop: new AbortController(), cancel: new AbortController(), runId: job.runId };
    this.controls.set(job.id, control);
    // Yield first, so the job is registered as executing before it can finish.
    await undefined;
    try {
      const { protocol, settings } = this.run(job.runId);
      const reply = await callProvider(this.db, this.providers.get(job.payload.providerId), job, {
        owner: this.id,
        callLog: this.o.callLog,
        onCall,
        stop: control.stop.signal,
        cancel: control.cancel.signal,
      });
      const outcome = protocol.onReply(job.payload, reply.text, settings);
      if (reply.recorded) for (const r of outcome.responses) r.metadata = { ...r.metadata, recorded: true };
      this.finish({ job, outcome, calls });
    } catch (err) {
      if (err instanceof RunStopped || control.stop.signal.aborted) this.finish({ job, stopped: true, calls });
      else this.finish({ job, error: err instanceof Error ? err.message : String(err), calls });
    } finally {
      this.controls.delete(job.id);
    }
  }
}

/** An executing job's signals: `stop` ends waiting for a slot (pause or cancel), `cancel` also aborts the request in flight. */
export type JobControl = { stop: AbortController; cancel: AbortController; runId: number };

/**
 * Signals the executing jobs whose run is no longer queued or running: a
 * paused run's jobs start no new call, a cancelled or deleted run's jobs
 * also abort the request in flight.
 */
export function stopJobsOfStoppedRuns(controls: Iterable<JobControl>, runStatuses: { id: number; status: string }[]): void {
  const status = new Map(runStatuses.map((r) => [r.id, r.status]));
  for (const c of controls) {
    const st = status.get(c.runId) ?? "deleted";
    if (st === "queued" || st === "running") continue;
    if (!c.stop.signal.aborted) c.stop.abort(st);
    if ((st === "cancelled" || st === "deleted") && !c.cancel.signal.aborted) c.cancel.abort(st);
  }
}
