/**
 * The write side of benchmark curation. Every change is versioned and logged:
 * - editing a checklist item or a reference creates a new row (version + 1) and
 *   keeps the old one, so annotations and verdicts keep pointing at the version
 *   they judged; those are marked stale (staleAt) for the new version;
 * - editing an item bumps items.version and keeps the old text in the changelog;
 * - each change writes a curation_events row: what, before, after, who, why.
 * A frozen dataset version is read-only; start the next version to keep editing.
 */
import { and, asc, eq, inArray, isNull, max, or, sql } from "drizzle-orm";
import { dalOf, first, getDal, type Dal, type DalLike, type Q } from "~/dal.server";
import { visible } from "~/db.server";
import { DomainError } from "~/errors";
import { kindsWhere } from "~/task-kinds/registry";
import type * as schema from "../../db/schema";

type TaskRow = typeof schema.tasks.$inferSelect;

/** A curation change refused (400): frozen version, nothing changed, a bad field; `field` names the form field. */
export class CurationError extends DomainError {
  constructor(message: string, field?: string) {
    super(message, { field });
  }
}

type Actor = { userId: number | null; reason: string };

const now = () => Math.floor(Date.now() / 1000);

function requireReason(reason: string): string {
  const r = reason.trim();
  if (!r) throw new CurationError("Say why you are making this change; it goes into the release changelog.", "reason");
  if (r.length > 2000) throw new CurationError("Keep the reason under 2,000 characters.", "reason");
  return r;
}

async function datasetOfItem(d: Dal, q: Q, itemId: number) {
  const { items, datasets } = d.t;
  const row = first(
    await q
      .select({ datasetId: items.datasetId, frozenAt: datasets.frozenAt, version: datasets.version })
      .from(items)
      .innerJoin(datasets, eq(datasets.id, items.datasetId))
      .where(eq(items.id, itemId))
      .limit(1),
  );
  if (!row) throw new CurationError("No such item.", "itemId");
  if (row.frozenAt) {
    throw new CurationError(`Version ${row.version} of this dataset is frozen as a release; start the next version to keep editing.`);
  }
  return row.datasetId;
}

async function logEvent(
  d: Dal,
  q: Q,
  e: {
    datasetId: number;
    itemId?: number | null;
    entity: (typeof schema.CURATION_ENTITIES)[number];
    entityId?: number | null;
    action: string;
    before?: unknown;
    after?: unknown;
  } & Actor,
) {
  await q.insert(d.t.curationEvents).values({
    datasetId: e.datasetId,
    itemId: e.itemId ?? null,
    entity: e.entity,
    entityId: e.entityId ?? null,
    action: e.action,
    before: e.before ?? null,
    after: e.after ?? null,
    reason: e.reason,
    userId: e.userId,
  });
}

/** Marks the current annotations of the given units stale; returns how many. */
async function staleAnnotationsOfUnits(d: Dal, q: Q, unitIds: number[]) {
  if (unitIds.length === 0) return 0;
  const { assignments, annotations } = d.t;
  const assignmentIds = (await q.select({ id: assignments.id }).from(assignments).where(inArray(assignments.unitId, unitIds))).map(
    (a) => a.id,
  );
  if (assignmentIds.length === 0) return 0;
  const changed = await q
    .update(annotations)
    .set({ staleAt: now() })
    .where(and(inArray(annotations.assignmentId, assignmentIds), isNull(annotations.staleAt)))
    .returning({ id: annotations.id });
  return changed.length;
}

/** Marks the given verdicts stale (those not stale yet); returns how many. */
async function staleVerdicts(d: Dal, q: Q, where: ReturnType<typeof and>) {
  const v = d.t.verdicts;
  const changed = await q
    .update(v)
    .set({ staleAt: now() })
    .where(and(where, isNull(v.staleAt)))
    .returning({ id: v.id });
  return changed.length;
}

function activeChecklist(d: Dal, q: Q, itemId: number) {
  const c = d.t.checklistItems;
  return q
    .select()
    .from(c)
    .where(and(eq(c.itemId, itemId), isNull(c.retiredAt)))
    .orderBy(asc(c.position));
}

/** Weights re-normalised to sum to 1, when the checklist uses weights at all. */
async function renormalise(d: Dal, q: Q, itemId: number) {
  const rows = await activeChecklist(d, q, itemId);
  if (!rows.some((r) => r.weight != null)) return;
  const total = rows.reduce((s, r) => s + (r.weight ?? 0), 0);
  if (total <= 0) throw new CurationError("Weights must add up to more than 0.", "weight");
  for (const r of rows) {
    await q
      .update(d.t.checklistItems)
      .set({ weight: (r.weight ?? 0) / total })
      .where(eq(d.t.checklistItems.id, r.id));
  }
}

export type StaleCounts = { annotations: number; verdicts: number };

/** Edits a checklist item's text (and optionally weight) as a new version. */
export async function editChecklistItem(
  checklistItemId: number,
  change: { text: string; weight?: number | null },
  actor: Actor,
  db: DalLike = getDal(),
): Promise<{ id: number; stale: StaleCounts }> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const text = change.text.replace(/\s+/g, " ").trim();
  if (!text) throw new CurationError("A checklist item needs text.", "text");
  const { checklistItems, units, verdicts } = d.t;
  return d.tx(async (q) => {
    const old = first(await q.select().from(checklistItems).where(eq(checklistItems.id, checklistItemId)).limit(1));
    if (!old || old.retiredAt) throw new CurationError("No such active checklist item.", "checklistItemId");
    const datasetId = await datasetOfItem(d, q, old.itemId);
    const weight = change.weight === undefined ? old.weight : change.weight;
    if (text === old.text && weight === old.weight) throw new CurationError("Nothing changed.", "text");
    await q.update(checklistItems).set({ retiredAt: now() }).where(eq(checklistItems.id, old.id));
    const [created] = await q
      .insert(checklistItems)
      .values({ itemId: old.itemId, text, weight, position: old.position, version: old.version + 1, previousId: old.id })
      .returning({ id: checklistItems.id });
    if (change.weight !== undefined) await renormalise(d, q, old.itemId);
    const unitIds = (await q.select({ id: units.id }).from(units).where(eq(units.checklistItemId, old.id))).map((u) => u.id);
    const stale = {
      annotations: await staleAnnotationsOfUnits(d, q, unitIds),
      verdicts: await staleVerdicts(d, q, eq(verdicts.checklistItemId, old.id)),
    };
    await logEvent(d, q, {
      datasetId,
      itemId: old.itemId,
      entity: "checklist-item",
      entityId: created.id,
      action: "edit",
      before: { id: old.id, version: old.version, text: old.text, weight: old.weight },
      after: { id: created.id, version: old.version + 1, text, weight },
      ...actor,
      reason,
    });
    return { id: created.id, stale };
  });
}

export async function addChecklistItem(
  itemId: number,
  change: { text: string; weight?: number | null },
  actor: Actor,
  db: DalLike = getDal(),
): Promise<{ id: number }> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const text = change.text.replace(/\s+/g, " ").trim();
  if (!text) throw new CurationError("A checklist item needs text.", "text");
  const c = d.t.checklistItems;
  return d.tx(async (q) => {
    const datasetId = await datasetOfItem(d, q, itemId);
    const last = first(
      await q
        .select({ p: max(c.position) })
        .from(c)
        .where(eq(c.itemId, itemId)),
    )?.p;
    const [created] = await q
      .insert(c)
      .values({ itemId, text, weight: change.weight ?? null, position: (last ?? -1) + 1 })
      .returning({ id: c.id });
    if (change.weight != null) await renormalise(d, q, itemId);
    await logEvent(d, q, {
      datasetId,
      itemId,
      entity: "checklist-item",
      entityId: created.id,
      action: "add",
      after: { text, weight: change.weight ?? null },
      ...actor,
      reason,
    });
    return created;
  });
}

/** Retires (or restores) a checklist item; weights are re-normalised over the rest. */
export async function setChecklistItemRetired(
  checklistItemId: number,
  retired: boolean,
  actor: Actor,
  db: DalLike = getDal(),
): Promise<void> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const c = d.t.checklistItems;
  await d.tx(async (q) => {
    const row = first(await q.select().from(c).where(eq(c.id, checklistItemId)).limit(1));
    if (!row) throw new CurationError("No such checklist item.", "checklistItemId");
    const datasetId = await datasetOfItem(d, q, row.itemId);
    if (!retired) {
      const replaced = first(await q.select({ id: c.id }).from(c).where(eq(c.previousId, row.id)).limit(1));
      if (replaced) throw new CurationError("This version was replaced by an edit; restore is only for retired items.", "checklistItemId");
    }
    if (Boolean(row.retiredAt) === retired) throw new CurationError(retired ? "Already retired." : "Not retired.", "checklistItemId");
    await q
      .update(c)
      .set({ retiredAt: retired ? now() : null })
      .where(eq(c.id, row.id));
    await renormalise(d, q, row.itemId);
    await logEvent(d, q, {
      datasetId,
      itemId: row.itemId,
      entity: "checklist-item",
      entityId: row.id,
      action: retired ? "retire" : "restore",
      before: { text: row.text },
      ...actor,
      reason,
    });
  });
}

/** Puts the active checklist in the given order (every active id exactly once). */
export async function reorderChecklist(itemId: number, orderedIds: number[], actor: Actor, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const c = d.t.checklistItems;
  await d.tx(async (q) => {
    const datasetId = await datasetOfItem(d, q, itemId);
    const rows = await activeChecklist(d, q, itemId);
    const current = rows.map((r) => r.id);
    if (
      orderedIds.length !== current.length ||
      new Set(orderedIds).size !== current.length ||
      orderedIds.some((id) => !current.includes(id))
    ) {
      throw new CurationError("The new order must list every active checklist item of this item exactly once.", "order");
    }
    for (const [position, id] of orderedIds.entries()) await q.update(c).set({ position }).where(eq(c.id, id));
    await logEvent(d, q, {
      datasetId,
      itemId,
      entity: "checklist-item",
      action: "reorder",
      before: current,
      after: orderedIds,
      ...actor,
      reason,
    });
  });
}

/**
 * Sets the weights of the active checklist (id → weight ≥ 0) and re-normalises
 * them to sum to 1. Returns the stored weights.
 */
export async function reweightChecklist(
  itemId: number,
  weights: Record<number, number>,
  actor: Actor,
  db: DalLike = getDal(),
): Promise<Record<number, number>> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const c = d.t.checklistItems;
  return d.tx(async (q) => {
    const datasetId = await datasetOfItem(d, q, itemId);
    const rows = await activeChecklist(d, q, itemId);
    for (const r of rows) {
      const w = weights[r.id];
      if (w === undefined || !Number.isFinite(w) || w < 0) {
        throw new CurationError(`Give every active checklist item a weight of 0 or more (item ${r.position + 1}).`, `weight-${r.id}`);
      }
    }
    const before = Object.fromEntries(rows.map((r) => [r.id, r.weight]));
    for (const r of rows) await q.update(c).set({ weight: weights[r.id] }).where(eq(c.id, r.id));
    await renormalise(d, q, itemId);
    const after = Object.fromEntries((await activeChecklist(d, q, itemId)).map((r) => [r.id, r.weight]));
    await logEvent(d, q, { datasetId, itemId, entity: "checklist-item", action: "reweight", before, after, ...actor, reason });
    return after as Record<number, number>;
  });
}

const ITEM_FIELDS = ["query", "passage", "domain", "subject", "taskType", "language"] as const;
type ItemChange = Partial<Record<(typeof ITEM_FIELDS)[number], string | null>>;

/** Edits an item's text or attributes: items.version + 1; the old values live in the changelog. */
export async function editItem(
  itemId: number,
  change: ItemChange,
  actor: Actor,
  db: DalLike = getDal(),
): Promise<{ version: number; stale: StaleCounts }> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  if (change.query !== undefined && !change.query?.trim()) throw new CurationError("The prompt cannot be empty.", "query");
  const { items, units, responses, verdicts } = d.t;
  return d.tx(async (q) => {
    const datasetId = await datasetOfItem(d, q, itemId);
    const old = first(await q.select().from(items).where(eq(items.id, itemId)).limit(1))!;
    const before: ItemChange = {};
    const after: ItemChange = {};
    for (const f of ITEM_FIELDS) {
      if (change[f] === undefined) continue;
      const v = change[f] === "" && f !== "query" ? null : change[f];
      if (v !== old[f]) {
        before[f] = old[f];
        after[f] = v;
      }
    }
    if (Object.keys(after).length === 0) throw new CurationError("Nothing changed.", "query");
    const version = old.version + 1;
    if (after.query === null) throw new CurationError("The prompt cannot be empty.", "query");
    await q
      .update(items)
      .set({ ...(after as Omit<ItemChange, "query"> & { query?: string }), version })
      .where(eq(items.id, itemId));
    // What humans and judges saw changed only if the prompt or the passage did.
    let stale: StaleCounts = { annotations: 0, verdicts: 0 };
    if ("query" in after || "passage" in after) {
      const unitIds = (await q.select({ id: units.id }).from(units).where(eq(units.itemId, itemId))).map((u) => u.id);
      const responseIds = (await q.select({ id: responses.id }).from(responses).where(eq(responses.itemId, itemId))).map((r) => r.id);
      stale = {
        annotations: await staleAnnotationsOfUnits(d, q, unitIds),
        verdicts: responseIds.length ? await staleVerdicts(d, q, inArray(verdicts.responseId, responseIds)) : 0,
      };
    }
    await logEvent(d, q, {
      datasetId,
      itemId,
      entity: "item",
      entityId: itemId,
      action: "edit",
      before: { version: old.version, ...before },
      after: { version, ...after },
      ...actor,
      reason,
    });
    return { version, stale };
  });
}

/**
 * Makes `text` the item's current reference as a new version. Human labels
 * that used the reference as their anchor (writing quality, best-of-N, and
 * appropriateness tasks that show it) and whole-response judge scores are
 * marked stale.
 */
export async function setReference(
  itemId: number,
  text: string,
  opts: Actor & { provenance?: "edited" | "promoted"; promotedFromResponseId?: number; justification?: number[] },
  db: DalLike = getDal(),
): Promise<{ id: number; version: number; stale: StaleCounts }> {
  const d = dalOf(db);
  const reason = requireReason(opts.reason);
  const body = text.trim();
  if (!body) throw new CurationError("A reference needs text.", "text");
  const { references, units, tasks, responses, verdicts } = d.t;
  // A task whose config shows the reference (showReference true; SQLite's json_extract reads true as 1).
  const showsReference =
    d.dialect === "postgres"
      ? sql`(${tasks.config} -> 'showReference') IN ('true'::jsonb, '1'::jsonb)`
      : sql`json_extract(${tasks.config}, '$.showReference') = 1`;
  return d.tx(async (q) => {
    const datasetId = await datasetOfItem(d, q, itemId);
    const current = first(
      await q
        .select()
        .from(references)
        .where(and(eq(references.itemId, itemId), eq(references.isCurrent, true)))
        .limit(1),
    );
    if (current && current.text === body) throw new CurationError("That is already the current reference.", "text");
    const top =
      first(
        await q
          .select({ v: max(references.version) })
          .from(references)
          .where(eq(references.itemId, itemId)),
      )?.v ?? 0;
    await q.update(references).set({ isCurrent: false }).where(eq(references.itemId, itemId));
    const [created] = await q
      .insert(references)
      .values({
        itemId,
        text: body,
        version: top + 1,
        isCurrent: true,
        provenance: opts.provenance ?? "edited",
        reason,
        promotedFromResponseId: opts.promotedFromResponseId ?? null,
        justification: opts.justification ?? null,
        createdBy: opts.userId,
      })
      .returning({ id: references.id });
    const unitIds = (
      await q
        .select({ id: units.id })
        .from(units)
        .innerJoin(tasks, eq(tasks.id, units.taskId))
        .where(
          and(
            eq(units.itemId, itemId),
            // Kinds whose labels always judge the reference (shown as the anchor, or compared as a response), or a task that shows it.
            or(inArray(tasks.kind, kindsWhere((k) => k.labelsJudgeReference) as TaskRow["kind"][]), showsReference),
          ),
        )
    ).map((u) => u.id);
    const responseIds = (await q.select({ id: responses.id }).from(responses).where(eq(responses.itemId, itemId))).map((r) => r.id);
    const stale = {
      annotations: await staleAnnotationsOfUnits(d, q, unitIds),
      verdicts: responseIds.length
        ? await staleVerdicts(d, q, and(inArray(verdicts.responseId, responseIds), isNull(verdicts.checklistItemId)))
        : 0,
    };
    await logEvent(d, q, {
      datasetId,
      itemId,
      entity: "reference",
      entityId: created.id,
      action: opts.provenance === "promoted" ? "promote" : "edit",
      before: current ? { id: current.id, version: current.version, text: current.text } : null,
      after: {
        id: created.id,
        version: top + 1,
        promotedFromResponseId: opts.promotedFromResponseId ?? null,
        justification: opts.justification ?? null,
      },
      userId: opts.userId,
      reason,
    });
    return { id: created.id, version: top + 1, stale };
  });
}

/** Promotes a model response to be its item's reference (RAVEL reference optimisation). */
export async function promoteResponse(
  responseId: number,
  opts: Actor & { justification?: number[] },
  db: DalLike = getDal(),
): Promise<{ id: number; version: number; stale: StaleCounts }> {
  const d = dalOf(db);
  const r = d.t.responses;
  const response = first(
    await d.q
      .select()
      .from(r)
      .where(and(eq(r.id, responseId), visible(r.pendingImportId)))
      .limit(1),
  );
  if (!response) throw new CurationError("No such response.", "responseId");
  return setReference(response.itemId, response.text, { ...opts, provenance: "promoted", promotedFromResponseId: response.id }, d);
}

/** Freezes a dataset version as a release. */
export async function freezeDataset(datasetId: number, actor: Actor, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const ds = d.t.datasets;
  await d.tx(async (q) => {
    const row = first(await q.select().from(ds).where(eq(ds.id, datasetId)).limit(1));
    if (!row) throw new CurationError("No such dataset.", "datasetId");
    if (row.frozenAt) throw new CurationError(`Version ${row.version} is already frozen.`);
    await q.update(ds).set({ frozenAt: now() }).where(eq(ds.id, datasetId));
    await logEvent(d, q, {
      datasetId,
      entity: "dataset",
      entityId: datasetId,
      action: "freeze",
      after: { version: row.version },
      ...actor,
      reason,
    });
  });
}

/**
 * Starts the next version of a frozen dataset: copies its items, active
 * checklists and current references. Responses, verdicts and labels stay with
 * the version they were made on.
 */
export async function startNextVersion(datasetId: number, actor: Actor, db: DalLike = getDal()): Promise<{ id: number; version: number }> {
  const d = dalOf(db);
  const reason = requireReason(actor.reason);
  const { datasets, items, checklistItems, references } = d.t;
  return d.tx(async (q) => {
    const ds = first(await q.select().from(datasets).where(eq(datasets.id, datasetId)).limit(1));
    if (!ds) throw new CurationError("No such dataset.", "datasetId");
    const top = first(
      await q
        .select({ v: max(datasets.version) })
        .from(datasets)
        .where(and(eq(datasets.projectId, ds.projectId), eq(datasets.name, ds.name))),
    )!.v!;
    if (top !== ds.version) throw new CurationError(`Version ${top} already exists; edit that one.`);
    if (!ds.frozenAt) throw new CurationError(`Freeze version ${ds.version} as a release before starting the next one.`);
    const [next] = await q
      .insert(datasets)
      .values({ projectId: ds.projectId, name: ds.name, version: ds.version + 1, source: ds.source, licenseNote: ds.licenseNote })
      .returning({ id: datasets.id });
    const rows = await q.select().from(items).where(eq(items.datasetId, datasetId));
    for (const it of rows) {
      const [copy] = await q
        .insert(items)
        .values({
          datasetId: next.id,
          sourceId: it.sourceId,
          query: it.query,
          passage: it.passage,
          domain: it.domain,
          subject: it.subject,
          taskType: it.taskType,
          language: it.language,
          metadata: it.metadata,
          version: it.version,
        })
        .returning({ id: items.id });
      for (const c of await activeChecklist(d, q, it.id)) {
        await q
          .insert(checklistItems)
          .values({ itemId: copy.id, text: c.text, weight: c.weight, position: c.position, version: c.version });
      }
      const ref = first(
        await q
          .select()
          .from(references)
          .where(and(eq(references.itemId, it.id), eq(references.isCurrent, true)))
          .limit(1),
      );
      if (ref) {
        await q.insert(references).values({
          itemId: copy.id,
          text: ref.text,
          version: ref.version,
          provenance: ref.provenance,
          reason: ref.reason,
          createdBy: ref.createdBy,
        });
      }
    }
    await logEvent(d, q, {
      datasetId: next.id,
      entity: "dataset",
      entityId: next.id,
      action: "new-version",
      before: { version: ds.version },
      after: { version: ds.version + 1 },
      ...actor,
      reason,
    });
    return { id: next.id, version: ds.version + 1 };
  });
}

/** Adds several checklist items at once (an edited draft), all or nothing. */
export async function addChecklistItems(itemId: number, texts: string[], actor: Actor, db: DalLike = getDal()): Promise<{ ids: number[] }> {
  const d = dalOf(db);
  const clean = texts.map((t) => t.replace(/\s+/g, " ").trim()).filter(Boolean);
  if (clean.length === 0) throw new CurationError("The draft has no items left to add.", "items");
  if (clean.length > 50) throw new CurationError("Add at most 50 items at once.", "items");
  // Each addChecklistItem's transaction joins this one.
  return d.tx(async () => {
    const ids: number[] = [];
    for (const text of clean) ids.push((await addChecklistItem(itemId, { text }, actor, d)).id);
    return { ids };
  });
}
