/**
 * Guards. Every loader and action that reads or writes project data calls one.
 * They throw Responses: a redirect to /login, a 403, or a 404 for projects the
 * user is not a member of (so their existence is not revealed).
 */
import { redirect } from "@remix-run/node";
import { and, eq } from "drizzle-orm";
import { first, getDal } from "~/dal.server";
import type { Role } from "../../db/schema";
import { originRefusal } from "./csrf.server";
import { sameOriginPath } from "./redirects";
import { lookupSession, type SessionUser } from "./session.server";

const RANK: Record<Role, number> = { annotator: 1, researcher: 2, admin: 3 };

export function forbidden(message = "You do not have access to this page."): never {
  throw new Response(message, { status: 403, statusText: "Forbidden" });
}

export function notFound(message = "Not found."): never {
  throw new Response(message, { status: 404, statusText: "Not Found" });
}

/**
 * Rejects state-changing requests that do not come from our own origin: another
 * site, a malformed Origin, or no usable Origin ("null" or missing) without
 * `Sec-Fetch-Site: same-origin`. The HTTP server applies the same rule and the
 * CSRF token to every request before any route runs (app/auth/csrf.server.ts);
 * this is the second lock, for code that calls actions directly.
 */
export function assertSameOrigin(request: Request): void {
  if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") return;
  const host = request.headers.get("X-Forwarded-Host") ?? request.headers.get("Host") ?? new URL(request.url).host;
  const refusal = originRefusal(request.headers.get("Origin"), request.headers.get("Sec-Fetch-Site"), host);
  if (refusal) forbidden(`Cross-origin request refused: ${refusal}`);
}

export async function getOptionalUser(request: Request): Promise<SessionUser | null> {
  const s = await lookupSession(request);
  return s.state === "ok" ? s.user : null;
}

export async function requireUser(request: Request): Promise<SessionUser> {
  assertSameOrigin(request);
  const s = await lookupSession(request);
  if (s.state === "ok") return s.user;
  const url = new URL(request.url);
  // Back to this page after sign-in, if it is a plain path on our site by the sign-in page's own rule.
  const back = sameOriginPath(url.pathname + url.search, url);
  const params = new URLSearchParams(back ? { redirectTo: back } : {});
  if (s.state === "expired") params.set("reason", "expired");
  const query = params.toString();
  throw redirect(query ? `/login?${query}` : "/login");
}

export async function requireSiteAdmin(request: Request): Promise<SessionUser> {
  const user = await requireUser(request);
  if (!user.isSiteAdmin) forbidden("Only site admins can manage users.");
  return user;
}

export type ProjectAccess = {
  user: SessionUser;
  project: { id: number; slug: string; name: string; description: string };
  role: Role;
};

/**
 * The user's role in the project named by slug, at least `minRole`.
 * Not a member (or no such project): 404. A lower role: 403.
 * Site admins act as project admins everywhere.
 */
export async function requireProjectRole(request: Request, slug: string | undefined, minRole: Role): Promise<ProjectAccess> {
  const user = await requireUser(request);
  const d = getDal();
  const { projects, memberships } = d.t;
  const project = slug
    ? first(
        await d.q
          .select({ id: projects.id, slug: projects.slug, name: projects.name, description: projects.description })
          .from(projects)
          .where(eq(projects.slug, slug))
          .limit(1),
      )
    : undefined;
  if (!project) notFound("Project not found.");
  let role: Role | undefined;
  if (user.isSiteAdmin) role = "admin";
  else {
    role = first(
      await d.q
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.projectId, project.id), eq(memberships.userId, user.id)))
        .limit(1),
    )?.role;
  }
  if (!role) notFound("Project not found.");
  if (RANK[role] < RANK[minRole]) forbidden(`This page needs the ${minRole} role in ${project.name}.`);
  return { user, project, role };
}

export function hasRole(role: Role, atLeast: Role): boolean {
  return RANK[role] >= RANK[atLeast];
}
