/**
 * Looking up a gold unit (a unit with a known answer that scores annotators)
 * for the task page's "save the gold answer" form: the unit must be a gold unit
 * of this very task, and the task's kind must be one that is labelled.
 * Refusals are DomainErrors. Also the gold units as the task page lists them (goldUnitsView).
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { DomainError } from "~/errors.server";
import { findKind } from "~/task-kinds/registry";
import type { ResponseKey } from "~/task-kinds/types";
import { isAnnotatable, type AnnotatableKind } from "./config";
import { labelToForm } from "./labels";
import { letter } from "./random";

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

/**
 * The gold units of a task as its (researcher) page lists them, by position: what each is about (item, prompt,
 * passage, checklist item, the response, the reference when the kind's gold form shows it), whether its known
 * answer is set, that answer as the kind's form values, and for multi-response kinds each response by letter with
 * its model — the researcher is not blind; annotators never see this view.
 */
export async function goldUnitsView(task: { id: number; kind: string }, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { units, items: itemsT, checklistItems, references: referencesT, responses: responsesT } = d.t;
  const goldUnits = await d.q
    .select({
      id: units.id,
      position: units.position,
      goldLabel: units.goldLabel,
      responseIds: units.responseIds,
      responseId: units.responseId,
      itemId: units.itemId,
      checklistItemId: units.checklistItemId,
    })
    .from(units)
    .where(and(eq(units.taskId, task.id), eq(units.isGold, true)))
    .orderBy(asc(units.position));
  // Multi-response kinds: the researcher (not blind) sees which response each letter is.
  const rids = [
    ...new Set(
      goldUnits.flatMap((g) =>
        [...(g.responseIds ?? []), ...(g.responseId != null ? [g.responseId] : [])].filter((r): r is number => r !== "reference"),
      ),
    ),
  ];
  // What each gold unit is about, so the known answer is entered with the content in view.
  const itemIds = [...new Set(goldUnits.map((g) => g.itemId))];
  const items = new Map(
    (itemIds.length
      ? await d.q
          .select({ id: itemsT.id, sourceId: itemsT.sourceId, query: itemsT.query, passage: itemsT.passage })
          .from(itemsT)
          .where(inArray(itemsT.id, itemIds))
      : []
    ).map((i) => [i.id, i]),
  );
  const checklistIds = goldUnits.map((g) => g.checklistItemId).filter((c): c is number => c != null);
  const checklistTexts = new Map(
    (checklistIds.length
      ? await d.q
          .select({ id: checklistItems.id, text: checklistItems.text })
          .from(checklistItems)
          .where(inArray(checklistItems.id, checklistIds))
      : []
    ).map((c) => [c.id, c.text]),
  );
  const references = new Map(
    (itemIds.length
      ? await d.q
          .select({ itemId: referencesT.itemId, text: referencesT.text })
          .from(referencesT)
          .where(and(inArray(referencesT.itemId, itemIds), eq(referencesT.isCurrent, true)))
      : []
    ).map((r) => [r.itemId, r.text]),
  );
  const responses = new Map(
    (rids.length
      ? await d.q
          .select({ id: responsesT.id, model: responsesT.model, text: responsesT.text })
          .from(responsesT)
          .where(inArray(responsesT.id, rids))
      : []
    ).map((r) => [r.id, r]),
  );
  return goldUnits.map((g) => {
    const order: ResponseKey[] = g.responseIds ?? [];
    let stored: unknown = null;
    try {
      stored = g.goldLabel == null ? null : JSON.parse(g.goldLabel);
    } catch {
      stored = g.goldLabel;
    }
    const item = items.get(g.itemId);
    const single = g.responseId != null ? responses.get(g.responseId) : undefined;
    return {
      id: g.id,
      position: g.position,
      known: g.goldLabel != null,
      content: {
        item: item?.sourceId ?? `#${g.itemId}`,
        query: item?.query ?? "",
        passage: item?.passage ?? null,
        checklistItem: g.checklistItemId != null ? (checklistTexts.get(g.checklistItemId) ?? null) : null,
        response: single ? { model: single.model, text: single.text } : null,
        reference: findKind(task.kind)?.goldShowsReference ? (references.get(g.itemId) ?? null) : null,
      },
      values: isAnnotatable(task.kind)
        ? labelToForm(task.kind, stored == null ? null : { label: stored, penaltyReasons: null, notes: null }, order)
        : {},
      responses: order.map((key, i) => {
        const r = key === "reference" ? null : responses.get(key);
        return {
          letter: letter(i),
          reference: key === "reference",
          model: r?.model ?? null,
          preview: r ? r.text.slice(0, 140) : null,
          text: key === "reference" ? (references.get(g.itemId) ?? "") : (r?.text ?? ""),
        };
      }),
    };
  });
}
