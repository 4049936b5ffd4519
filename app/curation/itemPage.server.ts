/**
 * What the curation item page shows: the item (only through a dataset of the
 * project), its checklist split into live and retired items, its flags, its
 * references with their authors, its curation history and stale labels, and
 * the project's providers for drafting.
 */
import { and, asc, desc, eq } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { findDataset } from "~/benchmark/browse.server";
import type * as schema from "../../db/schema";
import { allFlags } from "./flags.server";
import { staleSummary } from "./requeue.server";

/** Item `itemId` of dataset `datasetId` of the project, with its dataset; null when either is not there. */
export async function findItemOfDataset(projectId: number, datasetId: number, itemId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const dataset = await findDataset(projectId, datasetId, d);
  if (!dataset) return { dataset: null, item: null };
  const items = d.t.items;
  const item = first(
    await d.q
      .select()
      .from(items)
      .where(and(eq(items.id, itemId), eq(items.datasetId, dataset.id)))
      .limit(1),
  );
  return { dataset, item: item ?? null };
}

/**
 * The page's data. Checklist items in position order, newest version first;
 * `retired` leaves out the versions an edit replaced (they are the history of
 * a live item, not retired items); `weighted` when a live item has a weight.
 * References newest version first, the history newest event first.
 */
export async function itemCurationView(
  projectId: number,
  dataset: typeof schema.datasets.$inferSelect,
  item: typeof schema.items.$inferSelect,
  db: DalLike = getDal(),
) {
  const d = dalOf(db);
  const { checklistItems: c, references: r, curationEvents: ev, users, providers: p } = d.t;
  const checklist = await d.q.select().from(c).where(eq(c.itemId, item.id)).orderBy(asc(c.position), desc(c.version));
  const replaced = new Set(checklist.map((x) => x.previousId).filter((id): id is number => id != null));
  const flags = (await allFlags(projectId, dataset.id, undefined, d)).flags.filter((f) => f.itemId === item.id);
  const references = await d.q
    .select({
      id: r.id,
      text: r.text,
      version: r.version,
      isCurrent: r.isCurrent,
      provenance: r.provenance,
      reason: r.reason,
      justification: r.justification,
      promotedFromResponseId: r.promotedFromResponseId,
      createdAt: r.createdAt,
      by: users.name,
    })
    .from(r)
    .leftJoin(users, eq(users.id, r.createdBy))
    .where(eq(r.itemId, item.id))
    .orderBy(desc(r.version));
  const history = await d.q
    .select({
      id: ev.id,
      entity: ev.entity,
      action: ev.action,
      reason: ev.reason,
      createdAt: ev.createdAt,
      by: users.name,
    })
    .from(ev)
    .leftJoin(users, eq(users.id, ev.userId))
    .where(eq(ev.itemId, item.id))
    .orderBy(desc(ev.id));
  const stale = await staleSummary(projectId, { itemId: item.id }, d);
  const providers = await d.q
    .select({ id: p.id, name: p.name, model: p.model })
    .from(p)
    .where(eq(p.projectId, projectId))
    .orderBy(asc(p.name));
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
    active: checklist.filter((x) => !x.retiredAt),
    retired: checklist.filter((x) => x.retiredAt && !replaced.has(x.id)),
    weighted: checklist.some((x) => !x.retiredAt && x.weight != null),
    flags,
    references,
    history,
    stale,
    providers,
  };
}
