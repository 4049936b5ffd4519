/**
 * The data-access layer (app/dal.server.ts) on both dialects: the same code
 * reads and writes SQLite and PostgreSQL; a transaction stores everything or
 * nothing; a transaction inside a transaction joins it; reads outside a
 * transaction see committed data only; many concurrent read-then-write
 * transactions give the answer one writer at a time gives (SQLite's queue,
 * PostgreSQL's serializable retries); on SQLite a write outside a transaction
 * is refused, a transaction that awaits I/O is an error in tests, and another
 * process holding the write lock is waited for without stopping the event loop.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../db/client";
import { openPgDatabase, type PgDb } from "../../db/client-pg";
import { dalOf, first, pgDal, TransactionAwaitedError, type Dal } from "../../app/dal.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const turn = () => new Promise((r) => setImmediate(r));

let testPg: TestPg | undefined;
const pools: PgDb[] = [];
beforeAll(async () => {
  if (!NO_PG) testPg = await startTestPg();
});
afterAll(async () => {
  for (const p of pools) await p.$client.end();
  testPg?.stop();
});

let n = 0;
async function freshDal(dialect: "sqlite" | "postgres"): Promise<Dal> {
  if (dialect === "sqlite") return dalOf(openDatabase(path.join(tempDir(), "dal.db")));
  const pg = await openPgDatabase(await testPg!.createDatabase(`dal_${++n}`), { max: 8 });
  pools.push(pg);
  return pgDal(pg);
}

async function throttleFailures(d: Dal, email: string): Promise<number | undefined> {
  const t = d.t.loginThrottle;
  return first(await d.q.select({ f: t.failures }).from(t).where(eq(t.email, email)))?.f;
}

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`data-access layer on ${dialect}`, () => {
    it("writes and reads typed values (booleans, JSON) through the dialect's tables", async () => {
      const d = await freshDal(dialect);
      const { users, datasets, items, projects } = d.t;
      const [u] = await d.tx((q) =>
        q.insert(users).values({ email: "a@x.org", name: "A", passwordHash: "h", isSiteAdmin: true }).returning(),
      );
      expect(u).toMatchObject({ email: "a@x.org", isSiteAdmin: true, disabled: false });
      const [p] = await d.tx((q) => q.insert(projects).values({ slug: "p", name: "P" }).returning({ id: projects.id }));
      await d.tx(async (q) => {
        const [ds] = await q.insert(datasets).values({ projectId: p.id, name: "D" }).returning({ id: datasets.id });
        await q.insert(items).values({ datasetId: ds.id, sourceId: "i1", query: "Q", metadata: { a: [1, "b"], n: null } });
      });
      const item = first(await d.q.select().from(items).where(eq(items.sourceId, "i1")));
      expect(item?.metadata).toEqual({ a: [1, "b"], n: null });
      // In raw SQL a value is bound through its column (eq), which maps it for the dialect: true is 1 on SQLite.
      const rows = await d.rows<{ n: number }>(sql`SELECT COUNT(*) AS n FROM users WHERE ${eq(users.isSiteAdmin, true)}`);
      expect(Number(rows[0].n)).toBe(1);
    });

    it("reads rows as arrays, the same values on both dialects, inside and outside a transaction", async () => {
      const d = await freshDal(dialect);
      const { users } = d.t;
      await d.tx((q) =>
        q.insert(users).values([
          { email: "b@x.org", name: "B", passwordHash: "h" },
          { email: "c@x.org", name: "C", passwordHash: "h", disabled: true },
        ]),
      );
      const query = (email: string) => sql`SELECT name, length(email), ${users.disabled} FROM users WHERE email >= ${email} ORDER BY name`;
      // Booleans come back as 0/1 from SQLite and true/false from PostgreSQL: compared truthy here.
      const norm = (r: unknown[][]) => r.map(([n, len, dis]) => [n, Number(len), Boolean(dis)]);
      expect(norm(await d.arrays(query("b")))).toEqual([
        ["B", 7, false],
        ["C", 7, true],
      ]);
      // The same text with another value: the prepared statement is reused with the new parameter.
      expect(norm(await d.arrays(query("c")))).toEqual([["C", 7, true]]);
      // Inside a transaction it sees the transaction's own write.
      const seen = await d.tx(async (q) => {
        await q.insert(users).values({ email: "d@x.org", name: "D", passwordHash: "h" });
        return norm(await d.arrays(query("c"), q));
      });
      expect(seen).toEqual([
        ["C", 7, true],
        ["D", 7, false],
      ]);
    });

    it("a transaction that throws stores nothing; one inside another joins it and sees its writes", async () => {
      const d = await freshDal(dialect);
      const t = d.t.loginThrottle;
      await expect(
        d.tx(async (q) => {
          await q.insert(t).values({ email: "x", failures: 1 });
          expect(await throttleFailures(d, "x")).toBe(1); // d.q inside the transaction is the transaction
          throw new Error("refused");
        }),
      ).rejects.toThrow("refused");
      expect(await throttleFailures(d, "x")).toBeUndefined();

      await expect(
        d.tx(async (q) => {
          await q.insert(t).values({ email: "y", failures: 1 });
          await d.tx((inner) => inner.update(t).set({ failures: 2 }).where(eq(t.email, "y")));
          expect(await throttleFailures(d, "y")).toBe(2);
          throw new Error("outer refused");
        }),
      ).rejects.toThrow("outer refused");
      expect(await throttleFailures(d, "y")).toBeUndefined(); // the inner write went with the outer transaction

      await d.tx(async (q) => {
        await q.insert(t).values({ email: "z", failures: 1 });
        await d.tx((inner) => inner.update(t).set({ failures: 3 }).where(eq(t.email, "z")));
      });
      expect(await throttleFailures(d, "z")).toBe(3);
    });

    it("50 concurrent read-then-write transactions lose no increment", async () => {
      const d = await freshDal(dialect);
      const t = d.t.loginThrottle;
      await d.tx((q) => q.insert(t).values({ email: "c", failures: 0 }));
      await Promise.all(
        Array.from({ length: 50 }, () =>
          d.tx(async (q) => {
            const cur = first(await q.select({ f: t.failures }).from(t).where(eq(t.email, "c")))!.f;
            await q
              .update(t)
              .set({ failures: cur + 1 })
              .where(eq(t.email, "c"));
          }),
        ),
      );
      // One writer at a time (or serializable isolation) gives 50; read committed without retries would give fewer.
      expect(await throttleFailures(d, "c")).toBe(50);
    });

    it("a read outside an open transaction does not see its uncommitted writes", async () => {
      const d = await freshDal(dialect);
      const t = d.t.loginThrottle;
      let seenOutside: number | undefined | null = null;
      let inserted!: () => void;
      const insertedP = new Promise<void>((r) => (inserted = r));
      const tx = d.tx(async (q) => {
        await q.insert(t).values({ email: "u", failures: 7 });
        inserted();
        // Wait (a few event-loop turns) while the code outside reads.
        while (seenOutside === null) await turn();
      });
      await insertedP;
      seenOutside = await throttleFailures(d, "u");
      expect(seenOutside).toBeUndefined();
      if (dialect === "sqlite") {
        // On SQLite the transaction held the write lock across event-loop turns: in tests that fails, and nothing is stored.
        await expect(tx).rejects.toBeInstanceOf(TransactionAwaitedError);
        expect(await throttleFailures(d, "u")).toBeUndefined();
      } else {
        await tx;
        expect(await throttleFailures(d, "u")).toBe(7);
      }
    });
  });
}

describe("data-access layer on SQLite only", () => {
  it("closing the database closes the layer's read-only connection too: the WAL is folded into the file and removed", async () => {
    const file = path.join(tempDir(), "close.db");
    const db = openDatabase(file);
    const d = dalOf(db);
    await d.tx(async (q) => {
      await q.insert(d.t.projects).values({ slug: "closing", name: "Closing" });
    });
    // A read outside a transaction goes through the read-only connection, which opens it.
    expect(first(await d.rows<{ n: number }>(sql`SELECT COUNT(*) AS n FROM projects`))?.n).toBe(1);
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    db.$client.close();
    // SQLite removes the WAL when its last connection to the file closes; the reader left open would keep it.
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    // The layer of a database opened again on the same file reads what was written.
    const again = openDatabase(file);
    expect(first(await dalOf(again).rows<{ slug: string }>(sql`SELECT slug FROM projects`))?.slug).toBe("closing");
    again.$client.close();
  });

  it("refuses a write outside a transaction", async () => {
    const d = dalOf(openDatabase(path.join(tempDir(), "ro.db")));
    await expect(d.q.insert(d.t.loginThrottle).values({ email: "w", failures: 1 })).rejects.toThrow(/readonly/i);
    expect(await throttleFailures(d, "w")).toBeUndefined();
  });

  it("waits for another process's write lock on a timer, the event loop free, then commits", async () => {
    const file = path.join(tempDir(), "lock.db");
    const d = dalOf(openDatabase(file));
    // Another process takes the write lock and holds it for 600 ms.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const D=require("better-sqlite3");const c=new D(process.argv[1]);c.exec("BEGIN IMMEDIATE");process.stdout.write("locked\\n");` +
          `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,600);c.exec("COMMIT");c.close();`,
        file,
      ],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((ok) => holder.stdout!.once("data", () => ok()));
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const t0 = performance.now();
    await d.tx((q) => q.insert(d.t.loginThrottle).values({ email: "l", failures: 1 }));
    const waited = performance.now() - t0;
    clearInterval(ticker);
    await new Promise((ok) => holder.once("exit", ok));
    expect(waited).toBeGreaterThan(300); // it did wait for the other process
    expect(ticks).toBeGreaterThan(10); // and timers ran meanwhile: the wait was not in SQLite's busy handler
    expect(await throttleFailures(d, "l")).toBe(1);
  });
});
