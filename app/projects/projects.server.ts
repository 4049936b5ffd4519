/** Projects: listing for a user, creation, and the overview counts. */
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { getDb, schema, visible, type Db } from "~/db.server";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import type { SessionUser } from "~/auth/session.server";

export const SlugSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9-]{1,62}$/, "Use 2–63 lowercase letters, digits or dashes, starting with a letter or digit.");

export const NewProjectSchema = z.object({
  name: z.string().trim().min(1, "Give the project a name.").max(120),
  slug: SlugSchema,
  description: z.string().trim().max(2000).default(""),
});

export async function listProjectsFor(user: SessionUser, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { projects, memberships } = d.t;
  const rows = await d.q
    .select({ id: projects.id, slug: projects.slug, name: projects.name, description: projects.description, role: memberships.role })
    .from(projects)
    .leftJoin(memberships, and(eq(memberships.projectId, projects.id), eq(memberships.userId, user.id)))
    .orderBy(asc(projects.name));
  return user.isSiteAdmin ? rows.map((r) => ({ ...r, role: r.role ?? "admin" })) : rows.filter((r) => r.role);
}

export async function createProject(
  input: z.infer<typeof NewProjectSchema>,
  db: DalLike = getDal(),
): Promise<{ id: number; slug: string }> {
  const d = dalOf(db);
  const p = d.t.projects;
  const [row] = await d.tx((q) => q.insert(p).values(input).returning({ id: p.id, slug: p.slug }));
  return row;
}

export async function findProjectBySlug(slug: string, db: DalLike = getDal()) {
  const d = dalOf(db);
  return first(await d.q.select().from(d.t.projects).where(eq(d.t.projects.slug, slug)).limit(1));
}

/** Datasets of a project with the counts the overview shows. */
export function datasetSummaries(projectId: number, db: Db = getDb()) {
  const sets = db
    .select({
      id: schema.datasets.id,
      name: schema.datasets.name,
      version: schema.datasets.version,
      source: schema.datasets.source,
      licenseNote: schema.datasets.licenseNote,
      frozenAt: schema.datasets.frozenAt,
    })
    .from(schema.datasets)
    .where(eq(schema.datasets.projectId, projectId))
    .orderBy(asc(schema.datasets.name), asc(schema.datasets.version))
    .all();
  if (sets.length === 0) return [];
  const ids = sets.map((s) => s.id);
  const countBy = (rows: { datasetId: number; n: number }[]) => new Map(rows.map((r) => [r.datasetId, r.n]));
  const itemCounts = countBy(
    db
      .select({ datasetId: schema.items.datasetId, n: count() })
      .from(schema.items)
      .where(inArray(schema.items.datasetId, ids))
      .groupBy(schema.items.datasetId)
      .all(),
  );
  const checklistCounts = countBy(
    db
      .select({ datasetId: schema.items.datasetId, n: count() })
      .from(schema.checklistItems)
      .innerJoin(schema.items, eq(schema.items.id, schema.checklistItems.itemId))
      .where(and(inArray(schema.items.datasetId, ids), sql`${schema.checklistItems.retiredAt} is null`))
      .groupBy(schema.items.datasetId)
      .all(),
  );
  const responseCounts = countBy(
    db
      .select({ datasetId: schema.items.datasetId, n: count() })
      .from(schema.responses)
      .innerJoin(schema.items, eq(schema.items.id, schema.responses.itemId))
      .where(and(inArray(schema.items.datasetId, ids), visible(schema.responses.pendingImportId)))
      .groupBy(schema.items.datasetId)
      .all(),
  );
  const verdictCounts = countBy(
    db
      .select({ datasetId: schema.items.datasetId, n: count() })
      .from(schema.verdicts)
      .innerJoin(schema.responses, eq(schema.responses.id, schema.verdicts.responseId))
      .innerJoin(schema.items, eq(schema.items.id, schema.responses.itemId))
      .where(and(inArray(schema.items.datasetId, ids), visible(schema.responses.pendingImportId), visible(schema.verdicts.pendingImportId)))
      .groupBy(schema.items.datasetId)
      .all(),
  );
  const domainCounts = countBy(
    db
      .select({ datasetId: schema.items.datasetId, n: sql<number>`count(distinct ${schema.items.domain})` })
      .from(schema.items)
      .where(inArray(schema.items.datasetId, ids))
      .groupBy(schema.items.datasetId)
      .all(),
  );
  return sets.map((s) => ({
    ...s,
    items: itemCounts.get(s.id) ?? 0,
    checklistItems: checklistCounts.get(s.id) ?? 0,
    responses: responseCounts.get(s.id) ?? 0,
    verdicts: verdictCounts.get(s.id) ?? 0,
    domains: domainCounts.get(s.id) ?? 0,
  }));
}

export function projectCounts(projectId: number, db: Db = getDb()) {
  const members = db
    .select({ role: schema.memberships.role, n: count() })
    .from(schema.memberships)
    .where(eq(schema.memberships.projectId, projectId))
    .groupBy(schema.memberships.role)
    .all();
  const judges = db.select({ n: count() }).from(schema.judges).where(eq(schema.judges.projectId, projectId)).get()?.n ?? 0;
  const tasks = db.select({ n: count() }).from(schema.tasks).where(eq(schema.tasks.projectId, projectId)).get()?.n ?? 0;
  /** Units labelled: submitted assignments (revisions count once). */
  const labelled =
    db
      .select({ n: count() })
      .from(schema.assignments)
      .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
      .innerJoin(schema.tasks, eq(schema.tasks.id, schema.units.taskId))
      .where(and(eq(schema.tasks.projectId, projectId), eq(schema.assignments.status, "submitted")))
      .get()?.n ?? 0;
  return {
    members: Object.fromEntries(members.map((m) => [m.role, m.n])) as Partial<Record<string, number>>,
    judges,
    tasks,
    labelled,
  };
}
