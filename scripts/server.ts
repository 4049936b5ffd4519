/**
 * Production server: checks the environment and the database (one-line error,
 * exit 1), applies migrations, then serves the Remix build with Express.
 *
 * Every request that can change state (anything but GET/HEAD/OPTIONS) passes
 * three gates here, before any route code runs:
 *   - a body-size limit by route, checked before the body is read (413);
 *   - the Origin check and the CSRF token (app/auth/csrf.server.ts) (403), except
 *     for bearer-token requests to the HTTP API, which no other site can forge
 *     (isBearerApiRequest);
 *   - JSON bodies are parsed with a depth limit (400).
 * Pages get security headers (helmet) with a per-request nonce for the inline
 * Remix scripts. SIGTERM/SIGINT stop accepting connections, finish the requests
 * in flight and those still arriving on open connections with `Connection:
 * close`, close keep-alive connections once idle, close the database and exit
 * (within 10 s; see shutdown below).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import net, { type Socket } from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { broadcastDevReady, createReadableStreamFromReadable, createRequestHandler, type ServerBuild } from "@remix-run/node";
import compression from "compression";
import express, { type NextFunction, type Request as ExpressRequest, type Response as ExpressResponse } from "express";
import helmet from "helmet";
import { databasePathFromEnv, openDatabase } from "../db/client";
import { isPostgresUrl } from "../db/client-pg";
import { maskUrl } from "../db/copy";
import { repoPath } from "../db/repo-path";
import { failInterruptedApiImports } from "../app/api/import-records.server";
import { closeDal, initDal } from "../app/dal.server";
import { removeDeadJobFolders } from "../app/formats/import-jobs.server";
import { removeOrphanStageFiles } from "../app/formats/stage-file.server";
import { cleanupLeftovers } from "../app/formats/stage.server";
import { env } from "../app/env.server";
import { WebhookSender } from "../app/webhooks/sender.server";
import {
  CSRF_FIELD,
  CSRF_HEADER,
  csrfBindingFor,
  isBearerApiRequest,
  multipartBoundary,
  originRefusal,
  scanMultipartForToken,
  tokensMatch,
} from "../app/auth/csrf.server";
import { bodyLimitFor, JSON_MAX_DEPTH, jsonTooDeep, streamsApiBody } from "../app/request-limits.server";

// The production build runs with production React and Express unless told otherwise
// (npm start and npm run demo also set it; `remix dev` sets "development").
process.env.NODE_ENV ??= "production";

// The repository, from the sources or from the cached bundle (scripts/cli.mjs server).
const root = path.dirname(repoPath("remix.config.js", import.meta.url));
const port = (() => {
  const raw = process.env.PORT ?? "3000";
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    console.error(`Concord: PORT must be a number between 0 and 65535, got "${raw}".`);
    process.exit(1);
  }
  return n;
})();

// Every setting is checked once at start (app/env.server.ts): a mistyped one stops here with its name.
try {
  env();
} catch (err) {
  console.error(`Concord: ${(err as Error).message}`);
  process.exit(1);
}

const onPostgres = isPostgresUrl(process.env.DATABASE_URL);
const dbFile = onPostgres ? maskUrl(process.env.DATABASE_URL!.trim()) : databasePathFromEnv();
// The stage files imports killed midway left in the OS temp folder (their rows: cleanupLeftovers below).
removeOrphanStageFiles();
// The upload folders of import jobs whose server died while they ran, and of finished imports (import-jobs.server.ts).
removeDeadJobFolders();
try {
  if (onPostgres) {
    // Connects and applies the PostgreSQL migrations once; the Remix build opens its own pool on first use.
    const d = await initDal();
    // The API imports a dead server of this machine left queued or running: failed (nothing of them was written).
    await failInterruptedApiImports(d);
    await closeDal();
  } else {
    const db = openDatabase(dbFile);
    const conn = db.$client;
    // Rows an import wrote before it died (kill -9, power loss) are invisible; delete them now rather than at the next import.
    const cleaned = await cleanupLeftovers(conn);
    if (cleaned) console.log(`Concord: removed the rows of ${cleaned} import(s) that stopped midway`);
    // The API imports a dead server left queued or running: failed (nothing of them was written).
    await failInterruptedApiImports(db);
    conn.close();
  }
} catch (err) {
  // A connection error names the host, never the password (maskUrl).
  console.error(`Concord: ${(err as Error).message.replaceAll(process.env.DATABASE_URL ?? "\u0000", dbFile)}`);
  process.exit(1);
}

const buildPath = path.join(root, "build", "index.js");
let build: ServerBuild;
try {
  build = (await import(pathToFileURL(buildPath).href)) as ServerBuild;
} catch {
  console.error(`Concord: no server build at ${buildPath}; run "npm run build" first.`);
  process.exit(1);
}
const handleRemix = createRequestHandler(build, build.mode);
const isDev = build.mode === "development";

const app = express();
app.disable("x-powered-by");

// A fresh nonce per request; helmet's CSP and the Remix <Scripts> both use it.
app.use((_req, res, next) => {
  res.locals.cspNonce = randomBytes(16).toString("base64");
  next();
});
app.use(
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'self'"],
        "script-src": ["'self'", (_req, res) => `'nonce-${(res as ExpressResponse).locals.cspNonce}'`],
        // React renders style attributes (charts, layout); scripts stay locked down.
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": isDev ? ["'self'", "ws:"] : ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
      },
    },
    xFrameOptions: { action: "deny" },
    referrerPolicy: { policy: "same-origin" },
    strictTransportSecurity: process.env.COOKIE_SECURE === "1",
    crossOriginEmbedderPolicy: false,
  }),
);
app.use(compression());
app.use("/build", express.static(path.join(root, "public", "build"), { immutable: true, maxAge: "1y" }));
// The API has no files: its requests skip the static handler's file-system lookups (a stat per request).
const publicFiles = express.static(path.join(root, "public"), { maxAge: "1h" });
app.use((req, res, next) => (req.path.startsWith("/api/") ? next() : publicFiles(req, res, next)));

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Titles of the refusals an API request may get here, as app/api/problem.server.ts words them (RFC 9110 §15). */
const PROBLEM_TITLES: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  413: "Content Too Large",
  500: "Internal Server Error",
};

/** `api`: a bearer request to the HTTP API, answered as problem details (RFC 9457) like every API answer. */
function refuse(req: ExpressRequest, res: ExpressResponse, status: number, message: string, api = false) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (api) {
    res.status(status).type("application/problem+json").set("Cache-Control", "no-store");
    message = JSON.stringify({ type: "about:blank", title: PROBLEM_TITLES[status] ?? "Error", status, detail: message });
  } else res.status(status).type("text/plain; charset=utf-8");
  // Remix's client shows a "catch" response in the route's error boundary.
  if (new URL(req.originalUrl, "http://x").searchParams.has("_data")) res.set("X-Remix-Catch", "yes");
  if (req.complete) {
    res.end(message);
    return;
  }
  // The body is still arriving. The whole answer is written at once (with its
  // length, so the client can read it), but the connection is held open while the
  // rest of the body is read and dropped (never kept): closing it under a client
  // that is still sending would reset the connection before the answer is read.
  // A client that keeps sending is cut off after 2 s.
  res.set("Connection", "close");
  res.set("Content-Length", String(Buffer.byteLength(message)));
  res.write(message);
  const finish = () => {
    clearTimeout(cut);
    res.end();
  };
  const cut = setTimeout(() => {
    res.end();
    req.socket.destroy();
  }, 2000);
  cut.unref();
  req.on("end", finish);
  req.on("close", finish);
  // A half-used async iterator leaves a 'readable' listener, which would keep the stream paused.
  req.removeAllListeners("readable");
  req.on("data", () => {});
  req.resume();
}

/** Reads and drops what is left of a request's body, for at most 2 s (a client that keeps sending is then cut off). */
function dropRestOfBody(req: ExpressRequest) {
  if (req.complete) return;
  const cut = setTimeout(() => req.socket.destroy(), 2000);
  cut.unref();
  req.on("end", () => clearTimeout(cut));
  req.on("close", () => clearTimeout(cut));
  req.removeAllListeners("readable");
  req.on("data", () => {});
  req.resume();
}

/** Reads the whole body (a small form or JSON), refusing more than `limit` bytes. */
async function readAll(chunks: AsyncIterator<Buffer>, limit: number, already: Buffer[] = []): Promise<Buffer> {
  let size = already.reduce((n, b) => n + b.length, 0);
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) break;
    size += value.length;
    if (size > limit) throw new HttpRefusal(413, `The request body is larger than ${limit} bytes.`);
    already.push(value);
  }
  return Buffer.concat(already);
}

/** `apiStream`: the body of an API import, handed to the route unread (streamsApiBody). */
/**
 * A body handed on as it arrives: the chunks already read (`seen`, `size` bytes), then the rest of the request,
 * cut off with an error once more than `limit` bytes have come (`tooLarge` then says so).
 */
function limitedStream(seen: Buffer[], size: number, chunks: AsyncIterator<Buffer>, limit: number): Prepared {
  let over = false;
  async function* all() {
    for (const b of seen) yield b;
    for (;;) {
      const { value, done } = await chunks.next();
      if (done) return;
      size += value.length;
      if (size > limit) {
        over = true;
        throw new Error("request body too large");
      }
      yield value;
    }
  }
  return { body: Readable.from(all()), tooLarge: () => over };
}

type Prepared = { body: Buffer | Readable | null; tooLarge: () => boolean; apiStream?: boolean };

/**
 * Checks origin, size and CSRF token of a state-changing request and returns the
 * body to hand to Remix (buffered for forms and JSON; for uploads the peeked
 * start followed by the rest of the stream, still size-limited). `expectedToken`
 * null: a bearer request to the HTTP API, which no other site can forge
 * (isBearerApiRequest): only the size and JSON checks apply.
 */
async function prepareBody(req: ExpressRequest, expectedToken: string | null, pathname: string): Promise<Prepared> {
  const host = ownHost(req);
  const refusal = expectedToken === null ? null : originRefusal(req.get("Origin"), req.get("Sec-Fetch-Site"), host);
  if (refusal) throw new HttpRefusal(403, `Refused: ${refusal} Changes are only accepted from Concord's own pages.`);

  const contentType = (req.get("Content-Type") ?? "").toLowerCase();
  const streamed = streamsApiBody(pathname, expectedToken === null);
  const limit = streamed ? bodyLimitFor(pathname, contentType, true) : bodyLimitFor(req.path, contentType);
  const declared = Number(req.get("Content-Length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw new HttpRefusal(413, `The request body is larger than ${limit} bytes.`);
  }
  const headerToken = req.get(CSRF_HEADER);
  const chunks = (req as IncomingMessage)[Symbol.asyncIterator]() as AsyncIterator<Buffer>;

  // The API's import (a bearer request): the body is the file, handed to the route as it arrives (the route
  // streams it to disk), neither buffered nor parsed here; still cut off past the limit.
  if (streamed) return { ...limitedStream([], 0, chunks, limit), apiStream: true };
  const badToken = () =>
    new HttpRefusal(403, "Refused: the form's security token is missing or out of date. Reload the page and try again.");

  if (contentType.startsWith("multipart/form-data")) {
    const boundary = multipartBoundary(req.get("Content-Type") ?? "");
    if (!boundary) throw new HttpRefusal(400, "The upload has no multipart boundary.");
    const seen: Buffer[] = [];
    let size = 0;
    let token: string | null = headerToken ?? null;
    while (expectedToken !== null && token === null) {
      const { value, done } = await chunks.next();
      if (done) break;
      seen.push(value);
      size += value.length;
      if (size > limit) throw new HttpRefusal(413, `The request body is larger than ${limit} bytes.`);
      const scan = scanMultipartForToken(Buffer.concat(seen), boundary);
      if (scan.state === "found") token = scan.token;
      else if (scan.state === "missing" || size > 256 * 1024) break;
    }
    if (expectedToken !== null && !tokensMatch(expectedToken, token)) throw badToken();
    return limitedStream(seen, size, chunks, limit);
  }

  const raw = await readAll(chunks, limit);
  let sent: string | null = headerToken ?? null;
  if (sent === null && contentType.startsWith("application/x-www-form-urlencoded")) {
    sent = new URLSearchParams(raw.toString("utf8")).get(CSRF_FIELD);
  } else if (contentType.startsWith("application/json") && raw.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString("utf8"));
    } catch {
      throw new HttpRefusal(400, "The request body is not valid JSON.");
    }
    if (jsonTooDeep(parsed, JSON_MAX_DEPTH)) throw new HttpRefusal(400, `JSON nested deeper than ${JSON_MAX_DEPTH} levels is refused.`);
    if (sent === null && parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const v = (parsed as Record<string, unknown>)[CSRF_FIELD];
      sent = typeof v === "string" ? v : null;
    }
  }
  if (expectedToken !== null && !tokensMatch(expectedToken, sent)) throw badToken();
  return { body: raw, tooLarge: () => false };
}

function remixHeaders(req: ExpressRequest): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  return headers;
}

async function sendResponse(res: ExpressResponse, response: Response) {
  res.statusMessage = response.statusText;
  res.status(response.status);
  for (const [key, value] of response.headers.entries()) res.append(key, value);
  if (/text\/event-stream/i.test(response.headers.get("Content-Type") ?? "")) res.flushHeaders();
  if (response.body) await writeBody(response.body, res);
  else res.end();
}

/**
 * Writes a response body chunk by chunk (flushed through compression, as Remix's own writer does), but
 * waits for the connection to drain whenever its buffer is full: a streamed export then reads its next
 * window of rows only when the client has taken the last, so a slow client holds memory to a window.
 * A client that goes away cancels the body (which frees its heavy-read slot: app/request-limits.server.ts).
 */
async function writeBody(body: ReadableStream<Uint8Array>, res: ExpressResponse) {
  const reader = body.getReader();
  let wake: (() => void) | null = null;
  let listening = false;
  const resume = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        res.end();
        return;
      }
      const more = res.write(value);
      (res as unknown as { flush?: () => void }).flush?.();
      if (!more && !res.destroyed) {
        // One listener each for the whole response (compression hands "drain" to its own stream, where a once() would pile up).
        if (!listening) {
          listening = true;
          res.on("drain", resume);
          res.on("close", resume);
        }
        await new Promise<void>((r) => (wake = r));
      }
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
    }
  } catch (err) {
    res.destroy(err as Error);
    throw err;
  }
}

/** TRUST_PROXY=1: a reverse proxy in front of us sets the X-Forwarded-* headers (and strips the client's). */
const TRUST_PROXY = process.env.TRUST_PROXY === "1";

/** The first value of a header a proxy may have appended to ("a, b" → "a"). */
function firstForwarded(req: ExpressRequest, name: string): string | undefined {
  const v = req.get(name)?.split(",")[0]?.trim();
  return v ? v : undefined;
}

/**
 * The host our own pages are served under, which the Origin check compares
 * against. X-Forwarded-Host is anyone's to send: it counts only behind a proxy
 * we were told about (TRUST_PROXY=1). Otherwise a cross-site page could send
 * `X-Forwarded-Host: evil.example` with `Origin: http://evil.example` and pass.
 */
function ownHost(req: ExpressRequest): string | undefined {
  return (TRUST_PROXY ? firstForwarded(req, "X-Forwarded-Host") : undefined) ?? req.get("Host");
}

/** http or https: the socket's, or with TRUST_PROXY=1 the proxy's X-Forwarded-Proto. */
function ownProtocol(req: ExpressRequest): "http" | "https" {
  const forwarded = TRUST_PROXY ? firstForwarded(req, "X-Forwarded-Proto")?.toLowerCase() : undefined;
  if (forwarded === "http" || forwarded === "https") return forwarded;
  return (req.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
}

function requestUrl(req: ExpressRequest): URL {
  const host = ownHost(req);
  if (!host) throw new HttpRefusal(400, "The request has no Host header.");
  try {
    return new URL(`${ownProtocol(req)}://${host}${req.originalUrl}`);
  } catch {
    throw new HttpRefusal(400, "The request's Host header is malformed.");
  }
}

/**
 * The client's address for sign-in throttling: the socket's peer, or with
 * TRUST_PROXY=1 (behind a reverse proxy) the last address the proxy appended
 * to X-Forwarded-For.
 */
function clientAddress(req: ExpressRequest): string {
  if (process.env.TRUST_PROXY === "1") {
    const forwarded = req.get("X-Forwarded-For")?.split(",").pop()?.trim();
    if (forwarded) return forwarded.slice(0, 100);
  }
  return req.socket.remoteAddress ?? "unknown";
}

app.all("*", async (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
  let prepared: Prepared = { body: null, tooLarge: () => false };
  let api = false;
  try {
    const url = requestUrl(req);
    // The HTTP API with a bearer token (or no cookie): nothing to forge, no CSRF token, no pre-session cookie.
    api = isBearerApiRequest(url.pathname, req.get("Authorization"), req.get("Cookie"));
    const binding = api ? { token: "", setCookie: null } : await csrfBindingFor(req.get("Cookie"));
    if (binding.setCookie) res.append("Set-Cookie", binding.setCookie);
    if (!SAFE_METHODS.has(req.method)) prepared = await prepareBody(req, api ? null : binding.token, url.pathname);

    const controller = new AbortController();
    let finished = false;
    res.on("finish", () => (finished = true));
    res.on("close", () => {
      if (!finished) controller.abort();
    });
    const init: RequestInit & { duplex?: "half" } = {
      method: req.method,
      headers: remixHeaders(req),
      signal: controller.signal,
    };
    if (!SAFE_METHODS.has(req.method) && prepared.body !== null) {
      init.body = (
        Buffer.isBuffer(prepared.body)
          ? new Uint8Array(prepared.body.buffer, prepared.body.byteOffset, prepared.body.length)
          : createReadableStreamFromReadable(prepared.body)
      ) as BodyInit;
      init.duplex = "half";
    }
    const response = await handleRemix(new Request(url.href, init), {
      cspNonce: res.locals.cspNonce as string,
      csrfToken: binding.token,
      clientAddress: clientAddress(req),
    });
    if (prepared.tooLarge()) throw new HttpRefusal(413, "The request body is too large.");
    // A streamed body the route answered before reading it all (a refusal): the rest is dropped, and the connection closed.
    const unread = prepared.apiStream === true && !req.complete;
    if (unread) res.set("Connection", "close");
    await sendResponse(res, response);
    if (unread) dropRestOfBody(req);
  } catch (err) {
    if (err instanceof HttpRefusal) refuse(req, res, err.status, err.message, api);
    else if (prepared.tooLarge()) refuse(req, res, 413, "The request body is too large.", api);
    else next(err);
  }
});

// Never a stack trace to the client.
app.use((err: unknown, req: ExpressRequest, res: ExpressResponse, _next: NextFunction) => {
  console.error(err);
  refuse(req, res, 500, "Something went wrong on our side. Your saved work is safe; try again.");
});

const server = app.listen(port, () => {
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  console.log(`Concord is running at http://localhost:${actual} (database: ${dbFile})`);
  if (isDev) void broadcastDevReady(build);
});

// Webhook deliveries (app/webhooks/sender.server.ts), whichever process emitted them: claimed under a lease, so
// several servers and workers may send side by side.
const webhookSender = new WebhookSender().start();

/** Set once SIGTERM/SIGINT arrives. */
let signalled = false;
/** Set once the server has stopped accepting connections: from then on every answer says `Connection: close`. */
let stopping = false;
/** Responses not yet finished (static files included), so a shutdown can wait for them and mark them. */
const inFlight = new Set<ServerResponse>();
/** Every open connection: how many of its requests are being answered, and since when it has been idle. */
const connections = new Map<Socket, { busy: number; idleSince: number }>();
/** Connections accepted so far (a shutdown waits for a turn of the event loop that accepts none). */
let accepted = 0;

server.on("connection", (socket: Socket) => {
  accepted++;
  connections.set(socket, { busy: 0, idleSince: Date.now() });
  socket.once("close", () => connections.delete(socket));
});
// Before express sees the request, so every answer (a static file too) can be marked.
server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
  const conn = connections.get(req.socket);
  if (conn) conn.busy++;
  inFlight.add(res);
  if (stopping) res.setHeader("Connection", "close");
  res.once("close", () => {
    inFlight.delete(res);
    if (conn) {
      conn.busy--;
      conn.idleSince = Date.now();
    }
  });
});

/**
 * Graceful stop. A keep-alive connection may carry a client's next request at any moment, so closing one
 * between requests resets whatever request is already on its way (the client sees ECONNRESET, or "socket
 * hang up", without knowing whether it was handled): RFC 9112 §9.6 lets either side close, and the way to
 * close without that race is to say so in an answer. So:
 *   1. stop accepting connections (refused from now on, which a client or load balancer can retry elsewhere);
 *   2. every answer not yet started, and every request still arriving on an open connection, is answered
 *      with `Connection: close` (RFC 9112 §9.6), after which that connection closes;
 *   3. a connection idle for the keep-alive timeout the server announces in every answer (`Keep-Alive:
 *      timeout=5`, Node's default 5 s) is closed: a client that honours the announcement (Node's http.Agent
 *      and undici stop reusing a socket a second before it) never sends on it, and an annotator halfway
 *      through a unit can still submit it meanwhile;
 *   4. exit once no connection is left: at once when every client has been told (2), at most the keep-alive
 *      timeout later for idle ones (3). Long-lived streams (run progress events) are cut 8 s after the signal.
 *
 * Step 1 first empties the listen queue. While the event loop is busy the kernel completes connections for
 * us and queues them, and closing the listener resets every one still queued: requests their clients sent
 * before the signal. The loop takes about one of them per turn under load (measured on Node 20: 20 queued
 * connections took 20 turns, 0.5–1 s on a loaded machine), so the listener is closed at the first full
 * turn that accepts none (from one check phase to the next, setImmediate), at most 2 s after the signal.
 * Until then answers go out as usual: none says `Connection: close`, so no client is sent to reconnect
 * into the queue meanwhile.
 */
function shutdown(signal: string) {
  if (signalled) return;
  signalled = true;
  setTimeout(() => {
    console.log("Concord: still busy 8 s after the signal, cutting the remaining connections.");
    server.closeAllConnections();
    setTimeout(() => exit(0), 500).unref();
  }, 8000).unref();
  const deadline = Date.now() + 2000;
  let seen = accepted;
  const drain = () => {
    if (accepted === seen || Date.now() >= deadline) return stop(signal);
    seen = accepted;
    setImmediate(drain);
  };
  // The first check phase only takes the count: the turn the signal arrived in may have accepted a connection before it.
  setImmediate(() => {
    seen = accepted;
    setImmediate(drain);
  });
}

function stop(signal: string) {
  // net.Server's close, not http.Server's: since Node 19 that one also destroys every connection idle at this
  // instant, including those whose next request is already in the socket's buffer, unread (a reset).
  net.Server.prototype.close.call(server, () => exit(0));
  stopping = true;
  for (const res of inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
  const idle = [...connections.values()].filter((c) => c.busy === 0).length;
  console.log(
    `Concord: ${signal}, finishing ${inFlight.size} request(s) in flight and stopping ` +
      `(${idle} idle connection(s) closed once idle ${server.keepAliveTimeout} ms).`,
  );
  const closeIdle = () => {
    const now = Date.now();
    for (const [socket, conn] of connections) {
      if (conn.busy > 0 || socket.writableEnded || now - conn.idleSince < server.keepAliveTimeout) continue;
      socket.end();
      // A client that does not close its side in turn is cut a second later.
      setTimeout(() => socket.destroy(), 1000).unref();
    }
  };
  closeIdle();
  setInterval(closeIdle, 100).unref();
}

let exiting = false;
function exit(code: number) {
  if (exiting) return;
  exiting = true;
  // The webhook sender stops claiming; a delivery still being sent a second later is sent again after its lease.
  Promise.race([webhookSender.stop(), new Promise((r) => setTimeout(r, 1000).unref())])
    // The build's own database connection (exported from app/entry.server.tsx): the SQLite file or the PostgreSQL pool.
    .then(() => (build.entry.module as { closeDatabase?: () => unknown }).closeDatabase?.())
    .catch((err: unknown) => console.error(err))
    .finally(() => process.exit(code));
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => shutdown(signal));
