/**
 * Adjudication: the units where annotators disagree, everyone's labels side by
 * side, and the final label with a reason (stored in tasks.config.adjudications,
 * keyed by unit id, same label shapes as annotations).
 *
 * Who: researchers, and annotators the task names as adjudicators — the latter
 * only for units they were not assigned themselves, so adjudication never
 * shows an annotator other people's labels for a unit they label. A researcher
 * who is also in the pool sees a unit of their own only after submitting it.
 */
import { and, eq } from "drizzle-orm";
import { hasRole } from "~/auth/guards.server";
import { dalOf, first, getDal, type Dal, type DalLike } from "~/dal.server";
import type { schema } from "~/db.server";
import type { Role } from "../../db/schema";
import { blindUnit } from "./annotate.server";
import { taskKind } from "~/task-kinds/registry";
import { isAnnotatable, readConfig } from "./config";
import { labelsDisagree, parseFinalLabel, rulesOf, type FormLike, type ResponseKey } from "./labels";
import { letter } from "./random";
import { currentAnnotations, findTask } from "./tasks.server";

type Task = typeof schema.tasks.$inferSelect;

export function canAdjudicate(task: Task, userId: number, role: Role): boolean {
  if (hasRole(role, "researcher")) return true;
  return (readConfig(task.config).adjudicators ?? []).includes(userId);
}

/**
 * Units whose labels the user may not see here, so adjudication never breaks
 * their own blinding: an annotator-adjudicator never adjudicates a unit assigned
 * to them; a researcher who is also in the task's pool sees a unit assigned to
 * them only once they have submitted their own label for it.
 */
async function ownUnits(task: Task, userId: number, role: Role, d: Dal): Promise<Set<number>> {
  const { assignments, units } = d.t;
  const mine = await d.q
    .select({ unitId: assignments.unitId, status: assignments.status })
    .from(assignments)
    .innerJoin(units, eq(units.id, assignments.unitId))
    .where(and(eq(units.taskId, task.id), eq(assignments.annotatorId, userId)));
  const researcher = hasRole(role, "researcher");
  return new Set(mine.filter((a) => !researcher || a.status !== "submitted").map((a) => a.unitId));
}

export async function disagreements(task: Task, userId: number, role: Role, db: DalLike = getDal()) {
  if (!isAnnotatable(task.kind)) return [];
  const d = dalOf(db);
  const kind = task.kind;
  const rows = await currentAnnotations(task.id, d);
  const excluded = await ownUnits(task, userId, role, d);
  const adjudications = readConfig(task.config).adjudications ?? {};
  const byUnit = new Map<number, typeof rows>();
  for (const r of rows) {
    if (r.status !== "submitted") continue;
    if (!byUnit.has(r.unitId)) byUnit.set(r.unitId, []);
    byUnit.get(r.unitId)!.push(r);
  }
  const out: { unitId: number; labels: number; adjudicated: boolean }[] = [];
  for (const [unitId, labels] of [...byUnit.entries()].sort((a, b) => a[0] - b[0])) {
    if (excluded.has(unitId) || labels.length < 2) continue;
    const split = labels.some((x, i) => labels.slice(i + 1).some((y) => labelsDisagree(kind, x.label, y.label)));
    if (split) out.push({ unitId, labels: labels.length, adjudicated: String(unitId) in adjudications });
  }
  return out;
}

/** One disputed unit: content in canonical order ("Response 1..n"), and each annotator's label and notes. */
export async function adjudicationView(task: Task, unitId: number, userId: number, role: Role, db: DalLike = getDal()) {
  if (!isAnnotatable(task.kind)) return null;
  const d = dalOf(db);
  const { units, users } = d.t;
  const rows = (await currentAnnotations(task.id, d)).filter((r) => r.unitId === unitId);
  if (rows.length === 0 || (await ownUnits(task, userId, role, d)).has(unitId)) return null;
  const unitRow = first(
    await d.q
      .select({ responseIds: units.responseIds, responseId: units.responseId })
      .from(units)
      .where(and(eq(units.id, unitId), eq(units.taskId, task.id)))
      .limit(1),
  );
  if (!unitRow) return null;
  const canonical: ResponseKey[] | null = unitRow.responseIds ?? null;
  const content = await blindUnit(task, { unitId, shownOrder: canonical }, d);
  const names = new Map((await d.q.select({ id: users.id, name: users.name }).from(users)).map((u) => [u.id, u.name]));
  const nameOf = (key: unknown) => {
    const i = canonical?.findIndex((k) => String(k) === String(key)) ?? -1;
    return i >= 0 ? `Response ${letter(i)}` : String(key);
  };
  const kind = taskKind(task.kind);
  const describe = (label: unknown, penalties: Record<string, string[]> | null, notes: unknown) =>
    kind.describe(label, penalties, notes, nameOf);
  const adjudication = readConfig(task.config).adjudications?.[String(unitId)] ?? null;
  return {
    unit: content,
    labels: rows.map((r) => ({
      annotator: names.get(r.annotatorId) ?? `#${r.annotatorId}`,
      status: r.assignmentStatus,
      skipReason: r.skipReason,
      ...(r.status === "submitted"
        ? describe(r.label, r.penaltyReasons ?? null, r.notes)
        : { summary: [] as string[], notes: [] as string[] }),
    })),
    final: adjudication
      ? {
          ...describe(adjudication.label, adjudication.penaltyReasons ?? null, null),
          reason: adjudication.reason,
          by: names.get(adjudication.by) ?? "",
        }
      : null,
  };
}

export async function adjudicate(
  args: { projectId: number; taskId: number; unitId: number; userId: number; role: Role; form: FormLike },
  db: DalLike = getDal(),
): Promise<{ ok: true } | { ok: false; fieldErrors: Record<string, string> }> {
  const d = dalOf(db);
  const { tasks, units } = d.t;
  return d.tx(async (tx) => {
    const task = await findTask(args.projectId, args.taskId, d);
    if (!task || !isAnnotatable(task.kind)) return { ok: false as const, fieldErrors: { form: "No such task." } };
    if (!canAdjudicate(task, args.userId, args.role))
      return { ok: false as const, fieldErrors: { form: "You are not an adjudicator of this task." } };
    const view = await adjudicationView(task, args.unitId, args.userId, args.role, d);
    if (!view) return { ok: false as const, fieldErrors: { unitId: "No such unit to adjudicate." } };
    const reason = String(args.form.get("reason") ?? "").trim();
    const config = readConfig(task.config);
    const unit = first(await tx.select({ responseIds: units.responseIds }).from(units).where(eq(units.id, args.unitId)).limit(1));
    // Adjudicators see every response and may always call a tie (allowTies: true).
    const parsed = parseFinalLabel(rulesOf(task.kind, config, unit?.responseIds ?? null, true), args.form);
    const errors = parsed.ok ? {} : { ...parsed.fieldErrors };
    if (!reason) (errors as Record<string, string>).reason = "Give the reason for the final label.";
    if (!parsed.ok || Object.keys(errors).length) return { ok: false as const, fieldErrors: errors };
    const adjudications = { ...(config.adjudications ?? {}) };
    adjudications[String(args.unitId)] = {
      label: parsed.value.label,
      penaltyReasons: parsed.value.penaltyReasons,
      reason: reason.slice(0, 5000),
      by: args.userId,
      at: Math.floor(Date.now() / 1000),
    };
    await tx
      .update(tasks)
      .set({ config: { ...config, adjudications } })
      .where(eq(tasks.id, task.id));
    return { ok: true as const };
  });
}
