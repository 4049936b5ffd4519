/**
 * GET /api/v1/projects/{slug}/runs/{id}/results[?judge=ID]: the results page's figures as JSON — every judge's (or
 * one judge's) protocol metrics and tables with the parse counts, and each calibration task's headline metrics raw
 * and corrected by the human labels with their intervals (app/runs/project-runs.server.ts runResultsReport). A heavy
 * read, through the same per-user limiter as the results page.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { getDal } from "~/dal.server";
import { RunResultsQuerySchema } from "~/api/operations/runs";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { runParams, runProblem } from "~/api/runs.server";
import { heavyRead } from "~/request-limits.server";
import { projectRun, runResultsReport } from "~/runs/project-runs.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const { id } = runParams(params);
  const query = RunResultsQuerySchema.parse(Object.fromEntries(new URL(request.url).searchParams));
  try {
    return await heavyRead(user.id, async () => {
      const d = getDal();
      const run = await projectRun(d, project.id, id);
      const report = await runResultsReport(d, run, project.id, { judgeId: query.judge });
      return apiJson({
        run: { id: run.id, name: run.name, protocol: run.protocol, protocolVersion: run.protocolVersion, status: run.status },
        ...report,
      });
    });
  } catch (err) {
    throw runProblem(err);
  }
});

export const action = apiMethodNotAllowed(["GET"]);
