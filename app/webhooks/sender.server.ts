/**
 * Sends pending webhook deliveries: claims the due ones under a lease, POSTs each stored body, signed, to its
 * webhook's URL, and records the outcome. Runs as a loop in the web server and in each run worker
 * (WebhookSender); any number of them may share a database.
 *
 *   - Claim: one UPDATE … WHERE id IN (the due rows) … RETURNING inside a serializable transaction sets
 *     `locked_by` (host:pid:n) and `locked_until` (now + LEASE_SECONDS), so two senders never hold the same
 *     delivery at once; a sender that dies mid-send leaves a lease that expires, and the delivery is sent
 *     again (at least once: receivers tell repeats apart by `Concord-Delivery`).
 *   - Send: `Content-Type: application/json`, `Concord-Event`, `Concord-Delivery` (the delivery's id),
 *     `Concord-Timestamp` (unix seconds), `Concord-Signature: sha256=<hex>` (./signing.server.ts). The
 *     connection obeys the providers' egress rules (CONCORD_EGRESS_ALLOW, checked in the DNS lookup the socket
 *     uses and before connecting to a literal address); redirects are not followed; the whole exchange has
 *     TIMEOUT_MS; at most RESPONSE_BYTES of the answer are read, and none of it is kept.
 *   - 2xx: delivered. Anything else: attempt again after CONCORD_WEBHOOK_BACKOFF_SECONDS[attempts - 1]
 *     (exponential by default), or failed once those are used up. `last_status` is the HTTP status (null when
 *     none came) and `last_error` a short text of ours — never what the receiver answered, never the secret.
 */
import http from "node:http";
import https from "node:https";
import os from "node:os";
import { and, asc, eq, inArray, isNull, lt, lte, or } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "../dal.server";
import { env } from "../env.server";
import { guardedLookup, literalHostAllowed, nonGlobalReason, normalHost } from "../runs/providers/egress.server";
import { egressPolicy } from "../runs/providers/node-fetch.server";
import { decryptSecret, encryptionKey } from "../runs/providers/secrets.server";
import { webhookBell } from "./events.server";
import { signatureHeader } from "./signing.server";

/** The whole exchange with a receiver: connect, send, the answer's head (ms). */
export const TIMEOUT_MS = 10_000;
/** The most of an answer read before the connection is closed (bytes). */
export const RESPONSE_BYTES = 4096;
/** How long a claimed delivery is ours (s): well beyond TIMEOUT_MS. */
export const LEASE_SECONDS = 60;
/** Deliveries claimed per pass. */
export const BATCH = 10;
/** How often an idle sender looks for due deliveries (ms). */
export const POLL_MS = 1000;
export const USER_AGENT = "Concord-Webhooks/1";

const now = () => Math.floor(Date.now() / 1000);

/** Seconds to wait after failed attempt n (1-based); attempts allowed in all = schedule length + 1. */
export function backoffSchedule(): number[] {
  return env().CONCORD_WEBHOOK_BACKOFF_SECONDS;
}

export type SendOutcome = { status: number | null; error: string | null };

let senderCount = 0;
const newOwner = () => `${os.hostname()}:${process.pid}:${++senderCount}`;

/**
 * POSTs `body` to `url` under the egress policy; resolves with the HTTP status, or null and our text of what
 * went wrong. Never rejects.
 */
export function postSigned(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs?: number } = {},
): Promise<SendOutcome> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ status: null, error: "the webhook URL is not a URL" });
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") return resolve({ status: null, error: "the webhook URL is not http(s)" });
    const policy = egressPolicy();
    if (!literalHostAllowed(policy, u)) {
      const why = nonGlobalReason(normalHost(u.hostname)) ?? "not allowed";
      return resolve({ status: null, error: `refused: ${why} address, not allowed by CONCORD_EGRESS_ALLOW` });
    }
    let settled = false;
    const done = (o: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(o);
    };
    const bytes = Buffer.from(body, "utf8");
    const req = (u.protocol === "https:" ? https : http).request(
      u,
      {
        method: "POST",
        agent: false,
        lookup: guardedLookup(policy),
        headers: { ...headers, "Content-Length": String(bytes.length), "User-Agent": USER_AGENT, Connection: "close" },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        const finish = () =>
          done(
            status >= 200 && status < 300
              ? { status, error: null }
              : { status, error: status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}` },
          );
        res.on("data", (c: Buffer) => {
          read += c.length;
          if (read >= RESPONSE_BYTES) finish();
        });
        res.on("end", finish);
        res.on("error", finish);
      },
    );
    const timer = setTimeout(
      () => done({ status: null, error: `no answer within ${Math.round((opts.timeoutMs ?? TIMEOUT_MS) / 1000)} s` }),
      opts.timeoutMs ?? TIMEOUT_MS,
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      const code = err.code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
      done({
        status: null,
        error:
          code === "EGRESS_REFUSED"
            ? "refused: the host resolves to an address CONCORD_EGRESS_ALLOW does not allow"
            : code === "ENOTFOUND" || code === "EAI_AGAIN"
              ? "the host name does not resolve"
              : `could not connect (${code ?? "connection failed"})`,
      });
    });
    req.end(bytes);
  });
}

type Claimed = { id: number; webhookId: number; event: string; payload: string; attempts: number };

/** Claims up to `limit` due deliveries of active webhooks for `owner`. */
export async function claimDueDeliveries(db: DalLike, owner: string, limit = BATCH): Promise<Claimed[]> {
  const d = dalOf(db);
  const { webhookDeliveries: wd, webhooks } = d.t;
  const t = now();
  const due = (q: typeof d.q) =>
    q
      .select({ id: wd.id })
      .from(wd)
      .where(
        and(
          eq(wd.status, "pending"),
          lte(wd.nextAttemptAt, t),
          or(isNull(wd.lockedUntil), lt(wd.lockedUntil, t)),
          inArray(wd.webhookId, q.select({ id: webhooks.id }).from(webhooks).where(isNull(webhooks.disabledAt))),
        ),
      )
      .orderBy(asc(wd.nextAttemptAt), asc(wd.id));
  // Nothing due (the usual answer of a poll): found by a read, so an idle sender never takes the write lock.
  if ((await due(d.q).limit(1)).length === 0) return [];
  return d.tx(async (q) => {
    return q
      .update(wd)
      .set({ lockedBy: owner, lockedUntil: t + LEASE_SECONDS })
      .where(and(inArray(wd.id, due(q).limit(limit)), eq(wd.status, "pending")))
      .returning({ id: wd.id, webhookId: wd.webhookId, event: wd.event, payload: wd.payload, attempts: wd.attempts });
  });
}

/** Sends one claimed delivery and records the outcome (guarded by the lease). */
async function sendOne(db: DalLike, owner: string, c: Claimed, schedule: number[]): Promise<void> {
  const d = dalOf(db);
  const { webhookDeliveries: wd, webhooks } = d.t;
  const [hook] = await d.q.select({ url: webhooks.url, secret: webhooks.secret }).from(webhooks).where(eq(webhooks.id, c.webhookId));
  let outcome: SendOutcome;
  if (!hook) outcome = { status: null, error: "the webhook was deleted" };
  else {
    let secret: string | null = null;
    try {
      secret = decryptSecret(hook.secret, encryptionKey(d.location));
    } catch {
      secret = null;
    }
    if (!secret) outcome = { status: null, error: "the signing secret cannot be read (was the encryption key changed?)" };
    else {
      const ts = now();
      outcome = await postSigned(
        hook.url,
        {
          "Content-Type": "application/json",
          "Concord-Event": c.event,
          "Concord-Delivery": String(c.id),
          "Concord-Timestamp": String(ts),
          "Concord-Signature": signatureHeader(secret, ts, c.payload),
        },
        c.payload,
      );
    }
  }
  const attempts = c.attempts + 1;
  const ok = outcome.error === null;
  const giveUp = !ok && attempts > schedule.length;
  const t = now();
  await d.tx((q) =>
    q
      .update(wd)
      .set({
        attempts,
        status: ok ? "delivered" : giveUp ? "failed" : "pending",
        lastStatus: outcome.status,
        // The last failure's reason, kept after a later success (the log then shows what the retries were for).
        lastError: ok ? undefined : outcome.error,
        deliveredAt: ok ? t : null,
        nextAttemptAt: ok || giveUp ? t : t + (schedule[attempts - 1] ?? 0),
        lockedBy: null,
        lockedUntil: null,
      })
      .where(and(eq(wd.id, c.id), eq(wd.lockedBy, owner), eq(wd.status, "pending"))),
  );
}

/** One pass: claims the due deliveries (up to `limit`) and sends them side by side; returns how many. */
export async function sendDueDeliveries(db: DalLike = getDal(), opts: { owner?: string; limit?: number } = {}): Promise<number> {
  const owner = opts.owner ?? newOwner();
  const claimed = await claimDueDeliveries(db, owner, opts.limit ?? BATCH);
  const schedule = backoffSchedule();
  await Promise.all(claimed.map((c) => sendOne(db, owner, c, schedule)));
  return claimed.length;
}

/**
 * The loop: a pass at start, when an event is emitted in this process, and every `pollMs`; a full batch is
 * followed at once by another pass. stop() waits for the pass in progress (at most TIMEOUT_MS of sending).
 */
export class WebhookSender {
  readonly owner = newOwner();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private readonly wake = () => this.kick();

  constructor(
    private readonly db: () => DalLike = getDal,
    private readonly opts: { pollMs?: number; limit?: number; onError?: (err: unknown) => void } = {},
  ) {}

  start(): this {
    this.stopped = false;
    webhookBell().add(this.wake);
    this.kick();
    return this;
  }

  /** Runs a pass now (or right after the one in progress). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.pass().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
      } else this.timer = setTimeout(() => this.kick(), this.opts.pollMs ?? POLL_MS).unref();
    });
  }

  private async pass(): Promise<void> {
    const limit = this.opts.limit ?? BATCH;
    try {
      for (let n = limit; n === limit && !this.stopped;) n = await sendDueDeliveries(this.db(), { owner: this.owner, limit });
    } catch (err) {
      (this.opts.onError ?? ((e: unknown) => console.error(`Concord webhooks: ${e instanceof Error ? e.message : String(e)}`)))(err);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    webhookBell().delete(this.wake);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
