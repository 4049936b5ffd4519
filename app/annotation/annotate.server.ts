/**
 * The annotator's side: their queue, the blind view of one unit, and saving
 * labels (draft, submit, skip) idempotently with every submitted revision kept.
 *
 * Blinding: everything returned here for an annotator is built from the blind
 * fields only — texts, shown letters, the annotator's own labels. No model
 * name, response id, judge verdict, gold answer or other annotator's label.
 */
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import { getDb, schema, type Db } from "~/db.server";
import { isAnnotatable, penaltyReasonsOf, readConfig, scoreScaleOf, type AnnotatableKind } from "./config";
import { labelToForm, parseLabel, rulesOf, type FormLike, type ParsedLabel, type ResponseKey } from "./labels";
import { taskKind } from "~/task-kinds/registry";
import { letter } from "./random";

type Task = typeof schema.tasks.$inferSelect;

export function myAssignment(taskId: number, unitId: number, userId: number, db: Db = getDb()) {
  if (!Number.isInteger(unitId)) return undefined;
  return db
    .select({
      id: schema.assignments.id,
      unitId: schema.assignments.unitId,
      status: schema.assignments.status,
      shownOrder: schema.assignments.shownOrder,
      skipReason: schema.assignments.skipReason,
      startedAt: schema.assignments.startedAt,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(and(eq(schema.assignments.unitId, unitId), eq(schema.assignments.annotatorId, userId), eq(schema.units.taskId, taskId)))
    .get();
}

/** The user's own assignments in queue order (unit position). */
export function myQueue(taskId: number, userId: number, db: Db = getDb()) {
  return db
    .select({ unitId: schema.assignments.unitId, status: schema.assignments.status, position: schema.units.position })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(and(eq(schema.units.taskId, taskId), eq(schema.assignments.annotatorId, userId)))
    .orderBy(asc(schema.units.position), asc(schema.units.id))
    .all();
}

/** Personal and overall progress (counts only: nothing about who labelled what). */
export function progress(taskId: number, userId: number, db: Db = getDb()) {
  const row = db
    .select({
      total: sql<number>`count(*)`,
      done: sql<number>`coalesce(sum(case when ${schema.assignments.status} in ('submitted','skipped') then 1 else 0 end), 0)`,
      mine: sql<number>`coalesce(sum(case when ${schema.assignments.annotatorId} = ${userId} then 1 else 0 end), 0)`,
      mineDone: sql<number>`coalesce(sum(case when ${schema.assignments.annotatorId} = ${userId} and ${schema.assignments.status} in ('submitted','skipped') then 1 else 0 end), 0)`,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(eq(schema.units.taskId, taskId))
    .get();
  return { mine: { done: row?.mineDone ?? 0, total: row?.mine ?? 0 }, overall: { done: row?.done ?? 0, total: row?.total ?? 0 } };
}

/** The next unit to label: the first pending or draft one, after `afterUnitId` if given (wrapping). */
export function nextUnitId(taskId: number, userId: number, afterUnitId?: number, db: Db = getDb()): number | null {
  const q = myQueue(taskId, userId, db);
  const open = (s: string) => s === "pending" || s === "draft";
  const start = afterUnitId != null ? q.findIndex((a) => a.unitId === afterUnitId) + 1 : 0;
  for (let i = 0; i < q.length; i++) {
    const a = q[(start + i) % q.length];
    if (open(a.status)) return a.unitId;
  }
  return null;
}

export function latestRevision(assignmentId: number, db: Db = getDb()) {
  return db
    .select({
      id: schema.annotations.id,
      revision: schema.annotations.revision,
      status: schema.annotations.status,
      label: schema.annotations.label,
      penaltyReasons: schema.annotations.penaltyReasons,
      notes: schema.annotations.notes,
      durationMs: schema.annotations.durationMs,
    })
    .from(schema.annotations)
    .where(eq(schema.annotations.assignmentId, assignmentId))
    .orderBy(desc(schema.annotations.revision))
    .limit(1)
    .get();
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
export function blindUnit(task: Task, assignment: { unitId: number; shownOrder: ResponseKey[] | null }, db: Db = getDb()): BlindUnit {
  if (!isAnnotatable(task.kind)) throw new Error(`blindUnit: task kind ${task.kind} is not annotated in Concord`);
  const config = readConfig(task.config);
  const unit = db
    .select({ itemId: schema.units.itemId, checklistItemId: schema.units.checklistItemId, responseId: schema.units.responseId })
    .from(schema.units)
    .where(eq(schema.units.id, assignment.unitId))
    .get()!;
  const item = db
    .select({ query: schema.items.query, passage: schema.items.passage })
    .from(schema.items)
    .where(eq(schema.items.id, unit.itemId))
    .get()!;
  const refRow = db
    .select({ text: schema.references.text })
    .from(schema.references)
    .where(and(eq(schema.references.itemId, unit.itemId), eq(schema.references.isCurrent, true)))
    .orderBy(desc(schema.references.version))
    .get();
  const checklistItem = unit.checklistItemId
    ? (db
        .select({ text: schema.checklistItems.text })
        .from(schema.checklistItems)
        .where(eq(schema.checklistItems.id, unit.checklistItemId))
        .get()?.text ?? null)
    : null;
  const order: ResponseKey[] = assignment.shownOrder ?? (unit.responseId ? [unit.responseId] : []);
  const ids = order.filter((k): k is number => typeof k === "number");
  const texts = new Map(
    ids.length
      ? db
          .select({ id: schema.responses.id, text: schema.responses.text })
          .from(schema.responses)
          .where(inArray(schema.responses.id, ids))
          .all()
          .map((r) => [r.id, r.text])
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
 * Saves one label. A retried submit with the same clientToken and the same
 * answer stores nothing new and answers as the first did; a changed answer under
 * a used clientToken (the form resubmitted after going back) is stored as a new
 * revision, never dropped. Invalid labels store nothing.
 */
export function saveAnnotation(
  args: { task: Task; userId: number; unitId: number; intent: SaveIntent; form: FormLike; nowMs?: number },
  db: Db = getDb(),
): SaveResult {
  const { task, userId, unitId, intent, form } = args;
  const nowMs = args.nowMs ?? Date.now();
  const now = Math.floor(nowMs / 1000);
  if (!isAnnotatable(task.kind)) return { ok: false, httpStatus: 400, fieldErrors: { form: "This task kind is not labelled in Concord." } };
  const kind = task.kind;
  const config = readConfig(task.config);
  const token = typeof form.get("clientToken") === "string" ? (form.get("clientToken") as string).trim().slice(0, 100) || null : null;
  const durationRaw = Number(form.get("durationMs"));
  const openedAt = Number(form.get("openedAt"));

  return db.transaction(
    (tx): SaveResult => {
      const a = myAssignment(task.id, unitId, userId, tx as unknown as Db);
      if (!a) return { ok: false, httpStatus: 404, fieldErrors: { unitId: "This unit is not assigned to you, or does not exist." } };
      // A form already submitted once: the same answer again is a retry (nothing stored);
      // a changed answer (the form resubmitted after going back) is stored as a new revision.
      let tokenUsed = false;
      if (token && intent === "submit") {
        const seen = tx
          .select({
            assignmentId: schema.annotations.assignmentId,
            revision: schema.annotations.revision,
            label: schema.annotations.label,
            penaltyReasons: schema.annotations.penaltyReasons,
            notes: schema.annotations.notes,
          })
          .from(schema.annotations)
          .where(eq(schema.annotations.clientToken, token))
          .get();
        if (seen) {
          if (seen.assignmentId !== a.id)
            return { ok: false, httpStatus: 409, fieldErrors: { form: "This form was already used for another unit; reload the page." } };
          const again = parseLabel(rulesOf(kind, config, a.shownOrder ?? null), form, intent);
          if (!again.ok) return { ok: false, httpStatus: 400, fieldErrors: again.fieldErrors };
          const same = (x: unknown, y: unknown) => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
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
      const task2 = tx.select({ status: schema.tasks.status }).from(schema.tasks).where(eq(schema.tasks.id, task.id)).get();
      if (task2?.status !== "open")
        return { ok: false, httpStatus: 409, fieldErrors: { form: "This task is closed; labels can no longer change." } };

      if (intent === "skip") {
        const reason = typeof form.get("skipReason") === "string" ? (form.get("skipReason") as string).trim() : "";
        if (!reason) return { ok: false, httpStatus: 400, fieldErrors: { skipReason: "Say why you skip this unit." } };
        if (a.status === "submitted")
          return { ok: false, httpStatus: 409, fieldErrors: { skipReason: "This unit is already submitted; revise it instead." } };
        tx.update(schema.assignments)
          .set({ status: "skipped", skipReason: reason.slice(0, 2000), startedAt: a.startedAt ?? now })
          .where(eq(schema.assignments.id, a.id))
          .run();
        return { ok: true, status: "skipped" };
      }

      if (intent === "draft" && a.status === "submitted") {
        // Revisions of a submitted label are saved by submitting; no draft on top.
        return { ok: true, status: "submitted" };
      }
      const parsed = parseLabel(rulesOf(kind, config, a.shownOrder ?? null), form, intent);
      if (!parsed.ok) return { ok: false, httpStatus: 400, fieldErrors: parsed.fieldErrors };

      const latest = latestRevision(a.id, tx as unknown as Db);
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
        tx.update(schema.annotations).set(values).where(eq(schema.annotations.id, latest.id)).run();
        revision = latest.revision;
      } else {
        revision = (latest?.revision ?? 0) + 1;
        tx.insert(schema.annotations)
          .values({ assignmentId: a.id, revision, ...values })
          .run();
      }
      tx.update(schema.assignments)
        .set(
          intent === "submit"
            ? { status: "submitted", submittedAt: now, startedAt: a.startedAt ?? now, skipReason: null }
            : { status: a.status === "pending" || a.status === "skipped" ? "draft" : a.status, startedAt: a.startedAt ?? now },
        )
        .where(eq(schema.assignments.id, a.id))
        .run();
      return { ok: true, status: intent === "submit" ? "submitted" : "draft", revision };
    },
    { behavior: "immediate" },
  );
}

/** What the annotate page needs for one of the user's own units. */
export function annotatePageData(task: Task, unitId: number, userId: number, db: Db = getDb()) {
  const a = myAssignment(task.id, unitId, userId, db);
  if (!a) return null;
  const kind = task.kind as AnnotatableKind;
  const config = readConfig(task.config);
  const latest = latestRevision(a.id, db);
  const stored: ParsedLabel | null = latest
    ? { label: latest.label, penaltyReasons: latest.penaltyReasons ?? null, notes: (latest.notes as ParsedLabel["notes"]) ?? null }
    : null;
  const queue = myQueue(task.id, userId, db);
  const index = queue.findIndex((q) => q.unitId === unitId);
  return {
    unit: blindUnit(task, a, db),
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
