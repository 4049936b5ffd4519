/** Users, sign-in with throttling, and project memberships. */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { dalOf, first, getDal, type DalLike, type Q, type Tables } from "~/dal.server";
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

export async function createUser(
  input: { email: string; name: string; password: string; isSiteAdmin?: boolean },
  db: DalLike = getDal(),
): Promise<{ id: number }> {
  const d = dalOf(db);
  const passwordHash = await hashPassword(input.password); // before the transaction: it awaits no query
  const [row] = await d.tx((q) =>
    q
      .insert(d.t.users)
      .values({
        email: normaliseEmail(input.email),
        name: input.name.trim(),
        passwordHash,
        isSiteAdmin: input.isSiteAdmin ?? false,
      })
      .returning({ id: d.t.users.id }),
  );
  return row;
}

export async function setPassword(userId: number, password: string, db: DalLike = getDal()) {
  const d = dalOf(db);
  const passwordHash = await hashPassword(password);
  await d.tx(async (q) => {
    await q.update(d.t.users).set({ passwordHash }).where(eq(d.t.users.id, userId));
    // A new password signs the user out everywhere.
    await q.delete(d.t.sessions).where(eq(d.t.sessions.userId, userId));
  });
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
function countAttempt(
  email: string,
  client: string,
  db: DalLike,
): Promise<{ locked: number } | { counted: true; lockedAfter: number | null }> {
  const d = dalOf(db);
  const lt = d.t.loginThrottle;
  return d.tx(async (q) => {
    const t = now();
    const rows = await q
      .select()
      .from(lt)
      .where(and(eq(lt.email, email), inArray(lt.client, [client, GLOBAL])));
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
      await q
        .insert(lt)
        .values({ email, client: who, failures, lockedUntil: lock, updatedAt: t })
        .onConflictDoUpdate({ target: [lt.email, lt.client], set: { failures, lockedUntil: lock, updatedAt: t } });
    }
    return { counted: true as const, lockedAfter };
  });
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
export async function signIn(emailRaw: string, password: string, client = "unknown", db: DalLike = getDal()): Promise<SignInResult> {
  const d = dalOf(db);
  const { users, loginThrottle: lt } = d.t;
  const email = normaliseEmail(emailRaw);
  const counted = await countAttempt(email, client, d);
  if ("locked" in counted) return { ok: false, reason: "locked", retryAfterSeconds: counted.locked };
  const user = first(
    await d.q
      .select({ id: users.id, passwordHash: users.passwordHash, disabled: users.disabled })
      .from(users)
      .where(eq(users.email, email))
      .limit(1),
  );
  let ok = false;
  if (user) ok = (await verifyPassword(password, user.passwordHash)) && !user.disabled;
  else await burnPasswordCheck(password);

  if (ok && user) {
    await d.tx(async (q) => {
      await q.delete(lt).where(and(eq(lt.email, email), eq(lt.client, client)));
      await q
        .update(lt)
        .set({
          failures: sql`case when ${lt.failures} > 0 then ${lt.failures} - 1 else 0 end`,
          lockedUntil: sql`case when ${lt.failures} - 1 >= ${GLOBAL_FREE_FAILURES} then ${lt.lockedUntil} else null end`,
        })
        .where(and(eq(lt.email, email), eq(lt.client, GLOBAL)));
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
async function assertNotLastAdmin(projectId: number, userId: number, q: Q, t: Tables) {
  const admins = await q
    .select({ userId: t.memberships.userId })
    .from(t.memberships)
    .where(and(eq(t.memberships.projectId, projectId), eq(t.memberships.role, "admin")));
  if (admins.length === 1 && admins[0].userId === userId) {
    throw new LastAdminError("This is the project's last admin: make another member admin first.");
  }
}

/** Adds a member or changes their role; never demotes the project's last admin. */
export async function setMembership(projectId: number, userId: number, role: Role, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const m = d.t.memberships;
  await d.tx(async (q) => {
    if (role !== "admin") await assertNotLastAdmin(projectId, userId, q, d.t);
    await q
      .insert(m)
      .values({ projectId, userId, role })
      .onConflictDoUpdate({ target: [m.projectId, m.userId], set: { role } });
  });
}

/** Removes a member; never the project's last admin. */
export async function removeMembership(projectId: number, userId: number, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const m = d.t.memberships;
  await d.tx(async (q) => {
    await assertNotLastAdmin(projectId, userId, q, d.t);
    await q.delete(m).where(and(eq(m.projectId, projectId), eq(m.userId, userId)));
  });
}

export async function listUsers(db: DalLike = getDal()) {
  const d = dalOf(db);
  const u = d.t.users;
  return d.q
    .select({ id: u.id, email: u.email, name: u.name, isSiteAdmin: u.isSiteAdmin, disabled: u.disabled })
    .from(u)
    .orderBy(asc(u.email));
}
