/**
 * Request limits.
 *
 * Request-body limits, enforced by the HTTP server (scripts/server.ts) before a
 * body is read: a declared Content-Length over the limit is answered 413 at once,
 * and a body that streams past it is cut off with 413.
 *
 * Heavy reads, enforced by the routes that serve them (heavyRead, heavyReadStream):
 * each account may have CONCORD_HEAVY_READS_PER_USER (default 4) in progress at
 * once; one more is answered 429 Too Many Requests with Retry-After (RFC 6585 §4)
 * before any of its work starts, so one researcher's burst of downloads cannot
 * take the server's memory and time from everyone else.
 */
import { env } from "./env.server";

/** Forms and JSON bodies: every page's form, with room for long instructions or templates. */
export const FORM_BODY_LIMIT = 1024 * 1024;
/** The import page's uploads (streamed to disk by app/formats/upload.server.ts), plus multipart overhead. */
export const UPLOAD_BODY_LIMIT = 200 * 1024 * 1024 + 64 * 1024;
/** JSON bodies nested deeper than this are refused (400). */
export const JSON_MAX_DEPTH = 32;

/** The HTTP API's imports (POST /api/v1/projects/{slug}/imports): the body is the file itself (200 MB, as an upload's file). */
export const API_IMPORT_BODY_LIMIT = 200 * 1024 * 1024;

/** Routes that accept file uploads (multipart bodies larger than a form). */
const UPLOAD_ROUTES = [/^\/p\/[^/]+\/import\/?$/];
/** The API route whose body is a file, streamed to disk by the route (app/api/imports.server.ts), never buffered or parsed here. */
const API_IMPORT_ROUTE = /^\/api\/v1\/projects\/[^/]+\/imports\/?$/;

/**
 * Whether a request's body is handed to the route as a stream, unread: a bearer-token request to the API's import
 * route (`bearerApi`: app/auth/csrf.server.ts isBearerApiRequest on the normalised path). A request there that
 * carries the sign-in cookie instead is a page request like any other (buffered, 1 MB): only a token may send
 * the server 200 MB.
 */
export function streamsApiBody(pathname: string, bearerApi: boolean): boolean {
  return bearerApi && API_IMPORT_ROUTE.test(pathname);
}

export function bodyLimitFor(pathname: string, contentType: string, bearerApi = false): number {
  if (streamsApiBody(pathname, bearerApi)) return API_IMPORT_BODY_LIMIT;
  if (contentType.startsWith("multipart/form-data") && UPLOAD_ROUTES.some((r) => r.test(pathname))) {
    return UPLOAD_BODY_LIMIT;
  }
  return FORM_BODY_LIMIT;
}

/** True when a parsed JSON value nests arrays/objects deeper than `max`. */
export function jsonTooDeep(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * A heavy read: a request that reads or computes over a whole project or task, whose time and memory grow
 * with the data — an export download, a report page or one of its CSV/LaTeX tables (computed again after
 * every change to the labels), the judges and disagreements pages, a run's results page.
 */
export const HEAVY_READ_RETRY_AFTER_SECONDS = 5;

/** Heavy reads in progress, per user id. */
const heavyReadsInProgress = new Map<number, number>();

/** How many heavy reads the user has in progress now (for tests and diagnostics). */
export function heavyReadsOf(userId: number): number {
  return heavyReadsInProgress.get(userId) ?? 0;
}

/** The 429 answer to a heavy read over the user's limit: a sentence for the page, and when to try again. */
function tooManyHeavyReads(limit: number): Response {
  return new Response(
    `You already have ${limit} exports or reports being prepared, the most one account may have at once. ` +
      `Try again in ${HEAVY_READ_RETRY_AFTER_SECONDS} seconds, when one of them has finished.`,
    {
      status: 429,
      statusText: "Too Many Requests",
      headers: {
        "Retry-After": String(HEAVY_READ_RETRY_AFTER_SECONDS),
        "Content-Type": "text/plain; charset=utf-8",
        "Cache-Control": "no-store",
      },
    },
  );
}

/**
 * Takes one of the user's heavy-read slots and returns the function that gives it back (calling it
 * again does nothing); throws the 429 Response when all CONCORD_HEAVY_READS_PER_USER are taken.
 */
export function acquireHeavyRead(userId: number): () => void {
  const limit = env().CONCORD_HEAVY_READS_PER_USER;
  const now = heavyReadsOf(userId);
  if (now >= limit) throw tooManyHeavyReads(limit);
  heavyReadsInProgress.set(userId, now + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = heavyReadsOf(userId) - 1;
    if (left > 0) heavyReadsInProgress.set(userId, left);
    else heavyReadsInProgress.delete(userId);
  };
}

/** The end of the last turn given out: pieces of heavy work start one per turn of the event loop. */
let lastTurn: Promise<void> = Promise.resolve();

/**
 * Waits for a turn of the event loop of its own: the requests that arrived meanwhile (the sign-in page,
 * other users, more heavy reads to admit or refuse) are served before this piece of heavy work starts,
 * and between it and the next. Without it, work that reads the database synchronously (better-sqlite3)
 * and computes runs to its end in one turn, and every heavy read waiting starts in the same turn.
 */
function ownTurn(): Promise<void> {
  lastTurn = lastTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  return lastTurn;
}

/**
 * Runs `read` in one of the user's heavy-read slots (a loader's work; the slot is free again when it
 * settles). The work starts on a turn of the event loop of its own (ownTurn), so the requests of a burst
 * that arrived together are all admitted or refused before any of them computes.
 */
export async function heavyRead<T>(userId: number, read: () => Promise<T>): Promise<T> {
  const release = acquireHeavyRead(userId);
  try {
    await ownTurn();
    return await read();
  } finally {
    release();
  }
}

/**
 * A response body streamed from `chunks` (an export, a window of rows at a time) in one of the user's
 * heavy-read slots, held until the last chunk is sent, the download is cancelled or it fails. The next
 * chunk is made only when the client has taken the last one, so memory holds a window, not the file,
 * and each on a turn of the event loop of its own (ownTurn), so other requests are served between windows.
 */
export function heavyReadStream(userId: number, chunks: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const release = acquireHeavyRead(userId);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          await ownTurn();
          const next = await chunks.next();
          if (next.done) {
            release();
            controller.close();
          } else controller.enqueue(encoder.encode(next.value));
        } catch (err) {
          release();
          controller.error(err);
        }
      },
      async cancel() {
        release();
        await chunks.return(undefined);
      },
    },
    // One chunk ahead at most: the client's reading paces the reading of the database.
    { highWaterMark: 1 },
  );
}
