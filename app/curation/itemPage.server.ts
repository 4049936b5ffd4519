/**
 * What the curation item page shows: the item (only through a dataset of the
 * project), its checklist split into live and retired items, its flags, its
 * references with their authors, its curation history and stale labels, and
 * the project's providers for drafting.
 */
import { and, asc, desc, eq } from "drizzle-orm";
import { getDb, schema, type Db } from "~/db.server";
import { findDataset } from "~/benchmark/browse.server";
import { allFlags } from "./flags.server";
import { staleSummary } from "./requeue.server";

/** Item `itemId` of dataset `datasetId` of the project, with its dataset; null when either is not there. */
export function findItemOfDataset(projectId: number, datasetId: number, itemId: number, db: Db = getDb()) {
  const dataset = findDataset(projectId, datasetId, db);
  if (!dataset) return { dataset: null, item: null };
  const item = db
    .select()
    .from(schema.items)
    .where(and(eq(schema.items.id, itemId), eq(schema.items.datasetId, dataset.id)))
    .get();
  return { dataset, item: item ?? null };
}

/**
 * The page's data. Checklist items in position order, newest version first;
 * `retired` leaves out the versions an edit replaced (they are the history of
 * a live item, not retired items); `weighted` when a live item has a weight.
 * References newest version first, the history newest event first.
 */
export function itemCurationView(
  projectId: number,
  dataset: typeof schema.datasets.$inferSelect,
  item: typeof schema.items.$inferSelect,
  db: Db = getDb(),
) {
  const checklist = db
    .select()
    .from(schema.checklistItems)
    .where(eq(schema.checklistItems.itemId, item.id))
    .orderBy(asc(schema.checklistItems.position), desc(schema.checklistItems.version))
    .all();
  const replaced = new Set(checklist.map((c) => c.previousId).filter((id): id is number => id != null));
  const flags = allFlags(projectId, dataset.id, undefined, db).flags.filter((f) => f.itemId === item.id);
  const references = db
    .select({
      id: schema.references.id,
      text: schema.references.text,
      version: schema.references.version,
      isCurrent: schema.references.isCurrent,
      provenance: schema.references.provenance,
      reason: schema.references.reason,
      justification: schema.references.justification,
      promotedFromResponseId: schema.references.promotedFromResponseId,
      createdAt: schema.references.createdAt,
      by: schema.users.name,
    })
    .from(schema.references)
    .leftJoin(schema.users, eq(schema.users.id, schema.references.createdBy))
    .where(eq(schema.references.itemId, item.id))
    .orderBy(desc(schema.references.version))
    .all();
  const history = db
    .select({
      id: schema.curationEvents.id,
      entity: schema.curationEvents.entity,
      action: schema.curationEvents.action,
      reason: schema.curationEvents.reason,
      createdAt: schema.curationEvents.createdAt,
      by: schema.users.name,
    })
    .from(schema.curationEvents)
    .leftJoin(schema.users, eq(schema.users.id, schema.curationEvents.userId))
    .where(eq(schema.curationEvents.itemId, item.id))
    .orderBy(desc(schema.curationEvents.id))
    .all();
  return {
    dataset: { id: dataset.id, name: dataset.name, version: dataset.version, frozen: Boolean(dataset.frozenAt) },
    item: {
      id: item.id,
      sourceId: item.sourceId,
      query: item.query,
      passage: item.passage,
      domain: item.domain,
      subject: item.subject,
      version: item.version,
    },
    active: checklist.filter((c) => !c.retiredAt),
    retired: checklist.filter((c) => c.retiredAt && !replaced.has(c.id)),
    weighted: checklist.some((c) => !c.retiredAt && c.weight != null),
    flags,
    references,
    history,
    stale: staleSummary(projectId, { itemId: item.id }, db),
    providers: db
      .select({ id: schema.providers.id, name: schema.providers.name, model: schema.providers.model })
      .from(schema.providers)
      .where(eq(schema.providers.projectId, projectId))
      .orderBy(asc(schema.providers.name))
      .all(),
  };
}
