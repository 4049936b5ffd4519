/**
 * One line per provider in a worker process, for the admissions on PostgreSQL: only the call at
 * the head of the line asks the database for a slot (admitCallPg, a transaction that locks the
 * provider's row); the others wait in this process, in order. Without it every waiting call
 * polled with its own transaction, and with a provider's slots full (e.g. 96 jobs for 32 slots)
 * the pollers queued on that row lock and kept the slots idle. A call of this provider that ends
 * in this process wakes the head at once; slots freed by other processes are seen when the head
 * polls again (admitCallPg's waitMs). A waiting call whose run is paused or cancelled leaves the
 * line at once.
 */
import { RunStopped } from "../providers/shared-limits.server";
import type { Admission } from "./queue.server";

type Waiter = { go: () => void };

export class PgAdmissionLine {
  private readonly waiters: Waiter[] = [];
  private wakeHead: (() => void) | null = null;

  /** Calls waiting, the head included. */
  get length(): number {
    return this.waiters.length;
  }

  /** The head tries again now (a call of this provider ended in this process). */
  wake(): void {
    this.wakeHead?.();
  }

  /** Asks `ask` as the head of the line until it admits; returns the admitted call's id. */
  async admit(ask: () => Promise<Admission>, signal?: AbortSignal): Promise<number> {
    const me = await this.turn(signal);
    try {
      for (;;) {
        if (signal?.aborted) throw new RunStopped(String(signal.reason ?? "stopped"));
        const a = await ask();
        if (a.id !== undefined) return a.id;
        await this.pause(a.waitMs, signal);
      }
    } finally {
      this.leave(me);
    }
  }

  /** Resolves when `me` is the head (or its signal was aborted). */
  private turn(signal?: AbortSignal): Promise<Waiter> {
    const me: Waiter = { go: () => {} };
    return new Promise<Waiter>((ok) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        ok(me);
      };
      me.go = done;
      this.waiters.push(me);
      if (this.waiters[0] === me || signal?.aborted) done();
      else signal?.addEventListener("abort", done, { once: true });
    });
  }

  private leave(me: Waiter): void {
    const i = this.waiters.indexOf(me);
    if (i < 0) return;
    this.waiters.splice(i, 1);
    if (i === 0) this.waiters[0]?.go();
  }

  private pause(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((ok) => {
      const done = () => {
        clearTimeout(t);
        if (this.wakeHead === done) this.wakeHead = null;
        signal?.removeEventListener("abort", done);
        ok();
      };
      const t = setTimeout(done, ms);
      this.wakeHead = done;
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
