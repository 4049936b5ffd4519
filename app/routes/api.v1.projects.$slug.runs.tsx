/**
 * GET /api/v1/projects/{slug}/runs: the project's runs, newest first, in cursor pages (the Runs page's list).
 * POST: starts a run from a run definition (JSON), as the Runs page does: the same check (definitionProblems), the
 * same createRun, through app/runs/run-form.server.ts startRun. 201 with Location and the run; a refused definition
 * is a 400 problem naming each field, and nothing is written. Idempotency-Key: a replay creates no second run.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { getDal } from "~/dal.server";
import { hashBody, idempotent } from "~/api/idempotency.server";
import { RunCursorSchema } from "~/api/operations/runs";
import { pageHeaders, pageOf, pageRequest } from "~/api/pagination.server";
import { apiJson, problem, PROBLEM_TYPES } from "~/api/problem.server";
import { apiRoute } from "~/api/route.server";
import { runAnswer, runLocation, runProblem } from "~/api/runs.server";
import { projectRuns } from "~/runs/project-runs.server";
import { startRun } from "~/runs/run-form.server";
import { ensureInProcessWorker } from "~/runs/worker.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const { limit, after } = pageRequest(request, RunCursorSchema);
  const rows = await projectRuns(getDal(), project.id, { before: after?.[0] ?? null, limit: limit + 1 });
  const page = pageOf(request, rows, limit, (r) => [r.id]);
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
  if (request.method !== "POST")
    return problem(405, `This endpoint answers GET and POST only, not ${request.method}.`, { headers: { Allow: "GET, HEAD, POST" } });
  const contentType = (request.headers.get("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
  if (contentType !== "application/json")
    return problem(415, "Send the run definition as JSON, with Content-Type: application/json.", {
      headers: { "Accept-Post": "application/json" },
    });
  const text = await request.text();
  return idempotent(request, user.id, hashBody(text), async () => {
    let definition: unknown;
    try {
      definition = JSON.parse(text);
    } catch {
      const message = "The body is not valid JSON.";
      throw problem(400, message, { type: PROBLEM_TYPES.invalidRequest, errors: [{ field: "body", message }] });
    }
    let run;
    try {
      run = await startRun(getDal(), project.id, definition, user.id);
    } catch (err) {
      throw runProblem(err);
    }
    ensureInProcessWorker();
    return runAnswer(project.id, run.id, 201, { Location: runLocation(project.slug, run.id) });
  });
});
