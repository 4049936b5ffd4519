/** Projects: listing for a user, creation, and the overview counts. */
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { visible } from "~/db.server";
import { dalOf, first, getDal, type DalLike } from "~/dal.server";
import type { SessionUser } from "~/auth/session.server";
import type { Role } from "../../db/schema";

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
  return user.isSiteAdmin
    ? rows.map((r) => ({ ...r, role: r.role ?? "admin" }))
    : rows.filter((r): r is typeof r & { role: Role } => r.role !== null);
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
export async function datasetSummaries(projectId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { datasets, items, checklistItems, responses, verdicts } = d.t;
  const sets = await d.q
    .select({
      id: datasets.id,
      name: datasets.name,
      version: datasets.version,
      source: datasets.source,
      licenseNote: datasets.licenseNote,
      frozenAt: datasets.frozenAt,
    })
    .from(datasets)
    .where(eq(datasets.projectId, projectId))
    .orderBy(asc(datasets.name), asc(datasets.version));
  if (sets.length === 0) return [];
  const ids = sets.map((s) => s.id);
  const countBy = (rows: { datasetId: number; n: number }[]) => new Map(rows.map((r) => [r.datasetId, r.n]));
  const [itemCounts, checklistCounts, responseCounts, verdictCounts, domainCounts] = (
    await Promise.all([
      d.q.select({ datasetId: items.datasetId, n: count() }).from(items).where(inArray(items.datasetId, ids)).groupBy(items.datasetId),
      d.q
        .select({ datasetId: items.datasetId, n: count() })
        .from(checklistItems)
        .innerJoin(items, eq(items.id, checklistItems.itemId))
        .where(and(inArray(items.datasetId, ids), sql`${checklistItems.retiredAt} is null`))
        .groupBy(items.datasetId),
      d.q
        .select({ datasetId: items.datasetId, n: count() })
        .from(responses)
        .innerJoin(items, eq(items.id, responses.itemId))
        .where(and(inArray(items.datasetId, ids), visible(responses.pendingImportId)))
        .groupBy(items.datasetId),
      d.q
        .select({ datasetId: items.datasetId, n: count() })
        .from(verdicts)
        .innerJoin(responses, eq(responses.id, verdicts.responseId))
        .innerJoin(items, eq(items.id, responses.itemId))
        .where(and(inArray(items.datasetId, ids), visible(responses.pendingImportId), visible(verdicts.pendingImportId)))
        .groupBy(items.datasetId),
      d.q
        .select({ datasetId: items.datasetId, n: sql<number>`count(distinct ${items.domain})`.mapWith(Number) })
        .from(items)
        .where(inArray(items.datasetId, ids))
        .groupBy(items.datasetId),
    ])
  ).map(countBy);
  return sets.map((s) => ({
    ...s,
    items: itemCounts.get(s.id) ?? 0,
    checklistItems: checklistCounts.get(s.id) ?? 0,
    responses: responseCounts.get(s.id) ?? 0,
    verdicts: verdictCounts.get(s.id) ?? 0,
    domains: domainCounts.get(s.id) ?? 0,
  }));
}

export async function projectCounts(projectId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { memberships, judges: judgesT, tasks: tasksT, assignments, units } = d.t;
  const [members, judges, tasks, labelled] = await Promise.all([
    d.q
      .select({ role: memberships.role, n: count() })
      .from(memberships)
      .where(eq(memberships.projectId, projectId))
      .groupBy(memberships.role),
    d.q.select({ n: count() }).from(judgesT).where(eq(judgesT.projectId, projectId)),
    d.q.select({ n: count() }).from(tasksT).where(eq(tasksT.projectId, projectId)),
    /** Units labelled: submitted assignments (revisions count once). */
    d.q
      .select({ n: count() })
      .from(assignments)
      .innerJoin(units, eq(units.id, assignments.unitId))
      .innerJoin(tasksT, eq(tasksT.id, units.taskId))
      .where(and(eq(tasksT.projectId, projectId), eq(assignments.status, "submitted"))),
  ]);
  return {
    members: Object.fromEntries(members.map((m) => [m.role, m.n])) as Partial<Record<string, number>>,
    judges: first(judges)?.n ?? 0,
    tasks: first(tasks)?.n ?? 0,
    labelled: first(labelled)?.n ?? 0,
  };
}

/**
 * What a project's overview shows its member: the datasets with their counts and the project's counts, for
 * researchers and admins; null for an annotator, whose view of a project is their own task list (the
 * overview page sends them there; the API's project resource leaves these out).
 */
export async function projectOverview(projectId: number, role: Role, db: DalLike = getDal()) {
  if (role === "annotator") return null;
  const [datasets, counts] = await Promise.all([datasetSummaries(projectId, db), projectCounts(projectId, db)]);
  return { datasets, counts };
}
