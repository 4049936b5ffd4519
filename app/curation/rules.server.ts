/**
 * The curation pages' rules about which rows an edit may name: a checklist
 * item must belong to the item being edited, a move stays within the item's
 * live (not retired) checklist, and a promoted response must belong to the
 * dataset. Refusals are DomainErrors beside the field that named the row.
 */
import { and, asc, eq } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { visible } from "~/db.server";
import { DomainError } from "~/errors.server";
import { reorderChecklist } from "./versions.server";

/** Throws unless `checklistItemId` is a checklist item of item `itemId`. */
export async function requireChecklistItemOf(itemId: number, checklistItemId: number, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const c = d.t.checklistItems;
  const row = first(
    await d.q
      .select({ id: c.id })
      .from(c)
      .where(and(eq(c.id, checklistItemId), eq(c.itemId, itemId)))
      .limit(1),
  );
  if (!row) throw new DomainError("checklistItemId: not a checklist item of this item.", { field: "checklistItemId" });
}

/**
 * Moves a live checklist item one place up or down among the item's live
 * checklist items (retired ones keep their positions out of the way).
 */
export async function moveChecklistItem(
  itemId: number,
  checklistItemId: number,
  direction: "up" | "down",
  actor: { userId: number | null; reason: string },
  db: DalLike = getDal(),
): Promise<void> {
  const d = dalOf(db);
  const c = d.t.checklistItems;
  const ids = (await d.q.select({ id: c.id, retiredAt: c.retiredAt }).from(c).where(eq(c.itemId, itemId)).orderBy(asc(c.position)))
    .filter((r) => !r.retiredAt)
    .map((r) => r.id);
  const i = ids.indexOf(checklistItemId);
  const j = direction === "up" ? i - 1 : i + 1;
  if (i < 0 || j < 0 || j >= ids.length) throw new DomainError("Cannot move that item further.", { field: "direction" });
  [ids[i], ids[j]] = [ids[j], ids[i]];
  await reorderChecklist(itemId, ids, actor, d);
}

/** Throws unless response `responseId` answers an item of dataset `datasetId`. */
export async function requireResponseOfDataset(datasetId: number, responseId: number, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const { responses, items } = d.t;
  const response = first(
    await d.q
      .select({ itemId: responses.itemId })
      .from(responses)
      .where(and(eq(responses.id, responseId), visible(responses.pendingImportId)))
      .limit(1),
  );
  const item =
    response && first(await d.q.select({ datasetId: items.datasetId }).from(items).where(eq(items.id, response.itemId)).limit(1));
  if (!item || item.datasetId !== datasetId) throw new DomainError("responseId: not a response of this dataset.", { field: "responseId" });
}
