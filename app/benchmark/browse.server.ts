/** Read side of the benchmark data: the dataset browser and item detail. */
import { and, asc, count, desc, eq, isNull, or, sql } from "drizzle-orm";
import { z } from "zod";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { visible, visibleSql } from "~/db.server";

export const PAGE_SIZE = 25;

export const BrowseQuerySchema = z.object({
  q: z.string().trim().max(200).optional().default(""),
  domain: z.string().trim().max(200).optional().default(""),
  page: z.coerce.number().int().min(1).max(100000).catch(1).default(1),
});

export async function findDataset(projectId: number, datasetId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const ds = d.t.datasets;
  return first(
    await d.q
      .select()
      .from(ds)
      .where(and(eq(ds.id, datasetId), eq(ds.projectId, projectId)))
      .limit(1),
  );
}

/** Escape LIKE wildcards so a search for "50%" means the text "50%". */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function browseItems(datasetId: number, query: z.infer<typeof BrowseQuerySchema>, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { items, checklistItems, responses } = d.t;
  const conds = [eq(items.datasetId, datasetId)];
  if (query.domain) conds.push(eq(items.domain, query.domain));
  if (query.q) {
    const pattern = likePattern(query.q);
    // SQLite's LIKE ignores (ASCII) case; PostgreSQL's does not, its ILIKE does.
    const like = sql.raw(d.dialect === "postgres" ? "ilike" : "like");
    conds.push(
      or(
        sql`${items.query} ${like} ${pattern} escape '\\'`,
        sql`${items.passage} ${like} ${pattern} escape '\\'`,
        sql`${items.sourceId} ${like} ${pattern} escape '\\'`,
        sql`exists (select 1 from ${checklistItems} ci where ci.item_id = ${items.id} and ci.text ${like} ${pattern} escape '\\')`,
      )!,
    );
  }
  const where = and(...conds);
  const total = first(await d.q.select({ n: count() }).from(items).where(where))?.n ?? 0;
  const rows = await d.q
    .select({
      id: items.id,
      sourceId: items.sourceId,
      query: items.query,
      domain: items.domain,
      subject: items.subject,
      taskType: items.taskType,
      language: items.language,
      // The outer column is written qualified by hand: inside a select list drizzle renders
      // ${items.id} as a bare "id", which the subquery would read as its own table's id.
      checklistCount:
        sql<number>`(select count(*) from ${checklistItems} ci where ci.item_id = "items"."id" and ci.retired_at is null)`.mapWith(Number),
      responseCount:
        sql<number>`(select count(*) from ${responses} r where r.item_id = "items"."id" and ${sql.raw(visibleSql("r"))})`.mapWith(Number),
    })
    .from(items)
    .where(where)
    .orderBy(asc(items.sourceId))
    .limit(PAGE_SIZE)
    .offset((query.page - 1) * PAGE_SIZE);
  const domains = (
    await d.q
      .select({ domain: items.domain, n: count() })
      .from(items)
      .where(eq(items.datasetId, datasetId))
      .groupBy(items.domain)
      .orderBy(asc(items.domain))
  ).filter((x): x is { domain: string; n: number } => x.domain !== null);
  return { total, rows, domains, pages: Math.max(1, Math.ceil(total / PAGE_SIZE)) };
}

export async function itemDetail(datasetId: number, itemId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { items, checklistItems: c, references: r, responses, verdicts: v, judges } = d.t;
  const item = first(
    await d.q
      .select()
      .from(items)
      .where(and(eq(items.id, itemId), eq(items.datasetId, datasetId)))
      .limit(1),
  );
  if (!item) return null;
  const checklist = await d.q
    .select({
      id: c.id,
      text: c.text,
      weight: c.weight,
      position: c.position,
      version: c.version,
    })
    .from(c)
    .where(and(eq(c.itemId, itemId), isNull(c.retiredAt)))
    .orderBy(asc(c.position));
  const refs = await d.q
    .select({
      id: r.id,
      text: r.text,
      version: r.version,
      isCurrent: r.isCurrent,
      provenance: r.provenance,
      reason: r.reason,
      createdAt: r.createdAt,
    })
    .from(r)
    .where(eq(r.itemId, itemId))
    .orderBy(desc(r.version));
  const responseRows = await d.q
    .select({
      id: responses.id,
      model: responses.model,
      turn: responses.turn,
      text: responses.text,
      origin: responses.origin,
    })
    .from(responses)
    .where(and(eq(responses.itemId, itemId), visible(responses.pendingImportId)))
    .orderBy(asc(responses.model), asc(responses.turn));
  const verdictRows = await d.q
    .select({
      responseId: v.responseId,
      checklistItemId: v.checklistItemId,
      value: v.value,
      parseStatus: v.parseStatus,
      judge: judges.name,
    })
    .from(v)
    .innerJoin(responses, eq(responses.id, v.responseId))
    .innerJoin(judges, eq(judges.id, v.judgeId))
    .where(and(eq(responses.itemId, itemId), visible(responses.pendingImportId), visible(v.pendingImportId)));
  const judgeNames = [...new Set(verdictRows.map((x) => x.judge))].sort();
  // verdicts[responseId][judge][checklistItemId] = value
  const verdicts: Record<number, Record<string, Record<string, string | null>>> = {};
  for (const x of verdictRows) {
    const byJudge = (verdicts[x.responseId] ??= {});
    const byItem = (byJudge[x.judge] ??= {});
    byItem[String(x.checklistItemId ?? "whole")] = x.parseStatus === "failed" ? "unparsed" : x.value;
  }
  return { item, checklist, references: refs, responses: responseRows, judges: judgeNames, verdicts };
}
