/**
 * Accounts, sign-in and project access through the data-access layer, the
 * same scenario on SQLite and on PostgreSQL (issue 17): the real /login action
 * signs in and sets a session that requireProjectRole accepts; wrong passwords
 * lock the client after MAX_FREE_FAILURES (5) with a 30 s wait, also when 20
 * attempts arrive at once (each counted in one serializable transaction, so
 * none slips past the limit: exactly 5 failures are stored); a duplicate email
 * is refused with 409; the last admin can be neither demoted nor removed; a
 * disabled account's session ends. Expected values follow from the rules in
 * app/auth/accounts.server.ts, not from a previous run.
 */
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, getDal, initDal } from "../../app/dal.server";
import { createUser, LastAdminError, MAX_FREE_FAILURES, removeMembership, setMembership, signIn } from "../../app/auth/accounts.server";
import { createAccount, setUserDisabled } from "../../app/auth/users.server";
import { requireProjectRole } from "../../app/auth/guards.server";
import { createProject } from "../../app/projects/projects.server";
import { DomainError } from "../../app/errors.server";
import { action as loginAction } from "../../app/routes/login";
import { args, get, post } from "../support/http";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const PASSWORD = "correct horse battery";

let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`accounts and access on ${dialect}`, () => {
    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "auth.db");
      else {
        testPg = await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("auth_dialects");
      }
      await initDal();
    });

    it("signs in through /login and the session opens the project to its member only", async () => {
      const project = await createProject({ name: "Law", slug: "law", description: "" });
      const ada = await createAccount({
        email: "Ada@Law.test",
        name: "Ada",
        password: PASSWORD,
        projectId: project.id,
        role: "researcher",
      });
      await createUser({ email: "bob@law.test", name: "Bob", password: PASSWORD });
      const login = async (email: string) =>
        (await loginAction(args(post("/login", { email, password: PASSWORD, redirectTo: "/p/law" })))) as Response;
      const res = await login("ada@law.test");
      expect([res.status, res.headers.get("Location")]).toEqual([302, "/p/law"]);
      const cookie = res.headers.get("Set-Cookie")!.split(";")[0];
      const access = await requireProjectRole(get("/p/law", cookie), "law", "researcher");
      expect(access).toMatchObject({ user: { id: ada.id, email: "ada@law.test" }, project: { slug: "law" }, role: "researcher" });
      // Not a member: 404, as for a project that does not exist.
      const bobCookie = (await login("bob@law.test")).headers.get("Set-Cookie")!.split(";")[0];
      const refused = await requireProjectRole(get("/p/law", bobCookie), "law", "annotator").catch((r: unknown) => r as Response);
      expect((refused as Response).status).toBe(404);
      // Disabling Ada ends her session: the next request goes to the sign-in page.
      const admin = await createUser({ email: "root@law.test", name: "Root", password: PASSWORD, isSiteAdmin: true });
      await setUserDisabled(admin.id, ada.id, true);
      const after = await requireProjectRole(get("/p/law", cookie), "law", "researcher").catch((r: unknown) => r as Response);
      expect((after as Response).status).toBe(302);
      expect((after as Response).headers.get("Location")).toMatch(/^\/login/);
    });

    it("20 wrong passwords at once from one client: exactly 5 counted, then the client waits 30 s", async () => {
      await createUser({ email: "carol@law.test", name: "Carol", password: PASSWORD });
      const t0 = Math.floor(Date.now() / 1000);
      const results = await Promise.all(Array.from({ length: 20 }, () => signIn("carol@law.test", "wrong password!", "10.0.0.9")));
      // Attempts 1–4 are invalid; the 5th reaches the limit and is answered "locked"; the other 15 find the lock.
      expect(results.filter((r) => !r.ok && r.reason === "invalid")).toHaveLength(MAX_FREE_FAILURES - 1);
      expect(results.filter((r) => !r.ok && r.reason === "locked")).toHaveLength(20 - (MAX_FREE_FAILURES - 1));
      const d = getDal();
      const lt = d.t.loginThrottle;
      const rows = await d.q.select().from(lt).where(eq(lt.email, "carol@law.test"));
      const byClient = Object.fromEntries(rows.map((r) => [r.client, r]));
      expect(byClient["10.0.0.9"].failures).toBe(MAX_FREE_FAILURES);
      expect(byClient["*"].failures).toBe(MAX_FREE_FAILURES); // the global row counts the same attempts
      // 30 s · 2^(5 − 5) from the 5th failure.
      expect(byClient["10.0.0.9"].lockedUntil! - t0).toBeGreaterThanOrEqual(30);
      expect(byClient["10.0.0.9"].lockedUntil! - t0).toBeLessThanOrEqual(31 + 5);
      // Even the right password waits; another client does not.
      expect(await signIn("carol@law.test", PASSWORD, "10.0.0.9")).toMatchObject({ ok: false, reason: "locked" });
      expect(await signIn("carol@law.test", PASSWORD, "10.0.0.10")).toMatchObject({ ok: true });
      // That success took one attempt off the global counter: 5 counted + 1 for it − 1 = 5.
      const global = await d.q
        .select({ f: lt.failures })
        .from(lt)
        .where(and(eq(lt.email, "carol@law.test"), eq(lt.client, "*")));
      expect(global[0].f).toBe(MAX_FREE_FAILURES);
    });

    it("a duplicate email is refused with 409; the last admin stays", async () => {
      const err = await createAccount({ email: "ADA@law.test", name: "Ada again", password: PASSWORD }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).status).toBe(409);
      const project = await createProject({ name: "Chem", slug: "chem", description: "" });
      const dan = await createUser({ email: "dan@chem.test", name: "Dan", password: PASSWORD });
      await setMembership(project.id, dan.id, "admin");
      await expect(setMembership(project.id, dan.id, "annotator")).rejects.toBeInstanceOf(LastAdminError);
      await expect(removeMembership(project.id, dan.id)).rejects.toBeInstanceOf(LastAdminError);
      const d = getDal();
      const m = d.t.memberships;
      expect(await d.q.select({ role: m.role }).from(m).where(eq(m.projectId, project.id))).toEqual([{ role: "admin" }]);
    });
  });
}
