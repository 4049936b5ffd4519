/**
 * Cookie sessions. The cookie carries a random token (signed); the database
 * stores only its SHA-256, with an expiry, so sign-out and expiry are real.
 */
import { createHash, randomBytes } from "node:crypto";
import { createCookie } from "@remix-run/node";
import { eq, lt } from "drizzle-orm";
import { env, sessionSecret } from "~/env.server";
import { first, getDal } from "~/dal.server";

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
  const d = getDal();
  const { sessions } = d.t;
  // Nothing written here depends on what another sign-in writes, so on PostgreSQL it runs at READ COMMITTED: under
  // SERIALIZABLE the clean-up's range read made simultaneous sign-ins fail each other and run again.
  await d.tx(
    async (q) => {
      await q.delete(sessions).where(lt(sessions.expiresAt, now()));
      await q.insert(sessions).values({ idHash: sha256(token), userId, expiresAt: now() + SESSION_TTL_SECONDS });
    },
    { lockedReadCommitted: true },
  );
  return sessionCookie().serialize(token);
}

export async function destroySession(request: Request): Promise<string> {
  const token = await readToken(request);
  if (token) {
    const d = getDal();
    await d.tx((q) => q.delete(d.t.sessions).where(eq(d.t.sessions.idHash, sha256(token))));
  }
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
  const d = getDal();
  const { sessions, users } = d.t;
  const hash = sha256(token);
  const row = first(
    await d.q
      .select({
        expiresAt: sessions.expiresAt,
        id: users.id,
        email: users.email,
        name: users.name,
        isSiteAdmin: users.isSiteAdmin,
        disabled: users.disabled,
      })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.idHash, hash))
      .limit(1),
  );
  if (!row) return { state: "expired" };
  if (row.expiresAt <= now() || row.disabled) {
    await d.tx((q) => q.delete(sessions).where(eq(sessions.idHash, hash)));
    return { state: "expired" };
  }
  return {
    state: "ok",
    user: { id: row.id, email: row.email, name: row.name, isSiteAdmin: row.isSiteAdmin },
  };
}
