/**
 * Looking up a gold unit (a unit with a known answer that scores annotators)
 * for the task page's "save the gold answer" form: the unit must be a gold unit
 * of this very task, and the task's kind must be one that is labelled.
 * Refusals are DomainErrors.
 */
import { and, eq } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { DomainError } from "~/errors.server";
import { isAnnotatable, type AnnotatableKind } from "./config";

// The known answer's form values and parser, for the task page's loader and action.
export { labelToForm, parseGoldLabel } from "./labels";

/** The gold unit `unitId` of `task`, with the order of its responses (multi-response kinds). */
export async function goldUnitOf(task: { id: number; kind: string }, unitId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const u = d.t.units;
  const unit = Number.isInteger(unitId)
    ? first(
        await d.q
          .select({ responseIds: u.responseIds })
          .from(u)
          .where(and(eq(u.id, unitId), eq(u.taskId, task.id), eq(u.isGold, true)))
          .limit(1),
      )
    : undefined;
  if (!unit) throw new DomainError("No such gold unit in this task.", { field: "unitId" });
  if (!isAnnotatable(task.kind)) throw new DomainError("This task kind has no gold units.", { field: "kind" });
  return { ...unit, kind: task.kind as AnnotatableKind };
}
