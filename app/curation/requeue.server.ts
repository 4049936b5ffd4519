/**
 * Stale labels back to their annotators. A curation edit marks the labels that
 * judged the old content stale (versions.server.ts); "send stale units back"
 * re-opens those assignments for the same annotators, who then see the current
 * content (the unit is moved to the checklist item's newest version) and a stale
 * badge, and submit a new revision. Every earlier revision is kept, still marked
 * stale; reports use the newest submitted one.
 */
import { and, eq, sql } from "drizzle-orm";
import { dalOf, first, getDal, type Dal, type DalLike, type Q } from "~/dal.server";

type Scope = { taskId?: number; itemId?: number };

type StaleRow = { assignment_id: number; unit_id: number; task_id: number; task_status: string; checklist_item_id: number | null };

/** Submitted assignments whose current label is stale, in the project (optionally one task or one item). */
function staleSubmitted(d: Dal, projectId: number, scope: Scope, q?: Q): Promise<StaleRow[]> {
  return d.rows<StaleRow>(
    sql`
    SELECT a.id AS assignment_id, a.unit_id, u.task_id, t.status AS task_status, u.checklist_item_id
    FROM assignments a
    JOIN units u ON u.id = a.unit_id
    JOIN tasks t ON t.id = u.task_id
    WHERE t.project_id = ${projectId}
      AND a.status = 'submitted'
      ${scope.taskId != null ? sql`AND u.task_id = ${scope.taskId}` : sql``}
      ${scope.itemId != null ? sql`AND u.item_id = ${scope.itemId}` : sql``}
      AND (SELECT an.stale_at FROM annotations an WHERE an.assignment_id = a.id AND an.status = 'submitted'
           ORDER BY an.revision DESC LIMIT 1) IS NOT NULL
    ORDER BY a.id`,
    q,
  );
}

export type StaleSummary = { assignments: number; units: number; inClosedTasks: number };

/** How many submitted labels in scope are stale, and how many of those sit in closed or archived tasks (not sent back). */
export async function staleSummary(projectId: number, scope: Scope = {}, db: DalLike = getDal()): Promise<StaleSummary> {
  const rows = await staleSubmitted(dalOf(db), projectId, scope);
  const open = rows.filter((r) => r.task_status === "open");
  return { assignments: open.length, units: new Set(open.map((r) => r.unit_id)).size, inClosedTasks: rows.length - open.length };
}

/** The newest active version of a checklist item (following edits), or null if the line was retired. */
async function currentVersion(d: Dal, q: Q, checklistItemId: number): Promise<number | null> {
  let id = checklistItemId;
  for (let guard = 0; guard < 10_000; guard++) {
    const next = first(
      await d.rows<{ id: number }>(sql`SELECT id FROM checklist_items WHERE previous_id = ${id} ORDER BY id DESC LIMIT 1`, q),
    );
    if (!next) break;
    id = next.id;
  }
  const row = first(await d.rows<{ retired_at: number | null }>(sql`SELECT retired_at FROM checklist_items WHERE id = ${id}`, q));
  return row && row.retired_at == null ? id : null;
}

/**
 * Sends the stale units in scope back to the annotators who labelled them (open
 * tasks only): each such assignment becomes pending again, and a unit about an
 * edited checklist item is moved to the item's newest version, so the annotator
 * judges the current text. All or nothing.
 */
export async function requeueStale(
  projectId: number,
  scope: Scope = {},
  db: DalLike = getDal(),
): Promise<{ assignments: number; units: number; moved: number }> {
  const d = dalOf(db);
  const { units, assignments, taskDataVersions } = d.t;
  return d.tx(async (q) => {
    const rows = (await staleSubmitted(d, projectId, scope, q)).filter((r) => r.task_status === "open");
    if (rows.length === 0) return { assignments: 0, units: 0, moved: 0 };
    let moved = 0;
    const touchedTasks = new Set<number>();
    const seenUnits = new Set<number>();
    for (const r of rows) {
      if (seenUnits.has(r.unit_id)) continue;
      seenUnits.add(r.unit_id);
      if (r.checklist_item_id == null) continue;
      const current = await currentVersion(d, q, r.checklist_item_id);
      if (current != null && current !== r.checklist_item_id) {
        await q.update(units).set({ checklistItemId: current }).where(eq(units.id, r.unit_id));
        touchedTasks.add(r.task_id);
        moved++;
      }
    }
    for (const r of rows) {
      await q
        .update(assignments)
        .set({ status: "pending" })
        .where(and(eq(assignments.id, r.assignment_id), eq(assignments.status, "submitted")));
    }
    // A unit's checklist item is a report input the triggers do not watch: bump the task's data version.
    for (const taskId of touchedTasks) {
      await q
        .update(taskDataVersions)
        .set({ version: sql`${taskDataVersions.version} + 1` })
        .where(eq(taskDataVersions.taskId, taskId));
    }
    return { assignments: rows.length, units: seenUnits.size, moved };
  });
}

/**
 * For the annotator's own queue and unit page: the units of `taskId` assigned to
 * `annotatorId` whose last submitted label judged an older version of the
 * content (sent back for relabelling, or not yet). Only the annotator's own
 * assignments are read.
 */
export async function staleUnitIdsFor(taskId: number, annotatorId: number, db: DalLike = getDal()): Promise<number[]> {
  const rows = await dalOf(db).rows<{ unit_id: number }>(
    sql`
      SELECT a.unit_id FROM assignments a JOIN units u ON u.id = a.unit_id
      WHERE u.task_id = ${taskId} AND a.annotator_id = ${annotatorId}
        AND (SELECT an.stale_at FROM annotations an WHERE an.assignment_id = a.id AND an.status = 'submitted'
             ORDER BY an.revision DESC LIMIT 1) IS NOT NULL
      ORDER BY u.position, u.id`,
  );
  return rows.map((r) => r.unit_id);
}
