/**
 * Creating a task from the New task form or the HTTP API (POST /api/v1/projects/{slug}/tasks): the one path both
 * take. The input is checked with NewTaskSchema (./tasks.server.ts), its errors worded with the form's labels;
 * texts annotators will read (the name, guidelines, the kind's own texts) that name a model, judge or provider of
 * the project are held back until confirmed; then createTask writes the task, its units and assignments.
 */
import { asc, and, eq } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { visible } from "~/db.server";
import { fieldErrorsOf, humanErrors, type FieldErrors } from "~/forms/messages";
import { annotatorTextsOf, blindingWarning } from "./task-names.server";
import { createTask, NewTaskSchema, projectMembers } from "./tasks.server";

/** The New task form's labels, also used to word the errors ("Seed must be 0 or more."). */
export const NEW_TASK_LABELS: Record<string, string> = {
  name: "Name",
  datasetId: "Dataset",
  kind: "Kind",
  plan: "Sampling plan",
  models: "Models",
  overlap: "Overlap k",
  seed: "Seed",
  turn: "Turn",
  itemLimit: "Items to sample",
  responsesPerItem: "Responses per item",
  strata: "Stratify by",
  perStratum: "Units per stratum",
  n: "Responses per comparison",
  goldRate: "Gold rate",
  penaltyReasons: "Penalty reasons",
  guidelines: "Guidelines",
  pool: "Annotator pool",
};

/** What the New task form offers: the project's datasets, the models of their responses, the members for the pool. */
export async function newTaskFormOptions(projectId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { datasets: ds, responses, items } = d.t;
  const datasets = await d.q
    .select({ id: ds.id, name: ds.name, version: ds.version })
    .from(ds)
    .where(eq(ds.projectId, projectId))
    .orderBy(asc(ds.name));
  const models = (
    await d.q
      .selectDistinct({ model: responses.model })
      .from(responses)
      .innerJoin(items, eq(items.id, responses.itemId))
      .innerJoin(ds, eq(ds.id, items.datasetId))
      .where(and(eq(ds.projectId, projectId), visible(responses.pendingImportId)))
      .orderBy(asc(responses.model))
  ).map((m) => m.model);
  return { datasets, models, members: await projectMembers(projectId, d) };
}

export type NewTaskOutcome =
  | { ok: true; taskId: number; units: number }
  /** Refused: a message per field (`form` for the whole), nothing written; `warning`: texts naming a model, judge or provider. */
  | { ok: false; fieldErrors: FieldErrors; warning?: { names: string[] } };

/**
 * Checks `input` (the form's values, strings or numbers) as the New task form does and creates the task. Field problems and the blinding hold come back as
 * `{ ok: false, fieldErrors }`; a refusal of the domain (a dataset of another project, a pool member who is not a
 * member, a plan that selects no unit) is thrown as a DomainError (TaskError, SamplingError, AssignmentError).
 * `confirmed`: the researcher saves texts naming a model, judge or provider anyway.
 */
export async function submitNewTask(
  projectId: number,
  userId: number,
  input: unknown,
  opts: { confirmed: boolean },
  db: DalLike = getDal(),
): Promise<NewTaskOutcome> {
  const parsed = NewTaskSchema.safeParse(input, { error: humanErrors(NEW_TASK_LABELS) });
  if (!parsed.success) return { ok: false, fieldErrors: fieldErrorsOf(parsed.error) };
  // Annotators see the name, the guidelines and the texts of the kind's settings (a Likert question and its
  // anchors, penalty reasons): one naming a model, judge or provider of the project is held back with a warning
  // until the researcher saves it anyway.
  if (!opts.confirmed) {
    const { kind, penaltyReasons, settings } = parsed.data;
    const held = await blindingWarning(
      projectId,
      { name: parsed.data.name, guidelines: parsed.data.guidelines ?? "", ...annotatorTextsOf(kind, { penaltyReasons, ...settings }) },
      db,
    );
    if (held) return { ok: false, fieldErrors: held.fieldErrors, warning: held.warning };
  }
  const { taskId, units } = await createTask(projectId, userId, parsed.data, db);
  return { ok: true, taskId, units };
}
