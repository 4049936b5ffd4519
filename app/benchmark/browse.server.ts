/** Read side of the benchmark data: the dataset browser and item detail. */
import { and, asc, count, eq, or, sql } from "drizzle-orm";
import { z } from "zod";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import { visibleSql } from "~/db.server";
import { itemDetailOf } from "./datasets.server";

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

/** One item as the item page shows it (./datasets.server.ts, which the HTTP API's item pages use too), or null. */
export function itemDetail(datasetId: number, itemId: number, db: DalLike = getDal()) {
  return itemDetailOf(datasetId, itemId, db);
}
