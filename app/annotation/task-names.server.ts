/**
 * Annotator-visible text that researchers type (a task's name and guidelines, and
 * the texts of its kind's settings that annotators read: a Likert question and its
 * anchors, penalty reasons) is checked against the project's model, judge and
 * provider names before it is saved: such a name would unblind annotators, so
 * saving it needs an explicit "save anyway". Renaming a task lives here too.
 */
import { and, eq, sql } from "drizzle-orm";
import { dalOf, getDal, type DalLike } from "~/dal.server";
import { findKind } from "~/task-kinds/registry";
import type { TaskConfig } from "./config.server";
import { findTask } from "./tasks.server";

export const TASK_NAME_MAX = 200;
export const GUIDELINES_MAX = 20_000;

/** Every model, judge and provider name of the project (models of its responses included). */
export async function blindingNames(projectId: number, db: DalLike = getDal()): Promise<string[]> {
  const d = dalOf(db);
  const { providers, judges, responses, items, datasets } = d.t;
  const names = new Set<string>();
  const add = (s: string | null | undefined) => {
    const t = (s ?? "").trim();
    if (!t) return;
    names.add(t);
    // "org/Model-7B" is also written as "Model-7B".
    const tail = t.split("/").pop()!.trim();
    if (tail && tail !== t) names.add(tail);
  };
  for (const p of await d.q
    .select({ name: providers.name, model: providers.model })
    .from(providers)
    .where(eq(providers.projectId, projectId))) {
    add(p.name);
    add(p.model);
  }
  for (const j of await d.q
    .select({ name: judges.name, model: judges.model, provider: judges.provider })
    .from(judges)
    .where(eq(judges.projectId, projectId))) {
    add(j.name);
    add(j.model);
    add(j.provider);
  }
  const models = await d.rows<{ model: string }>(sql`select distinct r.model as model from ${responses} r
    join ${items} i on i.id = r.item_id join ${datasets} d on d.id = i.dataset_id where d.project_id = ${projectId}`);
  for (const m of models) add(m.model);
  // Two-letter names ("A", "v2") would match everywhere; they say nothing about a model.
  return [...names].filter((n) => n.length >= 3);
}

/** The project names (models, judges, providers) that occur in any of the texts, case-insensitively. */
export async function blindingNamesIn(projectId: number, texts: string[], db: DalLike = getDal()): Promise<string[]> {
  const hay = texts.join("\n").toLowerCase();
  if (!hay.trim()) return [];
  const found = (await blindingNames(projectId, db)).filter((n) => hay.includes(n.toLowerCase()));
  // Report "Model-7B" once, not also its "org/Model-7B" spelling when only the tail occurs.
  return [...new Set(found)].sort((a, b) => a.localeCompare(b));
}

/**
 * The warning for annotator-visible fields (field name → text) that name a model,
 * judge or provider of the project: the same sentence beside each field that
 * names one, and the names. Null when none does.
 */
export async function blindingWarning(
  projectId: number,
  fields: Record<string, string>,
  db: DalLike = getDal(),
): Promise<{ fieldErrors: Record<string, string>; warning: { names: string[] } } | null> {
  const names = await blindingNamesIn(projectId, Object.values(fields), db);
  if (!names.length) return null;
  const where = (text: string) => names.some((n) => text.toLowerCase().includes(n.toLowerCase()));
  const msg = `Annotators see this text, and it names ${names.map((n) => `"${n}"`).join(", ")} of this project: they would no longer be blind.`;
  const fieldErrors: Record<string, string> = {};
  for (const [field, text] of Object.entries(fields)) if (where(text)) fieldErrors[field] = msg;
  return { fieldErrors, warning: { names } };
}

/**
 * The texts of a task's settings that its annotators read, by the new-task form
 * field that holds each: what the kind declares (TaskKind.annotatorTexts), or, for a
 * kind that declares nothing, every text setting it asks for and its penalty reasons
 * (counted as seen unless the kind says otherwise).
 */
export function annotatorTextsOf(kindId: string, config: TaskConfig): Record<string, string> {
  const kind = findKind(kindId);
  if (!kind) return {};
  if (kind.annotatorTexts) return kind.annotatorTexts(config);
  const out: Record<string, string> = {};
  for (const t of kind.textSettings ?? []) {
    const v = (config as Record<string, unknown>)[t.name];
    if (typeof v === "string") out[`settings.${t.name}`] = v;
  }
  if (kind.settings.includes("penaltyReasons") && config.penaltyReasons?.length) out.penaltyReasons = config.penaltyReasons.join(", ");
  return out;
}

export type RenameResult =
  { ok: true; message: string } | { ok: false; fieldErrors: Record<string, string>; warning?: { names: string[] } };

/**
 * Renames a task and/or replaces its guidelines. A text naming a model, judge or
 * provider of the project is refused with a warning unless `confirmed`.
 */
export async function renameTask(
  projectId: number,
  taskId: number,
  input: { name: unknown; guidelines: unknown; confirmed: boolean },
  db: DalLike = getDal(),
): Promise<RenameResult> {
  const d = dalOf(db);
  const task = await findTask(projectId, taskId, d);
  if (!task) return { ok: false, fieldErrors: { name: "No such task." } };
  const name = typeof input.name === "string" ? input.name.trim() : "";
  const guidelines = typeof input.guidelines === "string" ? input.guidelines.replace(/\r\n/g, "\n") : task.guidelines;
  const fieldErrors: Record<string, string> = {};
  if (!name) fieldErrors.name = "Give the task a name.";
  else if (name.length > TASK_NAME_MAX) fieldErrors.name = `Keep the name under ${TASK_NAME_MAX} characters (it has ${name.length}).`;
  if (guidelines.length > GUIDELINES_MAX)
    fieldErrors.guidelines = `Keep the guidelines under ${GUIDELINES_MAX.toLocaleString("en")} characters (they have ${guidelines.length.toLocaleString("en")}).`;
  if (Object.keys(fieldErrors).length) return { ok: false, fieldErrors };
  if (!input.confirmed) {
    const held = await blindingWarning(projectId, { name, guidelines }, d);
    if (held) return { ok: false, ...held };
  }
  const t = d.t.tasks;
  await d.tx((tx) =>
    tx
      .update(t)
      .set({ name, guidelines })
      .where(and(eq(t.id, taskId), eq(t.projectId, projectId))),
  );
  return { ok: true, message: name === task.name ? "Task details saved." : `Task renamed to "${name}".` };
}
