/**
 * The API's helper modules as functions: the per-token rate limit (a token bucket of N requests refilled at N
 * per minute: the expected counts follow from that definition with the clock passed in), cursor pages (keyset:
 * a row added or removed between two pages never makes another appear twice or go missing), and problem details
 * (RFC 9457 members; a DomainError's field in `errors`; a plain-text refusal of shared code keeps its status and
 * Retry-After; an unexpected error is a 500 that does not echo its message).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { resetApiRateLimits, takeApiRequest } from "../../app/api/rate-limit.server";
import { encodeCursor, MAX_PAGE_LIMIT, pageOfList } from "../../app/api/pagination.server";
import { problemFromThrown } from "../../app/api/problem.server";
import { DomainError } from "../../app/errors.server";

afterEach(() => resetApiRateLimits());

describe("rate limit per token", () => {
  it("allows a burst of N, then one request per 60/N seconds, with Retry-After until the next", () => {
    const N = 6; // one request refills every 10 s
    const t0 = 1_000_000;
    for (let i = 0; i < N; i++) expect(takeApiRequest(1, N, t0)).toEqual({ ok: true, remaining: N - 1 - i });
    expect(takeApiRequest(1, N, t0)).toEqual({ ok: false, retryAfterSeconds: 10 });
    // 4 s later, 0.4 of a request is back: 6 s to wait.
    expect(takeApiRequest(1, N, t0 + 4_000)).toEqual({ ok: false, retryAfterSeconds: 6 });
    // 10 s after the burst, exactly one.
    expect(takeApiRequest(1, N, t0 + 10_000)).toMatchObject({ ok: true });
    expect(takeApiRequest(1, N, t0 + 10_000)).toMatchObject({ ok: false });
    // Another token has its own bucket.
    expect(takeApiRequest(2, N, t0 + 10_000)).toEqual({ ok: true, remaining: N - 1 });
    // A token idle for a long time holds N, never more.
    const later = t0 + 3_600_000;
    for (let i = 0; i < N; i++) expect(takeApiRequest(1, N, later).ok).toBe(true);
    expect(takeApiRequest(1, N, later).ok).toBe(false);
  });

  it("refused requests do not count against the token", () => {
    const t0 = 5_000_000;
    takeApiRequest(3, 1, t0);
    for (let i = 0; i < 10; i++) expect(takeApiRequest(3, 1, t0 + i).ok).toBe(false);
    // One request a minute: 60 s after the first, one is back despite the ten refused.
    expect(takeApiRequest(3, 1, t0 + 60_000).ok).toBe(true);
  });
});

describe("cursor pages of a list", () => {
  type Row = { name: string; id: number };
  const req = (query = "") => new Request(`http://concord.test/api/v1/projects${query}`);
  const key = (r: Row) => [r.name, r.id];

  it("visits every row once, in key order, ties broken by id, whatever rows come and go between pages", () => {
    let rows: Row[] = [
      { name: "Beta", id: 4 },
      { name: "Alpha", id: 9 },
      { name: "Beta", id: 2 },
      { name: "Gamma", id: 1 },
    ];
    const first = pageOfList(req("?limit=2"), rows, key);
    expect(first.data).toEqual([
      { name: "Alpha", id: 9 },
      { name: "Beta", id: 2 },
    ]);
    expect(first.next).toBe(`http://concord.test/api/v1/projects?limit=2&cursor=${encodeCursor(["Beta", 2])}`);
    // Between the pages: a row before the cursor is added and one already sent is removed.
    rows = [...rows.filter((r) => r.id !== 9), { name: "Aardvark", id: 7 }];
    const second = pageOfList(new Request(first.next!), rows, key);
    expect(second).toEqual({
      data: [
        { name: "Beta", id: 4 },
        { name: "Gamma", id: 1 },
      ],
      next: null,
    });
  });

  it("refuses a limit outside 1–10,000 and a cursor that is not this list's, as 400 problems naming the parameter", async () => {
    for (const q of ["?limit=0", `?limit=${MAX_PAGE_LIMIT + 1}`, "?limit=x", "?cursor=%%%", `?cursor=${encodeCursor({ id: 1 })}`]) {
      let thrown: unknown;
      try {
        pageOfList(req(q), [], key);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(Response);
      const r = thrown as Response;
      expect([r.status, r.headers.get("Content-Type")]).toEqual([400, "application/problem+json"]);
      const body = (await r.json()) as { errors: { field: string }[] };
      expect(body.errors[0].field).toBe(q.includes("limit") ? "limit" : "cursor");
    }
    expect(pageOfList(req(`?limit=${MAX_PAGE_LIMIT}`), [], key)).toEqual({ data: [], next: null });
  });
});

describe("problem details from what a route threw", () => {
  it("a DomainError keeps its status and field; a plain-text 429 keeps Retry-After; anything else is a 500 that names nothing", async () => {
    const domain = await problemFromThrown(
      new DomainError("A token can be valid for at most 365 days (1 year).", { field: "expiresDays" }),
    );
    expect([domain.status, domain.headers.get("Content-Type"), domain.headers.get("Cache-Control")]).toEqual([
      400,
      "application/problem+json",
      "no-store",
    ]);
    expect(await domain.json()).toEqual({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: "A token can be valid for at most 365 days (1 year).",
      errors: [{ field: "expiresDays", message: "A token can be valid for at most 365 days (1 year)." }],
    });
    const busy = await problemFromThrown(new Response("Try again in 5 seconds.", { status: 429, headers: { "Retry-After": "5" } }));
    expect([busy.status, busy.headers.get("Retry-After")]).toEqual([429, "5"]);
    expect(await busy.json()).toMatchObject({ title: "Too Many Requests", detail: "Try again in 5 seconds." });
    // The unexpected error is logged on the server (caught here, so it is not this test's stray console.error).
    const logged: unknown[][] = [];
    vi.mocked(console.error).mockImplementationOnce((...a: unknown[]) => void logged.push(a));
    const crash = await problemFromThrown(new Error("SQLITE_CORRUPT at /var/lib/concord/secret.db"));
    expect(crash.status).toBe(500);
    expect(await crash.text()).not.toMatch(/SQLITE|secret/);
    expect(logged).toHaveLength(1);
  });
});
