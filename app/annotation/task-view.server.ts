/**
 * One task as researchers see it: its settings, its progress per annotator (with gold accuracy), the pool, the
 * adjudicators, the labelling work it holds and its stale labels — what the task page shows and the HTTP API's
 * task resource answers. Researchers only: progress names annotators, gold units name models.
 */
import type * as schema from "../../db/schema";
import type { Role } from "../../db/schema";
import { hasRole } from "~/auth/guards.server";
import { getDal, type DalLike } from "~/dal.server";
import { staleSummary } from "~/curation/requeue.server";
import { isAnnotatable, kindTitle } from "~/task-kinds/registry.server";
import { readConfig } from "./config.server";
import { goldUnitsView } from "./gold.server";
import { listTasks, poolOf, projectMembers, taskProgress, taskWork } from "./tasks.server";

type TaskRow = typeof schema.tasks.$inferSelect;

/**
 * A task's settings: the columns and the sampling settings of its configuration (the plan and its numbers, the
 * kind's own settings), without the pool, adjudicators and adjudications, which have views of their own.
 */
export function taskSettings(task: TaskRow) {
  const { pool: _pool, adjudicators: _adjudicators, adjudications: _adjudications, ...config } = readConfig(task.config);
  return {
    id: task.id,
    name: task.name,
    guidelines: task.guidelines,
    kind: task.kind,
    kindTitle: kindTitle(task.kind),
    annotatable: isAnnotatable(task.kind),
    status: task.status,
    datasetId: task.datasetId,
    overlap: task.overlap,
    seed: task.seed,
    plan: config.plan ?? null,
    models: config.models ?? null,
    goldRate: config.goldRate ?? 0,
    allowTies: config.allowTies === true,
    createdAt: task.createdAt,
    config,
  };
}

/** The task's page and resource, without the gold units (./gold.server.ts goldUnitsView) and the project's members. */
export async function taskView(projectId: number, task: TaskRow, db: DalLike = getDal()) {
  const config = readConfig(task.config);
  const [progress, work, stale, pool] = await Promise.all([
    taskProgress(task, db),
    taskWork(task.id, db),
    staleSummary(projectId, { taskId: task.id }, db),
    poolOf(task, db),
  ]);
  return { task: taskSettings(task), progress, work, stale, pool, adjudicators: config.adjudicators ?? [] };
}

/** Everything the task page shows: the task's view, the project's members (for the pool forms) and the gold units. */
export async function taskPage(projectId: number, task: TaskRow, db: DalLike = getDal()) {
  const [view, members, gold] = await Promise.all([taskView(projectId, task, db), projectMembers(projectId, db), goldUnitsView(task, db)]);
  return { ...view, members, gold };
}

/**
 * The Tasks page's list for a member of the project: researchers and admins see every task; an annotator only the
 * tasks they have work in, archived ones left out (./tasks.server.ts listTasks), each with the member's own
 * progress and the overall count — counts only, never anyone's labels.
 */
export async function taskList(projectId: number, userId: number, role: Role, db: DalLike = getDal()) {
  const researcher = hasRole(role, "researcher");
  const tasks = (await listTasks(projectId, userId, researcher, db)).map((t) => ({
    id: t.id,
    name: t.name,
    kind: t.kind as string,
    kindTitle: kindTitle(t.kind),
    annotatable: isAnnotatable(t.kind),
    status: t.status,
    overlap: t.overlap,
    createdAt: t.createdAt,
    mine: { done: t.mineDone, total: t.mine },
    overall: { done: t.done, total: t.total },
  }));
  return { researcher, tasks };
}
