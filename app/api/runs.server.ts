/**
 * What the runs endpoints of the HTTP API (app/routes/api.v1.projects.$slug.runs*.tsx) share: the run's path
 * parameters, the answer "the run as it is now" (app/runs/project-runs.server.ts runStatus), the refusals of the
 * run domain as problem details, and one handler for the four controls (pause, resume, cancel, retry-failed) that
 * the run page's buttons and `npm run runs` also call (controlProjectRun). No rule lives here: only how the
 * domain's answers and refusals are written in HTTP.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { getDal } from "~/dal.server";
import { controlProjectRun, runStatus } from "~/runs/project-runs.server";
import { RunDefinitionError } from "~/runs/run-form.server";
import { RunInputError, RunStateError, type RunControl } from "~/runs/runner.server";
import { ensureInProcessWorker } from "~/runs/worker.server";
import { hashBody, idempotent } from "./idempotency.server";
import { RunParamsSchema } from "./operations/runs";
import { apiJson, problem, PROBLEM_TYPES, type ProblemError } from "./problem.server";
import { apiRoute, postOnly } from "./route.server";

/** The run's path parameters; a run id that is not a whole number is a run that does not exist (404). */
export function runParams(params: LoaderFunctionArgs["params"]): { slug: string; id: number } {
  const parsed = RunParamsSchema.safeParse(params);
  if (!parsed.success) throw problem(404, "Run not found.");
  return parsed.data;
}

/** The address of a run in the API. */
export const runLocation = (slug: string, id: number) => `/api/v1/projects/${encodeURIComponent(slug)}/runs/${id}`;

/** The run as GET …/runs/{id} answers it (status `status`). */
export async function runAnswer(projectId: number, runId: number, status = 200, headers: Record<string, string> = {}): Promise<Response> {
  return apiJson(await runStatus(getDal(), projectId, runId), { status, headers });
}

/**
 * A refusal of the run domain as problem details: a definition's problems each with its field (a dotted path in the
 * definition), a refusal of its data with the part of the definition it names, a control that does not apply to the
 * run's state as 409 Conflict. Anything else is returned as it is (apiRoute then answers it).
 */
export function runProblem(err: unknown): unknown {
  if (err instanceof RunDefinitionError) {
    const errors: ProblemError[] = err.problems.map((p) =>
      p.path.length ? { field: p.path.join("."), message: p.message } : { message: p.message },
    );
    return problem(400, err.problems.length > 1 ? `The run definition has ${err.problems.length} problems.` : err.message, {
      type: PROBLEM_TYPES.invalidRequest,
      errors,
    });
  }
  if (err instanceof RunStateError) return problem(409, err.message);
  if (err instanceof RunInputError)
    return problem(err.status, err.message, {
      type: err.status === 400 ? PROBLEM_TYPES.invalidRequest : undefined,
      errors: err.at ? [{ field: err.at, message: err.message }] : undefined,
    });
  return err;
}

/** The action of POST …/runs/{id}/{control}: the run page's button, answering the run as it is afterwards. */
export function runControlAction(control: RunControl) {
  return apiRoute(async ({ request, params }) => {
    const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
    if (request.method !== "POST") return postOnly(request.method);
    const { id } = runParams(params);
    const body = await request.text();
    return idempotent(request, user.id, hashBody(body), async () => {
      try {
        await controlProjectRun(getDal(), project.id, id, control);
      } catch (err) {
        throw runProblem(err);
      }
      // A resumed or retried run is queued again: the server's own worker (SQLite) takes it up.
      if (control === "resume" || control === "retry-failed") ensureInProcessWorker();
      return runAnswer(project.id, id);
    });
  });
}
