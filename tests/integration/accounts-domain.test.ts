/**
 * The membership and account rules, called as functions (the Members and Users
 * pages only map their DomainErrors to a response). Real temporary database;
 * each test makes its own users and project.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { useTempDatabase } from "../support/db";
import { createUser, LastAdminError } from "../../app/auth/accounts.server";
import { createAccount, setUserDisabled } from "../../app/auth/users.server";
import { DomainError, domainErrorResponse } from "../../app/errors.server";
import { changeMemberRole, removeMember } from "../../app/projects/members.server";
import { schema } from "../../db/client";

const { db } = useTempDatabase();
const PASSWORD = "correct horse battery";
let seq = 0;

async function setup() {
  const n = ++seq;
  const user = async (name: string, isSiteAdmin = false) =>
    (await createUser({ email: `${name}${n}@concord.test`, name, password: PASSWORD, isSiteAdmin }, db())).id;
  const ada = await user("ada");
  const bob = await user("bob");
  const site = await user("site", true);
  const project = db()
    .insert(schema.projects)
    .values({ slug: `p${n}`, name: `Project ${n}` })
    .returning({ id: schema.projects.id })
    .get().id;
  db().insert(schema.memberships).values({ projectId: project, userId: ada, role: "admin" }).run();
  db().insert(schema.memberships).values({ projectId: project, userId: bob, role: "annotator" }).run();
  const roleOf = (userId: number) =>
    db()
      .select({ role: schema.memberships.role })
      .from(schema.memberships)
      .where(and(eq(schema.memberships.projectId, project), eq(schema.memberships.userId, userId)))
      .get()?.role ?? null;
  return { ada, bob, site, project, roleOf };
}

async function refusal(fn: () => unknown): Promise<DomainError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

describe("project membership rules", () => {
  it("an admin cannot lower their own role or remove themselves; nothing changes", async () => {
    const s = await setup();
    const actor = { id: s.ada, isSiteAdmin: false };
    const demote = await refusal(() => changeMemberRole(s.project, actor, s.ada, "annotator"));
    expect(demote.status).toBe(400);
    expect(demote.message).toBe("You cannot lower your own role; ask another admin.");
    const remove = await refusal(() => removeMember(s.project, actor, s.ada));
    expect(remove.message).toBe("You cannot remove yourself; ask another admin.");
    expect(s.roleOf(s.ada)).toBe("admin");
  });

  it("the last admin can be neither demoted nor removed, even by a site admin (409); with a second admin, can", async () => {
    const s = await setup();
    const site = { id: s.site, isSiteAdmin: true };
    const demote = await refusal(() => changeMemberRole(s.project, site, s.ada, "researcher"));
    expect(demote).toBeInstanceOf(LastAdminError);
    expect(demote.status).toBe(409);
    expect(demote.message).toMatch(/last admin/);
    expect((await refusal(() => removeMember(s.project, site, s.ada))).status).toBe(409);
    expect(s.roleOf(s.ada)).toBe("admin");

    await changeMemberRole(s.project, { id: s.ada, isSiteAdmin: false }, s.bob, "admin");
    expect(s.roleOf(s.bob)).toBe("admin");
    await removeMember(s.project, site, s.ada);
    expect(s.roleOf(s.ada)).toBeNull();
  });

  it("an unknown user or a non-member is refused beside the userId field", async () => {
    const s = await setup();
    const actor = { id: s.ada, isSiteAdmin: false };
    const unknown = await refusal(() => changeMemberRole(s.project, actor, 999_999, "annotator"));
    expect([unknown.status, unknown.field, unknown.message]).toEqual([400, "userId", "userId: no such user."]);
    const outsider = await refusal(() => removeMember(s.project, actor, s.site));
    expect([outsider.field, outsider.message]).toEqual(["userId", "userId: not a member of this project."]);
  });
});

describe("account rules", () => {
  it("a second account for an email is refused with 409, whatever its case; one user row remains", async () => {
    const s = await setup();
    const email = `carol${s.project}@concord.test`;
    await createAccount({ email, name: "Carol", password: PASSWORD, projectId: s.project, role: "researcher" });
    const carol = db().select().from(schema.users).where(eq(schema.users.email, email)).get()!;
    expect(s.roleOf(carol.id)).toBe("researcher");
    let err: unknown;
    await createAccount({ email: email.toUpperCase(), name: "Carol again", password: PASSWORD }).catch((e: unknown) => (err = e));
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(409);
    expect((err as DomainError).message).toBe(`email: ${email} already has an account.`);
    const res = domainErrorResponse(err as DomainError);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: `email: ${email} already has an account.`, field: "email" });
    expect(db().select().from(schema.users).where(eq(schema.users.email, email)).all()).toHaveLength(1);
  });

  it("an unknown project is refused and no account is made", async () => {
    const s = await setup();
    const email = `dan${s.project}@concord.test`;
    await expect(createAccount({ email, name: "Dan", password: PASSWORD, projectId: 999_999 })).rejects.toMatchObject({
      status: 400,
      field: "projectId",
    });
    expect(db().select().from(schema.users).where(eq(schema.users.email, email)).get()).toBeUndefined();
  });

  it("disabling an account ends its sessions; an admin cannot disable themselves", async () => {
    const s = await setup();
    const t = Math.floor(Date.now() / 1000);
    db()
      .insert(schema.sessions)
      .values({ idHash: `sess-${s.bob}`, userId: s.bob, expiresAt: t + 3600 })
      .run();
    expect((await refusal(() => setUserDisabled(s.site, s.site, true))).message).toBe("You cannot disable your own account.");
    await setUserDisabled(s.site, s.bob, true);
    const bob = db().select().from(schema.users).where(eq(schema.users.id, s.bob)).get()!;
    expect(bob.disabled).toBe(true);
    expect(db().select().from(schema.sessions).where(eq(schema.sessions.userId, s.bob)).all()).toHaveLength(0);
    await setUserDisabled(s.site, s.bob, false);
    expect(db().select().from(schema.users).where(eq(schema.users.id, s.bob)).get()!.disabled).toBe(false);
  });
});
