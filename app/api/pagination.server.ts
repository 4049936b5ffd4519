/**
 * Cursor pagination of the HTTP API's lists: `?limit=N` (1 to 10,000; 100 when absent) and `?cursor=C`, where C
 * is the opaque value the previous page's `next` link carried. A page answers
 *
 *   { "data": [...], "next": "https://host/api/v1/...?cursor=…&limit=N" | null }
 *
 * with the same link in a `Link: <…>; rel="next"` header (RFC 8288 §3). `next` is null on the last page.
 *
 * A cursor is keyset, not an offset: base64url of the JSON of the last row's sort key (an id, or a name and an
 * id), and the next page is the rows after that key. Rows added or removed between two pages therefore never
 * make a row appear twice or be skipped among those that were there throughout. Each endpoint states its
 * cursor's shape as a zod schema; a cursor that does not parse is refused (400), never read as "from the start".
 */
import { z } from "zod";
import { problem, PROBLEM_TYPES } from "./problem.server";

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 10_000;

export type Page<T> = { data: T[]; next: string | null };

/** The opaque cursor of a sort key. */
export function encodeCursor(key: unknown): string {
  return Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
}

const badParam = (field: "limit" | "cursor", message: string): never => {
  throw problem(400, message, { type: PROBLEM_TYPES.invalidRequest, errors: [{ field, message }] });
};

/**
 * The page a request asks for: its limit, and the sort key after which it starts (null: the first page).
 * Throws a 400 problem for a limit outside 1–10,000 or a cursor this endpoint did not give.
 */
export function pageRequest<K>(request: Request, cursorSchema: z.ZodType<K>): { limit: number; after: K | null } {
  const params = new URL(request.url).searchParams;
  const rawLimit = params.get("limit");
  let limit = DEFAULT_PAGE_LIMIT;
  if (rawLimit !== null) {
    limit = /^\d{1,6}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT))
      badParam("limit", `limit: a whole number from 1 to ${MAX_PAGE_LIMIT}, got "${rawLimit.slice(0, 20)}".`);
  }
  const rawCursor = params.get("cursor");
  if (rawCursor === null || rawCursor === "") return { limit, after: null };
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,2000}$/.test(rawCursor)) throw new Error("not base64url");
    decoded = JSON.parse(Buffer.from(rawCursor, "base64url").toString("utf8"));
  } catch {
    decoded = undefined;
  }
  const parsed = cursorSchema.safeParse(decoded);
  if (!parsed.success)
    badParam("cursor", "cursor: not a cursor of this list; start without one, or use the next link of the previous page.");
  return { limit, after: parsed.data! };
}

/**
 * One page of `rows` (fetched with limit + 1, so that one more row says there is a next page): the first
 * `limit` rows, and the `next` link (this request's URL with the cursor of the last row's key) when more follow.
 */
export function pageOf<T, K>(request: Request, rows: T[], limit: number, keyOf: (row: T) => K): Page<T> {
  if (rows.length <= limit) return { data: rows, next: null };
  const data = rows.slice(0, limit);
  const next = new URL(request.url);
  next.searchParams.set("cursor", encodeCursor(keyOf(data[data.length - 1])));
  next.searchParams.set("limit", String(limit));
  return { data, next: next.href };
}

/** The headers of a page: its `next` link as a Link header too (RFC 8288 §3). */
export function pageHeaders(page: Page<unknown>): Record<string, string> {
  return page.next ? { Link: `<${page.next}>; rel="next"` } : {};
}

/** A sort key: strings and numbers compared in order (a name, then an id to break ties). */
export type SortKey = (string | number)[];
const SortKeySchema = z
  .array(z.union([z.string().max(1000), z.number()]))
  .min(1)
  .max(8);

function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/**
 * A page of a short list a domain function returns whole (a user's projects): sorted by `keyOf` (which must be
 * unique per row: end it with an id), the rows after the cursor's key, `limit` of them.
 */
export function pageOfList<T>(request: Request, rows: readonly T[], keyOf: (row: T) => SortKey): Page<T> {
  const { limit, after } = pageRequest(request, SortKeySchema);
  const sorted = [...rows].sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
  const rest = after ? sorted.filter((r) => compareKeys(keyOf(r), after) > 0) : sorted;
  return pageOf(request, rest.slice(0, limit + 1), limit, keyOf);
}
