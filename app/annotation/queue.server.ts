/**
 * An annotator's queue as a list to scan: per unit its status, whether the text
 * changed since they labelled it (stale), and a short plain-text snippet of what
 * the unit is about. Blind: the snippet is built from the item's question and the
 * checklist item only — never a response's model, a verdict or another label.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { isAnnotatable } from "./config";
import { listTasks } from "./tasks.server";

import type { QueueFilter } from "./queue-filters";

const SNIPPET_CHARS = 110;

/** Markdown and math reduced to a one-line plain-text preview. */
export function snippetOf(text: string | null | undefined, max = SNIPPET_CHARS): string {
  const plain = (text ?? "")
    .replace(/```[\s\S]*?(```|$)/g, " [code] ")
    .replace(/[#>*_`~|]+/g, " ")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 1).trimEnd()}…` : plain;
}

export async function queueRows(taskId: number, userId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { assignments, units, items, checklistItems, annotations } = d.t;
  // Written out qualified: inside a select list drizzle renders columns bare, so
  // ${assignments.id} would read as the subquery's own annotations.id.
  // The latest *submitted* revision decides: a draft after a relabel request keeps the mark.
  const latestStale = sql<number | null>`(select an.stale_at from ${annotations} an
    where an.assignment_id = "assignments"."id" and an.status = 'submitted' order by an.revision desc limit 1)`;
  const rows = await d.q
    .select({
      unitId: assignments.unitId,
      status: assignments.status,
      staleAt: latestStale,
      query: sql<string>`substr(${items.query}, 1, 400)`,
      checklistItem: sql<string | null>`substr(${checklistItems.text}, 1, 200)`,
    })
    .from(assignments)
    .innerJoin(units, eq(units.id, assignments.unitId))
    .innerJoin(items, eq(items.id, units.itemId))
    .leftJoin(checklistItems, eq(checklistItems.id, units.checklistItemId))
    .where(and(eq(units.taskId, taskId), eq(assignments.annotatorId, userId)))
    .orderBy(asc(units.position), asc(units.id));
  return rows.map((r, i) => ({
    unitId: r.unitId,
    n: i + 1,
    status: r.status,
    stale: r.staleAt != null,
    snippet: snippetOf(r.query),
    checklistItem: r.checklistItem != null ? snippetOf(r.checklistItem, 90) : null,
  }));
}

export function filterQueue<T extends { status: string; stale: boolean }>(rows: T[], filter: QueueFilter): T[] {
  if (filter === "all") return rows;
  if (filter === "stale") return rows.filter((r) => r.stale);
  if (filter === "open") return rows.filter((r) => r.status === "pending" || r.status === "draft");
  return rows.filter((r) => r.status === filter);
}

/** The user's next open task (other than `exceptTaskId`) with units still to label. */
export async function nextTaskWithWork(projectId: number, userId: number, exceptTaskId: number, db: DalLike = getDal()) {
  const other = (await listTasks(projectId, userId, false, db)).find(
    (t) => t.id !== exceptTaskId && t.status === "open" && isAnnotatable(t.kind) && t.mine > 0 && t.mineDone < t.mine,
  );
  return other ? { id: other.id, name: other.name, left: other.mine - other.mineDone } : null;
}
