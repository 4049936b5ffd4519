/**
 * `Idempotency-Key` on the HTTP API's POSTs (the IETF httpapi draft "The Idempotency-Key HTTP Header Field",
 * §2): a harness that lost an answer (a timeout, a dropped connection) sends the same POST again with the same
 * key and is sure nothing is written twice.
 *
 *   - First request with a key: it runs, and its answer (status, body, Content-Type and Location) is stored.
 *   - Same key, same request (method, path with query, body): the stored answer again, with
 *     `Idempotent-Replayed: true`, and the handler does not run — no second write.
 *   - Same key, another request: 409 (draft §2.7: the key was reused with a different payload).
 *   - Same key while the first is still being answered: 409 with Retry-After 1 (draft §2.6: concurrent requests).
 *   - An answer of 5xx, 429, or a handler that threw, is not kept: the key is free again, so a retry runs.
 *
 * Keys belong to the token's user (two users' keys never meet) and are kept KEEP_SECONDS (24 hours); an older
 * key is a new key. A request without the header runs as usual. Stored answers are encrypted at rest like provider
 * API keys (app/runs/providers/secrets.server.ts): a webhook's creation answer carries its signing secret.
 */
import { createHash } from "node:crypto";
import { and, eq, lt } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { decryptSecret, encryptionKey, encryptSecret } from "~/runs/providers/secrets.server";
import { problem, PROBLEM_TYPES } from "./problem.server";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** How long a key's answer is kept (seconds). */
export const KEEP_SECONDS = 24 * 3600;
/** A key: 1–255 visible ASCII characters (a UUID is the usual choice). */
const KEY_SHAPE = /^[\x21-\x7E]{1,255}$/;
/** Stored answers larger than this are not kept (the key is freed): an import's summary is far smaller. */
const MAX_STORED_BODY = 2 * 1024 * 1024;
const REPLAYED_HEADERS = ["Content-Type", "Location"] as const;

/** Old keys are deleted by the first keyed request after this long (per process). */
const PRUNE_EVERY_MS = 3600_000;
let lastPruneMs = 0;

const now = () => Math.floor(Date.now() / 1000);

/** SHA-256 (hex) of a body, for `idempotent`'s `bodyHash` (a streamed body hashes its chunks as they pass). */
export function hashBody(body: string | Uint8Array): string {
  return createHash("sha256").update(body).digest("hex");
}

/** The request's key, or null without the header; a malformed key is refused (400). */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return null;
  if (!KEY_SHAPE.test(key)) {
    const message = `${IDEMPOTENCY_HEADER}: 1 to 255 visible ASCII characters (a UUID, say).`;
    throw problem(400, message, { type: PROBLEM_TYPES.invalidRequest, errors: [{ field: IDEMPOTENCY_HEADER, message }] });
  }
  return key;
}

function requestHash(request: Request, bodyHash: string): string {
  const url = new URL(request.url);
  return createHash("sha256").update(`${request.method.toUpperCase()} ${url.pathname}${url.search}\n${bodyHash}`).digest("hex");
}

/**
 * Runs `handler` once per (user, Idempotency-Key): see the module's comment. `bodyHash` is hashBody of the
 * request's body ("" hashed for none). Without the header, runs `handler` as is.
 */
export async function idempotent(
  request: Request,
  userId: number,
  bodyHash: string,
  handler: () => Promise<Response>,
  db: DalLike = getDal(),
): Promise<Response> {
  const key = idempotencyKeyOf(request);
  if (key === null) return handler();
  const d = dalOf(db);
  const t = d.t.apiIdempotencyKeys;
  const hash = requestHash(request, bodyHash);
  if (Date.now() - lastPruneMs > PRUNE_EVERY_MS) {
    lastPruneMs = Date.now();
    await pruneIdempotencyKeys(d);
  }

  let rowId: number | undefined;
  for (let attempt = 0; attempt < 2 && rowId === undefined; attempt++) {
    const inserted = await d.tx((q) =>
      q.insert(t).values({ userId, key, requestHash: hash }).onConflictDoNothing().returning({ id: t.id }),
    );
    if (inserted.length) {
      rowId = inserted[0].id;
      break;
    }
    const [found] = await d.q
      .select()
      .from(t)
      .where(and(eq(t.userId, userId), eq(t.key, key)));
    if (!found) continue; // freed meanwhile: try again
    if (found.createdAt < now() - KEEP_SECONDS) {
      await d.tx((q) => q.delete(t).where(and(eq(t.id, found.id), lt(t.createdAt, now() - KEEP_SECONDS))));
      continue;
    }
    if (found.requestHash !== hash) {
      throw problem(409, `This ${IDEMPOTENCY_HEADER} was already used for another request: use a new key for a new request.`, {
        type: PROBLEM_TYPES.idempotencyKeyReused,
      });
    }
    if (found.status === null) {
      throw problem(409, `A request with this ${IDEMPOTENCY_HEADER} is still being answered; try again in a moment.`, {
        type: PROBLEM_TYPES.idempotencyKeyInProgress,
        headers: { "Retry-After": "1" },
      });
    }
    const headers: Record<string, string> = { ...(JSON.parse(found.responseHeaders ?? "{}") as Record<string, string>) };
    headers["Idempotent-Replayed"] = "true";
    headers["Cache-Control"] = "no-store";
    return new Response(decryptSecret(found.responseBody, encryptionKey(d.location)) ?? "", { status: found.status, headers });
  }
  if (rowId === undefined) throw problem(503, "The request could not be recorded; try again.", { headers: { "Retry-After": "1" } });

  const free = () => d.tx((q) => q.delete(t).where(eq(t.id, rowId!)));
  let response: Response;
  try {
    response = await handler();
  } catch (thrown) {
    // A problem thrown by the handler is an answer too (a refused file is the same refusal on a replay) …
    if (thrown instanceof Response && thrown.status < 500 && thrown.status !== 429) {
      await keep(thrown.clone());
      throw thrown;
    }
    // … anything else frees the key, so that a retry runs.
    await free();
    throw thrown;
  }
  if (response.status >= 500 || response.status === 429 || response.body === null) {
    if (response.body === null && response.status < 500 && response.status !== 429) await keep(response.clone());
    else await free();
    return response;
  }
  await keep(response.clone());
  return response;

  async function keep(r: Response) {
    const body = r.body === null ? "" : await r.text();
    if (body.length > MAX_STORED_BODY) {
      await free();
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = r.headers.get(name);
      if (v !== null) headers[name] = v;
    }
    await d.tx((q) =>
      q
        .update(t)
        .set({ status: r.status, responseBody: encryptSecret(body, encryptionKey(d.location)), responseHeaders: JSON.stringify(headers) })
        .where(eq(t.id, rowId!)),
    );
  }
}

/** Deletes keys older than KEEP_SECONDS (the server calls it now and then); returns how many. */
export async function pruneIdempotencyKeys(db: DalLike = getDal()): Promise<number> {
  const d = dalOf(db);
  const t = d.t.apiIdempotencyKeys;
  const gone = await d.tx((q) =>
    q
      .delete(t)
      .where(lt(t.createdAt, now() - KEEP_SECONDS))
      .returning({ id: t.id }),
  );
  return gone.length;
}
