/**
 * The runs endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts), with the schemas their
 * handlers (app/routes/api.v1.projects.$slug.runs*.tsx) parse with.
 *
 * A run is created from the run definition the Runs page's JSON box and `npm run runs -- start --config FILE` read
 * (app/runs/runner.server.ts RunDefinition, with the protocol's settings schema): the document shows it as one
 * object per protocol (RunDefinitionBodySchema), assembled from those very schemas, and the handler checks a body
 * with them through app/runs/run-form.server.ts definitionProblems, as the page does.
 */
import { z } from "zod";
import { RUN_STATUSES } from "../../../db/schema";
import { PROTOCOLS } from "../../runs/protocols";
import { RunDefinition } from "../../runs/runner.server";
import { ProjectParamsSchema } from "./projects";
import { pageSchema, ProblemSchema } from "./shared";
import type { ApiOperation } from "./types";

const Id = z.number().int().min(1);
const Count = z.number().int().min(0);
const UnixSeconds = z.number().int().describe("Unix time, seconds.");

/** Path parameters of one run: the project's slug and the run's id. */
export const RunParamsSchema = ProjectParamsSchema.extend({
  id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe("The run's id."),
});

/** The key of the runs list's cursor: the last run's id (the list is newest first). */
export const RunCursorSchema = z.tuple([Id]);

/** GET …/runs/{id}/results: one judge only. */
export const RunResultsQuerySchema = z.object({
  judge: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe("A judge's id (the run's `judges[].id`): only that judge's results. Every judge's when absent."),
});

/**
 * The run definition as the document shows it: RunDefinition's fields with `settings` as each protocol's own
 * settings schema, one alternative per protocol (picked by `protocol`).
 */
export const RunDefinitionBodySchema = z
  .discriminatedUnion(
    "protocol",
    Object.values(PROTOCOLS).map((p) =>
      RunDefinition.extend({
        protocol: z.literal(p.id),
        settings: (p.configSchema as z.ZodType)
          .default({})
          .describe(`${p.title}'s settings; each one left out takes the paper's value (the Runs page shows them).`),
      }).meta({ title: p.title }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  )
  .meta({
    id: "RunDefinition",
    description:
      "A run definition: the same JSON as the Runs page's definition box and `npm run runs -- start --config FILE`. `datasetId` is a dataset of the project; `models` and `judges` name the project's providers (the model's `as` renames it in the results; the first judge also writes guided feedback); `itemIds` or `limit` choose a subset of the items.",
  });

const RunStatusSchema = z
  .enum(RUN_STATUSES)
  .describe("queued → running → completed (or completed-with-errors, failed); paused, cancelled.");

/** A run in the list (app/runs/project-runs.server.ts projectRuns). */
export const RunListItemSchema = z
  .object({
    id: Id,
    name: z.string(),
    protocol: z.string(),
    status: RunStatusSchema,
    datasetId: Id.nullable(),
    createdAt: UnixSeconds,
    finishedAt: UnixSeconds.nullable(),
  })
  .meta({ id: "RunListItem" });

export const RunsPageSchema = pageSchema(RunListItemSchema);

/** A run's progress (app/runs/project-runs.server.ts progressView, from runProgress). */
export const RunProgressSchema = z
  .object({
    done: Count.describe("Jobs finished."),
    failed: Count.describe("Jobs failed after their retries (retry-failed queues them again)."),
    inFlight: Count.describe("Jobs a worker holds now."),
    remaining: Count.describe("Jobs queued or in flight, and those the protocol is expected to plan still (later turns)."),
    total: Count.describe("done + failed + remaining."),
    throughput: z.number().min(0).describe("Jobs finished per second over the last minute."),
    etaSeconds: z
      .number()
      .int()
      .min(0)
      .nullable()
      .describe(
        "remaining ÷ throughput: the seconds left at the last minute's rate; 0 when nothing remains; null while nothing finished lately.",
      ),
    etaAt: z.string().nullable().describe("When the run should end at that rate (ISO 8601, UTC), or null."),
    promptTokens: Count,
    completionTokens: Count,
    calls: Count.describe("Provider calls made (every HTTP attempt)."),
    interruptedCalls: Count.describe("Calls cut off (a worker stopped mid-call): their prompt tokens are estimated."),
    cost: z.number().nullable().describe("In the providers' currency, when their settings give prices per million tokens; else null."),
    workers: Count.describe("Run workers alive now: with none, a queued run waits."),
  })
  .meta({ id: "RunProgress" });

/** One run (app/runs/project-runs.server.ts runStatus): what it is, its progress, and what its page lists. */
export const RunSchema = z
  .object({
    id: Id,
    name: z.string(),
    protocol: z.string(),
    protocolVersion: z.string(),
    status: RunStatusSchema,
    datasetId: Id.nullable(),
    createdAt: UnixSeconds,
    finishedAt: UnixSeconds.nullable(),
    itemCount: Count.nullable().describe("Items the run covers."),
    settings: z.record(z.string(), z.unknown()).describe("The protocol's settings used, defaults filled in."),
    models: z.array(z.string()).describe("The models under test, by the name their responses are stored under."),
    judges: z.array(z.object({ id: Id, name: z.string() })).describe("The judges, in the run's order (the first drives guided feedback)."),
    definition: z.record(z.string(), z.unknown()).nullable().describe("The definition the run was created from."),
    progress: RunProgressSchema,
    providers: z
      .array(
        z.object({
          name: z.string(),
          kind: z.string(),
          model: z.string(),
          concurrency: Count,
          requestsPerMinute: Count.nullable(),
          sampling: z.record(z.string(), z.number()).describe("The sampling settings the provider adds to every request."),
        }),
      )
      .describe("The providers the run calls (never their keys)."),
    failedJobs: z
      .array(z.object({ id: Id, key: z.string(), attempts: Count, error: z.string(), provider: z.string() }))
      .describe("Failed jobs with the provider's error (API keys masked), the first 200."),
    calibrationTasks: z
      .array(z.object({ taskId: Id, name: z.string() }))
      .describe("Annotation tasks made from the run to calibrate its first judge against human labels."),
  })
  .meta({ id: "Run" });

/** One judge's results (app/runs/results.server.ts RunResults): the protocol's metrics and tables, and the parse counts. */
export const RunJudgeResultsSchema = z
  .looseObject({
    protocol: z.string(),
    judge: z.string(),
    judgeId: Id,
    parse: z
      .object({ ok: Count, partial: Count, failed: Count, unparsed: Count })
      .describe("The judge's verdicts by how their reply parsed."),
    metrics: z.unknown().describe("The protocol's headline metrics (its paper's), null for a protocol without any."),
  })
  .describe("The protocol's results for one judge: `metrics` and the protocol's own members (its tables), as the results page shows them.");

/** GET …/runs/{id}/results. */
export const RunResultsSchema = z
  .object({
    run: z.object({ id: Id, name: z.string(), protocol: z.string(), protocolVersion: z.string(), status: RunStatusSchema }),
    judges: z.array(RunJudgeResultsSchema).describe("Every judge of the run in its order, or the one `judge` names."),
    calibration: z
      .array(
        z.object({
          taskId: Id,
          name: z.string(),
          report: z
            .looseObject({})
            .nullable()
            .describe(
              "The headline metrics raw (the judge's) and corrected by the human labels, with 95% intervals (app/runs/calibration.server.ts calibrationReport); null when the task cannot be reported.",
            ),
        }),
      )
      .describe("Every calibration task made from the run (its first judge against human labels)."),
  })
  .meta({ id: "RunResults" });

const RUN_PATH = "/api/v1/projects/{slug}/runs/{id}";

/** The controls of a run, as the run page's buttons and `npm run runs` name them. */
export const RUN_CONTROLS = {
  pause: "Pause the run: calls in flight finish, no new job starts.",
  resume: "Resume a paused run.",
  cancel: "Cancel the run: no further job runs; what was done is kept.",
  "retry-failed": "Queue the run's failed jobs again (the run goes back to queued, or stays paused).",
} as const;

const controlOperation = (control: keyof typeof RUN_CONTROLS, operationId: string): ApiOperation => ({
  method: "post",
  path: `${RUN_PATH}/${control}`,
  operationId,
  summary: RUN_CONTROLS[control],
  description:
    "The run page's button of the same name (and `npm run runs -- " +
    control +
    " ID`). Answers the run as it is afterwards. A control that does not apply to the run's state (resuming a run that is not paused, retrying without failed jobs, anything but retry on a finished run) is refused with 409 and the reason.",
  tag: "runs",
  auth: "write",
  minRole: "researcher",
  params: RunParamsSchema,
  idempotent: true,
  responses: {
    200: { description: "The run after the control.", schema: RunSchema },
    409: {
      description:
        "The control does not apply to the run in its present state (`detail` says why); or the Idempotency-Key was used for another request, or is still being answered.",
      contentType: "application/problem+json",
      schema: ProblemSchema,
    },
  },
});

export const OPERATIONS: ApiOperation[] = [
  {
    method: "get",
    path: "/api/v1/projects/{slug}/runs",
    operationId: "listRuns",
    summary: "The project's runs, newest first",
    tag: "runs",
    auth: "read",
    minRole: "researcher",
    params: ProjectParamsSchema,
    paged: true,
    responses: { 200: { description: "A page of runs.", schema: RunsPageSchema } },
  },
  {
    method: "post",
    path: "/api/v1/projects/{slug}/runs",
    operationId: "createRun",
    summary: "Start a run from a run definition",
    description:
      "The Runs page's definition, checked as the page checks it (the definition's schema, then the protocol's settings, then the data: the dataset and providers must be the project's, the protocol must be able to run on the items). A refused definition changes nothing and names each field in `errors`. The run is queued: the server's in-process worker (or `npm run worker`) runs it.",
    tag: "runs",
    auth: "write",
    minRole: "researcher",
    params: ProjectParamsSchema,
    body: [{ contentType: "application/json", schema: RunDefinitionBodySchema }],
    idempotent: true,
    responses: {
      201: { description: "The run, queued.", schema: RunSchema, headers: { Location: "The run's address in the API." } },
      415: { description: "The body is not application/json.", contentType: "application/problem+json", schema: ProblemSchema },
    },
  },
  {
    method: "get",
    path: RUN_PATH,
    operationId: "getRun",
    summary: "One run: status, progress and ETA",
    description:
      "What the run page shows: the run's definition and settings, its status, its progress (jobs done, failed, in flight, remaining, total; jobs per second over the last minute and the ETA at that rate; tokens, calls, cost), its providers, its failed jobs with their errors, and the calibration tasks made from it.",
    tag: "runs",
    auth: "read",
    minRole: "researcher",
    params: RunParamsSchema,
    responses: { 200: { description: "The run.", schema: RunSchema } },
  },
  controlOperation("pause", "pauseRun"),
  controlOperation("resume", "resumeRun"),
  controlOperation("cancel", "cancelRun"),
  controlOperation("retry-failed", "retryFailedRunJobs"),
  {
    method: "get",
    path: `${RUN_PATH}/results`,
    operationId: "getRunResults",
    summary: "A run's results: every judge's figures, raw and calibrated",
    description:
      "The results page's figures as JSON: per judge, the protocol's metrics and tables and how the judge's replies parsed; per calibration task made from the run, every headline metric raw and corrected by the human labels, with its interval. A heavy read: at most CONCORD_HEAVY_READS_PER_USER of them at once per user (429 with Retry-After beyond).",
    tag: "runs",
    auth: "read",
    minRole: "researcher",
    params: RunParamsSchema,
    query: RunResultsQuerySchema,
    responses: { 200: { description: "The results.", schema: RunResultsSchema } },
  },
];
