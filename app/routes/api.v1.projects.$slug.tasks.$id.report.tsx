/**
 * GET /api/v1/projects/{slug}/tasks/{id}/report: the report pages' figures as JSON — inter-annotator statistics
 * with their intervals and every table of the agreement page (taskReport), the judges page's tables
 * (judgeReportFor) and judge–human agreement per judge (judgeAgreementFor) under `reference`, `unparsed` and
 * `missing`, through the pages' heavy-read limit (app/api/tasks.server.ts taskReportJson). Researchers only.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { ReportQuerySchema } from "~/api/operations/tasks";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { taskOfPath, taskReportJson } from "~/api/tasks.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const task = await taskOfPath(project.id, params);
  const query = ReportQuerySchema.parse(Object.fromEntries(new URL(request.url).searchParams));
  return apiJson(await taskReportJson(project, user.id, task.id, query));
});

export const action = apiMethodNotAllowed(["GET"]);
