/**
 * GET /api/v1/projects/{slug}/tasks: the Tasks page's list (app/annotation/task-view.server.ts taskList) by id, in
 * cursor pages: researchers see every task, an annotator only their own, with their own progress.
 * POST: creates a task from the New task form's fields as JSON, checked and written as the form does
 * (app/annotation/new-task.server.ts submitNewTask). 201 with Location and the task; a refused field is a 400
 * problem naming it, a text that would unblind annotators 422, and nothing is written. Idempotency-Key: a replay
 * creates no second task.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { taskList } from "~/annotation/task-view.server";
import { hashBody, idempotent } from "~/api/idempotency.server";
import { pageHeaders, pageOfList } from "~/api/pagination.server";
import { apiJson, problem } from "~/api/problem.server";
import { apiRoute } from "~/api/route.server";
import { createTaskAnswer } from "~/api/tasks.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project, role, user } = await requireApiProjectRole(request, params.slug, "annotator", { scope: "read" });
  const { tasks } = await taskList(project.id, user.id, role);
  const page = pageOfList(request, tasks, (t) => [t.id]);
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
  if (request.method !== "POST")
    return problem(405, `This endpoint answers GET and POST only, not ${request.method}.`, { headers: { Allow: "GET, HEAD, POST" } });
  const contentType = (request.headers.get("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
  if (contentType !== "application/json")
    return problem(415, "Send the task as JSON, with Content-Type: application/json.", { headers: { "Accept-Post": "application/json" } });
  const text = await request.text();
  return idempotent(request, user.id, hashBody(text), () => createTaskAnswer(project, user.id, text));
});
