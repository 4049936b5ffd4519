/** Read side of the benchmark data: the dataset browser and item detail. */
import { and, asc, count, desc, eq, isNull, or, sql } from "drizzle-orm";
import { z } from "zod";
import { getDb, schema, visible, visibleSql, type Db } from "~/db.server";

export const PAGE_SIZE = 25;

export const BrowseQuerySchema = z.object({
  q: z.string().trim().max(200).optional().default(""),
  domain: z.string().trim().max(200).optional().default(""),
  page: z.coerce.number().int().min(1).max(100000).catch(1).default(1),
});

export function findDataset(projectId: number, datasetId: number, db: Db = getDb()) {
  return db
    .select()
    .from(schema.datasets)
    .where(and(eq(schema.datasets.id, datasetId), eq(schema.datasets.projectId, projectId)))
    .get();
}

/** Escape LIKE wildcards so a search for "50%" means the text "50%". */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function browseItems(datasetId: number, query: z.infer<typeof BrowseQuerySchema>, db: Db = getDb()) {
  const conds = [eq(schema.items.datasetId, datasetId)];
  if (query.domain) conds.push(eq(schema.items.domain, query.domain));
  if (query.q) {
    const pattern = likePattern(query.q);
    conds.push(
      or(
        sql`${schema.items.query} like ${pattern} escape '\\'`,
        sql`${schema.items.passage} like ${pattern} escape '\\'`,
        sql`${schema.items.sourceId} like ${pattern} escape '\\'`,
        sql`exists (select 1 from ${schema.checklistItems} ci where ci.item_id = ${schema.items.id} and ci.text like ${pattern} escape '\\')`,
      )!,
    );
  }
  const where = and(...conds);
  const total = db.select({ n: count() }).from(schema.items).where(where).get()?.n ?? 0;
  const rows = db
    .select({
      id: schema.items.id,
      sourceId: schema.items.sourceId,
      query: schema.items.query,
      domain: schema.items.domain,
      subject: schema.items.subject,
      taskType: schema.items.taskType,
      language: schema.items.language,
      // The outer column is written qualified by hand: inside a select list drizzle renders
      // ${schema.items.id} as a bare "id", which the subquery would read as its own table's id.
      checklistCount: sql<number>`(select count(*) from ${schema.checklistItems} ci where ci.item_id = "items"."id" and ci.retired_at is null)`,
      responseCount: sql<number>`(select count(*) from ${schema.responses} r where r.item_id = "items"."id" and ${sql.raw(visibleSql("r"))})`,
    })
    .from(schema.items)
    .where(where)
    .orderBy(asc(schema.items.sourceId))
    .limit(PAGE_SIZE)
    .offset((query.page - 1) * PAGE_SIZE)
    .all();
  const domains = db
    .select({ domain: schema.items.domain, n: count() })
    .from(schema.items)
    .where(eq(schema.items.datasetId, datasetId))
    .groupBy(schema.items.domain)
    .orderBy(asc(schema.items.domain))
    .all()
    .filter((d): d is { domain: string; n: number } => d.domain !== null);
  return { total, rows, domains, pages: Math.max(1, Math.ceil(total / PAGE_SIZE)) };
}

export function itemDetail(datasetId: number, itemId: number, db: Db = getDb()) {
  const item = db
    .select()
    .from(schema.items)
    .where(and(eq(schema.items.id, itemId), eq(schema.items.datasetId, datasetId)))
    .get();
  if (!item) return null;
  const checklist = db
    .select({
      id: schema.checklistItems.id,
      text: schema.checklistItems.text,
      weight: schema.checklistItems.weight,
      position: schema.checklistItems.position,
      version: schema.checklistItems.version,
    })
    .from(schema.checklistItems)
    .where(and(eq(schema.checklistItems.itemId, itemId), isNull(schema.checklistItems.retiredAt)))
    .orderBy(asc(schema.checklistItems.position))
    .all();
  const refs = db
    .select({
      id: schema.references.id,
      text: schema.references.text,
      version: schema.references.version,
      isCurrent: schema.references.isCurrent,
      provenance: schema.references.provenance,
      reason: schema.references.reason,
      createdAt: schema.references.createdAt,
    })
    .from(schema.references)
    .where(eq(schema.references.itemId, itemId))
    .orderBy(desc(schema.references.version))
    .all();
  const responses = db
    .select({
      id: schema.responses.id,
      model: schema.responses.model,
      turn: schema.responses.turn,
      text: schema.responses.text,
      origin: schema.responses.origin,
    })
    .from(schema.responses)
    .where(and(eq(schema.responses.itemId, itemId), visible(schema.responses.pendingImportId)))
    .orderBy(asc(schema.responses.model), asc(schema.responses.turn))
    .all();
  const verdictRows = db
    .select({
      responseId: schema.verdicts.responseId,
      checklistItemId: schema.verdicts.checklistItemId,
      value: schema.verdicts.value,
      parseStatus: schema.verdicts.parseStatus,
      judge: schema.judges.name,
    })
    .from(schema.verdicts)
    .innerJoin(schema.responses, eq(schema.responses.id, schema.verdicts.responseId))
    .innerJoin(schema.judges, eq(schema.judges.id, schema.verdicts.judgeId))
    .where(and(eq(schema.responses.itemId, itemId), visible(schema.responses.pendingImportId), visible(schema.verdicts.pendingImportId)))
    .all();
  const judges = [...new Set(verdictRows.map((v) => v.judge))].sort();
  // verdicts[responseId][judge][checklistItemId] = value
  const verdicts: Record<number, Record<string, Record<string, string | null>>> = {};
  for (const v of verdictRows) {
    const byJudge = (verdicts[v.responseId] ??= {});
    const byItem = (byJudge[v.judge] ??= {});
    byItem[String(v.checklistItemId ?? "whole")] = v.parseStatus === "failed" ? "unparsed" : v.value;
  }
  return { item, checklist, references: refs, responses, judges, verdicts };
}
