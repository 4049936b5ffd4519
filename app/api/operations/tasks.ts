/**
 * The tasks endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts), with the schemas their
 * handlers (app/routes/api.v1.projects.$slug.tasks*.tsx, app/api/tasks.server.ts) parse with.
 *
 *   GET  /api/v1/projects/{slug}/tasks               the Tasks page's list (an annotator: their own tasks only)
 *   POST /api/v1/projects/{slug}/tasks               creates a task as the New task form does
 *   GET  /api/v1/projects/{slug}/tasks/{id}          the task, its settings, progress per annotator (the task page)
 *   POST /api/v1/projects/{slug}/tasks/{id}/close    the task page's Close button
 *   POST /api/v1/projects/{slug}/tasks/{id}/reopen   its Reopen button
 *   GET  /api/v1/projects/{slug}/tasks/{id}/report   the report pages' figures: agreement and judges against humans
 *
 * A new task's body is JSON (NewTaskBodySchema: the form's fields with JSON types); it is then checked by the very
 * schema the form is checked with (app/annotation/tasks.server.ts NewTaskSchema, through
 * app/annotation/new-task.server.ts submitNewTask), so both refuse the same values with the same words.
 */
import { z } from "zod";
import { ANNOTATABLE_KINDS } from "~/task-kinds/registry";
import { REFERENCES, MISSING_POLICIES, parseUnparsedPolicy } from "~/reports/judgeAgreement";
import { FINAL_RULES, STALE_MODES } from "~/reports/types";
import { ProjectParamsSchema } from "./projects";
import { pageSchema, ProblemSchema } from "./shared";
import type { ApiOperation } from "./types";

const Id = z.number().int().min(1);
const Count = z.number().int().min(0);
const UnixSeconds = z.number().int().describe("Unix time, seconds.");
/** A figure that may be undefined by the mathematics (kappa when chance agreement is 1): null then. */
const Figure = z.number().nullable();
const Interval = z.tuple([z.number(), z.number()]).nullable().describe("The 95% interval [low, high], or null when not estimable.");

export const TASK_STATUSES = ["open", "closed", "archived"] as const;

/** Path parameters of one task: the project's slug and the task's id. */
export const TaskParamsSchema = ProjectParamsSchema.extend({
  id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe("The task's id."),
});

const Progress = z.object({ done: Count.describe("Assignments submitted or skipped."), total: Count.describe("Assignments.") });

/** One row of the Tasks page (app/annotation/tasks.server.ts listTasks). */
export const TaskListRowSchema = z
  .object({
    id: Id,
    name: z.string(),
    kind: z.string().describe("The task kind's id (checklist-appropriateness, response-satisfaction, writing-quality, …)."),
    kindTitle: z.string().describe("The kind's title, as the page shows it."),
    annotatable: z.boolean().describe("Labelled in Concord (false for imported labels)."),
    status: z.enum(TASK_STATUSES),
    overlap: z.number().int().min(1).describe("Annotators per unit (k)."),
    createdAt: UnixSeconds,
    mine: Progress.describe("The token's user's own assignments."),
    overall: Progress.describe("Every annotator's assignments together."),
  })
  .meta({ id: "TaskListRow" });

export const TasksPageSchema = pageSchema(TaskListRowSchema);

const AnnotatorProgressSchema = z.object({
  annotatorId: Id,
  name: z.string(),
  total: Count,
  pending: Count,
  draft: Count,
  submitted: Count,
  skipped: Count,
  medianMs: z.number().nullable().describe("Median time per submitted unit (ms), or null."),
  gold: z.object({ scored: Count, correct: Count }).describe("Gold units answered, and how many matched the known answer."),
});

/** GET …/tasks/{id}: the task page's view (app/annotation/task-view.server.ts taskView). */
export const TaskSchema = z
  .object({
    task: z
      .object({
        id: Id,
        name: z.string(),
        guidelines: z.string(),
        kind: z.string(),
        kindTitle: z.string(),
        annotatable: z.boolean(),
        status: z.enum(TASK_STATUSES),
        datasetId: Id,
        overlap: z.number().int().min(1),
        seed: z.number().int(),
        plan: z.string().nullable(),
        models: z.array(z.string()).nullable(),
        goldRate: z.number(),
        allowTies: z.boolean(),
        createdAt: UnixSeconds,
        config: z.record(z.string(), z.unknown()).describe("Every sampling setting and the kind's own settings, as stored."),
      })
      .describe("The task and its settings."),
    progress: z.object({
      annotators: z.array(AnnotatorProgressSchema).describe("Progress per annotator, by name."),
      total: Count,
      done: Count,
      goldUnits: Count,
      goldAnswered: Count.describe("Gold units whose known answer is set."),
    }),
    work: z.object({ annotations: Count.describe("Label rows, drafts included."), skips: Count }),
    stale: z
      .object({ assignments: Count, units: Count, inClosedTasks: Count })
      .describe("Submitted labels that judged an older version of their unit (curation edits since)."),
    pool: z.array(Id).describe("The annotators' user ids."),
    adjudicators: z.array(Id).describe("Annotators who may adjudicate (researchers always may)."),
  })
  .meta({ id: "Task" });

/**
 * POST …/tasks: the New task form's fields as JSON. Types are checked here; the values' rules (ranges, the plan of
 * the kind, overlap ≤ pool) by NewTaskSchema, as for the form, with the same messages.
 */
export const NewTaskBodySchema = z
  .strictObject({
    name: z.string().describe("The task's name (annotators see it); 1–200 characters."),
    datasetId: z.number().int().describe("A dataset (version) of the project."),
    kind: z.enum(ANNOTATABLE_KINDS as [string, ...string[]]).describe("The task kind."),
    plan: z.string().optional().describe("A sampling plan of the kind (default: the kind's first)."),
    overlap: z.number().int().default(2).describe("Annotators per unit, k (1–20, at most the pool's size; the form's default 2)."),
    seed: z.number().int().default(1).describe("Seed of sampling, assignment and shuffling (0 to 2^31−1; default 1)."),
    guidelines: z.string().default("").describe("Guidelines (markdown) annotators read."),
    pool: z.array(z.number().int()).describe("User ids of the annotators (members of the project); at least one."),
    models: z.array(z.string()).default([]).describe("Only responses of these models (none: all)."),
    turn: z.number().int().optional().describe("Only responses of this turn."),
    itemLimit: z.number().int().optional().describe("Items to sample (default: all)."),
    responsesPerItem: z.number().int().optional().describe("Responses sampled per item (plans that sample them; up to 50)."),
    strata: z.enum(["model", "domain", "turn"]).optional().describe("Stratify by (the stratified plan)."),
    perStratum: z.number().int().optional().describe("Units per stratum (the stratified plan; up to 10,000)."),
    showReference: z.boolean().default(false).describe("Show annotators the benchmark's reference answer beside the unit."),
    penaltyReasons: z.array(z.string()).optional().describe("Writing quality: the penalty reasons offered."),
    allowTies: z.boolean().default(false).describe("Comparisons: allow ties."),
    includeReference: z.boolean().default(false).describe("Comparisons: the reference answer as one of the compared responses."),
    n: z.number().int().optional().describe("Responses per comparison (2–4)."),
    goldRate: z.number().default(0).describe("Share of units that are gold units (0–0.5)."),
    settings: z
      .record(z.string(), z.string())
      .default({})
      .describe("The kind's own text settings (a Likert question and its anchors, …), by name."),
    confirmNames: z
      .boolean()
      .default(false)
      .describe(
        "Save texts annotators read (name, guidelines, the kind's texts) even though they name a model, judge or provider of the project (the form's Save anyway). Without it such a task is refused (422).",
      ),
  })
  .meta({ id: "NewTask" });

/** GET …/tasks/{id}/report: the report pages' options. A value outside these is refused (400). */
export const ReportQuerySchema = z.strictObject({
  rule: z.enum(FINAL_RULES).optional().describe("The final-label rule (default: mean for scores, majority otherwise)."),
  delta: z.coerce.number().gt(0).lt(1).default(0.05).describe("The sample-size planner's target half-width ±δ (default 0.05)."),
  stale: z.enum(STALE_MODES).default("include").describe("Labels and verdicts marked stale by curation: counted (default) or left out."),
  reference: z
    .enum(REFERENCES)
    .default("majority")
    .describe("Judges against: the human majority (default), each annotator, or the adjudicated label."),
  unparsed: z
    .string()
    .default("count-as-wrong")
    .refine((v) => parseUnparsedPolicy(v) !== null, 'count-as-wrong, exclude or as:LABEL (a label of the task, e.g. "as:No")')
    .describe('Unparsed verdicts: "count-as-wrong" (default; a class of their own), "exclude", or "as:LABEL".'),
  missing: z
    .enum(MISSING_POLICIES)
    .default("missing")
    .describe('Verdicts imported without a value: "missing" (default; out of n) or "unparsed".'),
});

const ReportTableSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    columns: z.array(z.object({ key: z.string(), label: z.string(), kind: z.string() })),
    rows: z.array(z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null(), z.tuple([z.number(), z.number()])]))),
    note: z.string().optional(),
  })
  .meta({ id: "ReportTable", description: "One table of a report page, as its CSV download holds it (a null is an undefined figure)." });

const JudgeAgreementRowSchema = z.object({
  judge: z.string(),
  n: Count,
  unparsed: Count,
  unparsedCompared: Count,
  missing: Count,
  missingVerdicts: Count,
  accuracy: Figure,
  accuracyCI: Interval,
  cohenKappa: Figure,
  cohenKappaCI: Interval,
  weightedKappa: Figure,
  weightedKappaCI: Interval,
  ac1: Figure,
  ac1CI: Interval,
  macroPrecision: Figure,
  macroPrecisionCI: Interval,
  macroRecall: Figure,
  macroRecallCI: Interval,
  macroF1: Figure,
  macroF1CI: Interval,
  intervalNotes: z.record(z.string(), z.string()),
  perLabel: z.record(z.string(), z.object({ precision: Figure, recall: Figure, f1: Figure, support: Count })),
  confusion: z.record(z.string(), z.record(z.string(), Count)),
  perAnnotator: z.array(z.object({ annotator: z.string(), n: Count, accuracy: Figure, cohenKappa: Figure })),
});

/** GET …/tasks/{id}/report. */
export const TaskReportSchema = z
  .object({
    task: z.object({ id: Id, name: z.string(), kind: z.string(), datasetId: Id, overlap: z.number().int() }),
    labelKind: z.enum(["binary", "nominal", "ordinal", "interval"]),
    rule: z.enum(FINAL_RULES),
    delta: z.number(),
    stale: z.enum(STALE_MODES),
    counts: z.object({ subjects: Count, rated: Count, ratings: Count, annotations: Count, annotators: Count }),
    paradox: z.string().nullable().describe("The kappa paradox's note (high agreement, low kappa), when it applies."),
    designNote: z.string(),
    agreement: z
      .array(z.object({ statistic: z.string(), value: Figure, ci: Interval, n: Count, method: z.string() }))
      .describe("The inter-annotator statistics with their 95% intervals and how each was obtained (the report's first table)."),
    tables: z.record(z.string(), ReportTableSchema).describe("Every table of the agreement page, by id (iaa, pairs, matrix, …)."),
    judges: z
      .object({
        judges: z.array(z.object({ id: Id, name: z.string(), model: z.string() })),
        tables: z.record(z.string(), ReportTableSchema).describe("Every table of the judges page, by id."),
      })
      .describe("The judges page's figures against the final labels (rule)."),
    judgeAgreement: z
      .object({
        reference: z.enum(REFERENCES),
        unparsed: z.string(),
        missing: z.enum(MISSING_POLICIES),
        applicable: z.boolean().describe("False for kinds whose labels are not one scalar per unit."),
        note: z.string().nullable().describe("Why the unparsed policy asked for could not be applied, if it could not."),
        labels: z.array(z.string()).describe("The label set."),
        units: Count,
        unitsWithoutMajority: Count,
        annotators: z.array(z.string()),
        judges: z.array(JudgeAgreementRowSchema.extend({ judgeId: Id.nullable() })).describe("Per judge: the any-label-set table."),
        humans: z
          .object({ n: Count, accuracy: z.number(), accuracyCI: Interval, cohenKappa: Figure })
          .nullable()
          .describe("The human ceiling a judge is read against."),
        tables: z.record(z.string(), ReportTableSchema),
      })
      .describe("Judge–human agreement on any label set (the judges page's table and `npm run judge-agreement`)."),
  })
  .meta({ id: "TaskReport" });

const taskParamsAndBody = { params: TaskParamsSchema, idempotent: true } as const;

export const OPERATIONS: ApiOperation[] = [
  {
    method: "get",
    path: "/api/v1/projects/{slug}/tasks",
    operationId: "listTasks",
    summary: "The project's annotation tasks with their progress",
    description:
      "The Tasks page's list, by id: researchers and admins see every task; an annotator only the tasks they have work in (archived ones left out), with their own progress and the overall count — never anyone's labels.",
    tag: "tasks",
    auth: "read",
    minRole: "annotator",
    params: ProjectParamsSchema,
    paged: true,
    responses: { 200: { description: "A page of tasks.", schema: TasksPageSchema } },
  },
  {
    method: "post",
    path: "/api/v1/projects/{slug}/tasks",
    operationId: "createTask",
    summary: "Creates an annotation task, as the New task form does",
    description:
      "The form's fields as JSON, checked as the form checks them; the sampling plan draws the units and the pool's annotators get their assignments, all or nothing.",
    tag: "tasks",
    auth: "write",
    minRole: "researcher",
    params: ProjectParamsSchema,
    body: [{ contentType: "application/json", schema: NewTaskBodySchema }],
    idempotent: true,
    responses: {
      201: { description: "The task, created.", schema: TaskSchema, headers: { Location: "The task's address in the API." } },
      400: { description: "A field is not valid (errors name each field); nothing is written.", schema: ProblemSchema },
      415: { description: "The body is not JSON.", schema: ProblemSchema },
      422: {
        description: "A text annotators read names a model, judge or provider of the project; send confirmNames: true to save it anyway.",
        schema: ProblemSchema,
      },
    },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}/tasks/{id}",
    operationId: "getTask",
    summary: "One task: its settings and progress per annotator",
    description: "The task page's figures: its settings, progress per annotator with gold accuracy, the pool and adjudicators.",
    tag: "tasks",
    auth: "read",
    minRole: "researcher",
    params: TaskParamsSchema,
    responses: { 200: { description: "The task.", schema: TaskSchema } },
  },
  {
    method: "post",
    path: "/api/v1/projects/{slug}/tasks/{id}/close",
    operationId: "closeTask",
    summary: "Closes a task: labels are frozen",
    tag: "tasks",
    auth: "write",
    minRole: "researcher",
    ...taskParamsAndBody,
    responses: {
      200: { description: "The task, closed (closing a closed task changes nothing).", schema: TaskSchema },
      409: { description: "The task is archived: bring it back on its page first.", schema: ProblemSchema },
    },
  },
  {
    method: "post",
    path: "/api/v1/projects/{slug}/tasks/{id}/reopen",
    operationId: "reopenTask",
    summary: "Reopens a closed task",
    tag: "tasks",
    auth: "write",
    minRole: "researcher",
    ...taskParamsAndBody,
    responses: {
      200: { description: "The task, open again (reopening an open task changes nothing).", schema: TaskSchema },
      409: { description: "The task is archived: bring it back on its page first.", schema: ProblemSchema },
    },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}/tasks/{id}/report",
    operationId: "getTaskReport",
    summary: "A task's agreement report and judge–human agreement",
    description:
      "The report pages' figures as JSON: inter-annotator statistics with their intervals, every table of the agreement and judges pages, and judge–human agreement per judge under the `reference`, `unparsed` and `missing` options. Computed on request: a heavy read (429 with Retry-After when the user already has several under way).",
    tag: "tasks",
    auth: "read",
    minRole: "researcher",
    params: TaskParamsSchema,
    query: ReportQuerySchema,
    responses: { 200: { description: "The report.", schema: TaskReportSchema } },
  },
];
