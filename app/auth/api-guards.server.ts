/**
 * Guards of the HTTP API (`/api/v1/`), the bearer-token counterparts of ./guards.server.ts. Every API loader
 * and action calls one (through app/api/route.server.ts's apiRoute, which turns what they throw into problem
 * details). They throw problem+json Responses:
 *
 *   - 401 with `WWW-Authenticate: Bearer` (RFC 6750 §3): no `Authorization: Bearer TOKEN` header, or a token
 *     that is unknown, expired, revoked, or whose user is disabled (`error="invalid_token"`). The session
 *     cookie is never read here: a browser signed in to Concord gets 401 from the API like anyone else, so
 *     the API has no cross-site request forgery surface (scripts/server.ts skips the CSRF check for bearer
 *     requests to /api/v1/ accordingly: app/auth/csrf.server.ts isBearerApiRequest).
 *   - 403 `error="insufficient_scope"`: a read token on anything but GET/HEAD, or a write endpoint.
 *   - 429 with Retry-After: the token's rate limit (app/api/rate-limit.server.ts).
 *   - 404 for a project that does not exist, that the token does not cover, or that its user is not a member
 *     of, alike (never 403, which would say the project exists); 403 for a project the user sees with a role
 *     below the endpoint's.
 *
 * A request is authenticated once: the guards remember its result, so calling requireApiToken and then
 * requireApiProjectRole costs one lookup and one request of the rate limit.
 */
import type { Role } from "../../db/schema";
import { problem, PROBLEM_TYPES } from "~/api/problem.server";
import { takeApiRequest } from "~/api/rate-limit.server";
import { hasRole } from "./guards.server";
import { authenticateApiToken, scopeAllows, tokenProjectRole, type ApiAuth, type ApiTokenScope, type TokenProject } from "./tokens.server";

const REALM = 'Bearer realm="Concord API"';
const READ_METHODS = new Set(["GET", "HEAD"]);

/** The client address a request came from (set by apiRoute from the server's load context). */
const clientAddresses = new WeakMap<Request, string>();
const authenticated = new WeakMap<Request, Promise<ApiAuth>>();

export function rememberClientAddress(request: Request, address: string | undefined): void {
  if (address) clientAddresses.set(request, address);
}

const REFUSALS = {
  unknown: "The token is not valid: check that it was copied whole, or create a new one.",
  expired: "The token has expired: create a new one on Settings → API tokens.",
  revoked: "The token was revoked: create a new one on Settings → API tokens.",
  disabled: "The account this token belongs to is disabled.",
} as const;

/** The token of an `Authorization: Bearer TOKEN` header (the scheme is case-insensitive: RFC 9110 §11.1), or null. */
function bearerOf(request: Request): string | null {
  const m = /^Bearer +(\S+) *$/i.exec(request.headers.get("Authorization") ?? "");
  return m ? m[1] : null;
}

/** An error_description: only the characters RFC 6750 §3 allows there (printable ASCII but the double quote and the backslash). */
const description = (text: string) => text.replace(/→/g, ">").replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, "");

function unauthorized(detail: string, invalidToken: boolean): never {
  const challenge = invalidToken ? `${REALM}, error="invalid_token", error_description="${description(detail)}"` : REALM;
  throw problem(401, detail, { type: PROBLEM_TYPES.unauthorized, headers: { "WWW-Authenticate": challenge } });
}

async function authenticate(request: Request): Promise<ApiAuth> {
  const bearer = bearerOf(request);
  if (!bearer) {
    const hasCookie = Boolean(request.headers.get("Cookie"));
    unauthorized(
      hasCookie
        ? "The API does not accept the sign-in cookie: send an API token in an Authorization: Bearer header."
        : "Send an API token in an Authorization: Bearer header (create one on Settings → API tokens, or with npm run tokens).",
      false,
    );
  }
  const result = await authenticateApiToken(bearer, clientAddresses.get(request) ?? "unknown");
  if (!result.ok) unauthorized(REFUSALS[result.reason], true);
  const rate = takeApiRequest(result.auth.token.id);
  if (!rate.ok) {
    throw problem(429, `This token has made more requests than its limit allows; try again in ${rate.retryAfterSeconds} s.`, {
      type: PROBLEM_TYPES.rateLimited,
      headers: { "Retry-After": String(rate.retryAfterSeconds) },
    });
  }
  return result.auth;
}

/**
 * The user and token of an API request, whose token may do `scope` ("read" unless told; anything but GET and
 * HEAD needs "write" whatever the route asks, so a read token never changes anything).
 */
export async function requireApiToken(request: Request, opts: { scope?: ApiTokenScope } = {}): Promise<ApiAuth> {
  let pending = authenticated.get(request);
  if (!pending) {
    pending = authenticate(request);
    authenticated.set(request, pending);
  }
  const auth = await pending;
  const needed: ApiTokenScope = opts.scope === "write" || !READ_METHODS.has(request.method.toUpperCase()) ? "write" : "read";
  if (!scopeAllows(auth.token.scope, needed)) {
    const detail = "This token is read-only: a write token is needed for this request.";
    throw problem(403, detail, {
      type: PROBLEM_TYPES.insufficientScope,
      headers: { "WWW-Authenticate": `${REALM}, error="insufficient_scope", error_description="${description(detail)}", scope="write"` },
    });
  }
  return auth;
}

export type ApiProjectAccess = ApiAuth & { project: TokenProject; role: Role };

/**
 * The project named by `slug` as the request's token reaches it: with its user's current role there, at least
 * `minRole`. No such project, not covered by the token, or its user not a member: 404 alike. A lower role: 403.
 */
export async function requireApiProjectRole(
  request: Request,
  slug: string | undefined,
  minRole: Role,
  opts: { scope?: ApiTokenScope } = {},
): Promise<ApiProjectAccess> {
  const auth = await requireApiToken(request, opts);
  const found = slug ? await tokenProjectRole(auth, slug) : null;
  if (!found) throw problem(404, "No such project, or this token cannot reach it.");
  if (!hasRole(found.role, minRole)) {
    throw problem(
      403,
      `This needs the ${minRole} role in ${found.project.name}; the token's user is ${article(found.role)} ${found.role} there.`,
    );
  }
  return { ...auth, ...found };
}

const article = (role: Role) => (role === "admin" || role === "annotator" ? "an" : "a");
