/**
 * Personal access tokens through their domain module (app/auth/tokens.server.ts), the same scenario on SQLite
 * and on PostgreSQL: a token is `ccd_` + 43 base64url characters, shown once, stored only as its SHA-256; bad
 * input (an expiry over 365 days, a project the owner does not belong to) is refused beside its field and
 * writes nothing; a wrong, expired or revoked token and a disabled owner's token are refused with their reason;
 * the last use is written at most once a minute unless the address changes; a token acts with its user's
 * current role and only in the projects it covers (a removed member, a demoted one, a deleted project take
 * effect at once); only the owner or a site admin sees and revokes a token. Expected values follow from the
 * rules stated in the module's header, not from a previous run.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, getDal, initDal } from "../../app/dal.server";
import { createUser, removeMembership, setMembership } from "../../app/auth/accounts.server";
import { setUserDisabled } from "../../app/auth/users.server";
import {
  authenticateApiToken,
  createApiToken,
  LAST_USED_EVERY_SECONDS,
  listApiTokensFor,
  projectsOfToken,
  revokeApiToken,
  tokenProjectRole,
  type ApiAuth,
} from "../../app/auth/tokens.server";
import { createProject } from "../../app/projects/projects.server";
import { DomainError } from "../../app/errors.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const PASSWORD = "correct horse battery";
const DAY = 24 * 3600;

let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

async function refusal(fn: () => unknown): Promise<DomainError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

const tokenCount = async () => {
  const d = getDal();
  return Number((await d.rows<{ n: number | string }>(sql`select count(*) as n from ${d.t.apiTokens}`))[0].n);
};
const tokenRow = async (id: number) => {
  const d = getDal();
  return (await d.q.select().from(d.t.apiTokens).where(eq(d.t.apiTokens.id, id)))[0];
};
const setRow = async (id: number, values: Partial<{ expiresAt: number; lastUsedAt: number | null }>) => {
  const d = getDal();
  await d.tx((q) => q.update(d.t.apiTokens).set(values).where(eq(d.t.apiTokens.id, id)));
};
const authOf = async (token: string, from = "10.0.0.1"): Promise<ApiAuth> => {
  const r = await authenticateApiToken(token, from);
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.auth;
};

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`API tokens on ${dialect}`, () => {
    let ada: number;
    let bob: number;
    let root: number;
    let law: number;
    let med: number;
    let art: number;

    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "tokens.db");
      else {
        testPg = await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("tokens_dialects");
      }
      await initDal();
      law = (await createProject({ name: "Law", slug: "law", description: "" })).id;
      med = (await createProject({ name: "Medicine", slug: "med", description: "" })).id;
      art = (await createProject({ name: "Art", slug: "art", description: "" })).id;
      ada = (await createUser({ email: "ada@lab.test", name: "Ada", password: PASSWORD })).id;
      bob = (await createUser({ email: "bob@lab.test", name: "Bob", password: PASSWORD })).id;
      root = (await createUser({ email: "root@lab.test", name: "Root", password: PASSWORD, isSiteAdmin: true })).id;
      await setMembership(law, ada, "researcher");
      await setMembership(med, ada, "annotator");
      await setMembership(art, bob, "admin");
    });

    it("a token is ccd_ and 43 base64url characters, shown once; the database holds only its SHA-256", async () => {
      const made = await createApiToken(ada, { name: "harness", scope: "read", projects: "all" });
      expect(made.token).toMatch(/^ccd_[A-Za-z0-9_-]{43}$/);
      // 32 random bytes: base64url without padding is ceil(32 * 8 / 6) = 43 characters.
      expect(Buffer.from(made.token.slice(4), "base64url")).toHaveLength(32);
      expect(made.prefix).toBe(made.token.slice(4, 12));
      const row = await tokenRow(made.id);
      expect(row.tokenHash).toBe(createHash("sha256").update(made.token).digest("hex"));
      // No column holds the token or its secret part.
      for (const value of Object.values(row)) expect(String(value)).not.toContain(made.token.slice(4));
      // Default expiry: 90 days from now (to the second the row was written).
      expect(Math.abs(row.expiresAt - (Math.floor(Date.now() / 1000) + 90 * DAY))).toBeLessThanOrEqual(2);
      const again = await createApiToken(ada, { name: "harness", scope: "read", projects: "all" });
      expect(again.token).not.toBe(made.token);
    });

    it("refuses an expiry over 365 days, a bad name or scope, and projects the owner does not belong to, writing nothing", async () => {
      const before = await tokenCount();
      const long = await refusal(() => createApiToken(ada, { name: "x", scope: "read", projects: "all", expiresDays: 366 }));
      expect([long.message, long.field, long.status]).toEqual(["A token can be valid for at most 365 days (1 year).", "expiresDays", 400]);
      const zero = await refusal(() => createApiToken(ada, { name: "x", scope: "read", projects: "all", expiresDays: 0 }));
      expect(zero.message).toBe("A token must be valid for at least 1 day.");
      const half = await refusal(() => createApiToken(ada, { name: "x", scope: "read", projects: "all", expiresDays: 1.5 }));
      expect(half.message).toBe("The expiry is a whole number of days.");
      expect((await refusal(() => createApiToken(ada, { name: "  ", scope: "read", projects: "all" }))).field).toBe("name");
      const scope = await refusal(() => createApiToken(ada, { name: "x", scope: "admin" as "read", projects: "all" }));
      expect([scope.message, scope.field]).toEqual(['The scope is "read" or "write".', "scope"]);
      const none = await refusal(() => createApiToken(ada, { name: "x", scope: "read", projects: [] }));
      expect(none.message).toBe("Choose at least one project, or all of your projects.");
      const other = await refusal(() => createApiToken(ada, { name: "x", scope: "read", projects: [law, art] }));
      expect([other.message, other.field]).toEqual(["ada@lab.test is not a member of art.", "projects"]);
      const missing = await refusal(() => createApiToken(ada, { name: "x", scope: "read", projects: [law, 999_999] }));
      expect(missing.message).toBe("No such project (id 999999).");
      expect(await tokenCount()).toBe(before);
      // 365 days is allowed.
      const year = await createApiToken(ada, { name: "year", scope: "read", projects: "all", expiresDays: 365 });
      expect(Math.abs((await tokenRow(year.id)).expiresAt - (Math.floor(Date.now() / 1000) + 365 * DAY))).toBeLessThanOrEqual(2);
    });

    it("refuses a wrong, malformed, expired or revoked token and a disabled owner's, each with its reason", async () => {
      const made = await createApiToken(bob, { name: "ci", scope: "write", projects: "all" });
      const ok = await authenticateApiToken(made.token, "10.0.0.1");
      expect(ok).toMatchObject({ ok: true, auth: { user: { id: bob, email: "bob@lab.test" }, token: { id: made.id, scope: "write" } } });
      // The same shape, one character changed: no such hash.
      const last = made.token.at(-1) === "A" ? "B" : "A";
      expect(await authenticateApiToken(made.token.slice(0, -1) + last, "10.0.0.1")).toEqual({ ok: false, reason: "unknown" });
      for (const bad of ["", "ccd_", made.token + "x", made.token.slice(4), `Bearer ${made.token}`, made.token.replace("ccd_", "CCD_")]) {
        expect(await authenticateApiToken(bad, "10.0.0.1")).toEqual({ ok: false, reason: "unknown" });
      }
      await setRow(made.id, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
      expect(await authenticateApiToken(made.token, "10.0.0.1")).toEqual({ ok: false, reason: "expired" });
      await setRow(made.id, { expiresAt: Math.floor(Date.now() / 1000) + DAY });
      await setUserDisabled(root, bob, true);
      expect(await authenticateApiToken(made.token, "10.0.0.1")).toEqual({ ok: false, reason: "disabled" });
      const disabledCreate = await refusal(() => createApiToken(bob, { name: "more", scope: "read", projects: "all" }));
      expect(disabledCreate.message).toBe("bob@lab.test is disabled: a disabled account cannot have new tokens.");
      await setUserDisabled(root, bob, false);
      expect((await authenticateApiToken(made.token, "10.0.0.1")).ok).toBe(true);
      await revokeApiToken({ id: bob, isSiteAdmin: false }, made.id);
      expect(await authenticateApiToken(made.token, "10.0.0.1")).toEqual({ ok: false, reason: "revoked" });
    });

    it("records the last use at most once a minute, and at once from another address", async () => {
      const made = await createApiToken(ada, { name: "usage", scope: "read", projects: "all" });
      expect((await tokenRow(made.id)).lastUsedAt).toBeNull();
      await authOf(made.token, "10.0.0.7");
      const first = await tokenRow(made.id);
      expect(first.lastUsedFrom).toBe("10.0.0.7");
      expect(Math.abs(first.lastUsedAt! - Date.now() / 1000)).toBeLessThanOrEqual(2);
      // Used 30 s ago from the same address: not written again.
      const halfMinuteAgo = Math.floor(Date.now() / 1000) - 30;
      await setRow(made.id, { lastUsedAt: halfMinuteAgo });
      await authOf(made.token, "10.0.0.7");
      expect((await tokenRow(made.id)).lastUsedAt).toBe(halfMinuteAgo);
      // From another address: written now.
      await authOf(made.token, "10.0.0.8");
      expect((await tokenRow(made.id)).lastUsedFrom).toBe("10.0.0.8");
      expect((await tokenRow(made.id)).lastUsedAt).toBeGreaterThan(halfMinuteAgo);
      // A minute after the last write: written again.
      const aMinuteAgo = Math.floor(Date.now() / 1000) - LAST_USED_EVERY_SECONDS;
      await setRow(made.id, { lastUsedAt: aMinuteAgo });
      await authOf(made.token, "10.0.0.8");
      expect((await tokenRow(made.id)).lastUsedAt).toBeGreaterThan(aMinuteAgo);
    });

    it("acts with the user's current role, only in the projects it covers", async () => {
      const listed = await createApiToken(ada, { name: "law only", scope: "read", projects: [law] });
      const all = await createApiToken(ada, { name: "everything", scope: "read", projects: "all" });
      const listedAuth = await authOf(listed.token);
      const allAuth = await authOf(all.token);
      expect(await tokenProjectRole(listedAuth, "law")).toMatchObject({ project: { slug: "law" }, role: "researcher" });
      // Ada is a member of med, but the token does not cover it: as if it did not exist.
      expect(await tokenProjectRole(listedAuth, "med")).toBeNull();
      expect(await tokenProjectRole(allAuth, "med")).toMatchObject({ role: "annotator" });
      // Not a member, or no such project: null alike.
      expect(await tokenProjectRole(allAuth, "art")).toBeNull();
      expect(await tokenProjectRole(allAuth, "nope")).toBeNull();
      expect((await projectsOfToken(listedAuth)).map((p) => p.slug)).toEqual(["law"]);
      expect((await projectsOfToken(allAuth)).map((p) => p.slug)).toEqual(["law", "med"]);
      // Demoted, then removed: the next lookup sees it.
      await setMembership(law, ada, "annotator");
      expect(await tokenProjectRole(listedAuth, "law")).toMatchObject({ role: "annotator" });
      await removeMembership(law, ada);
      expect(await tokenProjectRole(listedAuth, "law")).toBeNull();
      expect((await projectsOfToken(allAuth)).map((p) => p.slug)).toEqual(["med"]);
      await setMembership(law, ada, "researcher");
      // A site admin's token acts as admin wherever it reaches, as the pages do.
      const rootAuth = await authOf((await createApiToken(root, { name: "ops", scope: "write", projects: [art] })).token);
      expect(await tokenProjectRole(rootAuth, "art")).toMatchObject({ role: "admin" });
      expect(await tokenProjectRole(rootAuth, "law")).toBeNull();
    });

    it("a listed token whose projects are all deleted covers nothing, never everything", async () => {
      const gone = (await createProject({ name: "Gone", slug: "gone", description: "" })).id;
      await setMembership(gone, ada, "researcher");
      const made = await createApiToken(ada, { name: "gone only", scope: "read", projects: [gone] });
      const d = getDal();
      await d.tx((q) => q.delete(d.t.projects).where(eq(d.t.projects.id, gone)));
      const auth = await authOf(made.token);
      expect(auth.token.projectIds).toEqual([]);
      expect(await projectsOfToken(auth)).toEqual([]);
      expect(await tokenProjectRole(auth, "law")).toBeNull();
    });

    it("only the owner or a site admin sees and revokes a token", async () => {
      const made = await createApiToken(bob, { name: "bob's", scope: "read", projects: [art] });
      const adaView = await listApiTokensFor({ id: ada, isSiteAdmin: false });
      expect(adaView.every((t) => t.owner.id === ada)).toBe(true);
      expect(adaView.some((t) => t.id === made.id)).toBe(false);
      const rootView = await listApiTokensFor({ id: root, isSiteAdmin: true });
      const row = rootView.find((t) => t.id === made.id)!;
      expect(row).toMatchObject({
        name: "bob's",
        scope: "read",
        prefix: `ccd_${made.prefix}`,
        owner: { email: "bob@lab.test" },
        projects: [{ slug: "art", name: "Art" }],
        status: "active",
        lastUsedAt: null,
      });
      const notYours = await refusal(() => revokeApiToken({ id: ada, isSiteAdmin: false }, made.id));
      expect([notYours.message, notYours.status]).toEqual(["No such token.", 404]);
      expect((await authenticateApiToken(made.token, "10.0.0.1")).ok).toBe(true);
      expect(await revokeApiToken({ id: root, isSiteAdmin: true }, made.id)).toEqual({ alreadyRevoked: false });
      expect(await revokeApiToken("operator", made.id)).toEqual({ alreadyRevoked: true });
      expect((await listApiTokensFor("operator")).find((t) => t.id === made.id)?.status).toBe("revoked");
      expect((await refusal(() => revokeApiToken("operator", 999_999))).status).toBe(404);
    });
  });
}
