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
import { type Db, isBusyError, markWriteWaiter } from "../../../db/client";

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

/** The gate context of a call that serves no run (a provider test, curation assistance): its provider's limits, no run, no job. */
export function oneOffLimits(row: { id: number; concurrency: number; requestsPerMinute: number | null }, owner: string) {
  return { providerId: row.id, concurrency: row.concurrency, requestsPerMinute: row.requestsPerMinute, owner, runId: null, jobId: null };
}

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

function prepare(s: Db["$client"]) {
  return {
    inFlight: s.prepare(`SELECT COUNT(*) FROM provider_calls WHERE provider_id = ? AND state = 'sent'`).pluck(),
    window: s.prepare(`SELECT started_at FROM provider_calls WHERE provider_id = ? AND started_at > ? ORDER BY started_at`).pluck(),
    runStatus: s.prepare(`SELECT status FROM runs WHERE id = ?`).pluck(),
    insert: s.prepare(
      `INSERT INTO provider_calls (provider_id, job_id, request, status, prompt_tokens, state, owner, started_at) VALUES (?, ?, ?, NULL, ?, 'sent', ?, ?)`,
    ),
    end: s.prepare(
      `UPDATE provider_calls SET state = 'done', reply = ?, status = ?, latency_ms = ?, prompt_tokens = COALESCE(?, prompt_tokens), completion_tokens = ?, error = ? WHERE id = ?`,
    ),
  };
}

/**
 * The part of a turn's transaction that belongs to the limits: the answered
 * calls' rows, and the admission of waiting calls. `within` runs inside the
 * caller's IMMEDIATE transaction (and again if the caller retries it), then
 * exactly one of `commit` (answers the admitted waiters) or `rollback` (puts
 * them back) follows each `within`.
 */
export type TurnJoin = { within(): void; commit(): void; rollback(err: unknown): void };

/** After SQLITE_BUSY (another process holds the write lock), the turn is tried again this soon. */
export const BUSY_RETRY_MS = 2;

/**
 * Runs `fn` (a write transaction) with the connection's busy timeout at 0:
 * when another process holds the write lock, SQLite fails at once with
 * SQLITE_BUSY instead of sleeping in the busy handler, which blocks the
 * event loop (and so every reply in flight) for 1, 2, 5… ms. The caller tries
 * again on a short timer; the timeout is put back for everything else.
 */
export function withoutBusyWait<T>(db: Db, fn: () => T): T {
  const c = db.$client;
  // `PRAGMA busy_timeout = N` takes effect when SQLite prepares it (the pragma calls sqlite3_busy_timeout while
  // compiling), so a prepared statement run again changes nothing: it is issued afresh each time.
  const before = Number(c.pragma("busy_timeout", { simple: true })) || 0;
  c.pragma("busy_timeout = 0");
  try {
    return fn();
  } catch (err) {
    // Seen by an import copying in chunks, which then leaves the lock free long enough for this retry.
    if (isBusyError(err)) markWriteWaiter(c);
    throw err;
  } finally {
    c.pragma(`busy_timeout = ${before}`);
  }
}

export class SharedLimits {
  private readonly st: ReturnType<typeof prepare>;
  private readonly lanes = new Map<number, Lane>();
  /** Calls answered but not yet written: the next turn's transaction writes them. */
  private ends: { id: number; providerId: number; o: CallOutcome }[] = [];
  /** Lanes to try in the next turn. */
  private due = new Set<Lane>();
  private turnQueued = false;
  /**
   * Workers on this connection: a turn runs through a worker's own store (one
   * transaction writes its finished jobs, its claims, the answered calls and
   * the admissions), and only without one in a transaction of its own.
   */
  private drivers = new Set<() => void>();
  private readonly savepoint: (f: () => number) => number;
  /** Poll interval while another process holds every slot. */
  pollMs = 10;

  constructor(readonly db: Db) {
    this.st = prepare(db.$client);
    this.savepoint = db.$client.transaction((f: () => number) => f());
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

  /** Registers a worker's store as the way turns run on this connection; returns the function that unregisters it. */
  drive(turn: () => void): () => void {
    this.drivers.add(turn);
    return () => void this.drivers.delete(turn);
  }

  private lane(providerId: number): Lane {
    let l = this.lanes.get(providerId);
    if (!l) this.lanes.set(providerId, (l = new Lane(this, providerId)));
    return l;
  }

  /** Marks a lane to be tried in the next turn (after this turn of the event loop, so the calls answered in it go together). */
  kick(lane: Lane): void {
    this.due.add(lane);
    this.requestTurn();
  }

  private requestTurn(): void {
    if (this.turnQueued) return;
    this.turnQueued = true;
    setImmediate(() => {
      this.turnQueued = false;
      this.turn();
    });
  }

  private turn(): void {
    if (this.drivers.size) {
      // Each driver's store takes what the limits have to write (join() below) into its transaction.
      for (const drive of this.drivers) drive();
      return;
    }
    const join = this.join();
    if (!join) return;
    try {
      withoutBusyWait(this.db, () => this.db.$client.transaction(() => join.within()).immediate());
    } catch (err) {
      join.rollback(err);
      return;
    }
    join.commit();
  }

  /**
   * The limits' share of a transaction about to run, or null when there is
   * nothing to write. Plain reads first: a lane whose provider is full (or
   * whose window is) waits on a timer without taking the write lock.
   */
  join(): TurnJoin | null {
    const lanes: Lane[] = [];
    for (const l of this.due) {
      if (!l.waiting) continue;
      const wait = this.precheck(l);
      if (wait > 0) l.retryIn(wait);
      else lanes.push(l);
    }
    this.due.clear();
    if (lanes.length === 0 && this.ends.length === 0) return null;
    let admitted: [Waiter, number, Lane][] = [];
    let stopped: [Waiter, string][] = [];
    let waits: [Lane, number][] = [];
    return {
      within: () => {
        this.writeEnds();
        for (const l of lanes) waits.push([l, this.admitLane(l, admitted, stopped)]);
      },
      commit: () => {
        this.ends = []; // written by that (synchronous) transaction
        for (const [w, id, l] of admitted) w.resolve(this.ticket(l.providerId, id));
        for (const [w, status] of stopped) w.reject(new RunStopped(status));
        // A lane that still has waiters is blocked by the limits (0: it admitted some first): it polls.
        for (const [l, wait] of waits) if (l.waiting) l.retryIn(wait > 0 ? wait : this.pollMs);
        admitted = [];
        stopped = [];
        waits = [];
      },
      rollback: (err) => {
        // Nothing was written: the taken waiters go back to the front of their queues, in order.
        for (const l of lanes)
          l.putBack([
            ...admitted.filter((a) => a[2] === l).map(([w]) => w),
            ...stopped.filter(([w]) => w.ctx.providerId === l.providerId).map(([w]) => w),
          ]);
        admitted = [];
        stopped = [];
        waits = [];
        const again = isBusyError(err) ? BUSY_RETRY_MS : 20;
        for (const l of lanes) l.retryIn(again);
        if (this.ends.length) setTimeout(() => this.requestTurn(), again);
      },
    };
  }

  /** How long a lane should wait before its admission is worth a transaction (0 = now), from plain reads. */
  private precheck(lane: Lane): number {
    const head = lane.head()!.ctx;
    const providerId = lane.providerId;
    let answered = 0;
    for (const e of this.ends) if (e.providerId === providerId) answered++;
    const busy = (this.st.inFlight.get(providerId) as number) - answered;
    if (busy >= head.concurrency) return this.pollMs;
    if (head.requestsPerMinute) return this.rpmWait(providerId, head.requestsPerMinute, Date.now());
    return 0;
  }

  /**
   * Admits the head of a lane's queue, in a savepoint of the caller's
   * transaction: a failure other than a busy database rejects the head call
   * alone. Returns how long to wait before trying again (0 = progress made).
   */
  private admitLane(lane: Lane, admitted: [Waiter, number, Lane][], stopped: [Waiter, string][]): number {
    const queue = lane.queue;
    while (queue.length && queue[0].settled) queue.shift();
    if (!queue.length) return 0;
    const a0 = admitted.length;
    const s0 = stopped.length;
    const mine: [Waiter, number][] = [];
    try {
      const wait = this.savepoint(() => this.admitWithin(lane.providerId, queue, queue[0].ctx, mine, stopped));
      for (const [w, id] of mine) admitted.push([w, id, lane]);
      return wait;
    } catch (err) {
      if (isBusyError(err)) throw err;
      lane.putBack([...mine.map(([w]) => w), ...stopped.splice(s0).map(([w]) => w)]);
      admitted.length = a0;
      const w = queue.shift();
      if (w) {
        w.settled = true;
        w.reject(err);
      }
      return 0;
    }
  }

  private admitWithin(
    providerId: number,
    queue: Waiter[],
    head: GateContext,
    admitted: [Waiter, number][],
    stopped: [Waiter, string][],
  ): number {
    const st = this.st;
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
      const id = Number(st.insert.run(providerId, w.ctx.jobId, json, w.estimate, w.ctx.owner, now).lastInsertRowid);
      free--;
      windowFree--;
      if (rpm) starts.push(now);
      queue.shift();
      w.settled = true;
      admitted.push([w, id]);
      progressed = true;
    }
    return 0;
  }

  private rpmWait(providerId: number, rpm: number, now: number): number {
    const starts = this.st.window.all(providerId, now - RPM_WINDOW_MS - RPM_MARGIN_MS) as number[];
    if (starts.length < rpm) return 0;
    return Math.max(1, starts[starts.length - rpm] + RPM_WINDOW_MS + RPM_MARGIN_MS - now + 1);
  }

  /** Writes the answered calls (inside the caller's transaction; the caller forgets them once it has committed). */
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
    if (this.ends.length === 0) return;
    try {
      this.db.$client.transaction(() => this.writeEnds()).immediate();
      this.ends = []; // written by that (synchronous) transaction
    } catch (err) {
      if (!isBusyError(err)) throw err;
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
        // The slot is freed by the next turn's transaction: with the admission of the next waiting call
        // of this process, and every call answered in this turn of the event loop.
        this.ends.push({ id, providerId, o });
        const lane = this.lanes.get(providerId);
        if (lane?.waiting) this.kick(lane);
        else this.requestTurn();
      },
    };
  }
}

class Lane {
  readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private seq = 0;
  constructor(
    private readonly limits: SharedLimits,
    readonly providerId: number,
  ) {}

  get waiting(): boolean {
    return this.queue.some((w) => !w.settled);
  }

  head(): Waiter | undefined {
    return this.queue.find((w) => !w.settled);
  }

  add(w: Waiter) {
    w.seq = ++this.seq;
    this.queue.push(w);
    this.limits.kick(this);
  }

  /** Waiters taken by a transaction that did not commit go back to the front, in arrival order. */
  putBack(ws: Waiter[]) {
    if (!ws.length) return;
    ws.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    for (const w of ws) w.settled = false;
    this.queue.unshift(...ws);
  }

  /** Tries again after `ms` (or sooner, when a call of this process ends or another wait is shorter). */
  retryIn(ms: number) {
    const at = Date.now() + ms;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      if (this.waiting) this.limits.kick(this);
    }, ms);
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
