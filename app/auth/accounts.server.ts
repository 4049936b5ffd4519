/** Users, sign-in with throttling, and project memberships. */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { getDb, schema, type Db } from "~/db.server";
import { DomainError } from "~/errors.server";
import type { Role } from "../../db/schema";
import { burnPasswordCheck, hashPassword, verifyPassword } from "./password.server";

/** Failures one client address may make at one email before it waits (30 s, doubling up to 15 min). */
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

export async function createUser(input: { email: string; name: string; password: string; isSiteAdmin?: boolean }, db: Db = getDb()) {
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
  { ok: true; userId: number } | { ok: false; reason: "invalid" } | { ok: false; reason: "locked"; retryAfterSeconds: number };

/** Failures at one email from all clients together before everyone waits (a slower limit, against guessing spread over many addresses). */
export const GLOBAL_FREE_FAILURES = 50;
/** The `client` of an email's row that counts attempts from every client. */
const GLOBAL = "*";

const lockFor = (failures: number, free: number) =>
  failures >= free ? now() + Math.min(MAX_LOCK_SECONDS, 30 * 2 ** (failures - free)) : null;

/**
 * Counts a sign-in attempt before its password is checked, in one transaction:
 * refused (no count) when the (email, client) row or the email's global row is
 * locked; otherwise both counters go up by one and a lock is set when a counter
 * reaches its limit. Parallel attempts therefore cannot all slip past the limit.
 */
function countAttempt(email: string, client: string, db: Db): { locked: number } | { counted: true; lockedAfter: number | null } {
  return db.transaction(
    (tx) => {
      const t = now();
      const rows = tx
        .select()
        .from(schema.loginThrottle)
        .where(and(eq(schema.loginThrottle.email, email), inArray(schema.loginThrottle.client, [client, GLOBAL])))
        .all();
      const lockedUntil = Math.max(0, ...rows.map((r) => r.lockedUntil ?? 0));
      if (lockedUntil > t) return { locked: lockedUntil - t };
      let lockedAfter: number | null = null;
      for (const [who, free] of [
        [client, MAX_FREE_FAILURES],
        [GLOBAL, GLOBAL_FREE_FAILURES],
      ] as const) {
        const failures = (rows.find((r) => r.client === who)?.failures ?? 0) + 1;
        const lock = lockFor(failures, free);
        if (lock) lockedAfter = Math.max(lockedAfter ?? 0, lock);
        tx.insert(schema.loginThrottle)
          .values({ email, client: who, failures, lockedUntil: lock, updatedAt: t })
          .onConflictDoUpdate({
            target: [schema.loginThrottle.email, schema.loginThrottle.client],
            set: { failures, lockedUntil: lock, updatedAt: t },
          })
          .run();
      }
      return { counted: true as const, lockedAfter };
    },
    { behavior: "immediate" },
  );
}

/**
 * Checks an email and password. Wrong password, unknown email and disabled
 * account all answer "invalid" after the same amount of work. The attempt is
 * counted before the password check (see countAttempt): after MAX_FREE_FAILURES
 * failures from one client address at one email, that client waits for a time
 * that doubles with each further failure (30 s up to 15 min); after
 * GLOBAL_FREE_FAILURES failures from all clients, everyone does.
 * A success clears the client's counter and takes this attempt off the global one.
 */
export async function signIn(emailRaw: string, password: string, client = "unknown", db: Db = getDb()): Promise<SignInResult> {
  const email = normaliseEmail(emailRaw);
  const counted = countAttempt(email, client, db);
  if ("locked" in counted) return { ok: false, reason: "locked", retryAfterSeconds: counted.locked };
  const user = db
    .select({ id: schema.users.id, passwordHash: schema.users.passwordHash, disabled: schema.users.disabled })
    .from(schema.users)
    .where(eq(schema.users.email, email))
    .get();
  let ok = false;
  if (user) ok = (await verifyPassword(password, user.passwordHash)) && !user.disabled;
  else await burnPasswordCheck(password);

  if (ok && user) {
    db.transaction((tx) => {
      tx.delete(schema.loginThrottle)
        .where(and(eq(schema.loginThrottle.email, email), eq(schema.loginThrottle.client, client)))
        .run();
      tx.update(schema.loginThrottle)
        .set({
          failures: sql`max(0, ${schema.loginThrottle.failures} - 1)`,
          lockedUntil: sql`case when ${schema.loginThrottle.failures} - 1 >= ${GLOBAL_FREE_FAILURES} then ${schema.loginThrottle.lockedUntil} else null end`,
        })
        .where(and(eq(schema.loginThrottle.email, email), eq(schema.loginThrottle.client, GLOBAL)))
        .run();
    });
    return { ok: true, userId: user.id };
  }
  if (counted.lockedAfter) return { ok: false, reason: "locked", retryAfterSeconds: counted.lockedAfter - now() };
  return { ok: false, reason: "invalid" };
}

/** Refused: the change would leave a project without an admin member (409). */
export class LastAdminError extends DomainError {
  constructor(message: string) {
    super(message, { status: 409 });
  }
}

/** Throws LastAdminError when `userId` is the project's only admin member. */
function assertNotLastAdmin(projectId: number, userId: number, tx: Db) {
  const admins = tx
    .select({ userId: schema.memberships.userId })
    .from(schema.memberships)
    .where(and(eq(schema.memberships.projectId, projectId), eq(schema.memberships.role, "admin")))
    .all();
  if (admins.length === 1 && admins[0].userId === userId) {
    throw new LastAdminError("This is the project's last admin: make another member admin first.");
  }
}

/** Adds a member or changes their role; never demotes the project's last admin. */
export function setMembership(projectId: number, userId: number, role: Role, db: Db = getDb()) {
  db.transaction(
    (tx) => {
      if (role !== "admin") assertNotLastAdmin(projectId, userId, tx as unknown as Db);
      tx.insert(schema.memberships)
        .values({ projectId, userId, role })
        .onConflictDoUpdate({
          target: [schema.memberships.projectId, schema.memberships.userId],
          set: { role },
        })
        .run();
    },
    { behavior: "immediate" },
  );
}

/** Removes a member; never the project's last admin. */
export function removeMembership(projectId: number, userId: number, db: Db = getDb()) {
  db.transaction(
    (tx) => {
      assertNotLastAdmin(projectId, userId, tx as unknown as Db);
      tx.delete(schema.memberships)
        .where(and(eq(schema.memberships.projectId, projectId), eq(schema.memberships.userId, userId)))
        .run();
    },
    { behavior: "immediate" },
  );
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
