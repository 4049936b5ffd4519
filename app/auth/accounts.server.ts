/** Users, sign-in with throttling, and project memberships. */
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import { getDb, schema, type Db } from "~/db.server";
import type { Role } from "../../db/schema";
import { burnPasswordCheck, hashPassword, verifyPassword } from "./password.server";

export const MAX_FREE_FAILURES = 5;
export const MAX_LOCK_SECONDS = 15 * 60;

export const EmailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: "Enter a valid email address." }));
export const PasswordSchema = z.string().min(10, "Passwords need at least 10 characters.").max(200);

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
const now = () => Math.floor(Date.now() / 1000);

export async function createUser(
  input: { email: string; name: string; password: string; isSiteAdmin?: boolean },
  db: Db = getDb(),
) {
  const passwordHash = await hashPassword(input.password);
  return db
    .insert(schema.users)
    .values({
      email: normaliseEmail(input.email),
      name: input.name.trim(),
      passwordHash,
      isSiteAdmin: input.isSiteAdmin ?? false,
    })
    .returning({ id: schema.users.id })
    .get();
}

export async function setPassword(userId: number, password: string, db: Db = getDb()) {
  const passwordHash = await hashPassword(password);
  db.update(schema.users).set({ passwordHash }).where(eq(schema.users.id, userId)).run();
  // A new password signs the user out everywhere.
  db.delete(schema.sessions).where(eq(schema.sessions.userId, userId)).run();
}

export type SignInResult =
  | { ok: true; userId: number }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "locked"; retryAfterSeconds: number };

/**
 * Checks an email and password. Wrong password, unknown email and disabled
 * account all answer "invalid" after the same amount of work. After
 * MAX_FREE_FAILURES consecutive failures for one email, sign-in is refused for
 * a time that doubles with each further failure (30 s up to 15 min).
 */
export async function signIn(emailRaw: string, password: string, db: Db = getDb()): Promise<SignInResult> {
  const email = normaliseEmail(emailRaw);
  const throttle = db.select().from(schema.loginThrottle).where(eq(schema.loginThrottle.email, email)).get();
  if (throttle?.lockedUntil && throttle.lockedUntil > now()) {
    return { ok: false, reason: "locked", retryAfterSeconds: throttle.lockedUntil - now() };
  }
  const user = db
    .select({ id: schema.users.id, passwordHash: schema.users.passwordHash, disabled: schema.users.disabled })
    .from(schema.users)
    .where(eq(schema.users.email, email))
    .get();
  let ok = false;
  if (user) ok = (await verifyPassword(password, user.passwordHash)) && !user.disabled;
  else await burnPasswordCheck(password);

  if (ok && user) {
    db.delete(schema.loginThrottle).where(eq(schema.loginThrottle.email, email)).run();
    return { ok: true, userId: user.id };
  }
  const failures = (throttle?.failures ?? 0) + 1;
  const lockedUntil =
    failures >= MAX_FREE_FAILURES
      ? now() + Math.min(MAX_LOCK_SECONDS, 30 * 2 ** (failures - MAX_FREE_FAILURES))
      : null;
  db.insert(schema.loginThrottle)
    .values({ email, failures, lockedUntil, updatedAt: now() })
    .onConflictDoUpdate({
      target: schema.loginThrottle.email,
      set: { failures, lockedUntil, updatedAt: now() },
    })
    .run();
  if (lockedUntil) return { ok: false, reason: "locked", retryAfterSeconds: lockedUntil - now() };
  return { ok: false, reason: "invalid" };
}

export function setMembership(projectId: number, userId: number, role: Role, db: Db = getDb()) {
  db.insert(schema.memberships)
    .values({ projectId, userId, role })
    .onConflictDoUpdate({
      target: [schema.memberships.projectId, schema.memberships.userId],
      set: { role },
    })
    .run();
}

export function removeMembership(projectId: number, userId: number, db: Db = getDb()) {
  db.delete(schema.memberships)
    .where(and(eq(schema.memberships.projectId, projectId), eq(schema.memberships.userId, userId)))
    .run();
}

export function listUsers(db: Db = getDb()) {
  return db
    .select({
      id: schema.users.id,
      email: schema.users.email,
      name: schema.users.name,
      isSiteAdmin: schema.users.isSiteAdmin,
      disabled: schema.users.disabled,
    })
    .from(schema.users)
    .orderBy(asc(schema.users.email))
    .all();
}
