/**
 * Personal access tokens for the HTTP API (`/api/v1/`): created on the Settings → API tokens page or with
 * `npm run tokens`, both through this module.
 *
 * - A token is `ccd_` followed by 32 random bytes in base64url (43 characters). It is shown once, at
 *   creation; only its SHA-256 is stored (a token has 256 bits of entropy, so a fast hash is enough: nothing
 *   can be guessed from it, unlike a password). A request's token is looked up by its hash and the stored
 *   hash compared again in constant time.
 * - A token has a scope (`read`: GET and HEAD only; `write`: every method), covers all of its user's
 *   projects (now and later) or a list of them, and expires (90 days by default, at most 365).
 * - A token never grants more than its user has now: every request checks the user (a disabled account's
 *   tokens are refused) and the user's current membership in the project (removed: 404; demoted: the lower
 *   role), so a change takes effect on the next request. Site admins act as admins everywhere, as on the pages.
 * - Tokens are revoked, never deleted, so the list keeps showing when and from where each was last used;
 *   that time and address are written at most once a minute per token (or when the address changes).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { DomainError } from "~/errors.server";
import { listProjectsFor } from "~/projects/projects.server";
import { API_TOKEN_SCOPES, type ApiTokenScope, type Role } from "../../db/schema";
import type { SessionUser } from "./session.server";

export const TOKEN_PREFIX = "ccd_";
/** How many characters after `ccd_` are kept to recognise a token in lists (48 of its 256 bits). */
export const DISPLAY_CHARS = 8;
export const DEFAULT_EXPIRY_DAYS = 90;
export const MAX_EXPIRY_DAYS = 365;
/** A token's last use is written at most this often (seconds), unless it comes from another address. */
export const LAST_USED_EVERY_SECONDS = 60;
const TOKEN_SHAPE = /^ccd_[A-Za-z0-9_-]{43}$/;
const DAY = 24 * 3600;
const now = () => Math.floor(Date.now() / 1000);
const sha256 = (token: string) => createHash("sha256").update(token, "utf8").digest();

export type { ApiTokenScope };

/** A new token as the page and the command give it: project ids (the command resolves slugs first) or "all". */
export const NewTokenSchema = z.object({
  name: z.string().trim().min(1, "Give the token a name.").max(100, "A token's name can be at most 100 characters long."),
  scope: z.enum(API_TOKEN_SCOPES, { error: 'The scope is "read" or "write".' }),
  projects: z.union([
    z.literal("all"),
    z
      .array(z.coerce.number().int().positive())
      .min(1, "Choose at least one project, or all of your projects.")
      .max(1000, "A token can list at most 1000 projects; choose all of your projects instead."),
  ]),
  expiresDays: z.coerce
    .number({ error: "The expiry is a number of days." })
    .int("The expiry is a whole number of days.")
    .min(1, "A token must be valid for at least 1 day.")
    .max(MAX_EXPIRY_DAYS, `A token can be valid for at most ${MAX_EXPIRY_DAYS} days (1 year).`)
    .default(DEFAULT_EXPIRY_DAYS),
});
export type NewToken = z.input<typeof NewTokenSchema>;

/** The field a refusal belongs beside on the page (and the command's flag names them the same way). */
const FIELDS = ["name", "scope", "projects", "expiresDays"] as const;

export type CreatedToken = {
  id: number;
  /** The token itself: shown once, never stored. */
  token: string;
  name: string;
  scope: ApiTokenScope;
  prefix: string;
  expiresAt: number;
};

/**
 * Creates a token for `ownerId`. Refused (DomainError, beside its field): a bad name, scope or expiry, an
 * unknown or disabled owner, a listed project that does not exist or that the owner does not belong to.
 */
export async function createApiToken(ownerId: number, input: NewToken, db: DalLike = getDal()): Promise<CreatedToken> {
  const parsed = NewTokenSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = FIELDS.find((f) => f === issue.path[0]);
    throw new DomainError(issue.message, { field });
  }
  const { name, scope, projects: wanted, expiresDays } = parsed.data;
  const d = dalOf(db);
  const { users, projects, memberships, apiTokens, apiTokenProjects } = d.t;
  const owner = first(
    await d.q
      .select({ id: users.id, email: users.email, isSiteAdmin: users.isSiteAdmin, disabled: users.disabled })
      .from(users)
      .where(eq(users.id, ownerId))
      .limit(1),
  );
  if (!owner) throw new DomainError("No such user.", { status: 404 });
  if (owner.disabled) throw new DomainError(`${owner.email} is disabled: a disabled account cannot have new tokens.`);
  const projectIds = wanted === "all" ? null : [...new Set(wanted)];
  if (projectIds) {
    const found = await d.q
      .select({ id: projects.id, slug: projects.slug, role: memberships.role })
      .from(projects)
      .leftJoin(memberships, and(eq(memberships.projectId, projects.id), eq(memberships.userId, owner.id)))
      .where(inArray(projects.id, projectIds));
    for (const id of projectIds) {
      const p = found.find((f) => f.id === id);
      if (!p) throw new DomainError(`No such project (id ${id}).`, { field: "projects" });
      if (!p.role && !owner.isSiteAdmin) throw new DomainError(`${owner.email} is not a member of ${p.slug}.`, { field: "projects" });
    }
  }
  const secret = randomBytes(32).toString("base64url");
  const token = TOKEN_PREFIX + secret;
  const prefix = secret.slice(0, DISPLAY_CHARS);
  const expiresAt = now() + expiresDays * DAY;
  const id = await d.tx(async (q) => {
    const [row] = await q
      .insert(apiTokens)
      .values({
        userId: owner.id,
        name,
        scope,
        allProjects: projectIds === null,
        prefix,
        tokenHash: sha256(token).toString("hex"),
        expiresAt,
      })
      .returning({ id: apiTokens.id });
    if (projectIds?.length) await q.insert(apiTokenProjects).values(projectIds.map((projectId) => ({ tokenId: row.id, projectId })));
    return row.id;
  });
  return { id, token, name, scope, prefix, expiresAt };
}

export type TokenStatus = "active" | "expired" | "revoked" | "owner disabled";

export type TokenRow = {
  id: number;
  name: string;
  scope: ApiTokenScope;
  /** `ccd_` and the first characters of the token, to recognise it. */
  prefix: string;
  owner: { id: number; email: string; name: string };
  /** null: all of the owner's projects. */
  projects: { id: number; slug: string; name: string }[] | null;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
  lastUsedFrom: string | null;
  status: TokenStatus;
};

/** Tokens, newest first: every user's, or one owner's. */
export async function listApiTokens(filter: { ownerId?: number } = {}, db: DalLike = getDal()): Promise<TokenRow[]> {
  const d = dalOf(db);
  const { apiTokens: t, apiTokenProjects: tp, users, projects } = d.t;
  const rows = await d.q
    .select({
      id: t.id,
      name: t.name,
      scope: t.scope,
      prefix: t.prefix,
      allProjects: t.allProjects,
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
      revokedAt: t.revokedAt,
      lastUsedAt: t.lastUsedAt,
      lastUsedFrom: t.lastUsedFrom,
      ownerId: users.id,
      ownerEmail: users.email,
      ownerName: users.name,
      ownerDisabled: users.disabled,
    })
    .from(t)
    .innerJoin(users, eq(users.id, t.userId))
    .where(filter.ownerId === undefined ? undefined : eq(t.userId, filter.ownerId))
    .orderBy(desc(t.createdAt), desc(t.id));
  const listed = rows.filter((r) => !r.allProjects).map((r) => r.id);
  const covered = listed.length
    ? await d.q
        .select({ tokenId: tp.tokenId, id: projects.id, slug: projects.slug, name: projects.name })
        .from(tp)
        .innerJoin(projects, eq(projects.id, tp.projectId))
        .where(inArray(tp.tokenId, listed))
        .orderBy(asc(projects.name))
    : [];
  const t0 = now();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    scope: r.scope,
    prefix: TOKEN_PREFIX + r.prefix,
    owner: { id: r.ownerId, email: r.ownerEmail, name: r.ownerName },
    projects: r.allProjects ? null : covered.filter((c) => c.tokenId === r.id).map(({ id, slug, name }) => ({ id, slug, name })),
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    revokedAt: r.revokedAt,
    lastUsedAt: r.lastUsedAt,
    lastUsedFrom: r.lastUsedFrom,
    status: r.revokedAt !== null ? "revoked" : r.expiresAt <= t0 ? "expired" : r.ownerDisabled ? "owner disabled" : "active",
  }));
}

/** Who is looking at or revoking tokens: a signed-in user (site admins: everyone's), or the operator's command (every token). */
export type TokenActor = { id: number; isSiteAdmin: boolean } | "operator";

/** The tokens `actor` may see: their own; a site admin's and the operator's, everyone's. */
export function listApiTokensFor(actor: TokenActor, db: DalLike = getDal()): Promise<TokenRow[]> {
  return listApiTokens(actor === "operator" || actor.isSiteAdmin ? {} : { ownerId: actor.id }, db);
}

/**
 * Revokes a token at once (its next request is refused). Only its owner, a site admin or the operator may;
 * a token the actor may not see is "No such token." (404) as one that does not exist. Revoking a revoked
 * token changes nothing and says so.
 */
export async function revokeApiToken(actor: TokenActor, tokenId: number, db: DalLike = getDal()): Promise<{ alreadyRevoked: boolean }> {
  const d = dalOf(db);
  const t = d.t.apiTokens;
  return d.tx(async (q) => {
    const row = first(await q.select({ userId: t.userId, revokedAt: t.revokedAt }).from(t).where(eq(t.id, tokenId)).limit(1));
    if (!row || (actor !== "operator" && !actor.isSiteAdmin && row.userId !== actor.id)) {
      throw new DomainError("No such token.", { status: 404 });
    }
    if (row.revokedAt !== null) return { alreadyRevoked: true };
    await q.update(t).set({ revokedAt: now() }).where(eq(t.id, tokenId));
    return { alreadyRevoked: false };
  });
}

/** The token a request authenticated with. */
export type TokenInfo = {
  id: number;
  name: string;
  scope: ApiTokenScope;
  /** null: every project of its user; otherwise the ids of the projects it covers. */
  projectIds: number[] | null;
};

export type ApiAuth = { user: SessionUser; token: TokenInfo };

/** Why a token was refused: not a Concord token, or none stored with that hash; expired; revoked; its user disabled. */
export type TokenRefusal = "unknown" | "expired" | "revoked" | "disabled";

/**
 * The user and token of a bearer token, or why it is refused. Looked up by the token's SHA-256 (unique
 * index); the stored hash is compared again with `timingSafeEqual`. Records when and from which address
 * it was used (at most once a minute per token, or when the address changes).
 */
export async function authenticateApiToken(
  bearer: string,
  clientAddress: string,
  db: DalLike = getDal(),
): Promise<{ ok: true; auth: ApiAuth } | { ok: false; reason: TokenRefusal }> {
  if (!TOKEN_SHAPE.test(bearer)) return { ok: false, reason: "unknown" };
  const d = dalOf(db);
  const { apiTokens: t, apiTokenProjects: tp, users } = d.t;
  const hash = sha256(bearer);
  const row = first(
    await d.q
      .select({
        id: t.id,
        name: t.name,
        scope: t.scope,
        allProjects: t.allProjects,
        tokenHash: t.tokenHash,
        expiresAt: t.expiresAt,
        revokedAt: t.revokedAt,
        lastUsedAt: t.lastUsedAt,
        lastUsedFrom: t.lastUsedFrom,
        userId: users.id,
        email: users.email,
        userName: users.name,
        isSiteAdmin: users.isSiteAdmin,
        disabled: users.disabled,
      })
      .from(t)
      .innerJoin(users, eq(users.id, t.userId))
      .where(eq(t.tokenHash, hash.toString("hex")))
      .limit(1),
  );
  const stored = row ? Buffer.from(row.tokenHash, "hex") : null;
  if (!row || !stored || stored.length !== hash.length || !timingSafeEqual(stored, hash)) return { ok: false, reason: "unknown" };
  const t0 = now();
  if (row.revokedAt !== null) return { ok: false, reason: "revoked" };
  if (row.expiresAt <= t0) return { ok: false, reason: "expired" };
  if (row.disabled) return { ok: false, reason: "disabled" };
  // An IPv4 client of a dual-stack socket is shown as IPv4 ("::ffff:10.0.0.1" → "10.0.0.1", RFC 4291 §2.5.5.2).
  const from = clientAddress.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1").slice(0, 100);
  if (row.lastUsedAt === null || t0 - row.lastUsedAt >= LAST_USED_EVERY_SECONDS || row.lastUsedFrom !== from) {
    await d.tx((q) => q.update(t).set({ lastUsedAt: t0, lastUsedFrom: from }).where(eq(t.id, row.id)));
  }
  const projectIds = row.allProjects
    ? null
    : (await d.q.select({ projectId: tp.projectId }).from(tp).where(eq(tp.tokenId, row.id))).map((r) => r.projectId);
  return {
    ok: true,
    auth: {
      user: { id: row.userId, email: row.email, name: row.userName, isSiteAdmin: row.isSiteAdmin },
      token: { id: row.id, name: row.name, scope: row.scope, projectIds },
    },
  };
}

/** Whether a token with `scope` may do what needs `needed` (a write token may also read). */
export function scopeAllows(scope: ApiTokenScope, needed: ApiTokenScope): boolean {
  return scope === "write" || needed === "read";
}

/** Whether the token covers the project (its user's membership is checked separately). */
export function tokenCovers(token: TokenInfo, projectId: number): boolean {
  return token.projectIds === null || token.projectIds.includes(projectId);
}

export type TokenProject = { id: number; slug: string; name: string; description: string };

/**
 * The project named by `slug` and the role the token acts with there: the user's current role (site admins:
 * admin), if the token covers the project. Null when there is no such project, the token does not cover it
 * or the user is not a member: the API answers all three alike (404), so a project's existence is not revealed.
 */
export async function tokenProjectRole(
  auth: ApiAuth,
  slug: string,
  db: DalLike = getDal(),
): Promise<{ project: TokenProject; role: Role } | null> {
  const d = dalOf(db);
  const { projects, memberships } = d.t;
  const project = first(
    await d.q
      .select({ id: projects.id, slug: projects.slug, name: projects.name, description: projects.description })
      .from(projects)
      .where(eq(projects.slug, slug))
      .limit(1),
  );
  if (!project || !tokenCovers(auth.token, project.id)) return null;
  const role: Role | undefined = auth.user.isSiteAdmin
    ? "admin"
    : first(
        await d.q
          .select({ role: memberships.role })
          .from(memberships)
          .where(and(eq(memberships.projectId, project.id), eq(memberships.userId, auth.user.id)))
          .limit(1),
      )?.role;
  return role ? { project, role } : null;
}

/** The projects the token can reach: its user's (as the Projects page lists them), those the token covers. */
export async function projectsOfToken(auth: ApiAuth, db: DalLike = getDal()) {
  return (await listProjectsFor(auth.user, db)).filter((p) => tokenCovers(auth.token, p.id));
}
