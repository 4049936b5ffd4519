/**
 * Looking up a gold unit (a unit with a known answer that scores annotators)
 * for the task page's "save the gold answer" form: the unit must be a gold unit
 * of this very task, and the task's kind must be one that is labelled.
 * Refusals are DomainErrors.
 */
import { and, eq } from "drizzle-orm";
import { getDb, schema, type Db } from "~/db.server";
import { DomainError } from "~/errors.server";
import { isAnnotatable, type AnnotatableKind } from "./config";

// The known answer's form values and parser, for the task page's loader and action.
export { labelToForm, parseGoldLabel } from "./labels";

/** The gold unit `unitId` of `task`, with the order of its responses (multi-response kinds). */
export function goldUnitOf(task: { id: number; kind: string }, unitId: number, db: Db = getDb()) {
  const unit = Number.isInteger(unitId)
    ? db
        .select({ responseIds: schema.units.responseIds })
        .from(schema.units)
        .where(and(eq(schema.units.id, unitId), eq(schema.units.taskId, task.id), eq(schema.units.isGold, true)))
        .get()
    : undefined;
  if (!unit) throw new DomainError("No such gold unit in this task.", { field: "unitId" });
  if (!isAnnotatable(task.kind)) throw new DomainError("This task kind has no gold units.", { field: "kind" });
  return { ...unit, kind: task.kind as AnnotatableKind };
}
