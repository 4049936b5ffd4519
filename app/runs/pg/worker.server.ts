/**
 * The worker on PostgreSQL (DATABASE_URL=postgres://…): the same job life as
 * the SQLite worker (app/runs/worker-loop.server.ts) — claim under a lease,
 * call the provider with every HTTP attempt admitted by the provider's limits
 * shared through the database, store the outcome guarded by the lease — for
 * workers on many machines (app/runs/pg/queue.server.ts has the claims, the
 * stores and the admissions; app/runs/pg/workers.server.ts the heartbeats).
 *
 * SQLite has one writer, so the SQLite worker batches a whole event-loop turn
 * into one transaction. PostgreSQL has row locks and a connection pool, so
 * here each job is stored in its own short transaction as soon as its reply
 * arrives, and claims for the freed slots run beside them: no transaction
 * waits for another worker's except on the rows they both touch (one
 * provider's row while admitting, one run's row while ending it).
 */
import { and, eq, inArray } from "drizzle-orm";
import type { PgDb } from "../../../db/client-pg";
import { jobs, providerCalls, providers, runs } from "../../../db/schema.pg";
import { requestJson, type CallLogDetail, type ClaimedJob } from "../jobs.server";
import { getProtocol } from "../protocols";
import { providerFromRow } from "../providers/index.server";
import { RunStopped, type CallGate, type CallOutcome, type CallTicket, type GateContext } from "../providers/shared-limits.server";
import { ProviderError, type CallRecord } from "../providers/types";
import type { StoredRunConfig } from "../runner.server";
import { stopJobsOfStoppedRuns, type JobControl, type WorkerOptions } from "../worker-loop.server";
import { PgAdmissionLine } from "./admission-line.server";
import { admitCallPg, claimJobsPg, endCallPg, renewLeasesPg, storeOutcomePg, type JobEnd } from "./queue.server";
import { heartbeatPg, sweepDeadWorkersPg, unregisterWorkerPg } from "./workers.server";

type ProviderEntry = {
  provider: ReturnType<typeof providerFromRow>;
  concurrency: number;
  requestsPerMinute: number | null;
  gated: boolean;
};

/**
 * A provider's limits on PostgreSQL, as a CallGate: `begin` asks admitCallPg
 * until a slot (and room in the minute's window) is free — the call is then
 * logged as sent, in the same transaction — and the ticket's `end` completes
 * the row, which frees the slot for every worker. An answered call is the
 * job's last (its reply goes straight to the protocol and the store), so its
 * row is completed by the job's store, in the same statement
 * (`takeAnswered`); a failed attempt's row is completed at once, so a retry's
 * back-off does not hold the slot.
 */
export class PgCallGate implements CallGate {
  private answered: { id: number; o: CallOutcome } | null = null;

  /** The answered call whose row the job's store completes; null if none. */
  takeAnswered(): { id: number; o: CallOutcome } | null {
    const a = this.answered;
    this.answered = null;
    return a;
  }

  constructor(
    private readonly db: PgDb,
    private readonly ctx: Omit<GateContext, "requestJson"> & {
      callLog: CallLogDetail;
      /** Where the ticket's end writes are kept, so a stopping worker waits for them. */
      pending: Set<Promise<void>>;
      /** This process's line for the provider: only its head asks the database. */
      line: PgAdmissionLine;
    },
  ) {}

  async begin(request: unknown, estimatedPromptTokens: number | null): Promise<CallTicket> {
    const c = this.ctx;
    // Another attempt after an answered one (not how the client works today): the earlier row is completed first.
    const earlier = this.takeAnswered();
    if (earlier) await endCallPg(this.db, earlier.id, earlier.o);
    const logged = requestJson(request, c.callLog);
    const id = await c.line.admit(
      () =>
        admitCallPg(this.db, {
          providerId: c.providerId,
          concurrency: c.concurrency,
          requestsPerMinute: c.requestsPerMinute,
          owner: c.owner,
          runId: c.runId,
          jobId: c.jobId,
          requestJson: logged,
          estimatedPromptTokens,
        }),
      c.signal,
    );
    return {
      id,
      end: (o: CallOutcome) => {
        if (o.error == null) {
          this.answered = { id, o };
          return;
        }
        const p: Promise<void> = endCallPg(this.db, id, o)
          .then(
            // The slot is free in the database: the head of this process's line asks at once.
            () => c.line.wake(),
            () => {
              /* the row stays 'sent' until the dead-worker sweep interrupts it; the slot is then freed */
            },
          )
          .finally(() => c.pending.delete(p));
        c.pending.add(p);
      },
    };
  }
}

/** How often a worker's held jobs are checked against their runs' status (pause and cancel). */
const WATCH_MS = 100;

export class PgWorker {
  readonly id: string;
  private readonly o: {
    concurrency: number;
    leaseMs: number;
    pollMs: number;
    untilIdle: boolean;
    runId?: number;
    logCalls: boolean;
    callLog: CallLogDetail;
  };
  private readonly providers = new Map<number, Promise<ProviderEntry>>();
  private readonly runConfigs = new Map<number, Promise<{ protocol: ReturnType<typeof getProtocol>; settings: unknown }>>();
  /** Per executing job: `stop` ends waiting for a slot (pause or cancel), `cancel` also aborts the request in flight. */
  private readonly controls = new Map<number, JobControl>();
  private readonly executing = new Map<number, Promise<void>>();
  /** Unfinished writes that complete a call's row. */
  private readonly pendingEnds = new Set<Promise<void>>();
  /** Per provider, the calls waiting for a slot in this process (only the head asks the database). */
  private readonly lines = new Map<number, PgAdmissionLine>();
  private stopped = false;
  private wake: (() => void) | null = null;
  /** A job ended while the loop was not waiting: its next wait returns at once. */
  private woken = false;
  private timers: NodeJS.Timeout[] = [];
  private fatal: unknown = null;
  done: Promise<void> = Promise.resolve();
  processed = 0;

  private line(providerId: number): PgAdmissionLine {
    let l = this.lines.get(providerId);
    if (!l) this.lines.set(providerId, (l = new PgAdmissionLine()));
    return l;
  }

  constructor(
    private readonly db: PgDb,
    opts: WorkerOptions = {},
  ) {
    this.id = opts.id ?? `w-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.o = {
      concurrency: opts.concurrency ?? 8,
      leaseMs: opts.leaseMs ?? 60_000,
      pollMs: opts.pollMs ?? 500,
      untilIdle: opts.untilIdle ?? false,
      runId: opts.runId,
      logCalls: opts.logCalls ?? true,
      callLog: opts.callLog ?? "full",
    };
  }

  start(): this {
    this.stopped = false;
    const beat = async () => {
      try {
        await heartbeatPg(this.db, this.id, this.o.leaseMs);
        await renewLeasesPg(this.db, this.id, [...this.executing.keys()], this.o.leaseMs);
        await sweepDeadWorkersPg(this.db, this.id);
      } catch {
        /* the next beat retries */
      }
    };
    this.done = (async () => {
      // Registered before the first claim, and a dead worker's jobs and calls reclaimed at once.
      await heartbeatPg(this.db, this.id, this.o.leaseMs);
      await sweepDeadWorkersPg(this.db, this.id).catch(() => []);
      this.timers.push(setInterval(() => void beat(), Math.min(5_000, Math.max(50, Math.floor(this.o.leaseMs / 3)))));
      this.timers.push(setInterval(() => void this.watchRuns(), Math.min(WATCH_MS, this.o.pollMs)));
      for (const t of this.timers) t.unref?.();
      await this.loop();
    })().finally(async () => {
      for (const t of this.timers) clearInterval(t);
      this.timers = [];
      await Promise.allSettled([...this.pendingEnds]);
      await unregisterWorkerPg(this.db, this.id).catch(() => {
        /* a stale row is swept by the next worker */
      });
    });
    return this;
  }

  /** Stops claiming; resolves when in-flight jobs have finished and been stored. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.notify();
    await this.done;
  }

  private notify(): void {
    if (this.wake) this.wake();
    else this.woken = true;
  }

  private async watchRuns(): Promise<void> {
    if (this.controls.size === 0) return;
    const ids = [...new Set([...this.controls.values()].map((c) => c.runId))];
    let rows: { id: number; status: string }[];
    try {
      rows = await this.db.select({ id: runs.id, status: runs.status }).from(runs).where(inArray(runs.id, ids));
    } catch {
      return;
    }
    stopJobsOfStoppedRuns(this.controls.values(), rows);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (this.fatal) throw this.fatal;
      const room = this.o.concurrency - this.executing.size;
      const claimed = room > 0 ? await claimJobsPg(this.db, this.id, room, this.o.leaseMs, { runId: this.o.runId }) : [];
      for (const job of claimed) this.executing.set(job.id, this.execute(job));
      if (claimed.length === 0 && this.executing.size === 0 && this.o.untilIdle && !(await this.hasPendingWork())) break;
      // A full set of slots waits for a job to end; otherwise the next claim comes after pollMs (new work may arrive).
      if (claimed.length > 0 && claimed.length === room) continue;
      if (this.woken) {
        this.woken = false;
        continue;
      }
      await new Promise<void>((ok) => {
        const t = setTimeout(() => {
          this.wake = null;
          ok();
        }, this.o.pollMs);
        this.wake = () => {
          clearTimeout(t);
          this.wake = null;
          ok();
        };
      });
      this.woken = false;
    }
    await Promise.allSettled([...this.executing.values()]);
    if (this.fatal) throw this.fatal;
  }

  /** Whether a job of an active run (this worker's run, if it has one) is queued or leased. */
  private async hasPendingWork(): Promise<boolean> {
    const open = await this.db
      .select({ id: jobs.id })
      .from(jobs)
      .innerJoin(runs, eq(runs.id, jobs.runId))
      .where(
        and(
          inArray(runs.status, ["queued", "running"]),
          inArray(jobs.status, ["queued", "leased"]),
          this.o.runId === undefined ? undefined : eq(jobs.runId, this.o.runId),
        ),
      )
      .limit(1);
    return open.length > 0;
  }

  private provider(id: number): Promise<ProviderEntry> {
    let p = this.providers.get(id);
    if (!p) {
      p = (async () => {
        const [row] = await this.db.select().from(providers).where(eq(providers.id, id));
        if (!row) throw new ProviderError(`provider ${id} no longer exists`, false);
        if (row.apiKey && !process.env.CONCORD_ENCRYPTION_KEY)
          throw new ProviderError(
            `provider ${row.name} has an API key: set CONCORD_ENCRYPTION_KEY to the key that encrypted it (the concord-encryption-key file beside the SQLite database it was copied from)`,
            false,
          );
        return {
          // The row has the SQLite row's fields; the API key comes from CONCORD_ENCRYPTION_KEY (no key file beside a PostgreSQL database).
          provider: providerFromRow(row as unknown as Parameters<typeof providerFromRow>[0], ""),
          concurrency: row.concurrency,
          requestsPerMinute: row.requestsPerMinute,
          gated: row.kind !== "replay",
        };
      })();
      p.catch(() => this.providers.delete(id));
      this.providers.set(id, p);
    }
    return p;
  }

  /** The run's protocol and parsed settings, read once per run (settings do not change after creation). */
  private run(runId: number) {
    let r = this.runConfigs.get(runId);
    if (!r) {
      r = (async () => {
        const [row] = await this.db.select({ protocol: runs.protocol, config: runs.config }).from(runs).where(eq(runs.id, runId));
        if (!row) throw new Error(`run ${runId} no longer exists`);
        const protocol = getProtocol(row.protocol);
        const settings = (row.config as Partial<StoredRunConfig>).settings ?? {};
        return { protocol, settings: protocol.configSchema.parse(settings) };
      })();
      r.catch(() => this.runConfigs.delete(runId));
      this.runConfigs.set(runId, r);
    }
    return r;
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const calls: CallRecord[] = [];
    const control = { stop: new AbortController(), cancel: new AbortController(), runId: job.runId };
    this.controls.set(job.id, control);
    let end: JobEnd;
    let gate: PgCallGate | undefined;
    try {
      const { protocol, settings } = await this.run(job.runId);
      const p = await this.provider(job.payload.providerId);
      gate = p.gated
        ? new PgCallGate(this.db, {
            providerId: job.payload.providerId,
            concurrency: p.concurrency,
            requestsPerMinute: p.requestsPerMinute,
            owner: this.id,
            runId: job.runId,
            jobId: job.id,
            callLog: this.o.callLog,
            signal: control.stop.signal,
            pending: this.pendingEnds,
            line: this.line(job.payload.providerId),
          })
        : undefined;
      const reply = await p.provider.call(job.payload.request, {
        gate,
        onCall: gate || !this.o.logCalls ? undefined : (c) => void calls.push(c),
        signal: control.cancel.signal,
        stopSignal: control.stop.signal,
      });
      const outcome = protocol.onReply(job.payload, reply.text, settings);
      if (reply.recorded) for (const r of outcome.responses) r.metadata = { ...r.metadata, recorded: true };
      end = { outcome };
    } catch (err) {
      end =
        err instanceof RunStopped || control.stop.signal.aborted
          ? { stopped: true }
          : { error: err instanceof Error ? err.message : String(err) };
    } finally {
      this.controls.delete(job.id);
    }
    try {
      // Ungated (replayed) calls were not logged by a gate: they are logged here, before the outcome.
      if (calls.length)
        await this.db.insert(providerCalls).values(
          calls.map((c) => ({
            providerId: job.payload.providerId,
            jobId: job.id,
            request: JSON.parse(requestJson(c.request, this.o.callLog)),
            reply: c.reply ?? null,
            status: c.status,
            latencyMs: c.latencyMs,
            promptTokens: c.promptTokens,
            completionTokens: c.completionTokens,
            error: c.error,
            owner: this.id,
          })),
        );
      // A call's row is completed before or with its job's store, so a finished run has no call still 'sent'.
      await Promise.allSettled([...this.pendingEnds]);
      const answered = gate?.takeAnswered() ?? null;
      await storeOutcomePg(this.db, this.id, job, end, answered);
      // The answered call's slot is free in the database: the head of this process's line asks at once.
      if (answered) this.line(job.payload.providerId).wake();
      if (!("stopped" in end)) this.processed++;
    } catch (err) {
      this.fatal ??= err;
    } finally {
      this.executing.delete(job.id);
      this.notify();
    }
  }
}
