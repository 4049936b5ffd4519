import { z } from "zod";

/** Query strings longer than this are refused before any parsing. */
export const MAX_QUERY_LENGTH = 4096;

/**
 * A page's query parameters checked against a zod schema. Anything invalid
 * (`judge=abc`, a 10,000-character `q`) is answered 400 with the first problem
 * as "parameter: reason" — never a 500, and never the value echoed back.
 */
export function parseQuery<S extends z.ZodType>(schema: S, url: URL): z.infer<S> {
  if (url.search.length > MAX_QUERY_LENGTH) {
    throw new Response(`The address is too long (over ${MAX_QUERY_LENGTH} characters of parameters).`, {
      status: 400,
      statusText: "Bad Request",
    });
  }
  const parsed = schema.safeParse(Object.fromEntries(url.searchParams));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Response(`${issue.path.join(".") || "query"}: ${issue.message}`, { status: 400, statusText: "Bad Request" });
}

/** The first issue of `err` when it is a zod validation error (thrown by `schema.parse`), else null. */
export function firstZodIssue(err: unknown): z.core.$ZodIssue | null {
  return err instanceof z.ZodError ? (err.issues[0] ?? null) : null;
}
