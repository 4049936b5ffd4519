/**
 * The rules of a project's membership, as the Members page applies them: an
 * admin cannot lower their own role or remove themselves (a site admin can),
 * and the project's last admin can be neither demoted nor removed
 * (LastAdminError, 409). Refusals are DomainErrors.
 */
import { and, eq } from "drizzle-orm";
import { removeMembership, setMembership } from "~/auth/accounts.server";
import { dalOf, first, getDal, type Dal, type DalLike } from "~/dal.server";
import { DomainError } from "~/errors.server";
import type { Role } from "../../db/schema";

/** Who is asking: the signed-in user. */
export interface Actor {
  id: number;
  isSiteAdmin: boolean;
}

async function requireUser(userId: number, d: Dal) {
  const u = d.t.users;
  const target = first(await d.q.select({ id: u.id }).from(u).where(eq(u.id, userId)).limit(1));
  if (!target) throw new DomainError("userId: no such user.", { field: "userId" });
  return target;
}

/** Sets `userId`'s role in the project (adding them if they are not a member). */
export async function changeMemberRole(projectId: number, actor: Actor, userId: number, role: Role, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const target = await requireUser(userId, d);
  if (target.id === actor.id && role !== "admin" && !actor.isSiteAdmin) {
    throw new DomainError("You cannot lower your own role; ask another admin.");
  }
  await setMembership(projectId, target.id, role, d);
}

/** Removes `userId` from the project; their labels stay. */
export async function removeMember(projectId: number, actor: Actor, userId: number, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const target = await requireUser(userId, d);
  if (target.id === actor.id && !actor.isSiteAdmin) {
    throw new DomainError("You cannot remove yourself; ask another admin.");
  }
  const m = d.t.memberships;
  const exists = first(
    await d.q
      .select({ id: m.id })
      .from(m)
      .where(and(eq(m.projectId, projectId), eq(m.userId, target.id)))
      .limit(1),
  );
  if (!exists) throw new DomainError("userId: not a member of this project.", { field: "userId" });
  await removeMembership(projectId, target.id, d);
}
