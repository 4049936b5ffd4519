/**
 * Idempotency-Key (app/api/idempotency.server.ts) as the function every API POST wraps its handler in, on a real
 * SQLite file: a replay of the same request answers the stored answer without running the handler (no second
 * write), another request under the same key is 409, a key in use is 409 with Retry-After, failures free the key,
 * keys are per user and expire after 24 hours, and a malformed key is a 400.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { hashBody, idempotent, KEEP_SECONDS, pruneIdempotencyKeys } from "../../app/api/idempotency.server";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { makeUser } from "../support/factory";

const { db } = useTempDatabase();

const post = (key: string | null, path = "/api/v1/projects/law/tasks", body = '{"name":"a"}') =>
  new Request(`http://localhost${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(key === null ? {} : { "Idempotency-Key": key }) },
    body,
  });

/** A handler that writes: counts its runs and answers 201 with the run's number. */
function writer() {
  let runs = 0;
  return {
    runs: () => runs,
    handler: async () => {
      runs++;
      return new Response(JSON.stringify({ created: runs }), {
        status: 201,
        headers: { "Content-Type": "application/json", Location: `/api/v1/x/${runs}` },
      });
    },
  };
}

async function statusOf(p: Promise<Response>): Promise<{ status: number; body: string; headers: Headers }> {
  try {
    const r = await p;
    return { status: r.status, body: await r.text(), headers: r.headers };
  } catch (thrown) {
    if (!(thrown instanceof Response)) throw thrown;
    return { status: thrown.status, body: await thrown.text(), headers: thrown.headers };
  }
}

describe("Idempotency-Key", () => {
  it("a replay answers the first answer (status, body, Location) and does not run the handler again", async () => {
    const user = await makeUser();
    const w = writer();
    const body = '{"name":"a"}';
    const first = await statusOf(idempotent(post("k-1"), user.id, hashBody(body), w.handler, db()));
    const again = await statusOf(idempotent(post("k-1"), user.id, hashBody(body), w.handler, db()));
    expect(w.runs()).toBe(1);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers.get("Location")).toBe("/api/v1/x/1");
    expect(again.headers.get("Content-Type")).toBe("application/json");
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("the same key with another body or another path is 409, and the handler does not run", async () => {
    const user = await makeUser();
    const w = writer();
    await idempotent(post("k-2"), user.id, hashBody('{"name":"a"}'), w.handler, db());
    const otherBody = await statusOf(
      idempotent(post("k-2", undefined, '{"name":"b"}'), user.id, hashBody('{"name":"b"}'), w.handler, db()),
    );
    const otherPath = await statusOf(
      idempotent(post("k-2", "/api/v1/projects/med/tasks"), user.id, hashBody('{"name":"a"}'), w.handler, db()),
    );
    expect(otherBody.status).toBe(409);
    expect(JSON.parse(otherBody.body).type).toBe("urn:concord:problem:idempotency-key-reused");
    expect(otherPath.status).toBe(409);
    expect(w.runs()).toBe(1);
  });

  it("a second request while the first is still being answered is 409 with Retry-After, then the replay works", async () => {
    const user = await makeUser();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    const slow = async () => {
      runs++;
      await gate;
      return new Response("{}", { status: 201, headers: { "Content-Type": "application/json" } });
    };
    const h = hashBody("{}");
    const pending = idempotent(post("k-3", undefined, "{}"), user.id, h, slow, db());
    await new Promise((r) => setTimeout(r, 20));
    const meanwhile = await statusOf(idempotent(post("k-3", undefined, "{}"), user.id, h, slow, db()));
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.headers.get("Retry-After")).toBe("1");
    release();
    expect((await pending).status).toBe(201);
    const replay = await statusOf(idempotent(post("k-3", undefined, "{}"), user.id, h, slow, db()));
    expect(replay.status).toBe(201);
    expect(runs).toBe(1);
  });

  it("a 5xx, a 429 or a handler that throws frees the key: the retry runs; a thrown 4xx problem is kept", async () => {
    const user = await makeUser();
    const h = hashBody('{"name":"a"}');
    let runs = 0;
    const failing = async () => {
      runs++;
      return new Response("down", { status: 503 });
    };
    expect((await statusOf(idempotent(post("k-4"), user.id, h, failing, db()))).status).toBe(503);
    expect((await statusOf(idempotent(post("k-4"), user.id, h, failing, db()))).status).toBe(503);
    expect(runs).toBe(2);

    const throwing = async (): Promise<Response> => {
      runs++;
      throw new Error("boom");
    };
    await expect(idempotent(post("k-5"), user.id, h, throwing, db())).rejects.toThrow("boom");
    await expect(idempotent(post("k-5"), user.id, h, throwing, db())).rejects.toThrow("boom");
    expect(runs).toBe(4);

    const refusing = async (): Promise<Response> => {
      runs++;
      throw new Response(JSON.stringify({ status: 422, detail: "row 3" }), {
        status: 422,
        headers: { "Content-Type": "application/problem+json" },
      });
    };
    const a = await statusOf(idempotent(post("k-6"), user.id, h, refusing, db()));
    const b = await statusOf(idempotent(post("k-6"), user.id, h, refusing, db()));
    expect([a.status, b.status]).toEqual([422, 422]);
    expect(b.body).toBe(a.body);
    expect(b.headers.get("Content-Type")).toBe("application/problem+json");
    expect(runs).toBe(5);
  });

  it("keys are per user, requests without a key always run, and a malformed key is a 400", async () => {
    const ada = await makeUser();
    const bob = await makeUser();
    const w = writer();
    const h = hashBody('{"name":"a"}');
    await idempotent(post("shared"), ada.id, h, w.handler, db());
    await idempotent(post("shared"), bob.id, h, w.handler, db());
    expect(w.runs()).toBe(2);
    await idempotent(post(null), ada.id, h, w.handler, db());
    await idempotent(post(null), ada.id, h, w.handler, db());
    expect(w.runs()).toBe(4);
    for (const bad of ["", "has space", "x".repeat(256), "é"]) {
      const r = await statusOf(idempotent(post(bad), ada.id, h, w.handler, db()));
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
    expect(w.runs()).toBe(4);
  });

  it("the stored answer is encrypted at rest (a webhook's creation answer holds its secret)", async () => {
    const user = await makeUser();
    const secret = "whsec_do-not-store-in-plain";
    await idempotent(
      post("k-secret"),
      user.id,
      hashBody('{"name":"a"}'),
      async () => new Response(JSON.stringify({ secret }), { status: 201 }),
      db(),
    );
    const t = schema.apiIdempotencyKeys;
    const row = db().select().from(t).where(eq(t.key, "k-secret")).get()!;
    expect(row.responseBody).not.toContain(secret);
    expect(row.responseBody).toMatch(/^enc:v1:/);
    const replay = await statusOf(
      idempotent(post("k-secret"), user.id, hashBody('{"name":"a"}'), async () => new Response("", { status: 500 }), db()),
    );
    expect(JSON.parse(replay.body)).toEqual({ secret });
  });

  it("a key older than 24 hours is a new key, and pruning deletes only such keys", async () => {
    const user = await makeUser();
    const w = writer();
    const h = hashBody('{"name":"a"}');
    await idempotent(post("k-old"), user.id, h, w.handler, db());
    await idempotent(post("k-new"), user.id, h, w.handler, db());
    const t = schema.apiIdempotencyKeys;
    const longAgo = Math.floor(Date.now() / 1000) - KEEP_SECONDS - 5;
    db().update(t).set({ createdAt: longAgo }).where(eq(t.key, "k-old")).run();
    const r = await statusOf(idempotent(post("k-old"), user.id, h, w.handler, db()));
    expect(r.headers.get("Idempotent-Replayed")).toBeNull();
    expect(w.runs()).toBe(3);
    db().update(t).set({ createdAt: longAgo }).where(eq(t.key, "k-old")).run();
    expect(await pruneIdempotencyKeys(db())).toBe(1);
    expect(
      db()
        .select({ key: t.key })
        .from(t)
        .all()
        .map((k) => k.key)
        .sort(),
    ).toContain("k-new");
  });
});
