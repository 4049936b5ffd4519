/**
 * The annotator's side: their queue, the blind view of one unit, and saving
 * labels (draft, submit, skip) idempotently with every submitted revision kept.
 *
 * Blinding: everything returned here for an annotator is built from the blind
 * fields only — texts, shown letters, the annotator's own labels. No model
 * name, response id, judge verdict, gold answer or other annotator's label.
 */
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import { dalOf, first, getDal, type Dal, type DalLike, type Q } from "~/dal.server";
import type { schema } from "~/db.server";
import { isAnnotatable, penaltyReasonsOf, readConfig, scoreScaleOf, type AnnotatableKind } from "./config";
import { labelToForm, parseLabel, rulesOf, type FormLike, type ParsedLabel, type ResponseKey } from "./labels";
import { taskKind } from "~/task-kinds/registry";
import { letter } from "./random";
import { emitTaskCompletedIfDone } from "~/webhooks/events.server";

type Task = typeof schema.tasks.$inferSelect;

export async function myAssignment(taskId: number, unitId: number, userId: number, db: DalLike = getDal()) {
  if (!Number.isInteger(unitId)) return undefined;
  const d = dalOf(db);
  const { assignments, units } = d.t;
  return first(
    await d.q
      .select({
        id: assignments.id,
        unitId: assignments.unitId,
        status: assignments.status,
        shownOrder: assignments.shownOrder,
        skipReason: assignments.skipReason,
        startedAt: assignments.startedAt,
      })
      .from(assignments)
      .innerJoin(units, eq(units.id, assignments.unitId))
      .where(and(eq(assignments.unitId, unitId), eq(assignments.annotatorId, userId), eq(units.taskId, taskId)))
      .limit(1),
  );
}

/** The user's own assignments in queue order (unit position). */
export async function myQueue(taskId: number, userId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { assignments, units } = d.t;
  return d.q
    .select({ unitId: assignments.unitId, status: assignments.status, position: units.position })
    .from(assignments)
    .innerJoin(units, eq(units.id, assignments.unitId))
    .where(and(eq(units.taskId, taskId), eq(assignments.annotatorId, userId)))
    .orderBy(asc(units.position), asc(units.id));
}

/** Personal and overall progress (counts only: nothing about who labelled what). */
export async function progress(taskId: number, userId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { assignments, units } = d.t;
  // PostgreSQL answers count(*) and sum(…) as bigint, i.e. strings: read as numbers.
  const row = first(
    await d.q
      .select({
        total: sql<number>`count(*)`.mapWith(Number),
        done: sql<number>`coalesce(sum(case when ${assignments.status} in ('submitted','skipped') then 1 else 0 end), 0)`.mapWith(Number),
        mine: sql<number>`coalesce(sum(case when ${assignments.annotatorId} = ${userId} then 1 else 0 end), 0)`.mapWith(Number),
        mineDone:
          sql<number>`coalesce(sum(case when ${assignments.annotatorId} = ${userId} and ${assignments.status} in ('submitted','skipped') then 1 else 0 end), 0)`.mapWith(
            Number,
          ),
      })
      .from(assignments)
      .innerJoin(units, eq(units.id, assignments.unitId))
      .where(eq(units.taskId, taskId)),
  );
  return { mine: { done: row?.mineDone ?? 0, total: row?.mine ?? 0 }, overall: { done: row?.done ?? 0, total: row?.total ?? 0 } };
}

/** The next unit to label: the first pending or draft one, after `afterUnitId` if given (wrapping). */
export async function nextUnitId(taskId: number, userId: number, afterUnitId?: number, db: DalLike = getDal()): Promise<number | null> {
  const q = await myQueue(taskId, userId, db);
  const open = (s: string) => s === "pending" || s === "draft";
  const start = afterUnitId != null ? q.findIndex((a) => a.unitId === afterUnitId) + 1 : 0;
  for (let i = 0; i < q.length; i++) {
    const a = q[(start + i) % q.length];
    if (open(a.status)) return a.unitId;
  }
  return null;
}

export async function latestRevision(assignmentId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const an = d.t.annotations;
  return first(
    await d.q
      .select({
        id: an.id,
        revision: an.revision,
        status: an.status,
        label: an.label,
        penaltyReasons: an.penaltyReasons,
        notes: an.notes,
        durationMs: an.durationMs,
      })
      .from(an)
      .where(eq(an.assignmentId, assignmentId))
      .orderBy(desc(an.revision))
      .limit(1),
  );
}

export type BlindResponse = { letter: string; text: string };
export type BlindUnit = {
  unitId: number;
  kind: AnnotatableKind;
  query: string;
  passage: string | null;
  reference: string | null;
  checklistItem: string | null;
  responses: BlindResponse[];
};

/** The unit as an annotator may see it: texts and shown letters only. */
export async function blindUnit(
  task: Task,
  assignment: { unitId: number; shownOrder: ResponseKey[] | null },
  db: DalLike = getDal(),
): Promise<BlindUnit> {
  if (!isAnnotatable(task.kind)) throw new Error(`blindUnit: task kind ${task.kind} is not annotated in Concord`);
  const d = dalOf(db);
  const { units, items, references, checklistItems, responses: responsesT } = d.t;
  const config = readConfig(task.config);
  const unit = first(
    await d.q
      .select({ itemId: units.itemId, checklistItemId: units.checklistItemId, responseId: units.responseId })
      .from(units)
      .where(eq(units.id, assignment.unitId))
      .limit(1),
  )!;
  const item = first(
    await d.q.select({ query: items.query, passage: items.passage }).from(items).where(eq(items.id, unit.itemId)).limit(1),
  )!;
  const refRow = first(
    await d.q
      .select({ text: references.text })
      .from(references)
      .where(and(eq(references.itemId, unit.itemId), eq(references.isCurrent, true)))
      .orderBy(desc(references.version))
      .limit(1),
  );
  const checklistItem = unit.checklistItemId
    ? (first(
        await d.q.select({ text: checklistItems.text }).from(checklistItems).where(eq(checklistItems.id, unit.checklistItemId)).limit(1),
      )?.text ?? null)
    : null;
  const order: ResponseKey[] = assignment.shownOrder ?? (unit.responseId ? [unit.responseId] : []);
  const ids = order.filter((k): k is number => typeof k === "number");
  const texts = new Map(
    ids.length
      ? (await d.q.select({ id: responsesT.id, text: responsesT.text }).from(responsesT).where(inArray(responsesT.id, ids))).map((r) => [
          r.id,
          r.text,
        ])
      : [],
  );
  const responses = order.map((k, i) => ({ letter: letter(i), text: k === "reference" ? (refRow?.text ?? "") : (texts.get(k) ?? "") }));
  // The reference is shown as such only where the kind shows it (writing quality: always,
  // the scale's anchor; the Yes/No kinds when configured; best-of-N never names it).
  const showReference = taskKind(task.kind).showsReference(config);
  return {
    unitId: assignment.unitId,
    kind: task.kind,
    query: item.query,
    passage: item.passage,
    reference: showReference ? (refRow?.text ?? null) : null,
    checklistItem,
    responses,
  };
}

export type SaveIntent = "draft" | "submit" | "skip";
export type SaveResult =
  | { ok: true; status: "draft" | "submitted" | "skipped"; duplicate?: boolean; revision?: number }
  | { ok: false; httpStatus: 400 | 404 | 409; fieldErrors: Record<string, string> };

const MAX_DURATION_MS = 24 * 3600 * 1000;

/**
 * A JSON value as text with object keys sorted: a label read back from
 * PostgreSQL's jsonb has its keys in jsonb's own order, not the order written,
 * so a retry is recognised by content, not by key order.
 */
function canonicalJson(x: unknown): string {
  return JSON.stringify(x ?? null, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * Saves one label. A retried submit with the same clientToken and the same
 * answer stores nothing new and answers as the first did; a changed answer under
 * a used clientToken (the form resubmitted after going back) is stored as a new
 * revision, never dropped. Invalid labels store nothing.
 */
export async function saveAnnotation(
  args: { task: Task; userId: number; unitId: number; intent: SaveIntent; form: FormLike; nowMs?: number },
  db: DalLike = getDal(),
): Promise<SaveResult> {
  const { task, userId, unitId, intent, form } = args;
  const nowMs = args.nowMs ?? Date.now();
  const now = Math.floor(nowMs / 1000);
  if (!isAnnotatable(task.kind)) return { ok: false, httpStatus: 400, fieldErrors: { form: "This task kind is not labelled in Concord." } };
  const kind = task.kind;
  const config = readConfig(task.config);
  const token = typeof form.get("clientToken") === "string" ? (form.get("clientToken") as string).trim().slice(0, 100) || null : null;
  const durationRaw = Number(form.get("durationMs"));
  const openedAt = Number(form.get("openedAt"));
  const d = dalOf(db);
  const { annotations, assignments, tasks } = d.t;

  return d.tx(
    async (tx): Promise<SaveResult> => {
      // On PostgreSQL, row locks on everything the answer depends on (TxOptions.lockedReadCommitted), taken by the
      // reads that fetch them: the user's assignment of the unit (a second submit of it — a double click — waits for
      // the first and then sees it: its token, its revision) and the task (closing it waits for the submits in flight;
      // they share the lock). Labels of other assignments, other annotators' or the user's own, touch no common row
      // and never make each other fail.
      const pg = d.dialect === "postgres";
      const a = pg ? await lockedAssignment(d, tx, task.id, unitId, userId) : await myAssignment(task.id, unitId, userId, d);
      if (!a) return { ok: false, httpStatus: 404, fieldErrors: { unitId: "This unit is not assigned to you, or does not exist." } };
      // A form already submitted once: the same answer again is a retry (nothing stored);
      // a changed answer (the form resubmitted after going back) is stored as a new revision.
      let tokenUsed = false;
      if (token && intent === "submit") {
        const seen = first(
          await tx
            .select({
              assignmentId: annotations.assignmentId,
              revision: annotations.revision,
              label: annotations.label,
              penaltyReasons: annotations.penaltyReasons,
              notes: annotations.notes,
            })
            .from(annotations)
            .where(eq(annotations.clientToken, token))
            .limit(1),
        );
        if (seen) {
          if (seen.assignmentId !== a.id)
            return { ok: false, httpStatus: 409, fieldErrors: { form: "This form was already used for another unit; reload the page." } };
          const again = parseLabel(rulesOf(kind, config, a.shownOrder ?? null), form, intent);
          if (!again.ok) return { ok: false, httpStatus: 400, fieldErrors: again.fieldErrors };
          const same = (x: unknown, y: unknown) => canonicalJson(x) === canonicalJson(y);
          if (
            same(again.value.label, seen.label) &&
            same(again.value.penaltyReasons, seen.penaltyReasons) &&
            same(again.value.notes, seen.notes)
          ) {
            return { ok: true, status: "submitted", duplicate: true, revision: seen.revision };
          }
          tokenUsed = true;
        }
      }
      const task2 = pg
        ? first(await d.rows<{ status: string }>(sql`SELECT status FROM tasks WHERE id = ${task.id} FOR SHARE`, tx))
        : first(await tx.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, task.id)).limit(1));
      if (task2?.status !== "open")
        return { ok: false, httpStatus: 409, fieldErrors: { form: "This task is closed; labels can no longer change." } };

      if (intent === "skip") {
        const reason = typeof form.get("skipReason") === "string" ? (form.get("skipReason") as string).trim() : "";
        if (!reason) return { ok: false, httpStatus: 400, fieldErrors: { skipReason: "Say why you skip this unit." } };
        if (a.status === "submitted")
          return { ok: false, httpStatus: 409, fieldErrors: { skipReason: "This unit is already submitted; revise it instead." } };
        await tx
          .update(assignments)
          .set({ status: "skipped", skipReason: reason.slice(0, 2000), startedAt: a.startedAt ?? now })
          .where(eq(assignments.id, a.id));
        // The task's last open assignment done: its webhooks hear task.completed (app/webhooks/events.server.ts).
        if (a.status !== "skipped") await emitTaskCompletedIfDone(d, task.id);
        return { ok: true, status: "skipped" };
      }

      if (intent === "draft" && a.status === "submitted") {
        // Revisions of a submitted label are saved by submitting; no draft on top.
        return { ok: true, status: "submitted" };
      }
      const parsed = parseLabel(rulesOf(kind, config, a.shownOrder ?? null), form, intent);
      if (!parsed.ok) return { ok: false, httpStatus: 400, fieldErrors: parsed.fieldErrors };

      const latest = await latestRevision(a.id, d);
      const base = latest?.status === "draft" ? (latest.durationMs ?? 0) : 0;
      let durationMs: number | null = null;
      if (Number.isFinite(durationRaw) && durationRaw >= 0) durationMs = Math.min(Math.round(durationRaw), MAX_DURATION_MS);
      else if (Number.isFinite(openedAt) && openedAt > 0 && openedAt <= nowMs)
        durationMs = Math.min(base + (nowMs - openedAt), MAX_DURATION_MS);

      const values = {
        label: parsed.value.label,
        penaltyReasons: parsed.value.penaltyReasons,
        notes: parsed.value.notes,
        shownOrder: a.shownOrder ?? null,
        status: intent === "submit" ? ("submitted" as const) : ("draft" as const),
        clientToken: intent === "submit" && !tokenUsed ? token : null,
        durationMs,
      };
      let revision: number;
      if (latest?.status === "draft") {
        await tx.update(annotations).set(values).where(eq(annotations.id, latest.id));
        revision = latest.revision;
      } else {
        revision = (latest?.revision ?? 0) + 1;
        await tx.insert(annotations).values({ assignmentId: a.id, revision, ...values });
      }
      await tx
        .update(assignments)
        .set(
          intent === "submit"
            ? { status: "submitted", submittedAt: now, startedAt: a.startedAt ?? now, skipReason: null }
            : { status: a.status === "pending" || a.status === "skipped" ? "draft" : a.status, startedAt: a.startedAt ?? now },
        )
        .where(eq(assignments.id, a.id));
      if (intent === "submit" && a.status !== "submitted" && a.status !== "skipped") await emitTaskCompletedIfDone(d, task.id);
      return { ok: true, status: intent === "submit" ? "submitted" : "draft", revision };
    },
    { lockedReadCommitted: true },
  );
}

/** myAssignment on PostgreSQL, its row locked for the submit's transaction (FOR UPDATE OF a): one statement for both. */
async function lockedAssignment(d: Dal, tx: Q, taskId: number, unitId: number, userId: number) {
  if (!Number.isInteger(unitId)) return undefined;
  const row = first(
    await d.rows<{
      id: number;
      unit_id: number;
      status: (typeof schema.assignments.$inferSelect)["status"];
      shown_order: ResponseKey[] | null;
      skip_reason: string | null;
      started_at: number | null;
    }>(
      sql`SELECT a.id, a.unit_id, a.status, a.shown_order, a.skip_reason, a.started_at FROM assignments a
        JOIN units u ON u.id = a.unit_id
        WHERE a.unit_id = ${unitId} AND a.annotator_id = ${userId} AND u.task_id = ${taskId} LIMIT 1 FOR UPDATE OF a`,
      tx,
    ),
  );
  return row
    ? {
        id: row.id,
        unitId: row.unit_id,
        status: row.status,
        shownOrder: row.shown_order,
        skipReason: row.skip_reason,
        startedAt: row.started_at,
      }
    : undefined;
}

/** What the annotate page needs for one of the user's own units. */
export async function annotatePageData(task: Task, unitId: number, userId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const a = await myAssignment(task.id, unitId, userId, d);
  if (!a) return null;
  const kind = task.kind as AnnotatableKind;
  const config = readConfig(task.config);
  const latest = await latestRevision(a.id, d);
  const stored: ParsedLabel | null = latest
    ? { label: latest.label, penaltyReasons: latest.penaltyReasons ?? null, notes: (latest.notes as ParsedLabel["notes"]) ?? null }
    : null;
  const queue = await myQueue(task.id, userId, d);
  const index = queue.findIndex((q) => q.unitId === unitId);
  return {
    unit: await blindUnit(task, a, d),
    status: a.status,
    skipReason: a.skipReason,
    values: labelToForm(kind, stored, a.shownOrder ?? null),
    savedStatus: latest?.status ?? null,
    revision: latest?.revision ?? 0,
    baseDurationMs: latest?.status === "draft" ? (latest.durationMs ?? 0) : 0,
    rules: {
      penaltyReasons: penaltyReasonsOf(config),
      allowTies: config.allowTies === true,
      scale: scoreScaleOf(config),
      settings: taskKind(kind).annotatorSettings?.(config) ?? {},
    },
    position: {
      index: index + 1,
      total: queue.length,
      prev: index > 0 ? queue[index - 1].unitId : null,
      next: index >= 0 && index < queue.length - 1 ? queue[index + 1].unitId : null,
    },
  };
}
