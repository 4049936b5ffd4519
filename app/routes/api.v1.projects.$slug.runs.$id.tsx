/**
 * GET /api/v1/projects/{slug}/runs/{id}: one run as its page shows it — its definition and settings, status,
 * progress (jobs done, failed, in flight, remaining, total; the rate over the last minute and the ETA at that rate;
 * tokens, calls, cost), providers, failed jobs and calibration tasks (app/runs/project-runs.server.ts runStatus).
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { runAnswer, runParams, runProblem } from "~/api/runs.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const { id } = runParams(params);
  try {
    return await runAnswer(project.id, id);
  } catch (err) {
    throw runProblem(err);
  }
});

export const action = apiMethodNotAllowed(["GET"]);
