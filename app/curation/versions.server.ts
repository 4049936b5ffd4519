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
import { getDb, schema, visible, type Db } from "~/db.server";
import { DomainError } from "~/errors";
import { kindsWhere } from "~/task-kinds/registry";

type TaskRow = typeof schema.tasks.$inferSelect;

/** A curation change refused (400): frozen version, nothing changed, a bad field; `field` names the form field. */
export class CurationError extends DomainError {
  constructor(message: string, field?: string) {
    super(message, { field });
  }
}

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
type Actor = { userId: number | null; reason: string };

const now = () => Math.floor(Date.now() / 1000);

function requireReason(reason: string): string {
  const r = reason.trim();
  if (!r) throw new CurationError("Say why you are making this change; it goes into the release changelog.", "reason");
  if (r.length > 2000) throw new CurationError("Keep the reason under 2,000 characters.", "reason");
  return r;
}

function datasetOfItem(tx: Tx, itemId: number) {
  const row = tx
    .select({ datasetId: schema.items.datasetId, frozenAt: schema.datasets.frozenAt, version: schema.datasets.version })
    .from(schema.items)
    .innerJoin(schema.datasets, eq(schema.datasets.id, schema.items.datasetId))
    .where(eq(schema.items.id, itemId))
    .get();
  if (!row) throw new CurationError("No such item.", "itemId");
  if (row.frozenAt) {
    throw new CurationError(`Version ${row.version} of this dataset is frozen as a release; start the next version to keep editing.`);
  }
  return row.datasetId;
}

function logEvent(
  tx: Tx,
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
  tx.insert(schema.curationEvents)
    .values({
      datasetId: e.datasetId,
      itemId: e.itemId ?? null,
      entity: e.entity,
      entityId: e.entityId ?? null,
      action: e.action,
      before: e.before ?? null,
      after: e.after ?? null,
      reason: e.reason,
      userId: e.userId,
    })
    .run();
}

/** Marks the current annotations of the given units stale. */
function staleAnnotationsOfUnits(tx: Tx, unitIds: number[]) {
  if (unitIds.length === 0) return 0;
  const assignmentIds = tx
    .select({ id: schema.assignments.id })
    .from(schema.assignments)
    .where(inArray(schema.assignments.unitId, unitIds))
    .all()
    .map((a) => a.id);
  if (assignmentIds.length === 0) return 0;
  return tx
    .update(schema.annotations)
    .set({ staleAt: now() })
    .where(and(inArray(schema.annotations.assignmentId, assignmentIds), isNull(schema.annotations.staleAt)))
    .run().changes;
}

function activeChecklist(tx: Tx, itemId: number) {
  return tx
    .select()
    .from(schema.checklistItems)
    .where(and(eq(schema.checklistItems.itemId, itemId), isNull(schema.checklistItems.retiredAt)))
    .orderBy(asc(schema.checklistItems.position))
    .all();
}

/** Weights re-normalised to sum to 1, when the checklist uses weights at all. */
function renormalise(tx: Tx, itemId: number) {
  const rows = activeChecklist(tx, itemId);
  if (!rows.some((r) => r.weight != null)) return;
  const total = rows.reduce((s, r) => s + (r.weight ?? 0), 0);
  if (total <= 0) throw new CurationError("Weights must add up to more than 0.", "weight");
  for (const r of rows) {
    tx.update(schema.checklistItems)
      .set({ weight: (r.weight ?? 0) / total })
      .where(eq(schema.checklistItems.id, r.id))
      .run();
  }
}

export type StaleCounts = { annotations: number; verdicts: number };

/** Edits a checklist item's text (and optionally weight) as a new version. */
export function editChecklistItem(
  checklistItemId: number,
  change: { text: string; weight?: number | null },
  actor: Actor,
  db: Db = getDb(),
): { id: number; stale: StaleCounts } {
  const reason = requireReason(actor.reason);
  const text = change.text.replace(/\s+/g, " ").trim();
  if (!text) throw new CurationError("A checklist item needs text.", "text");
  return db.transaction((tx) => {
    const old = tx.select().from(schema.checklistItems).where(eq(schema.checklistItems.id, checklistItemId)).get();
    if (!old || old.retiredAt) throw new CurationError("No such active checklist item.", "checklistItemId");
    const datasetId = datasetOfItem(tx, old.itemId);
    const weight = change.weight === undefined ? old.weight : change.weight;
    if (text === old.text && weight === old.weight) throw new CurationError("Nothing changed.", "text");
    tx.update(schema.checklistItems).set({ retiredAt: now() }).where(eq(schema.checklistItems.id, old.id)).run();
    const created = tx
      .insert(schema.checklistItems)
      .values({ itemId: old.itemId, text, weight, position: old.position, version: old.version + 1, previousId: old.id })
      .returning({ id: schema.checklistItems.id })
      .get();
    if (change.weight !== undefined) renormalise(tx, old.itemId);
    const unitIds = tx
      .select({ id: schema.units.id })
      .from(schema.units)
      .where(eq(schema.units.checklistItemId, old.id))
      .all()
      .map((u) => u.id);
    const stale = {
      annotations: staleAnnotationsOfUnits(tx, unitIds),
      verdicts: tx
        .update(schema.verdicts)
        .set({ staleAt: now() })
        .where(and(eq(schema.verdicts.checklistItemId, old.id), isNull(schema.verdicts.staleAt)))
        .run().changes,
    };
    logEvent(tx, {
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

export function addChecklistItem(
  itemId: number,
  change: { text: string; weight?: number | null },
  actor: Actor,
  db: Db = getDb(),
): { id: number } {
  const reason = requireReason(actor.reason);
  const text = change.text.replace(/\s+/g, " ").trim();
  if (!text) throw new CurationError("A checklist item needs text.", "text");
  return db.transaction((tx) => {
    const datasetId = datasetOfItem(tx, itemId);
    const last = tx
      .select({ p: max(schema.checklistItems.position) })
      .from(schema.checklistItems)
      .where(eq(schema.checklistItems.itemId, itemId))
      .get()?.p;
    const created = tx
      .insert(schema.checklistItems)
      .values({ itemId, text, weight: change.weight ?? null, position: (last ?? -1) + 1 })
      .returning({ id: schema.checklistItems.id })
      .get();
    if (change.weight != null) renormalise(tx, itemId);
    logEvent(tx, {
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
export function setChecklistItemRetired(checklistItemId: number, retired: boolean, actor: Actor, db: Db = getDb()) {
  const reason = requireReason(actor.reason);
  db.transaction((tx) => {
    const row = tx.select().from(schema.checklistItems).where(eq(schema.checklistItems.id, checklistItemId)).get();
    if (!row) throw new CurationError("No such checklist item.", "checklistItemId");
    const datasetId = datasetOfItem(tx, row.itemId);
    if (!retired) {
      const replaced = tx
        .select({ id: schema.checklistItems.id })
        .from(schema.checklistItems)
        .where(eq(schema.checklistItems.previousId, row.id))
        .get();
      if (replaced) throw new CurationError("This version was replaced by an edit; restore is only for retired items.", "checklistItemId");
    }
    if (Boolean(row.retiredAt) === retired) throw new CurationError(retired ? "Already retired." : "Not retired.", "checklistItemId");
    tx.update(schema.checklistItems)
      .set({ retiredAt: retired ? now() : null })
      .where(eq(schema.checklistItems.id, row.id))
      .run();
    renormalise(tx, row.itemId);
    logEvent(tx, {
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
export function reorderChecklist(itemId: number, orderedIds: number[], actor: Actor, db: Db = getDb()) {
  const reason = requireReason(actor.reason);
  db.transaction((tx) => {
    const datasetId = datasetOfItem(tx, itemId);
    const rows = activeChecklist(tx, itemId);
    const current = rows.map((r) => r.id);
    if (
      orderedIds.length !== current.length ||
      new Set(orderedIds).size !== current.length ||
      orderedIds.some((id) => !current.includes(id))
    ) {
      throw new CurationError("The new order must list every active checklist item of this item exactly once.", "order");
    }
    orderedIds.forEach((id, position) => tx.update(schema.checklistItems).set({ position }).where(eq(schema.checklistItems.id, id)).run());
    logEvent(tx, { datasetId, itemId, entity: "checklist-item", action: "reorder", before: current, after: orderedIds, ...actor, reason });
  });
}

/**
 * Sets the weights of the active checklist (id → weight ≥ 0) and re-normalises
 * them to sum to 1. Returns the stored weights.
 */
export function reweightChecklist(itemId: number, weights: Record<number, number>, actor: Actor, db: Db = getDb()) {
  const reason = requireReason(actor.reason);
  return db.transaction((tx) => {
    const datasetId = datasetOfItem(tx, itemId);
    const rows = activeChecklist(tx, itemId);
    for (const r of rows) {
      const w = weights[r.id];
      if (w === undefined || !Number.isFinite(w) || w < 0) {
        throw new CurationError(`Give every active checklist item a weight of 0 or more (item ${r.position + 1}).`, `weight-${r.id}`);
      }
    }
    const before = Object.fromEntries(rows.map((r) => [r.id, r.weight]));
    for (const r of rows) tx.update(schema.checklistItems).set({ weight: weights[r.id] }).where(eq(schema.checklistItems.id, r.id)).run();
    renormalise(tx, itemId);
    const after = Object.fromEntries(activeChecklist(tx, itemId).map((r) => [r.id, r.weight]));
    logEvent(tx, { datasetId, itemId, entity: "checklist-item", action: "reweight", before, after, ...actor, reason });
    return after as Record<number, number>;
  });
}

const ITEM_FIELDS = ["query", "passage", "domain", "subject", "taskType", "language"] as const;
type ItemChange = Partial<Record<(typeof ITEM_FIELDS)[number], string | null>>;

/** Edits an item's text or attributes: items.version + 1; the old values live in the changelog. */
export function editItem(itemId: number, change: ItemChange, actor: Actor, db: Db = getDb()): { version: number; stale: StaleCounts } {
  const reason = requireReason(actor.reason);
  if (change.query !== undefined && !change.query?.trim()) throw new CurationError("The prompt cannot be empty.", "query");
  return db.transaction((tx) => {
    const datasetId = datasetOfItem(tx, itemId);
    const old = tx.select().from(schema.items).where(eq(schema.items.id, itemId)).get()!;
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
    tx.update(schema.items)
      .set({ ...(after as Omit<ItemChange, "query"> & { query?: string }), version })
      .where(eq(schema.items.id, itemId))
      .run();
    // What humans and judges saw changed only if the prompt or the passage did.
    let stale: StaleCounts = { annotations: 0, verdicts: 0 };
    if ("query" in after || "passage" in after) {
      const unitIds = tx
        .select({ id: schema.units.id })
        .from(schema.units)
        .where(eq(schema.units.itemId, itemId))
        .all()
        .map((u) => u.id);
      const responseIds = tx
        .select({ id: schema.responses.id })
        .from(schema.responses)
        .where(eq(schema.responses.itemId, itemId))
        .all()
        .map((r) => r.id);
      stale = {
        annotations: staleAnnotationsOfUnits(tx, unitIds),
        verdicts: responseIds.length
          ? tx
              .update(schema.verdicts)
              .set({ staleAt: now() })
              .where(and(inArray(schema.verdicts.responseId, responseIds), isNull(schema.verdicts.staleAt)))
              .run().changes
          : 0,
      };
    }
    logEvent(tx, {
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
export function setReference(
  itemId: number,
  text: string,
  opts: Actor & { provenance?: "edited" | "promoted"; promotedFromResponseId?: number; justification?: number[] },
  db: Db = getDb(),
): { id: number; version: number; stale: StaleCounts } {
  const reason = requireReason(opts.reason);
  const body = text.trim();
  if (!body) throw new CurationError("A reference needs text.", "text");
  return db.transaction((tx) => {
    const datasetId = datasetOfItem(tx, itemId);
    const current = tx
      .select()
      .from(schema.references)
      .where(and(eq(schema.references.itemId, itemId), eq(schema.references.isCurrent, true)))
      .get();
    if (current && current.text === body) throw new CurationError("That is already the current reference.", "text");
    const top =
      tx
        .select({ v: max(schema.references.version) })
        .from(schema.references)
        .where(eq(schema.references.itemId, itemId))
        .get()?.v ?? 0;
    tx.update(schema.references).set({ isCurrent: false }).where(eq(schema.references.itemId, itemId)).run();
    const created = tx
      .insert(schema.references)
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
      .returning({ id: schema.references.id })
      .get();
    const unitIds = tx
      .select({ id: schema.units.id })
      .from(schema.units)
      .innerJoin(schema.tasks, eq(schema.tasks.id, schema.units.taskId))
      .where(
        and(
          eq(schema.units.itemId, itemId),
          // Kinds whose labels always judge the reference (shown as the anchor, or compared as a response), or a task that shows it.
          or(
            inArray(schema.tasks.kind, kindsWhere((k) => k.labelsJudgeReference) as TaskRow["kind"][]),
            sql`json_extract(${schema.tasks.config}, '$.showReference') = 1`,
          ),
        ),
      )
      .all()
      .map((u) => u.id);
    const responseIds = tx
      .select({ id: schema.responses.id })
      .from(schema.responses)
      .where(eq(schema.responses.itemId, itemId))
      .all()
      .map((r) => r.id);
    const stale = {
      annotations: staleAnnotationsOfUnits(tx, unitIds),
      verdicts: responseIds.length
        ? tx
            .update(schema.verdicts)
            .set({ staleAt: now() })
            .where(
              and(
                inArray(schema.verdicts.responseId, responseIds),
                isNull(schema.verdicts.checklistItemId),
                isNull(schema.verdicts.staleAt),
              ),
            )
            .run().changes
        : 0,
    };
    logEvent(tx, {
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
export function promoteResponse(responseId: number, opts: Actor & { justification?: number[] }, db: Db = getDb()) {
  const response = db
    .select()
    .from(schema.responses)
    .where(and(eq(schema.responses.id, responseId), visible(schema.responses.pendingImportId)))
    .get();
  if (!response) throw new CurationError("No such response.", "responseId");
  return setReference(response.itemId, response.text, { ...opts, provenance: "promoted", promotedFromResponseId: response.id }, db);
}

/** Freezes a dataset version as a release. */
export function freezeDataset(datasetId: number, actor: Actor, db: Db = getDb()) {
  const reason = requireReason(actor.reason);
  db.transaction((tx) => {
    const ds = tx.select().from(schema.datasets).where(eq(schema.datasets.id, datasetId)).get();
    if (!ds) throw new CurationError("No such dataset.", "datasetId");
    if (ds.frozenAt) throw new CurationError(`Version ${ds.version} is already frozen.`);
    tx.update(schema.datasets).set({ frozenAt: now() }).where(eq(schema.datasets.id, datasetId)).run();
    logEvent(tx, { datasetId, entity: "dataset", entityId: datasetId, action: "freeze", after: { version: ds.version }, ...actor, reason });
  });
}

/**
 * Starts the next version of a frozen dataset: copies its items, active
 * checklists and current references. Responses, verdicts and labels stay with
 * the version they were made on.
 */
export function startNextVersion(datasetId: number, actor: Actor, db: Db = getDb()): { id: number; version: number } {
  const reason = requireReason(actor.reason);
  return db.transaction((tx) => {
    const ds = tx.select().from(schema.datasets).where(eq(schema.datasets.id, datasetId)).get();
    if (!ds) throw new CurationError("No such dataset.", "datasetId");
    const top = tx
      .select({ v: max(schema.datasets.version) })
      .from(schema.datasets)
      .where(and(eq(schema.datasets.projectId, ds.projectId), eq(schema.datasets.name, ds.name)))
      .get()!.v!;
    if (top !== ds.version) throw new CurationError(`Version ${top} already exists; edit that one.`);
    if (!ds.frozenAt) throw new CurationError(`Freeze version ${ds.version} as a release before starting the next one.`);
    const next = tx
      .insert(schema.datasets)
      .values({ projectId: ds.projectId, name: ds.name, version: ds.version + 1, source: ds.source, licenseNote: ds.licenseNote })
      .returning({ id: schema.datasets.id })
      .get();
    const items = tx.select().from(schema.items).where(eq(schema.items.datasetId, datasetId)).all();
    for (const it of items) {
      const copy = tx
        .insert(schema.items)
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
        .returning({ id: schema.items.id })
        .get();
      for (const c of activeChecklist(tx, it.id)) {
        tx.insert(schema.checklistItems)
          .values({ itemId: copy.id, text: c.text, weight: c.weight, position: c.position, version: c.version })
          .run();
      }
      const ref = tx
        .select()
        .from(schema.references)
        .where(and(eq(schema.references.itemId, it.id), eq(schema.references.isCurrent, true)))
        .get();
      if (ref) {
        tx.insert(schema.references)
          .values({
            itemId: copy.id,
            text: ref.text,
            version: ref.version,
            provenance: ref.provenance,
            reason: ref.reason,
            createdBy: ref.createdBy,
          })
          .run();
      }
    }
    logEvent(tx, {
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
export function addChecklistItems(itemId: number, texts: string[], actor: Actor, db: Db = getDb()): { ids: number[] } {
  const clean = texts.map((t) => t.replace(/\s+/g, " ").trim()).filter(Boolean);
  if (clean.length === 0) throw new CurationError("The draft has no items left to add.", "items");
  if (clean.length > 50) throw new CurationError("Add at most 50 items at once.", "items");
  return db.transaction((tx) => ({ ids: clean.map((text) => addChecklistItem(itemId, { text }, actor, tx as unknown as Db).id) }));
}
