/**
 * Tasks: creation from a dataset (sampling plan → units → assignments), the
 * annotator pool and its rebalancing, close/reopen, gold answers, progress.
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { getDb, schema, visible, type Db } from "~/db.server";
import { DomainError } from "~/errors";
import { AssignmentError, planAssignments, planRebalance, planRemoval, type Held, type Move } from "./assignment";
import { ANNOTATABLE_KINDS, PLANS, isAnnotatable, readConfig, type AnnotatableKind, type TaskConfig } from "./config";
import { matchesGold } from "./labels";
import { shownOrderFor } from "./random";
import { buildUnits, chooseGold, type Candidate } from "./sampling";
import { taskKind } from "~/task-kinds/registry";
import { kindSettings } from "~/task-kinds/registry.server";

export const NewTaskSchema = z
  .object({
    name: z.string().trim().min(1, "Give the task a name.").max(200),
    datasetId: z.coerce.number().int().positive("Choose a dataset."),
    kind: z.enum(ANNOTATABLE_KINDS as [AnnotatableKind, ...AnnotatableKind[]]),
    plan: z.string().optional(),
    overlap: z.coerce.number().int().min(1, "Overlap is at least 1.").max(20),
    seed: z.coerce
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .default(1),
    guidelines: z.string().max(100_000).default(""),
    pool: z.array(z.coerce.number().int().positive()).min(1, "Choose at least one annotator."),
    models: z.array(z.string()).default([]),
    turn: z.coerce.number().int().positive().optional(),
    itemLimit: z.coerce.number().int().positive().optional(),
    responsesPerItem: z.coerce.number().int().positive().max(50).optional(),
    strata: z.enum(["model", "domain", "turn"]).optional(),
    perStratum: z.coerce.number().int().positive().max(10_000).optional(),
    showReference: z.boolean().default(false),
    penaltyReasons: z.array(z.string().trim().min(1)).optional(),
    allowTies: z.boolean().default(false),
    includeReference: z.boolean().default(false),
    n: z.coerce.number().int().min(2).max(4).optional(),
    goldRate: z.coerce.number().min(0).max(0.5).default(0),
    /** The kind's own settings (TaskKind.textSettings), checked by the zod schema of the kind's config.server.ts (TaskKind.server). */
    settings: z.record(z.string(), z.string()).default({}),
  })
  .superRefine((v, ctx) => {
    if (v.plan && !(PLANS[v.kind] as readonly string[]).includes(v.plan)) {
      ctx.addIssue({ code: "custom", path: ["plan"], message: `"${v.plan}" is not a sampling plan for ${v.kind}.` });
    }
    if (v.overlap > v.pool.length) {
      ctx.addIssue({
        code: "custom",
        path: ["overlap"],
        message: `Overlap ${v.overlap} needs at least ${v.overlap} annotators in the pool.`,
      });
    }
  });
export type NewTask = z.input<typeof NewTaskSchema>;

/** A task cannot be created or changed as asked (400); `field` names the form field, absent for the form as a whole. */
export class TaskError extends DomainError {
  constructor(message: string, field?: string) {
    super(message, { field });
  }
}

/** Items of a dataset with their current checklist, responses and whether a reference exists. */
export function loadCandidates(datasetId: number, db: Db = getDb()): Candidate[] {
  const items = db
    .select({ id: schema.items.id, domain: schema.items.domain })
    .from(schema.items)
    .where(eq(schema.items.datasetId, datasetId))
    .orderBy(asc(schema.items.id))
    .all();
  const byId = new Map<number, Candidate>(items.map((i) => [i.id, { ...i, hasReference: false, checklist: [], responses: [] }]));
  const ids = [...byId.keys()];
  if (ids.length === 0) return [];
  for (const c of db
    .select({ id: schema.checklistItems.id, itemId: schema.checklistItems.itemId })
    .from(schema.checklistItems)
    .innerJoin(schema.items, eq(schema.items.id, schema.checklistItems.itemId))
    .where(and(eq(schema.items.datasetId, datasetId), isNull(schema.checklistItems.retiredAt)))
    .orderBy(asc(schema.checklistItems.itemId), asc(schema.checklistItems.position))
    .all())
    byId.get(c.itemId)?.checklist.push({ id: c.id });
  for (const r of db
    .select({ id: schema.responses.id, itemId: schema.responses.itemId, model: schema.responses.model, turn: schema.responses.turn })
    .from(schema.responses)
    .innerJoin(schema.items, eq(schema.items.id, schema.responses.itemId))
    .where(and(eq(schema.items.datasetId, datasetId), visible(schema.responses.pendingImportId)))
    .orderBy(asc(schema.responses.id))
    .all())
    byId.get(r.itemId)?.responses.push({ id: r.id, model: r.model, turn: r.turn });
  for (const r of db
    .select({ itemId: schema.references.itemId })
    .from(schema.references)
    .innerJoin(schema.items, eq(schema.items.id, schema.references.itemId))
    .where(and(eq(schema.items.datasetId, datasetId), eq(schema.references.isCurrent, true)))
    .all()) {
    const c = byId.get(r.itemId);
    if (c) c.hasReference = true;
  }
  return [...byId.values()];
}

export function projectMembers(projectId: number, db: Db = getDb()) {
  return db
    .select({ id: schema.users.id, name: schema.users.name, role: schema.memberships.role })
    .from(schema.memberships)
    .innerJoin(schema.users, eq(schema.users.id, schema.memberships.userId))
    .where(eq(schema.memberships.projectId, projectId))
    .orderBy(asc(schema.users.name))
    .all();
}

/** Creates a task, its units (by the sampling plan) and its assignments, all or nothing. */
export function createTask(projectId: number, createdBy: number, input: NewTask, db: Db = getDb()): { taskId: number; units: number } {
  const v = NewTaskSchema.parse(input);
  const dataset = db
    .select({ id: schema.datasets.id })
    .from(schema.datasets)
    .where(and(eq(schema.datasets.id, v.datasetId), eq(schema.datasets.projectId, projectId)))
    .get();
  if (!dataset) throw new TaskError("No such dataset in this project.", "datasetId");
  const memberIds = new Set(projectMembers(projectId, db).map((m) => m.id));
  const stranger = v.pool.find((id) => !memberIds.has(id));
  if (stranger) throw new TaskError(`User ${stranger} is not a member of this project.`, "pool");
  const config: TaskConfig = {
    plan: v.plan ?? PLANS[v.kind][0],
    models: v.models.length ? v.models : undefined,
    turn: v.turn,
    itemLimit: v.itemLimit,
    responsesPerItem: v.responsesPerItem,
    strata: v.strata,
    perStratum: v.perStratum,
    showReference: v.showReference,
    penaltyReasons: taskKind(v.kind).settings.includes("penaltyReasons") && v.penaltyReasons?.length ? v.penaltyReasons : undefined,
    allowTies: v.allowTies,
    includeReference: v.includeReference,
    n: v.n,
    goldRate: v.goldRate || undefined,
    pool: [...new Set(v.pool)],
    adjudicators: [],
  };
  for (const k of Object.keys(config) as (keyof TaskConfig)[]) if (config[k] === undefined) delete config[k];
  const own = kindSettings(v.kind, v.settings);
  if (!own.ok) throw new TaskError(own.message, own.field);
  Object.assign(config, own.settings);
  const specs = buildUnits(v.kind, loadCandidates(v.datasetId, db), config, v.seed);
  if (specs.length === 0) throw new TaskError("The sampling plan selected no units: check the dataset, models and turn.", "plan");
  const gold = chooseGold(specs.length, v.goldRate, v.seed);
  return db.transaction(
    (tx) => {
      const task = tx
        .insert(schema.tasks)
        .values({
          projectId,
          datasetId: v.datasetId,
          kind: v.kind,
          name: v.name,
          guidelines: v.guidelines,
          overlap: v.overlap,
          seed: v.seed,
          config,
          createdBy,
        })
        .returning({ id: schema.tasks.id })
        .get();
      const unitRows = specs.map((s, position) =>
        tx
          .insert(schema.units)
          .values({
            taskId: task.id,
            itemId: s.itemId,
            checklistItemId: s.checklistItemId ?? null,
            responseId: s.responseId ?? null,
            responseIds: s.responseIds ?? null,
            position,
            isGold: gold.has(position),
          })
          .returning({ id: schema.units.id, responseIds: schema.units.responseIds, isGold: schema.units.isGold })
          .get(),
      );
      const regular = unitRows.filter((u) => !u.isGold);
      const plan = planAssignments(
        regular.map((u) => u.id),
        config.pool!,
        v.overlap,
        v.seed,
      );
      const insert = tx.insert(schema.assignments);
      for (const u of unitRows) {
        const people = u.isGold ? config.pool! : plan.get(u.id)!;
        for (const annotatorId of people) {
          insert.values({ unitId: u.id, annotatorId, shownOrder: shownOrderFor(u.responseIds, v.seed, u.id, annotatorId) }).run();
        }
      }
      return { taskId: task.id, units: unitRows.length };
    },
    { behavior: "immediate" },
  );
}

export function findTask(projectId: number, taskId: number, db: Db = getDb()) {
  if (!Number.isInteger(taskId)) return undefined;
  return db
    .select()
    .from(schema.tasks)
    .where(and(eq(schema.tasks.id, taskId), eq(schema.tasks.projectId, projectId)))
    .get();
}

export function poolOf(task: { id: number; config: unknown }, db: Db = getDb()): number[] {
  const config = readConfig(task.config);
  if (config.pool) return config.pool;
  return db
    .selectDistinct({ id: schema.assignments.annotatorId })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(eq(schema.units.taskId, task.id))
    .all()
    .map((r) => r.id);
}

/** Every assignment of a task with what decides whether it may move. */
function heldRows(taskId: number, db: Db) {
  return db
    .select({
      assignmentId: schema.assignments.id,
      unitId: schema.assignments.unitId,
      annotatorId: schema.assignments.annotatorId,
      status: schema.assignments.status,
      startedAt: schema.assignments.startedAt,
      isGold: schema.units.isGold,
      responseIds: schema.units.responseIds,
      saved: sql<number>`(select count(*) from ${schema.annotations} a where a.assignment_id = ${schema.assignments.id})`,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(eq(schema.units.taskId, taskId))
    .orderBy(asc(schema.assignments.id))
    .all();
}
type HeldRow = ReturnType<typeof heldRows>[number];

/** Not started: pending, never opened for saving, no annotation row (draft or otherwise). */
const unstarted = (r: HeldRow) => r.status === "pending" && r.startedAt == null && r.saved === 0;

/** Regular (non-gold) assignments as the planner sees them. */
function regularHeld(rows: HeldRow[]): Held[] {
  return rows
    .filter((r) => !r.isGold)
    .map((r) => ({ assignmentId: r.assignmentId, unitId: r.unitId, annotatorId: r.annotatorId, movable: unstarted(r) }));
}

/** Applies planned moves in order; the new annotator gets their own seeded shown order. */
function applyMoves(moves: Move[], rows: HeldRow[], seed: number, db: Db): number {
  const responseIdsOf = new Map(rows.map((r) => [r.unitId, r.responseIds]));
  for (const m of moves) {
    db.update(schema.assignments)
      .set({ annotatorId: m.to, shownOrder: shownOrderFor(responseIdsOf.get(m.unitId), seed, m.unitId, m.to) })
      .where(and(eq(schema.assignments.id, m.assignmentId), eq(schema.assignments.status, "pending")))
      .run();
  }
  const original = new Map(rows.map((r) => [r.assignmentId, r.annotatorId]));
  const final = new Map(moves.map((m) => [m.assignmentId, m.to]));
  return [...final].filter(([id, to]) => original.get(id) !== to).length;
}

/**
 * Adds annotators to the pool and rebalances work that has not started:
 * only pending assignments with no saved annotation move. New annotators also
 * get every gold unit.
 */
export function addToPool(projectId: number, taskId: number, userIds: number[], db: Db = getDb()): { moved: number } {
  return db.transaction(
    (tx) => {
      const task = findTask(projectId, taskId, tx as unknown as Db);
      if (!task) throw new TaskError("No such task.");
      const memberIds = new Set(projectMembers(projectId, tx as unknown as Db).map((m) => m.id));
      for (const id of userIds) if (!memberIds.has(id)) throw new TaskError(`User ${id} is not a member of this project.`, "userId");
      const config = readConfig(task.config);
      const before = poolOf(task, tx as unknown as Db);
      const pool = [...new Set([...before, ...userIds])];
      tx.update(schema.tasks)
        .set({ config: { ...config, pool } })
        .where(eq(schema.tasks.id, taskId))
        .run();
      const rows = heldRows(taskId, tx as unknown as Db);
      const held = regularHeld(rows);
      const moves = planRebalance(held, pool);
      const moved = applyMoves(moves, rows, task.seed, tx as unknown as Db);
      const goldUnits = [...new Map(rows.filter((r) => r.isGold).map((r) => [r.unitId, r.responseIds])).entries()];
      for (const id of userIds) {
        if (before.includes(id)) continue;
        for (const [unitId, responseIds] of goldUnits) {
          tx.insert(schema.assignments)
            .values({ unitId, annotatorId: id, shownOrder: shownOrderFor(responseIds, task.seed, unitId, id) })
            .onConflictDoNothing()
            .run();
        }
      }
      return { moved };
    },
    { behavior: "immediate" },
  );
}

/**
 * Removes an annotator from the pool. Their assignments that have not started
 * (pending, no annotation row) go to other pool members, so each unit keeps k
 * distinct annotators, balanced and deterministic for the task seed; their
 * unstarted gold assignments are withdrawn (gold goes to the pool, and the
 * others have it already). Started work — drafts, submissions, skips — stays
 * theirs. Refused, changing nothing, if fewer than k annotators would remain.
 */
export function removeFromPool(
  projectId: number,
  taskId: number,
  userId: number,
  db: Db = getDb(),
): { moved: number; kept: number; goldWithdrawn: number; pool: number[] } {
  return db.transaction(
    (tx) => {
      const t = tx as unknown as Db;
      const task = findTask(projectId, taskId, t);
      if (!task) throw new TaskError("No such task.");
      const before = poolOf(task, t);
      if (!before.includes(userId)) throw new TaskError(`User ${userId} is not in this task's pool.`, "userId");
      const pool = before.filter((id) => id !== userId);
      if (pool.length < task.overlap) {
        const name =
          t.select({ name: schema.users.name }).from(schema.users).where(eq(schema.users.id, userId)).get()?.name ?? `User ${userId}`;
        throw new TaskError(
          `Removing ${name} would leave ${pool.length} annotator${pool.length === 1 ? "" : "s"} in the pool, but this task has overlap k = ${task.overlap}: each unit needs ${task.overlap} distinct annotators. Add an annotator first.`,
          "userId",
        );
      }
      const rows = heldRows(taskId, t);
      let moves: Move[];
      try {
        moves = planRemoval(regularHeld(rows), pool, userId, task.seed);
      } catch (err) {
        if (err instanceof AssignmentError) throw new TaskError(err.message, "userId");
        throw err;
      }
      tx.update(schema.tasks)
        .set({ config: { ...readConfig(task.config), pool } })
        .where(eq(schema.tasks.id, taskId))
        .run();
      const moved = applyMoves(moves, rows, task.seed, t);
      const goldIds = rows.filter((r) => r.isGold && r.annotatorId === userId && unstarted(r)).map((r) => r.assignmentId);
      if (goldIds.length) {
        tx.delete(schema.assignments)
          .where(and(inArray(schema.assignments.id, goldIds), eq(schema.assignments.status, "pending")))
          .run();
      }
      const kept = rows.filter((r) => r.annotatorId === userId && !unstarted(r)).length;
      return { moved, kept, goldWithdrawn: goldIds.length, pool };
    },
    { behavior: "immediate" },
  );
}

export function setTaskStatus(projectId: number, taskId: number, status: "open" | "closed", db: Db = getDb()) {
  const res = db
    .update(schema.tasks)
    .set({ status })
    .where(and(eq(schema.tasks.id, taskId), eq(schema.tasks.projectId, projectId)))
    .run();
  if (res.changes === 0) throw new TaskError("No such task.");
}

export function setAdjudicators(projectId: number, taskId: number, userIds: number[], db: Db = getDb()) {
  db.transaction(
    (tx) => {
      const task = findTask(projectId, taskId, tx as unknown as Db);
      if (!task) throw new TaskError("No such task.");
      const memberIds = new Set(projectMembers(projectId, tx as unknown as Db).map((m) => m.id));
      const ids = [...new Set(userIds)].filter((id) => memberIds.has(id));
      tx.update(schema.tasks)
        .set({ config: { ...readConfig(task.config), adjudicators: ids } })
        .where(eq(schema.tasks.id, taskId))
        .run();
    },
    { behavior: "immediate" },
  );
}

/** Records the known answer of a gold unit (JSON text in units.goldLabel). */
export function setGoldLabel(taskId: number, unitId: number, label: unknown, db: Db = getDb()) {
  const res = db
    .update(schema.units)
    .set({ goldLabel: JSON.stringify(label) })
    .where(and(eq(schema.units.id, unitId), eq(schema.units.taskId, taskId), eq(schema.units.isGold, true)))
    .run();
  if (res.changes === 0) throw new TaskError("No such gold unit in this task.", "unitId");
}

/** The current (highest) revision of each assignment of a task. */
export function currentAnnotations(taskId: number, db: Db = getDb()) {
  return db
    .select({
      assignmentId: schema.assignments.id,
      unitId: schema.assignments.unitId,
      annotatorId: schema.assignments.annotatorId,
      assignmentStatus: schema.assignments.status,
      skipReason: schema.assignments.skipReason,
      label: schema.annotations.label,
      penaltyReasons: schema.annotations.penaltyReasons,
      notes: schema.annotations.notes,
      shownOrder: schema.annotations.shownOrder,
      status: schema.annotations.status,
      revision: schema.annotations.revision,
      durationMs: schema.annotations.durationMs,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .leftJoin(
      schema.annotations,
      and(
        eq(schema.annotations.assignmentId, schema.assignments.id),
        sql`${schema.annotations.revision} = (select max(a2.revision) from ${schema.annotations} a2 where a2.assignment_id = ${schema.assignments.id})`,
      ),
    )
    .where(eq(schema.units.taskId, taskId))
    .all();
}

export type AnnotatorProgress = {
  annotatorId: number;
  name: string;
  total: number;
  pending: number;
  draft: number;
  submitted: number;
  skipped: number;
  medianMs: number | null;
  gold: { scored: number; correct: number };
};

/** Progress per annotator (researcher view) and the gold accuracy of each. */
export function taskProgress(task: { id: number; kind: string }, db: Db = getDb()) {
  const names = new Map(
    db
      .select({ id: schema.users.id, name: schema.users.name })
      .from(schema.users)
      .all()
      .map((u) => [u.id, u.name]),
  );
  const golds = new Map(
    db
      .select({ id: schema.units.id, goldLabel: schema.units.goldLabel })
      .from(schema.units)
      .where(and(eq(schema.units.taskId, task.id), eq(schema.units.isGold, true)))
      .all()
      .map((u) => [u.id, u.goldLabel]),
  );
  const per = new Map<number, AnnotatorProgress & { durations: number[] }>();
  for (const row of currentAnnotations(task.id, db)) {
    let p = per.get(row.annotatorId);
    if (!p) {
      p = {
        annotatorId: row.annotatorId,
        name: names.get(row.annotatorId) ?? `#${row.annotatorId}`,
        total: 0,
        pending: 0,
        draft: 0,
        submitted: 0,
        skipped: 0,
        medianMs: null,
        gold: { scored: 0, correct: 0 },
        durations: [],
      };
      per.set(row.annotatorId, p);
    }
    p.total++;
    p[row.assignmentStatus]++;
    if (row.assignmentStatus === "submitted" && row.status === "submitted") {
      if (row.durationMs != null) p.durations.push(row.durationMs);
      const gold = golds.get(row.unitId);
      if (gold != null && isAnnotatable(task.kind)) {
        p.gold.scored++;
        if (matchesGold(task.kind, row.label, gold)) p.gold.correct++;
      }
    }
  }
  const annotators = [...per.values()]
    .map(({ durations, ...p }) => {
      const d = durations.sort((a, b) => a - b);
      return { ...p, medianMs: d.length ? d[Math.floor(d.length / 2)] : null };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  const total = annotators.reduce((s, a) => s + a.total, 0);
  const done = annotators.reduce((s, a) => s + a.submitted + a.skipped, 0);
  return { annotators, total, done, goldUnits: golds.size, goldAnswered: [...golds.values()].filter((g) => g != null).length };
}

/** Tasks of a project with overall progress, and the user's own share. */
export function listTasks(projectId: number, userId: number, researcher: boolean, db: Db = getDb()) {
  const tasks = db
    .select({
      id: schema.tasks.id,
      name: schema.tasks.name,
      kind: schema.tasks.kind,
      status: schema.tasks.status,
      overlap: schema.tasks.overlap,
      createdAt: schema.tasks.createdAt,
    })
    .from(schema.tasks)
    .where(eq(schema.tasks.projectId, projectId))
    .orderBy(asc(schema.tasks.id))
    .all();
  if (tasks.length === 0) return [];
  const counts = db
    .select({
      taskId: schema.units.taskId,
      total: sql<number>`count(*)`,
      done: sql<number>`sum(case when ${schema.assignments.status} in ('submitted','skipped') then 1 else 0 end)`,
      mine: sql<number>`sum(case when ${schema.assignments.annotatorId} = ${userId} then 1 else 0 end)`,
      mineDone: sql<number>`sum(case when ${schema.assignments.annotatorId} = ${userId} and ${schema.assignments.status} in ('submitted','skipped') then 1 else 0 end)`,
    })
    .from(schema.assignments)
    .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
    .where(
      inArray(
        schema.units.taskId,
        tasks.map((t) => t.id),
      ),
    )
    .groupBy(schema.units.taskId)
    .all();
  const byTask = new Map(counts.map((c) => [c.taskId, c]));
  return tasks
    .map((t) => {
      const c = byTask.get(t.id);
      return { ...t, total: c?.total ?? 0, done: c?.done ?? 0, mine: c?.mine ?? 0, mineDone: c?.mineDone ?? 0 };
    })
    .filter((t) => researcher || (t.mine > 0 && t.status !== "archived"));
}

/** Labelling work already done on a task: annotation rows (drafts included) and skips. */
export function taskWork(taskId: number, db: Db = getDb()): { annotations: number; skips: number } {
  const row = db.get<{ annotations: number; skips: number }>(sql`
    select
      (select count(*) from annotations an join assignments a on a.id = an.assignment_id join units u on u.id = a.unit_id where u.task_id = ${taskId}) as annotations,
      (select count(*) from assignments a join units u on u.id = a.unit_id where u.task_id = ${taskId} and a.status = 'skipped') as skips`);
  return { annotations: row?.annotations ?? 0, skips: row?.skips ?? 0 };
}

/**
 * Deletes a task with its units and assignments — only while nobody has labelled
 * or skipped anything in it. Once labels exist the task is archived instead
 * (archiveTask), so no human judgement is ever thrown away.
 */
export function deleteTask(projectId: number, taskId: number, db: Db = getDb()): { units: number } {
  return db.transaction(
    (tx) => {
      const t = tx as unknown as Db;
      const task = findTask(projectId, taskId, t);
      if (!task) throw new TaskError("No such task.");
      const work = taskWork(taskId, t);
      if (work.annotations > 0 || work.skips > 0) {
        const parts = [
          work.annotations ? `${work.annotations} label${work.annotations === 1 ? "" : "s"} (drafts included)` : "",
          work.skips ? `${work.skips} skip${work.skips === 1 ? "" : "s"}` : "",
        ].filter(Boolean);
        throw new TaskError(
          `This task cannot be deleted: it holds ${parts.join(" and ")}. Archive it instead; its labels and reports are kept.`,
          "delete",
        );
      }
      const units =
        t
          .select({ n: sql<number>`count(*)` })
          .from(schema.units)
          .where(eq(schema.units.taskId, taskId))
          .get()?.n ?? 0;
      // Units and assignments go with the task (ON DELETE CASCADE).
      tx.delete(schema.tasks)
        .where(and(eq(schema.tasks.id, taskId), eq(schema.tasks.projectId, projectId)))
        .run();
      return { units };
    },
    { behavior: "immediate" },
  );
}

/** Archives a task (or brings it back as closed): labels frozen, hidden from annotators, reports kept. */
export function archiveTask(projectId: number, taskId: number, archived = true, db: Db = getDb()) {
  const res = db
    .update(schema.tasks)
    .set({ status: archived ? "archived" : "closed" })
    .where(and(eq(schema.tasks.id, taskId), eq(schema.tasks.projectId, projectId)))
    .run();
  if (res.changes === 0) throw new TaskError("No such task.");
}
