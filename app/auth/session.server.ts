/**
 * Cookie sessions. The cookie carries a random token (signed); the database
 * stores only its SHA-256, with an expiry, so sign-out and expiry are real.
 */
import { createHash, randomBytes } from "node:crypto";
import { createCookie } from "@remix-run/node";
import { and, eq, lt } from "drizzle-orm";
import { env, sessionSecret } from "~/env.server";
import { getDb, schema } from "~/db.server";

export const SESSION_TTL_SECONDS = 7 * 24 * 3600;

let cookieSingleton: ReturnType<typeof createCookie> | undefined;
function sessionCookie() {
  cookieSingleton ??= createCookie("concord_session", {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: env().COOKIE_SECURE === "1",
    secrets: [sessionSecret()],
    maxAge: SESSION_TTL_SECONDS,
  });
  return cookieSingleton;
}

const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");
const now = () => Math.floor(Date.now() / 1000);

export async function createSession(userId: number): Promise<string> {
  const token = randomBytes(32).toString("hex");
  const db = getDb();
  db.delete(schema.sessions).where(lt(schema.sessions.expiresAt, now())).run();
  db.insert(schema.sessions)
    .values({ idHash: sha256(token), userId, expiresAt: now() + SESSION_TTL_SECONDS })
    .run();
  return sessionCookie().serialize(token);
}

export async function destroySession(request: Request): Promise<string> {
  const token = await readToken(request);
  if (token)
    getDb()
      .delete(schema.sessions)
      .where(eq(schema.sessions.idHash, sha256(token)))
      .run();
  return sessionCookie().serialize("", { maxAge: 0 });
}

async function readToken(request: Request): Promise<string | null> {
  return sessionTokenFromCookieHeader(request.headers.get("Cookie"));
}

/** The session token from a Cookie header when its signature is valid (the session may still be expired). */
export async function sessionTokenFromCookieHeader(cookieHeader: string | null | undefined): Promise<string | null> {
  const value = await sessionCookie().parse(cookieHeader ?? null);
  return typeof value === "string" && /^[0-9a-f]{64}$/.test(value) ? value : null;
}

/** The stored id of a session token (its SHA-256). */
export const sessionIdOf = sha256;

export type SessionUser = {
  id: number;
  email: string;
  name: string;
  isSiteAdmin: boolean;
};

export type SessionLookup = { state: "none" } | { state: "expired" } | { state: "ok"; user: SessionUser };

export async function lookupSession(request: Request): Promise<SessionLookup> {
  const token = await readToken(request);
  if (!token) return { state: "none" };
  const db = getDb();
  const hash = sha256(token);
  const row = db
    .select({
      expiresAt: schema.sessions.expiresAt,
      id: schema.users.id,
      email: schema.users.email,
      name: schema.users.name,
      isSiteAdmin: schema.users.isSiteAdmin,
      disabled: schema.users.disabled,
    })
    .from(schema.sessions)
    .innerJoin(schema.users, eq(schema.users.id, schema.sessions.userId))
    .where(eq(schema.sessions.idHash, hash))
    .get();
  if (!row) return { state: "expired" };
  if (row.expiresAt <= now() || row.disabled) {
    db.delete(schema.sessions)
      .where(and(eq(schema.sessions.idHash, hash)))
      .run();
    return { state: "expired" };
  }
  return {
    state: "ok",
    user: { id: row.id, email: row.email, name: row.name, isSiteAdmin: row.isSiteAdmin },
  };
}
