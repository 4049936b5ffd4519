/**
 * Cross-site request forgery defence, applied by the HTTP server (scripts/server.ts)
 * to every request that is not GET/HEAD/OPTIONS, before any route runs, so no
 * route can forget it:
 *
 *  1. Origin: a request naming another origin, a malformed Origin, or no usable
 *     Origin ("null" or missing) without `Sec-Fetch-Site: same-origin` is refused.
 *     (Chromium sends `Origin: null` after a cross-origin 307 of a POST, and a
 *     page on another port of the same host still carries SameSite=Lax cookies.)
 *  2. Token: the request carries the session's CSRF token in the `_csrf` form
 *     field (urlencoded, multipart before any file part, or a JSON property) or
 *     the `X-CSRF-Token` header. The token is HMAC-SHA256(session secret, id of
 *     the session), so nothing new is stored; before sign-in it is bound to a
 *     random pre-session cookie instead.
 *
 * The root loader hands the token to the pages (`csrf`), which render it with
 * <CsrfField /> (app/components/CsrfField.tsx).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { env, sessionSecret } from "../env.server";
import { sessionIdOf, sessionTokenFromCookieHeader } from "./session.server";

export const CSRF_FIELD = "_csrf";
export const CSRF_HEADER = "x-csrf-token";
export const PRESESSION_COOKIE = "concord_presession";

const mac = (binding: string) => createHmac("sha256", sessionSecret()).update(`concord-csrf\0${binding}`).digest("base64url");

function readCookie(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export type CsrfBinding = {
  /** The token this browser's pages carry and its requests must send back. */
  token: string;
  /** A Set-Cookie value when the browser had neither a session nor a pre-session cookie. */
  setCookie: string | null;
};

/** The CSRF token for the browser that sent this Cookie header. */
export async function csrfBindingFor(cookieHeader: string | null | undefined): Promise<CsrfBinding> {
  const session = await sessionTokenFromCookieHeader(cookieHeader);
  if (session) return { token: mac(`session:${sessionIdOf(session)}`), setCookie: null };
  const pre = readCookie(cookieHeader, PRESESSION_COOKIE);
  if (pre && /^[0-9a-f]{64}$/.test(pre)) return { token: mac(`pre:${pre}`), setCookie: null };
  const fresh = randomBytes(32).toString("hex");
  const secure = env().COOKIE_SECURE === "1" ? "; Secure" : "";
  return {
    token: mac(`pre:${fresh}`),
    setCookie: `${PRESESSION_COOKIE}=${fresh}; Path=/; HttpOnly; SameSite=Lax${secure}`,
  };
}

export function tokensMatch(expected: string, sent: string | null | undefined): boolean {
  if (!sent) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Why a state-changing request's origin is refused, or null when it is our own.
 * `host` is the Host (or X-Forwarded-Host) the request was sent to.
 */
export function originRefusal(
  origin: string | null | undefined,
  secFetchSite: string | null | undefined,
  host: string | null | undefined,
): string | null {
  if (!host) return "The request has no Host header.";
  if (origin === undefined || origin === null || origin === "" || origin === "null") {
    return secFetchSite === "same-origin" ? null : "The request does not say which page sent it.";
  }
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return "The request's Origin header is malformed.";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "The request's Origin header is malformed.";
  if (parsed.origin !== origin.replace(/\/$/, "")) return "The request's Origin header is malformed.";
  if (parsed.host.toLowerCase() !== host.toLowerCase()) return "The request came from another site.";
  return null;
}

export type MultipartScan = { state: "found"; token: string } | { state: "more" } | { state: "missing" };

/**
 * Looks for the `_csrf` field at the start of a multipart body. The token must
 * come before any file part (browsers send fields in document order, so
 * <CsrfField /> goes first in an upload form); `prefix` is what has arrived so far.
 */
export function scanMultipartForToken(prefix: Buffer, boundary: string): MultipartScan {
  const delimiter = Buffer.from(`--${boundary}`);
  let pos = prefix.indexOf(delimiter);
  if (pos < 0) return prefix.length > delimiter.length + 2 ? { state: "missing" } : { state: "more" };
  for (;;) {
    const afterDelim = pos + delimiter.length;
    if (prefix.length < afterDelim + 2) return { state: "more" };
    if (prefix[afterDelim] === 0x2d && prefix[afterDelim + 1] === 0x2d) return { state: "missing" }; // closing "--"
    const headersEnd = prefix.indexOf("\r\n\r\n", afterDelim);
    if (headersEnd < 0) return { state: "more" };
    const headers = prefix.subarray(afterDelim, headersEnd).toString("utf8");
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? "";
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (/\bfilename\*?=/i.test(disposition)) return { state: "missing" };
    const valueStart = headersEnd + 4;
    const next = prefix.indexOf(Buffer.from(`\r\n--${boundary}`), valueStart);
    if (next < 0) return { state: "more" };
    if (name === CSRF_FIELD) return { state: "found", token: prefix.subarray(valueStart, next).toString("utf8") };
    pos = next + 2;
  }
}

/** The boundary parameter of a multipart Content-Type, or null. */
export function multipartBoundary(contentType: string): string | null {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

/** The HTTP API's prefix (lower case; compared with the request's normalised path, lower-cased). */
export const API_PREFIX = "/api/v1/";

/**
 * Whether a request is to the HTTP API and cannot be a forged one, so the Origin check and the CSRF token
 * do not apply (and it gets no pre-session cookie). The API authenticates with bearer tokens only and never
 * reads a cookie (app/auth/api-guards.server.ts), so a request that carries `Authorization: Bearer …` or no
 * Cookie header at all acts with no authority a cross-site page could borrow: a browser sends an
 * Authorization header cross-site only after a CORS preflight (Fetch standard §4.8), which Concord never
 * answers, and a request without cookies is authenticated by nothing else. A request under /api/v1/ that
 * carries cookies and no bearer token is checked as any other.
 *
 * `pathname` must be the normalised path the routes match (a URL's `pathname`, dot segments removed, "%2e"
 * included), never the raw request target: `/api/v1/../../p/x/members` is a page's path.
 */
export function isBearerApiRequest(pathname: string, authorization: string | undefined, cookie: string | undefined): boolean {
  if (!pathname.toLowerCase().startsWith(API_PREFIX)) return false;
  return /^bearer /i.test(authorization ?? "") || !cookie;
}
