/**
 * The rules of a project's membership, as the Members page applies them: an
 * admin cannot lower their own role or remove themselves (a site admin can),
 * and the project's last admin can be neither demoted nor removed
 * (LastAdminError, 409). Refusals are DomainErrors.
 */
import { and, eq } from "drizzle-orm";
import { removeMembership, setMembership } from "~/auth/accounts.server";
import { getDb, schema, type Db } from "~/db.server";
import { DomainError } from "~/errors.server";
import type { Role } from "../../db/schema";

/** Who is asking: the signed-in user. */
export interface Actor {
  id: number;
  isSiteAdmin: boolean;
}

function requireUser(userId: number, db: Db) {
  const target = db.select({ id: schema.users.id }).from(schema.users).where(eq(schema.users.id, userId)).get();
  if (!target) throw new DomainError("userId: no such user.", { field: "userId" });
  return target;
}

/** Sets `userId`'s role in the project (adding them if they are not a member). */
export function changeMemberRole(projectId: number, actor: Actor, userId: number, role: Role, db: Db = getDb()) {
  const target = requireUser(userId, db);
  if (target.id === actor.id && role !== "admin" && !actor.isSiteAdmin) {
    throw new DomainError("You cannot lower your own role; ask another admin.");
  }
  setMembership(projectId, target.id, role, db);
}

/** Removes `userId` from the project; their labels stay. */
export function removeMember(projectId: number, actor: Actor, userId: number, db: Db = getDb()) {
  const target = requireUser(userId, db);
  if (target.id === actor.id && !actor.isSiteAdmin) {
    throw new DomainError("You cannot remove yourself; ask another admin.");
  }
  const exists = db
    .select({ id: schema.memberships.id })
    .from(schema.memberships)
    .where(and(eq(schema.memberships.projectId, projectId), eq(schema.memberships.userId, target.id)))
    .get();
  if (!exists) throw new DomainError("userId: not a member of this project.", { field: "userId" });
  removeMembership(projectId, target.id, db);
}
