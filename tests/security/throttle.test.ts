/**
 * Issue 18, major 3: the sign-in throttle holds under parallel guesses, counts
 * in the database, and a stranger cannot lock a real user out. Against the real
 * server; clients connect from different loopback addresses (127.0.0.x).
 */
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, GLOBAL_FREE_FAILURES, MAX_FREE_FAILURES } from "../../app/auth/accounts.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";

const PASSWORD = "correct horse battery";
let app: RunningApp;

function counter(email: string, client: string) {
  const db = openDatabase(app.databaseFile);
  try {
    return db
      .select()
      .from(schema.loginThrottle)
      .where(and(eq(schema.loginThrottle.email, email), eq(schema.loginThrottle.client, client)))
      .get();
  } finally {
    db.$client.close();
  }
}

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    await createUser({ email: "victim@concord.test", name: "Victim", password: PASSWORD }, db);
    await createUser({ email: "crowd@concord.test", name: "Crowd", password: PASSWORD }, db);
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

/** The wrong-password guesses of one client, all at once. */
async function guess(client: AppClient, email: string, n: number) {
  const token = await client.csrfToken("/login");
  const answers = await Promise.all(
    Array.from({ length: n }, () => client.postForm("/login", { email, password: "wrong password!" }, { token })),
  );
  const count = (s: number) => answers.filter((a) => a.status === s).length;
  return { answers, count };
}

describe("sign-in throttle", () => {
  it("200 parallel wrong passwords: at most N-1 × 401, the rest 429, the counter says N; the real user still signs in", async () => {
    const attacker = new AppClient(app.url, { localAddress: "127.0.0.2" });
    const { answers, count } = await guess(attacker, "victim@concord.test", 200);
    // The attempt that reaches MAX_FREE_FAILURES is refused as "locked" already.
    expect(count(401)).toBe(MAX_FREE_FAILURES - 1);
    expect(count(429)).toBe(200 - (MAX_FREE_FAILURES - 1));
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    expect(answers.find((a) => a.status === 429)!.headers["retry-after"]).toMatch(/^\d+$/);
    // Refused attempts are not counted: exactly the attempts that reached the password check.
    expect(counter("victim@concord.test", "::ffff:127.0.0.2")?.failures).toBe(MAX_FREE_FAILURES);
    expect(counter("victim@concord.test", "*")?.failures).toBe(MAX_FREE_FAILURES);

    // Even the right password is refused from the attacker's address while it is locked.
    const locked = await attacker.postForm("/login", { email: "victim@concord.test", password: PASSWORD });
    expect(locked.status).toBe(429);

    // The real user, from another address, is not locked out.
    const victim = new AppClient(app.url, { localAddress: "127.0.0.1" });
    await victim.signIn("victim@concord.test", PASSWORD);
    expect((await victim.get("/projects")).status).toBe(200);
    // Their success takes their attempt off the global count; the attacker's lock stays.
    expect(counter("victim@concord.test", "*")?.failures).toBe(MAX_FREE_FAILURES);
    expect(counter("victim@concord.test", "::ffff:127.0.0.1")).toBeUndefined();
    expect(counter("victim@concord.test", "::ffff:127.0.0.2")?.lockedUntil).toBeGreaterThan(Date.now() / 1000);
  });

  it("guesses spread over many addresses meet the slower per-email limit", async () => {
    const clients = GLOBAL_FREE_FAILURES / MAX_FREE_FAILURES;
    let failures = 0;
    for (let i = 0; i < clients; i++) {
      const c = new AppClient(app.url, { localAddress: `127.0.1.${i + 1}` });
      const { count } = await guess(c, "crowd@concord.test", 20);
      failures += count(401);
    }
    expect(failures).toBe(clients * (MAX_FREE_FAILURES - 1));
    expect(counter("crowd@concord.test", "*")?.failures).toBe(GLOBAL_FREE_FAILURES);
    // Now a fresh address is refused too, for a while.
    const fresh = new AppClient(app.url, { localAddress: "127.0.2.1" });
    const res = await fresh.postForm("/login", { email: "crowd@concord.test", password: PASSWORD });
    expect(res.status).toBe(429);
    expect(res.text).toMatch(/Too many failed sign-ins/);
  });
});
