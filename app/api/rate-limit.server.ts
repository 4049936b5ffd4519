/**
 * The HTTP API's rate limit per token: a token bucket (capacity CONCORD_API_RATE_LIMIT requests, refilled at
 * that many per minute, evenly), so a harness may send a burst of up to a minute's allowance at once and then
 * keeps the average. A request over the limit is answered 429 Too Many Requests with Retry-After, the seconds
 * until the bucket holds one request again (RFC 6585 §4, RFC 9110 §10.2.3).
 *
 * Kept in the server process's memory: with several app servers behind a balancer each allows the limit.
 */
import { env } from "~/env.server";

type Bucket = { level: number; at: number };
const buckets = new Map<number, Bucket>();
/** Above this many buckets, full ones (tokens idle for a minute or more) are dropped: a full bucket is the default. */
const PRUNE_ABOVE = 10_000;

export type RateDecision = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

/** Takes one request from the token's bucket, or says when one will be there. */
export function takeApiRequest(
  tokenId: number,
  perMinute: number = env().CONCORD_API_RATE_LIMIT,
  nowMs: number = Date.now(),
): RateDecision {
  const perMs = perMinute / 60_000;
  const b = buckets.get(tokenId);
  const level = b ? Math.min(perMinute, b.level + (nowMs - b.at) * perMs) : perMinute;
  if (level < 1) {
    buckets.set(tokenId, { level, at: nowMs });
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - level) / perMs / 1000)) };
  }
  if (!b && buckets.size >= PRUNE_ABOVE) prune(perMinute, perMs, nowMs);
  buckets.set(tokenId, { level: level - 1, at: nowMs });
  return { ok: true, remaining: Math.floor(level - 1) };
}

function prune(perMinute: number, perMs: number, nowMs: number) {
  for (const [id, b] of buckets) if (b.level + (nowMs - b.at) * perMs >= perMinute) buckets.delete(id);
}

/** Forgets every bucket (tests). */
export function resetApiRateLimits(): void {
  buckets.clear();
}
