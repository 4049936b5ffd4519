/**
 * GET /api/v1/projects/{slug}/tasks/{id}: the task as its page shows it — its settings, progress per annotator with
 * gold accuracy, the pool and adjudicators, the work it holds and its stale labels
 * (app/annotation/task-view.server.ts taskView). Researchers only, as the page.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { taskAnswer, taskOfPath } from "~/api/tasks.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const task = await taskOfPath(project.id, params);
  return taskAnswer(project.id, task.id);
});

export const action = apiMethodNotAllowed(["GET"]);
