/**
 * Answers of the HTTP API (`/api/v1/`): JSON bodies, and errors as problem details (RFC 9457,
 * `application/problem+json`): `type`, `title`, `status`, `detail`, and for rejected input an `errors`
 * extension member, `[{ row?, field?, message }]` (RFC 9457 §3.2 allows extension members).
 *
 * `type` is `about:blank` when the HTTP status says it all (RFC 9457 §4.2.1: then `title` is the status
 * phrase); otherwise a `urn:concord:problem:NAME` naming the problem, which clients may compare but need
 * not dereference (§3.1.1).
 */
import { ZodError } from "zod";
import { DomainError } from "~/errors.server";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** One rejected value: its row (1-based, in a file), its field, and why. */
export type ProblemError = { row?: number; field?: string; message: string };

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: ProblemError[];
};

const STATUS_TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The problem types with a meaning of their own (the others are `about:blank`). */
export const PROBLEM_TYPES = {
  unauthorized: "urn:concord:problem:unauthorized",
  insufficientScope: "urn:concord:problem:insufficient-scope",
  rateLimited: "urn:concord:problem:rate-limited",
  invalidRequest: "urn:concord:problem:invalid-request",
  idempotencyKeyReused: "urn:concord:problem:idempotency-key-reused",
  idempotencyKeyInProgress: "urn:concord:problem:idempotency-key-in-progress",
} as const;

/** Headers every API answer carries: nothing in it may be cached by a shared cache (it depends on the token). */
const NO_STORE = { "Cache-Control": "no-store" };

/** A problem details response. `headers` adds e.g. WWW-Authenticate, Retry-After or Allow. */
export function problem(
  status: number,
  detail: string,
  options: { type?: string; title?: string; errors?: ProblemError[]; headers?: Record<string, string> } = {},
): Response {
  const type = options.type ?? "about:blank";
  const body: Problem = {
    type,
    title: options.title ?? STATUS_TITLES[status] ?? "Error",
    status,
    detail,
    ...(options.errors?.length ? { errors: options.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": PROBLEM_CONTENT_TYPE, ...NO_STORE, ...options.headers },
  });
}

/** A JSON answer (200 unless told), never cached by shared caches. */
export function apiJson(data: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(JSON.stringify(data), {
    status: init.status ?? 200,
    headers: { "Content-Type": "application/json; charset=utf-8", ...NO_STORE, ...init.headers },
  });
}

/** zod's issues as `errors` entries: the field is the issue's path ("projects.2"). */
export function zodProblemErrors(error: ZodError): ProblemError[] {
  return error.issues.map((i) => (i.path.length ? { field: i.path.join("."), message: i.message } : { message: i.message }));
}

/** The longest `detail` taken from a plain-text refusal of shared code (a 429 of the heavy-read limit, say). */
const MAX_DETAIL = 500;

/**
 * What an API route answers for something it threw: a problem details Response as it is; another Response
 * of 400 or more (shared code's plain-text refusals) as a problem with its status, its text as the detail
 * and its Retry-After kept; a DomainError as a problem with its status (and its field in `errors`); a
 * ZodError as 400 with every issue; anything else as 500, logged, without its message (it may name
 * internals).
 */
export async function problemFromThrown(thrown: unknown): Promise<Response> {
  if (thrown instanceof Response) {
    if (thrown.status < 400 || (thrown.headers.get("Content-Type") ?? "").startsWith(PROBLEM_CONTENT_TYPE)) return thrown;
    const text = (await thrown.text().catch(() => "")).trim().slice(0, MAX_DETAIL);
    const retryAfter = thrown.headers.get("Retry-After");
    return problem(thrown.status, text || STATUS_TITLES[thrown.status] || "Error", {
      headers: retryAfter ? { "Retry-After": retryAfter } : {},
    });
  }
  if (thrown instanceof DomainError) {
    return problem(thrown.status, thrown.message, {
      errors: thrown.field ? [{ field: thrown.field, message: thrown.message }] : undefined,
    });
  }
  if (thrown instanceof ZodError) {
    return problem(400, "The request is not valid.", { type: PROBLEM_TYPES.invalidRequest, errors: zodProblemErrors(thrown) });
  }
  console.error(thrown);
  return problem(500, "Something went wrong on our side. Try again.");
}
