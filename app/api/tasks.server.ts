/**
 * What the tasks endpoints of the HTTP API (app/routes/api.v1.projects.$slug.tasks*.tsx) share: the task named by
 * the path, the answer "the task as it is now" (app/annotation/task-view.server.ts taskView), a new task's body
 * read and its refusals written as problem details, the close/reopen handler (the task page's buttons), and the
 * report as JSON. No rule lives here: the domain functions decide, this only writes their answers in HTTP.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import type { z } from "zod";
import { submitNewTask, NEW_TASK_LABELS } from "~/annotation/new-task.server";
import { taskView } from "~/annotation/task-view.server";
import { findTask, setTaskStatus } from "~/annotation/tasks.server";
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { humanErrors } from "~/forms/messages";
import { judgeAgreementFor, judgeReportFor, taskReport } from "~/reports/report.server";
import type { UnparsedPolicy } from "~/reports/judgeAgreement";
import { heavyRead } from "~/request-limits.server";
import { hashBody, idempotent } from "./idempotency.server";
import { NewTaskBodySchema, TaskParamsSchema, type ReportQuerySchema } from "./operations/tasks";
import { apiJson, problem, PROBLEM_TYPES, type ProblemError } from "./problem.server";
import { apiRoute, postOnly } from "./route.server";

/** The task `params.id` of the project; 404 for an id that is not one of the project's tasks. */
export async function taskOfPath(projectId: number, params: LoaderFunctionArgs["params"]) {
  const parsed = TaskParamsSchema.safeParse(params);
  const task = parsed.success ? await findTask(projectId, parsed.data.id) : undefined;
  if (!task) throw problem(404, "No such task in this project.");
  return task;
}

/** The address of a task in the API. */
export const taskLocation = (slug: string, id: number) => `/api/v1/projects/${encodeURIComponent(slug)}/tasks/${id}`;

/** The task as GET …/tasks/{id} answers it (status `status`). */
export async function taskAnswer(projectId: number, taskId: number, status = 200, headers: Record<string, string> = {}) {
  const task = await findTask(projectId, taskId);
  if (!task) throw problem(404, "No such task in this project.");
  return apiJson(await taskView(projectId, task), { status, headers });
}

const invalid = (detail: string, errors: ProblemError[], status = 400) =>
  problem(status, detail, { type: PROBLEM_TYPES.invalidRequest, errors });

/**
 * A new task's JSON body with its types checked (NewTaskBodySchema; unknown fields refused by name), worded as the
 * form words its errors. Throws a 400 problem naming each field.
 */
export function readNewTaskBody(text: string): z.infer<typeof NewTaskBodySchema> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid("The body is not valid JSON.", [{ field: "body", message: "The body is not valid JSON." }]);
  }
  const parsed = NewTaskBodySchema.safeParse(json, { error: humanErrors(NEW_TASK_LABELS) });
  if (parsed.success) return parsed.data;
  const errors: ProblemError[] = parsed.error.issues.flatMap((i) =>
    i.code === "unrecognized_keys"
      ? i.keys.map((k) => ({ field: k, message: `"${k.slice(0, 100)}" is not a field of a new task.` }))
      : [{ field: i.path.length ? i.path.join(".") : "body", message: i.message }],
  );
  throw invalid(errors.length > 1 ? `The task has ${errors.length} problems.` : errors[0].message, errors);
}

/**
 * Creates the task as the New task form does (submitNewTask): 201 with Location and the task; the form's field
 * errors as a 400 problem, the blinding hold as 422 (send confirmNames: true to save it anyway). A refusal of the
 * domain (TaskError, SamplingError, …) is thrown as it is: apiRoute writes it with its status and field.
 */
export async function createTaskAnswer(project: { id: number; slug: string }, userId: number, text: string): Promise<Response> {
  const { confirmNames, ...input } = readNewTaskBody(text);
  const outcome = await submitNewTask(project.id, userId, input, { confirmed: confirmNames });
  if (!outcome.ok) {
    const errors = Object.entries(outcome.fieldErrors).map(([field, message]) => (field === "form" ? { message } : { field, message }));
    if (outcome.warning)
      throw invalid(
        `Annotators would read ${outcome.warning.names.map((n) => `"${n}"`).join(", ")}, named in the task's texts, and no longer be blind. Send confirmNames: true to save it anyway.`,
        errors,
        422,
      );
    throw invalid(errors.length > 1 ? `The task has ${errors.length} problems.` : errors[0].message, errors);
  }
  return taskAnswer(project.id, outcome.taskId, 201, { Location: taskLocation(project.slug, outcome.taskId) });
}

/** The action of POST …/tasks/{id}/close or /reopen: the task page's button, answering the task as it is afterwards. */
export function taskStatusAction(status: "closed" | "open") {
  return apiRoute(async ({ request, params }) => {
    const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
    if (request.method !== "POST") return postOnly(request.method);
    const task = await taskOfPath(project.id, params);
    const body = await request.text();
    return idempotent(request, user.id, hashBody(body), async () => {
      await setTaskStatus(project.id, task.id, status);
      return taskAnswer(project.id, task.id);
    });
  });
}

/**
 * The report pages' figures for a task as one JSON document: the agreement page (taskReport), the judges page
 * (judgeReportFor) and its any-label-set table (judgeAgreementFor), with the options the pages take. One heavy read
 * of the user's, as each page is.
 */
export async function taskReportJson(
  project: { id: number; slug: string },
  userId: number,
  taskId: number,
  q: z.infer<typeof ReportQuerySchema>,
) {
  return heavyRead(userId, async () => {
    const report = await taskReport(project.id, taskId, { rule: q.rule ?? null, delta: q.delta, slug: project.slug, stale: q.stale });
    if (!report) throw problem(404, "No such task in this project.");
    const judges = await judgeReportFor(project.id, taskId, { rule: q.rule ?? null, delta: q.delta, stale: q.stale });
    const unparsed = q.unparsed as UnparsedPolicy;
    const agreement = await judgeAgreementFor(project.id, taskId, { reference: q.reference, unparsed, missing: q.missing, stale: q.stale });
    const result = agreement?.result ?? null;
    return {
      task: report.task,
      labelKind: report.labelKind,
      rule: report.rule,
      delta: report.delta,
      stale: report.stale,
      counts: report.counts,
      paradox: report.paradox,
      designNote: report.designNote,
      agreement: report.tables.iaa.rows.map((r) => ({
        statistic: String(r.statistic),
        value: typeof r.value === "number" ? r.value : null,
        ci: Array.isArray(r.ci) ? r.ci : null,
        n: Number(r.n),
        method: String(r.method),
      })),
      tables: report.tables,
      judges: { judges: judges?.judges ?? [], tables: judges?.tables ?? {} },
      judgeAgreement: {
        reference: q.reference,
        unparsed: q.unparsed,
        missing: q.missing,
        applicable: agreement?.applicable ?? false,
        note: agreement?.note ?? null,
        labels: result?.labels ?? [],
        units: result?.units ?? 0,
        unitsWithoutMajority: result?.unitsWithoutMajority ?? 0,
        annotators: result?.annotators ?? [],
        judges: (result?.judges ?? []).map((j) => ({ ...j, judgeId: result?.judgeIds[j.judge] ?? null })),
        humans: result?.humans ?? null,
        tables: agreement?.tables ?? {},
      },
    };
  });
}
