/**
 * In-process limits: a concurrency semaphore and a requests-per-minute
 * window, for a provider used outside the runner (one-off calls). The runner
 * shares each provider's limits across processes through the database
 * (shared-limits.server.ts).
 */

export class Semaphore {
  private waiting: (() => void)[] = [];
  private active = 0;
  constructor(private readonly max: number) {
    if (!(max >= 1)) throw new Error(`Semaphore: max must be at least 1, got ${max}`);
  }
  get inUse(): number {
    return this.active;
  }
  async acquire(): Promise<() => void> {
    if (this.active < this.max) this.active++;
    else await new Promise<void>((ok) => this.waiting.push(ok)); // slot handed over by release
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}

/** Sliding one-minute window: at most `perMinute` request starts in any 60 s. */
export class RateLimiter {
  private starts: number[] = [];
  private chain: Promise<void> = Promise.resolve();
  constructor(
    private readonly perMinute: number | null | undefined,
    private readonly now: () => number = Date.now,
    private readonly windowMs = 60_000,
  ) {}
  /** Resolves when a request may start (FIFO). */
  wait(): Promise<void> {
    const limit = this.perMinute;
    if (!limit || limit <= 0) return Promise.resolve();
    const turn = this.chain.then(async () => {
      for (;;) {
        const t = this.now();
        while (this.starts.length && this.starts[0] <= t - this.windowMs) this.starts.shift();
        if (this.starts.length < limit) {
          this.starts.push(t);
          return;
        }
        await sleep(this.starts[0] + this.windowMs - t + 1);
      }
    });
    this.chain = turn.catch(() => undefined);
    return turn;
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((ok) => {
    if (signal?.aborted) return ok();
    const t = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      ok();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Exponential backoff with full jitter: a random delay in [0, min(max, base·2^attempt)],
 * never below the server's Retry-After when it sent one.
 */
export function backoffDelay(
  attempt: number,
  opts: { baseMs: number; maxMs: number; retryAfterMs?: number | null },
  random: () => number = Math.random,
): number {
  const cap = Math.min(opts.maxMs, opts.baseMs * 2 ** attempt);
  const jittered = random() * cap;
  return opts.retryAfterMs != null ? Math.max(opts.retryAfterMs, jittered) : jittered;
}

/** Parses a Retry-After header (seconds or HTTP date) or retry-after-ms into milliseconds. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | null {
  if (!headers) return null;
  const ms = headers.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const v = headers.get("retry-after");
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Number(v) * 1000;
  const date = Date.parse(v);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
