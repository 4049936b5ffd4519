/**
 * A small `fetch` for the openai client, over node:http / node:https with
 * keep-alive agents shared by every provider in the process.
 *
 * Why: the global fetch (undici, WHATWG streams) costs about twice the CPU per
 * call of node:http on this workload (bench:runs measured ~0.9 ms vs ~0.45 ms
 * per call through the openai client), and at thousands of calls per run the
 * worker is CPU-bound. The body is read whole before the Response is returned,
 * so the client's timeout covers the full reply. Only what the openai client
 * sends for JSON endpoints is handled here (string or Uint8Array bodies);
 * anything else (multipart uploads, streams) falls back to the global fetch.
 *
 * A successful reply comes back as a BufferedResponse: the body is already
 * whole in memory, so building a WHATWG Response around it (a ReadableStream,
 * and reading it back through the stream for json()) was pure overhead —
 * ~20–30 µs of a ~1.3 ms call in bench:runs. It has what the openai client
 * reads of a non-streaming reply (status, ok, headers, url, json(), text());
 * any other status is a real Response, since the client's retry and error
 * paths also use its body stream.
 *
 * Every connection is checked against the egress policy (egress.server.ts):
 * a host name through the socket's DNS lookup, a literal IP address before the
 * request. Redirects are never followed (a 3xx is an error reply to the client).
 */
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { env } from "../../env.server";
import { guardedLookup, literalHostAllowed, parseEgressAllow, refusedError, type EgressPolicy, type LookupAll } from "./egress.server";

/**
 * A kept-alive socket left unused this long is closed by us (ms). Servers close idle connections after their
 * own keep-alive timeout (5 s in Node and uvicorn, 60 s in the test endpoint); a request sent on a socket the
 * server is closing fails with ECONNRESET before it arrives, and the client's retry is one more logged attempt
 * (and one more in the requests-per-minute window). Node's agent would honour the server's `Keep-Alive: timeout`
 * hint only when it is below the agent's own timeout, and without one it keeps free sockets forever. Only free
 * sockets are closed: a request waiting longer than this for its reply is not affected.
 */
export const FREE_SOCKET_MS = 4_000;
const agentOptions = { keepAlive: true, keepAliveMsecs: 30_000, maxFreeSockets: 256, scheduling: "lifo" as const, timeout: FREE_SOCKET_MS };
export const sharedHttpAgent = new http.Agent(agentOptions);
export const sharedHttpsAgent = new https.Agent(agentOptions);

/** Connection-level headers the client never reads (the body is already whole). */
const SKIP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "date"]);

function headersToObject(h: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  if (h instanceof Headers) h.forEach((v, k) => (out[k] = v));
  else if (Array.isArray(h)) for (const [k, v] of h) out[k.toLowerCase()] = v;
  else for (const [k, v] of Object.entries(h)) if (v != null) out[k.toLowerCase()] = String(v);
  return out;
}

function abortError(signal: AbortSignal | null | undefined): Error {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const e = new Error("This operation was aborted");
  e.name = "AbortError";
  return e;
}

/** A 2xx reply read whole: the part of Response the openai client uses on a non-streaming call. */
export class BufferedResponse {
  readonly ok = true;
  readonly redirected = false;
  readonly type = "basic";
  readonly body = null;
  private used = false;
  constructor(
    private readonly bytes: Buffer,
    readonly status: number,
    readonly statusText: string,
    readonly headers: Headers,
    readonly url: string,
  ) {}
  get bodyUsed(): boolean {
    return this.used;
  }
  private take(): Buffer {
    if (this.used) throw new TypeError("Body is unusable: Body has already been read");
    this.used = true;
    return this.bytes;
  }
  async text(): Promise<string> {
    return this.take().toString("utf8");
  }
  async json(): Promise<unknown> {
    return JSON.parse(this.take().toString("utf8"));
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
  clone(): BufferedResponse {
    if (this.used) throw new TypeError("Response.clone: Body has already been consumed.");
    return new BufferedResponse(this.bytes, this.status, this.statusText, this.headers, this.url);
  }
}

let processPolicy: EgressPolicy | undefined;

/** This process's egress policy, from CONCORD_EGRESS_ALLOW (validated with the rest of the environment at start). */
export function egressPolicy(): EgressPolicy {
  return (processPolicy ??= parseEgressAllow(env().CONCORD_EGRESS_ALLOW));
}

type FetchOptions = {
  /** The allow-list to enforce; default: this process's (CONCORD_EGRESS_ALLOW), over the shared agents. */
  egress?: EgressPolicy;
  /** The resolver the check wraps (default dns.lookup); a test passes one that answers what it is told. */
  resolve?: LookupAll;
};

/**
 * A fetch over node:http(s) whose every connection is checked against an egress policy. With no options it
 * is `nodeFetch`; with a policy of its own it gets agents of its own (a kept-alive socket is never reused
 * under another policy).
 */
export function createNodeFetch(opts: FetchOptions = {}): typeof fetch {
  const own = opts.egress !== undefined || opts.resolve !== undefined;
  const httpAgent = own ? new http.Agent(agentOptions) : sharedHttpAgent;
  const httpsAgent = own ? new https.Agent(agentOptions) : sharedHttpsAgent;
  let checked: { policy: EgressPolicy; lookup: net.LookupFunction } | undefined;
  const guard = () => {
    if (!checked) {
      const policy = opts.egress ?? egressPolicy();
      checked = { policy, lookup: guardedLookup(policy, opts.resolve) };
    }
    return checked;
  };
  return (input, init = {}) => {
    const body = init.body;
    const simpleBody = body == null || typeof body === "string" || body instanceof Uint8Array;
    // What the openai client sends for JSON endpoints; anything else is refused rather than sent unchecked.
    if (!simpleBody || !(typeof input === "string" || input instanceof URL))
      return Promise.reject(new TypeError("fetch failed: only a string or byte body to a URL is sent"));
    const url = typeof input === "string" ? input : input.href;
    const signal = init.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<Response>((resolve, reject) => {
      const u = new URL(url);
      const secure = u.protocol === "https:";
      if (!secure && u.protocol !== "http:") return reject(new TypeError(`fetch failed: ${u.protocol} is not http(s)`));
      const { policy, lookup } = guard();
      // net.connect does no lookup for a literal IP address: checked here, failing as a refused connection does.
      if (!literalHostAllowed(policy, u)) {
        const cause = refusedError();
        return reject(Object.assign(new TypeError(`fetch failed: ${cause.message}`), { cause }));
      }
      const headers = headersToObject(init.headers);
      if (body != null) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
      const req = (secure ? https : http).request(
        u,
        { method: init.method ?? "GET", headers, agent: secure ? httpsAgent : httpAgent, lookup },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", fail);
          res.on("aborted", () => fail(new TypeError("fetch failed: the connection closed before the reply ended")));
          res.on("end", () => {
            if (settled) return;
            settled = true;
            signal?.removeEventListener("abort", onAbort);
            const h = new Headers();
            for (let i = 0; i < res.rawHeaders.length; i += 2)
              if (!SKIP_HEADERS.has(res.rawHeaders[i].toLowerCase())) h.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
            const status = res.statusCode ?? 500;
            const nullBody = status === 204 || status === 205 || status === 304;
            const bytes = Buffer.concat(chunks);
            if (status >= 200 && status < 300 && !nullBody)
              // A Response in all the client reads of it (see the file's header).
              resolve(new BufferedResponse(bytes, status, res.statusMessage ?? "", h, url) as unknown as Response);
            else resolve(new Response(nullBody ? null : bytes, { status, statusText: res.statusMessage, headers: h }));
          });
        },
      );
      let settled = false;
      function fail(err: Error) {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        req.destroy();
        reject(err.name === "AbortError" ? err : Object.assign(new TypeError(`fetch failed: ${err.message}`), { cause: err }));
      }
      function onAbort() {
        fail(abortError(signal));
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", fail);
      req.end(body ?? undefined);
    });
  };
}

/** The fetch every provider uses by default: this process's egress policy, the shared keep-alive agents. */
export const nodeFetch: typeof fetch = createNodeFetch();
