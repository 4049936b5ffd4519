/**
 * The site admin's rules for accounts: an email has at most one account (a
 * second is refused with 409), a new account can join one project at once, an
 * admin cannot disable their own account, and disabling an account ends all its
 * sessions. Refusals are DomainErrors.
 */
import { eq } from "drizzle-orm";
import { getDb, schema, type Db } from "~/db.server";
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
export async function createAccount(input: NewAccount, db: Db = getDb()) {
  const email = normaliseEmail(input.email);
  if (db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.email, email)).get()) {
    throw new DomainError(`email: ${email} already has an account.`, { status: 409, field: "email" });
  }
  if (
    input.projectId &&
    !db.select({ id: schema.projects.id }).from(schema.projects).where(eq(schema.projects.id, input.projectId)).get()
  ) {
    throw new DomainError("projectId: no such project.", { field: "projectId" });
  }
  const user = await createUser({ email, name: input.name, password: input.password, isSiteAdmin: input.isSiteAdmin ?? false }, db);
  if (input.projectId) setMembership(input.projectId, user.id, input.role ?? "annotator", db);
  return user;
}

/** Disables or enables an account; disabling signs it out everywhere. */
export function setUserDisabled(actorId: number, userId: number, disabled: boolean, db: Db = getDb()) {
  if (userId === actorId) throw new DomainError("You cannot disable your own account.");
  db.update(schema.users).set({ disabled }).where(eq(schema.users.id, userId)).run();
  if (disabled) db.delete(schema.sessions).where(eq(schema.sessions.userId, userId)).run();
}
