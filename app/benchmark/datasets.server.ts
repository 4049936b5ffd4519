/**
 * Datasets and their items as researchers see them (the project overview, the dataset and item pages, the
 * curation page, and the HTTP API's datasets endpoints): a dataset's versions with their counts, and items with
 * their checklist, reference answers, responses and judges' verdicts, in pages keyed by item id.
 *
 * Everything here names models and shows verdicts: only researchers may see it (the pages and the API guard it
 * with the researcher role; annotators are blind to both).
 */
import { and, asc, desc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { visible } from "~/db.server";
import { datasetSummaries } from "~/projects/projects.server";

/** The versions of the dataset named `name` in a project (each version is a dataset row), oldest first. */
export async function datasetVersions(projectId: number, name: string, db: DalLike = getDal()) {
  const d = dalOf(db);
  const ds = d.t.datasets;
  return d.q
    .select({ id: ds.id, name: ds.name, version: ds.version, frozenAt: ds.frozenAt, createdAt: ds.createdAt })
    .from(ds)
    .where(and(eq(ds.projectId, projectId), eq(ds.name, name)))
    .orderBy(asc(ds.version));
}

/**
 * One dataset of a project with the counts the overview shows, and every version of it (the datasets of the
 * same name) with theirs, oldest first; undefined when the project has no such dataset.
 */
export async function datasetWithVersions(projectId: number, datasetId: number, db: DalLike = getDal()) {
  if (!Number.isInteger(datasetId)) return undefined;
  const summaries = await datasetSummaries(projectId, db);
  const dataset = summaries.find((s) => s.id === datasetId);
  if (!dataset) return undefined;
  const versions = summaries.filter((s) => s.name === dataset.name).sort((a, b) => a.version - b.version);
  return { ...dataset, versions };
}

/** What the item page shows of one item: the item, its active checklist, every reference version, responses and verdicts. */
export type ItemDetail = Awaited<ReturnType<typeof itemDetails>>[number];

/**
 * Items of a dataset, each with what the item page shows: the active checklist by position, every reference version
 * (newest first), the visible responses by model and turn, the judges that gave verdicts on them (by name), and the
 * verdicts as verdicts[responseId][judge][checklistItemId or "whole"] = value ("unparsed" for a reply that could not
 * be parsed). `page`: the items after id `afterId`, by id, `limit` at most (a keyset page); `only`: the one item
 * of that id. Five queries per call, whatever the number of items.
 */
export async function itemDetails(datasetId: number, which: { afterId: number; limit: number } | { only: number }, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { items, checklistItems: c, references: r, responses, verdicts: v, judges } = d.t;
  const rows =
    "only" in which
      ? await d.q
          .select()
          .from(items)
          .where(and(eq(items.id, which.only), eq(items.datasetId, datasetId)))
      : await d.q
          .select()
          .from(items)
          // "+ 0": the dataset is a filter, not the index to search by; SQLite (without statistics) would otherwise
          // read every item of the dataset through its (dataset, domain) index and sort them, on every page, where
          // walking the primary key from the cursor reads only the page (ids of a dataset are imported together).
          .where(and(sql`${items.datasetId} + 0 = ${datasetId}`, gt(items.id, which.afterId)))
          .orderBy(asc(items.id))
          .limit(which.limit);
  if (rows.length === 0) return [];
  // The page's item ids (at most MAX_PAGE_LIMIT of the API, 10,000: within both databases' bound-parameter limits).
  const ids = rows.map((x) => x.id);
  const checklist = await d.q
    .select({ itemId: c.itemId, id: c.id, text: c.text, weight: c.weight, position: c.position, version: c.version })
    .from(c)
    .where(and(inArray(c.itemId, ids), isNull(c.retiredAt)))
    .orderBy(asc(c.itemId), asc(c.position), asc(c.id));
  const refs = await d.q
    .select({
      itemId: r.itemId,
      id: r.id,
      text: r.text,
      version: r.version,
      isCurrent: r.isCurrent,
      provenance: r.provenance,
      reason: r.reason,
      createdAt: r.createdAt,
    })
    .from(r)
    .where(inArray(r.itemId, ids))
    .orderBy(asc(r.itemId), desc(r.version), desc(r.id));
  const responseRows = await d.q
    .select({
      itemId: responses.itemId,
      id: responses.id,
      model: responses.model,
      turn: responses.turn,
      text: responses.text,
      origin: responses.origin,
    })
    .from(responses)
    .where(and(inArray(responses.itemId, ids), visible(responses.pendingImportId)))
    .orderBy(asc(responses.itemId), asc(responses.model), asc(responses.turn), asc(responses.id));
  const verdictRows = await d.q
    .select({
      itemId: responses.itemId,
      responseId: v.responseId,
      checklistItemId: v.checklistItemId,
      value: v.value,
      parseStatus: v.parseStatus,
      judge: judges.name,
    })
    .from(v)
    .innerJoin(responses, eq(responses.id, v.responseId))
    .innerJoin(judges, eq(judges.id, v.judgeId))
    .where(and(inArray(responses.itemId, ids), visible(responses.pendingImportId), visible(v.pendingImportId)))
    // In id order, so that of two verdicts of a judge on the same response and checklist item the later one is kept.
    .orderBy(asc(v.id));
  const group = <T extends { itemId: number }>(list: T[]) => {
    const m = new Map<number, Omit<T, "itemId">[]>();
    for (const { itemId, ...rest } of list) (m.get(itemId) ?? m.set(itemId, []).get(itemId)!).push(rest);
    return m;
  };
  const checklistOf = group(checklist);
  const refsOf = group(refs);
  const responsesOf = group(responseRows);
  const verdictsOf = group(verdictRows);
  return rows.map((item) => {
    const vs = verdictsOf.get(item.id) ?? [];
    // verdicts[responseId][judge][checklistItemId] = value
    const verdicts: Record<number, Record<string, Record<string, string | null>>> = {};
    for (const x of vs) {
      const byJudge = (verdicts[x.responseId] ??= {});
      const byItem = (byJudge[x.judge] ??= {});
      byItem[String(x.checklistItemId ?? "whole")] = x.parseStatus === "failed" ? "unparsed" : x.value;
    }
    return {
      item,
      checklist: checklistOf.get(item.id) ?? [],
      references: refsOf.get(item.id) ?? [],
      responses: responsesOf.get(item.id) ?? [],
      judges: [...new Set(vs.map((x) => x.judge))].sort(),
      verdicts,
    };
  });
}

/** One item of a dataset as the item page shows it, or null when the dataset has no such item. */
export async function itemDetailOf(datasetId: number, itemId: number, db: DalLike = getDal()) {
  if (!Number.isInteger(itemId)) return null;
  return first(await itemDetails(datasetId, { only: itemId }, db)) ?? null;
}
