/**
 * The curation pages' rules about which rows an edit may name: a checklist
 * item must belong to the item being edited, a move stays within the item's
 * live (not retired) checklist, and a promoted response must belong to the
 * dataset. Refusals are DomainErrors beside the field that named the row.
 */
import { and, asc, eq } from "drizzle-orm";
import { getDb, schema, visible, type Db } from "~/db.server";
import { DomainError } from "~/errors.server";
import { reorderChecklist } from "./versions.server";

/** Throws unless `checklistItemId` is a checklist item of item `itemId`. */
export function requireChecklistItemOf(itemId: number, checklistItemId: number, db: Db = getDb()) {
  const row = db
    .select({ id: schema.checklistItems.id })
    .from(schema.checklistItems)
    .where(and(eq(schema.checklistItems.id, checklistItemId), eq(schema.checklistItems.itemId, itemId)))
    .get();
  if (!row) throw new DomainError("checklistItemId: not a checklist item of this item.", { field: "checklistItemId" });
}

/**
 * Moves a live checklist item one place up or down among the item's live
 * checklist items (retired ones keep their positions out of the way).
 */
export function moveChecklistItem(
  itemId: number,
  checklistItemId: number,
  direction: "up" | "down",
  actor: { userId: number | null; reason: string },
  db: Db = getDb(),
) {
  const ids = db
    .select({ id: schema.checklistItems.id, retiredAt: schema.checklistItems.retiredAt })
    .from(schema.checklistItems)
    .where(eq(schema.checklistItems.itemId, itemId))
    .orderBy(asc(schema.checklistItems.position))
    .all()
    .filter((c) => !c.retiredAt)
    .map((c) => c.id);
  const i = ids.indexOf(checklistItemId);
  const j = direction === "up" ? i - 1 : i + 1;
  if (i < 0 || j < 0 || j >= ids.length) throw new DomainError("Cannot move that item further.", { field: "direction" });
  [ids[i], ids[j]] = [ids[j], ids[i]];
  reorderChecklist(itemId, ids, actor, db);
}

/** Throws unless response `responseId` answers an item of dataset `datasetId`. */
export function requireResponseOfDataset(datasetId: number, responseId: number, db: Db = getDb()) {
  const response = db
    .select({ itemId: schema.responses.itemId })
    .from(schema.responses)
    .where(and(eq(schema.responses.id, responseId), visible(schema.responses.pendingImportId)))
    .get();
  const item =
    response && db.select({ datasetId: schema.items.datasetId }).from(schema.items).where(eq(schema.items.id, response.itemId)).get();
  if (!item || item.datasetId !== datasetId) throw new DomainError("responseId: not a response of this dataset.", { field: "responseId" });
}
