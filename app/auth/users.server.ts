/**
 * The site admin's rules for accounts: an email has at most one account (a
 * second is refused with 409), a new account can join one project at once, an
 * admin cannot disable their own account, and disabling an account ends all its
 * sessions. Refusals are DomainErrors.
 */
import { eq } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { DomainError } from "~/errors.server";
import type { Role } from "../../db/schema";
import { createUser, normaliseEmail, setMembership } from "./accounts.server";

export interface NewAccount {
  email: string;
  name: string;
  password: string;
  isSiteAdmin?: boolean;
  /** A project the account joins with `role`. */
  projectId?: number;
  role?: Role;
}

/** Creates an account (and its membership); returns its id. */
export async function createAccount(input: NewAccount, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { users, projects } = d.t;
  const email = normaliseEmail(input.email);
  if (first(await d.q.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1))) {
    throw new DomainError(`email: ${email} already has an account.`, { status: 409, field: "email" });
  }
  if (input.projectId && !first(await d.q.select({ id: projects.id }).from(projects).where(eq(projects.id, input.projectId)).limit(1))) {
    throw new DomainError("projectId: no such project.", { field: "projectId" });
  }
  const user = await createUser({ email, name: input.name, password: input.password, isSiteAdmin: input.isSiteAdmin ?? false }, d);
  if (input.projectId) await setMembership(input.projectId, user.id, input.role ?? "annotator", d);
  return user;
}

/** Disables or enables an account; disabling signs it out everywhere. */
export async function setUserDisabled(actorId: number, userId: number, disabled: boolean, db: DalLike = getDal()): Promise<void> {
  if (userId === actorId) throw new DomainError("You cannot disable your own account.");
  const d = dalOf(db);
  await d.tx(async (q) => {
    await q.update(d.t.users).set({ disabled }).where(eq(d.t.users.id, userId));
    if (disabled) await q.delete(d.t.sessions).where(eq(d.t.sessions.userId, userId));
  });
}
