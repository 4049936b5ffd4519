/**
 * Provider limits that hold for the provider, not for the process: the
 * concurrency and requests-per-minute of a provider are shared by every
 * worker process and the web server's in-process worker, through the
 * database.
 *
 * Every HTTP attempt is admitted by a "gate": in ONE immediate transaction it
 * checks that the job's run is still active, counts the provider's calls in
 * flight (provider_calls.state = 'sent') and its calls admitted in the last
 * window, and — when both are under the limits — logs the call as sent
 * before a byte leaves. The reply (or error) completes that row afterwards,
 * which frees the slot. SQLite serialises immediate transactions, so two
 * processes can never both take the last slot.
 *
 * The requests-per-minute window is 60 s plus RPM_MARGIN_MS: the time
 * between admission (the timestamp in the database) and the request
 * reaching the server is not zero, so admissions are spaced a little more
 * than a minute apart and the server never counts more than the limit in any
 * 60 s of arrivals.
 *
 * Waiting: per provider, each process keeps one FIFO of waiting calls; only
 * its head asks the database (a plain read first, the write transaction only
 * when a slot looks free). A call that ends in this process wakes the queue
 * at once; slots freed by other processes are seen by polling.
 *
 * Worker liveness (the workers table): a worker renews a heartbeat while
 * alive; sweepDeadWorkers marks the calls of a dead worker "interrupted"
 * (they stay counted, with the prompt's estimated tokens) and expires its
 * job leases so they are reclaimed at once. A worker is dead when it runs on
 * this host and its pid is gone, or when its heartbeat is older than its lease.
 */
import os from "node:os";
import type { Db } from "../../../db/client";

export const RPM_WINDOW_MS = 60_000;
/** Added to the window (see above). */
export const RPM_MARGIN_MS = 1_500;

export class RunStopped extends Error {
  constructor(readonly runStatus: string) {
    super(`the run is ${runStatus}`);
    this.name = "RunStopped";
  }
}

export type CallOutcome = {
  reply: unknown;
  status: number | null;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  error: string | null;
};

export interface CallTicket {
  readonly id: number;
  /** Completes the call's row (frees its slot). */
  end(o: CallOutcome): void;
}

/** What a provider asks before each HTTP attempt. */
export interface CallGate {
  /** Waits for a slot (and room in the window), logs the call as sent, and returns its ticket. Throws RunStopped when the run stopped. */
  begin(request: unknown, estimatedPromptTokens: number | null): Promise<CallTicket>;
}

export type GateContext = {
  providerId: number;
  concurrency: number;
  requestsPerMinute: number | null;
  owner: string;
  /** The run the call serves (checked in the admitting transaction); null for a one-off call. */
  runId: number | null;
  jobId: number | null;
  /** What provider_calls keeps of the request body (default: all of it). */
  requestJson?: (request: unknown) => string;
  /** Aborted when the job must not start another call (its run was paused or cancelled). */
  signal?: AbortSignal;
};

type Waiter = {
  /** Arrival order in its queue. */
  seq?: number;
  ctx: GateContext;
  request: unknown;
  estimate: number | null;
  resolve: (t: CallTicket) => void;
  reject: (e: unknown) => void;
  settled: boolean;
};

const isBusy = (err: unknown) => /SQLITE_BUSY|database is locked/i.test(String(err));

function prepare(s: Db["$client"]) {
  return {
    inFlight: s.prepare(`SELECT COUNT(*) FROM provider_calls WHERE provider_id = ? AND state = 'sent'`).pluck(),
    window: s.prepare(`SELECT started_at FROM provider_calls WHERE provider_id = ? AND started_at > ? ORDER BY started_at`).pluck(),
    runStatus: s.prepare(`SELECT status FROM runs WHERE id = ?`).pluck(),
    insert: s
      .prepare(
        `INSERT INTO provider_calls (provider_id, job_id, request, status, prompt_tokens, state, owner, started_at) VALUES (?, ?, ?, NULL, ?, 'sent', ?, ?) RETURNING id`,
      )
      .pluck(),
    end: s.prepare(
      `UPDATE provider_calls SET state = 'done', reply = ?, status = ?, latency_ms = ?, prompt_tokens = COALESCE(?, prompt_tokens), completion_tokens = ?, error = ? WHERE id = ?`,
    ),
  };
}

export class SharedLimits {
  private readonly st: ReturnType<typeof prepare>;
  private readonly lanes = new Map<number, Lane>();
  /** Calls answered but not yet written: the next admitting transaction (or one right after this turn of the event loop) writes them. */
  private ends: { id: number; providerId: number; o: CallOutcome }[] = [];
  private flushQueued = false;
  /** Poll interval while another process holds every slot. */
  pollMs = 10;

  constructor(readonly db: Db) {
    this.st = prepare(db.$client);
  }

  gate(ctx: GateContext): CallGate {
    return {
      begin: (request, estimate) =>
        new Promise<CallTicket>((resolve, reject) => {
          if (ctx.signal?.aborted) return reject(new RunStopped(String(ctx.signal.reason ?? "stopped")));
          const w: Waiter = { ctx, request, estimate, resolve, reject, settled: false };
          ctx.signal?.addEventListener(
            "abort",
            () => {
              if (w.settled) return;
              w.settled = true;
              reject(new RunStopped(String(ctx.signal?.reason ?? "stopped")));
            },
            { once: true },
          );
          this.lane(ctx.providerId).add(w);
        }),
    };
  }

  private lane(providerId: number): Lane {
    let l = this.lanes.get(providerId);
    if (!l) this.lanes.set(providerId, (l = new Lane(this, providerId)));
    return l;
  }

  /** One admitting transaction for the head of a queue. Returns how long to wait before trying again (0 = progress made). */
  admit(providerId: number, queue: Waiter[]): number {
    const st = this.st;
    const head = queue[0].ctx;
    const now0 = Date.now();
    // A plain read first: no write lock while the provider is full.
    let answered = 0;
    for (const e of this.ends) if (e.providerId === providerId) answered++;
    const busy = (st.inFlight.get(providerId) as number) - answered;
    if (busy >= head.concurrency) return this.pollMs;
    if (head.requestsPerMinute) {
      const wait = this.rpmWait(providerId, head.requestsPerMinute, now0);
      if (wait > 0) return wait;
    }
    // Waiters are answered only once the transaction has committed (a call is never sent unlogged).
    const admitted: [Waiter, number][] = [];
    const stopped: [Waiter, string][] = [];
    let wait: number;
    try {
      wait = this.admitTx(providerId, queue, head, admitted, stopped);
      this.ends = []; // written by that (synchronous) transaction
    } catch (err) {
      // Nothing was written: the taken waiters go back to the front of the queue, in order.
      const back = [...admitted.map(([w]) => w), ...stopped.map(([w]) => w)].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
      for (const w of back) w.settled = false;
      queue.unshift(...back);
      throw err;
    }
    for (const [w, id] of admitted) w.resolve(this.ticket(providerId, id));
    for (const [w, status] of stopped) w.reject(new RunStopped(status));
    return wait;
  }

  private admitTx(
    providerId: number,
    queue: Waiter[],
    head: GateContext,
    admitted: [Waiter, number][],
    stopped: [Waiter, string][],
  ): number {
    const st = this.st;
    return this.db.$client
      .transaction((): number => {
        this.writeEnds();
        const now = Date.now();
        let free = head.concurrency - (st.inFlight.get(providerId) as number);
        const rpm = head.requestsPerMinute;
        let windowFree = Infinity;
        let starts: number[] = [];
        if (rpm) {
          starts = st.window.all(providerId, now - RPM_WINDOW_MS - RPM_MARGIN_MS) as number[];
          windowFree = rpm - starts.length;
        }
        const statuses = new Map<number, string>();
        let progressed = false;
        while (queue.length) {
          const w = queue[0];
          if (w.settled) {
            queue.shift();
            continue;
          }
          const runId = w.ctx.runId;
          if (runId != null) {
            let status = statuses.get(runId);
            if (status === undefined) statuses.set(runId, (status = String(st.runStatus.get(runId) ?? "deleted")));
            if (status !== "queued" && status !== "running") {
              queue.shift();
              w.settled = true;
              stopped.push([w, status]);
              progressed = true;
              continue;
            }
          }
          if (free <= 0) return progressed ? 0 : this.pollMs;
          if (windowFree <= 0) return progressed ? 0 : Math.max(1, starts[starts.length - rpm!] + RPM_WINDOW_MS + RPM_MARGIN_MS - now + 1);
          const json = w.ctx.requestJson ? w.ctx.requestJson(w.request) : JSON.stringify(w.request);
          const id = st.insert.get(providerId, w.ctx.jobId, json, w.estimate, w.ctx.owner, now) as number;
          free--;
          windowFree--;
          if (rpm) starts.push(now);
          queue.shift();
          w.settled = true;
          admitted.push([w, id]);
          progressed = true;
        }
        return 0;
      })
      .immediate();
  }

  private rpmWait(providerId: number, rpm: number, now: number): number {
    const starts = this.st.window.all(providerId, now - RPM_WINDOW_MS - RPM_MARGIN_MS) as number[];
    if (starts.length < rpm) return 0;
    return Math.max(1, starts[starts.length - rpm] + RPM_WINDOW_MS + RPM_MARGIN_MS - now + 1);
  }

  /** Writes the answered calls (inside the caller's transaction). */
  /** (The caller forgets them once its transaction has committed.) */
  private writeEnds(): void {
    for (const e of this.ends)
      this.st.end.run(
        e.o.reply == null ? null : JSON.stringify(e.o.reply),
        e.o.status,
        e.o.latencyMs,
        e.o.promptTokens,
        e.o.completionTokens,
        e.o.error,
        e.id,
      );
  }

  /** Writes the answered calls now, in one transaction (retried while the database is busy). */
  flushEnds(): void {
    this.flushQueued = false;
    if (this.ends.length === 0) return;
    try {
      this.db.$client.transaction(() => this.writeEnds()).immediate();
      this.ends = []; // written by that (synchronous) transaction
    } catch (err) {
      if (!isBusy(err)) throw err;
      this.flushQueued = true;
      setTimeout(() => this.flushEnds(), 20);
    }
  }

  private ticket(providerId: number, id: number): CallTicket {
    let ended = false;
    return {
      id,
      end: (o) => {
        if (ended) return;
        ended = true;
        // The slot is freed in the same transaction that admits the next waiting call of this process, or
        // (nobody waiting here) in one transaction for every call answered in this turn of the event loop.
        this.ends.push({ id, providerId, o });
        const lane = this.lanes.get(providerId);
        if (lane?.waiting) lane.kick();
        else if (!this.flushQueued) {
          this.flushQueued = true;
          setImmediate(() => this.flushEnds());
        }
      },
    };
  }
}

class Lane {
  private queue: Waiter[] = [];
  private pumping = false;
  private wake: (() => void) | null = null;
  constructor(
    private readonly limits: SharedLimits,
    private readonly providerId: number,
  ) {}

  get waiting(): boolean {
    return this.queue.some((w) => !w.settled);
  }

  private seq = 0;
  add(w: Waiter) {
    w.seq = ++this.seq;
    this.queue.push(w);
    this.kick();
  }

  private kickQueued = false;
  /** Wakes the queue after this turn of the event loop, so the calls answered in one turn free their slots and admit the next in one transaction. */
  kick() {
    if (this.kickQueued) return;
    this.kickQueued = true;
    setImmediate(() => {
      this.kickQueued = false;
      if (this.wake) this.wake();
      else if (!this.pumping) void this.pump();
    });
  }

  private async pump() {
    this.pumping = true;
    try {
      while (this.queue.length) {
        while (this.queue.length && this.queue[0].settled) this.queue.shift();
        if (!this.queue.length) break;
        let wait: number;
        try {
          wait = this.limits.admit(this.providerId, this.queue);
        } catch (err) {
          if (!isBusy(err)) {
            const w = this.queue.shift()!;
            w.settled = true;
            w.reject(err);
            continue;
          }
          wait = 20;
        }
        if (wait > 0)
          await new Promise<void>((ok) => {
            const t = setTimeout(done, wait);
            function done() {
              clearTimeout(t);
              ok();
            }
            this.wake = () => {
              this.wake = null;
              done();
            };
          });
        this.wake = null;
      }
    } finally {
      this.pumping = false;
    }
  }
}

const byDb = new WeakMap<Db["$client"], SharedLimits>();
/** The process's limiter for a database connection. */
export function sharedLimits(db: Db): SharedLimits {
  let l = byDb.get(db.$client);
  if (!l) byDb.set(db.$client, (l = new SharedLimits(db)));
  return l;
}

// ─── Worker liveness ─────────────────────────────────────────────────────────

export const HOST = os.hostname();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Registers (or renews) a worker's heartbeat. */
export function heartbeat(db: Db, id: string, leaseMs: number): void {
  const now = Date.now();
  db.$client
    .prepare(
      `INSERT INTO workers (id, host, pid, heartbeat_at, lease_ms, started_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_ms = excluded.lease_ms`,
    )
    .run(id, HOST, process.pid, now, leaseMs, now);
}

export function unregisterWorker(db: Db, id: string): void {
  db.$client.prepare(`DELETE FROM workers WHERE id = ?`).run(id);
}

/**
 * Finds workers that are gone (same host and pid not running, or silent
 * longer than their lease), marks their calls in flight "interrupted",
 * expires their job leases (so the next claim takes them) and forgets them.
 * Calls in flight whose owner is no registered worker are interrupted too.
 * Returns the ids of the dead workers.
 */
/** Calls in flight, found through the (provider_id, state) index rather than a scan of the whole call log. */
const SENT = `provider_id IN (SELECT id FROM providers) AND state = 'sent'`;

export function sweepDeadWorkers(db: Db, self?: string): string[] {
  const now = Date.now();
  const rows = db.$client.prepare(`SELECT id, host, pid, heartbeat_at AS heartbeatAt, lease_ms AS leaseMs FROM workers`).all() as {
    id: string;
    host: string;
    pid: number;
    heartbeatAt: number;
    leaseMs: number;
  }[];
  const dead = rows
    .filter((w) => w.id !== self && ((w.host === HOST && w.pid !== process.pid && !pidAlive(w.pid)) || w.heartbeatAt + w.leaseMs < now))
    .map((w) => w.id);
  const orphans = db.$client
    .prepare(`SELECT COUNT(*) FROM provider_calls WHERE ${SENT} AND (owner IS NULL OR owner NOT IN (SELECT id FROM workers))`)
    .pluck()
    .get() as number;
  if (dead.length === 0 && orphans === 0) return [];
  db.$client
    .transaction(() => {
      for (const id of dead) {
        db.$client.prepare(`UPDATE jobs SET lease_expires_at = 0 WHERE status = 'leased' AND lease_owner = ?`).run(id);
        db.$client
          .prepare(
            `UPDATE provider_calls SET state = 'interrupted', error = COALESCE(error, 'the worker stopped during the call') WHERE ${SENT} AND owner = ?`,
          )
          .run(id);
        db.$client.prepare(`DELETE FROM workers WHERE id = ?`).run(id);
      }
      db.$client
        .prepare(
          `UPDATE provider_calls SET state = 'interrupted', error = COALESCE(error, 'the caller stopped during the call') WHERE ${SENT} AND (owner IS NULL OR owner NOT IN (SELECT id FROM workers))`,
        )
        .run();
    })
    .immediate();
  return dead;
}
