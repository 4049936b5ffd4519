/**
 * How a webhook delivery is signed, so that a receiver can tell it came from this Concord and was not
 * replayed long after: HMAC-SHA256 (RFC 2104 with SHA-256, FIPS 180-4) keyed with the webhook's secret, over
 *
 *   "<Concord-Timestamp>.<the request body, byte for byte>"
 *
 * sent as `Concord-Signature: sha256=<lower-case hex>`. Putting the timestamp under the signature lets a
 * receiver refuse an old request (we suggest more than 5 minutes away from its own clock) without trusting
 * an unsigned header.
 */
import { createHmac, randomBytes } from "node:crypto";

/** The prefix of every webhook secret (recognisable in a leaked log or a secret scanner). */
export const SECRET_PREFIX = "whsec_";

/** A new signing secret: the prefix and 32 random bytes, base64url (RFC 4648 §5). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64url");
}

/** The hex HMAC-SHA256 of "<timestamp>.<body>" with the secret (the whole secret text, prefix included, as the key). */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/** The Concord-Signature header's value. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `sha256=${webhookSignature(secret, timestamp, body)}`;
}
