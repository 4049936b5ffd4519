/**
 * Tasks: creation from a dataset (sampling plan → units → assignments), the
 * annotator pool and its rebalancing, close/reopen, gold answers, progress.
 */
import { and, asc, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import { z } from "zod";
import { dalOf, first, getDal, type Dal, type DalLike, type Q } from "~/dal.server";
import { visible } from "~/db.server";
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
export async function loadCandidates(datasetId: number, db: DalLike = getDal()): Promise<Candidate[]> {
  const d = dalOf(db);
  const { items, checklistItems, responses, references } = d.t;
  const rows = await d.q
    .select({ id: items.id, domain: items.domain })
    .from(items)
    .where(eq(items.datasetId, datasetId))
    .orderBy(asc(items.id));
  const byId = new Map<number, Candidate>(rows.map((i) => [i.id, { ...i, hasReference: false, checklist: [], responses: [] }]));
  const ids = [...byId.keys()];
  if (ids.length === 0) return [];
  for (const c of await d.q
    .select({ id: checklistItems.id, itemId: checklistItems.itemId })
    .from(checklistItems)
    .innerJoin(items, eq(items.id, checklistItems.itemId))
    .where(and(eq(items.datasetId, datasetId), isNull(checklistItems.retiredAt)))
    .orderBy(asc(checklistItems.itemId), asc(checklistItems.position)))
    byId.get(c.itemId)?.checklist.push({ id: c.id });
  for (const r of await d.q
    .select({ id: responses.id, itemId: responses.itemId, model: responses.model, turn: responses.turn })
    .from(responses)
    .innerJoin(items, eq(items.id, responses.itemId))
    .where(and(eq(items.datasetId, datasetId), visible(responses.pendingImportId)))
    .orderBy(asc(responses.id)))
    byId.get(r.itemId)?.responses.push({ id: r.id, model: r.model, turn: r.turn });
  for (const r of await d.q
    .select({ itemId: references.itemId })
    .from(references)
    .innerJoin(items, eq(items.id, references.itemId))
    .where(and(eq(items.datasetId, datasetId), eq(references.isCurrent, true)))) {
    const c = byId.get(r.itemId);
    if (c) c.hasReference = true;
  }
  return [...byId.values()];
}

export async function projectMembers(projectId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { users, memberships } = d.t;
  return (
    d.q
      .select({ id: users.id, name: users.name, role: memberships.role })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.projectId, projectId))
      // Byte order, as SQLite compares text, not the PostgreSQL database's locale.
      .orderBy(d.dialect === "postgres" ? sql`${users.name} collate "C"` : asc(users.name))
  );
}

/** Rows per multi-row insert: well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const INSERT_CHUNK = 500;

/** Creates a task, its units (by the sampling plan) and its assignments, all or nothing. */
export async function createTask(
  projectId: number,
  createdBy: number,
  input: NewTask,
  db: DalLike = getDal(),
): Promise<{ taskId: number; units: number }> {
  const v = NewTaskSchema.parse(input);
  const d = dalOf(db);
  const { datasets, tasks, units, assignments } = d.t;
  const dataset = first(
    await d.q
      .select({ id: datasets.id })
      .from(datasets)
      .where(and(eq(datasets.id, v.datasetId), eq(datasets.projectId, projectId)))
      .limit(1),
  );
  if (!dataset) throw new TaskError("No such dataset in this project.", "datasetId");
  const memberIds = new Set((await projectMembers(projectId, d)).map((m) => m.id));
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
  const specs = buildUnits(v.kind, await loadCandidates(v.datasetId, d), config, v.seed);
  if (specs.length === 0) throw new TaskError("The sampling plan selected no units: check the dataset, models and turn.", "plan");
  const gold = chooseGold(specs.length, v.goldRate, v.seed);
  return d.tx(async (tx) => {
    const [task] = await tx
      .insert(tasks)
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
      .returning({ id: tasks.id });
    // Units in position order, a chunk per insert: ids ascend with position as one insert each would give.
    const unitRows: { id: number; position: number; responseIds: (number | "reference")[] | null; isGold: boolean }[] = [];
    for (let at = 0; at < specs.length; at += INSERT_CHUNK) {
      const chunk = await tx
        .insert(units)
        .values(
          specs.slice(at, at + INSERT_CHUNK).map((s, i) => ({
            taskId: task.id,
            itemId: s.itemId,
            checklistItemId: s.checklistItemId ?? null,
            responseId: s.responseId ?? null,
            responseIds: s.responseIds ?? null,
            position: at + i,
            isGold: gold.has(at + i),
          })),
        )
        .returning({ id: units.id, position: units.position, responseIds: units.responseIds, isGold: units.isGold });
      unitRows.push(...chunk.sort((a, b) => a.position - b.position));
    }
    const regular = unitRows.filter((u) => !u.isGold);
    const plan = planAssignments(
      regular.map((u) => u.id),
      config.pool!,
      v.overlap,
      v.seed,
    );
    const rows = unitRows.flatMap((u) =>
      (u.isGold ? config.pool! : plan.get(u.id)!).map((annotatorId) => ({
        unitId: u.id,
        annotatorId,
        shownOrder: shownOrderFor(u.responseIds, v.seed, u.id, annotatorId),
      })),
    );
    for (let at = 0; at < rows.length; at += INSERT_CHUNK) await tx.insert(assignments).values(rows.slice(at, at + INSERT_CHUNK));
    return { taskId: task.id, units: unitRows.length };
  });
}

export async function findTask(projectId: number, taskId: number, db: DalLike = getDal()) {
  if (!Number.isInteger(taskId)) return undefined;
  const d = dalOf(db);
  const t = d.t.tasks;
  return first(
    await d.q
      .select()
      .from(t)
      .where(and(eq(t.id, taskId), eq(t.projectId, projectId)))
      .limit(1),
  );
}

export async function poolOf(task: { id: number; config: unknown }, db: DalLike = getDal()): Promise<number[]> {
  const config = readConfig(task.config);
  if (config.pool) return config.pool;
  const d = dalOf(db);
  const { assignments, units } = d.t;
  return (
    await d.q
      .selectDistinct({ id: assignments.annotatorId })
      .from(assignments)
      .innerJoin(units, eq(units.id, assignments.unitId))
      .where(eq(units.taskId, task.id))
  ).map((r) => r.id);
}

/** Every assignment of a task with what decides whether it may move. */
async function heldRows(taskId: number, d: Dal) {
  const { assignments, units, annotations } = d.t;
  return d.q
    .select({
      assignmentId: assignments.id,
      unitId: assignments.unitId,
      annotatorId: assignments.annotatorId,
      status: assignments.status,
      startedAt: assignments.startedAt,
      isGold: units.isGold,
      responseIds: units.responseIds,
      saved: sql<number>`(select count(*) from ${annotations} a where a.assignment_id = ${assignments.id})`.mapWith(Number),
    })
    .from(assignments)
    .innerJoin(units, eq(units.id, assignments.unitId))
    .where(eq(units.taskId, taskId))
    .orderBy(asc(assignments.id));
}
type HeldRow = Awaited<ReturnType<typeof heldRows>>[number];

/** Not started: pending, never opened for saving, no annotation row (draft or otherwise). */
const unstarted = (r: HeldRow) => r.status === "pending" && r.startedAt == null && r.saved === 0;

/** Regular (non-gold) assignments as the planner sees them. */
function regularHeld(rows: HeldRow[]): Held[] {
  return rows
    .filter((r) => !r.isGold)
    .map((r) => ({ assignmentId: r.assignmentId, unitId: r.unitId, annotatorId: r.annotatorId, movable: unstarted(r) }));
}

/** Applies planned moves in order (in the caller's transaction); the new annotator gets their own seeded shown order. */
async function applyMoves(moves: Move[], rows: HeldRow[], seed: number, tx: Q, d: Dal): Promise<number> {
  const a = d.t.assignments;
  const responseIdsOf = new Map(rows.map((r) => [r.unitId, r.responseIds]));
  for (const m of moves) {
    await tx
      .update(a)
      .set({ annotatorId: m.to, shownOrder: shownOrderFor(responseIdsOf.get(m.unitId), seed, m.unitId, m.to) })
      .where(and(eq(a.id, m.assignmentId), eq(a.status, "pending")));
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
export async function addToPool(projectId: number, taskId: number, userIds: number[], db: DalLike = getDal()): Promise<{ moved: number }> {
  const d = dalOf(db);
  const { tasks, assignments } = d.t;
  return d.tx(async (tx) => {
    const task = await findTask(projectId, taskId, d);
    if (!task) throw new TaskError("No such task.");
    const memberIds = new Set((await projectMembers(projectId, d)).map((m) => m.id));
    for (const id of userIds) if (!memberIds.has(id)) throw new TaskError(`User ${id} is not a member of this project.`, "userId");
    const config = readConfig(task.config);
    const before = await poolOf(task, d);
    const pool = [...new Set([...before, ...userIds])];
    await tx
      .update(tasks)
      .set({ config: { ...config, pool } })
      .where(eq(tasks.id, taskId));
    const rows = await heldRows(taskId, d);
    const held = regularHeld(rows);
    const moves = planRebalance(held, pool);
    const moved = await applyMoves(moves, rows, task.seed, tx, d);
    const goldUnits = [...new Map(rows.filter((r) => r.isGold).map((r) => [r.unitId, r.responseIds])).entries()];
    for (const id of userIds) {
      if (before.includes(id)) continue;
      for (const [unitId, responseIds] of goldUnits) {
        await tx
          .insert(assignments)
          .values({ unitId, annotatorId: id, shownOrder: shownOrderFor(responseIds, task.seed, unitId, id) })
          .onConflictDoNothing();
      }
    }
    return { moved };
  });
}

/**
 * Removes an annotator from the pool. Their assignments that have not started
 * (pending, no annotation row) go to other pool members, so each unit keeps k
 * distinct annotators, balanced and deterministic for the task seed; their
 * unstarted gold assignments are withdrawn (gold goes to the pool, and the
 * others have it already). Started work — drafts, submissions, skips — stays
 * theirs. Refused, changing nothing, if fewer than k annotators would remain.
 */
export async function removeFromPool(
  projectId: number,
  taskId: number,
  userId: number,
  db: DalLike = getDal(),
): Promise<{ moved: number; kept: number; goldWithdrawn: number; pool: number[] }> {
  const d = dalOf(db);
  const { tasks, assignments, users } = d.t;
  return d.tx(async (tx) => {
    const task = await findTask(projectId, taskId, d);
    if (!task) throw new TaskError("No such task.");
    const before = await poolOf(task, d);
    if (!before.includes(userId)) throw new TaskError(`User ${userId} is not in this task's pool.`, "userId");
    const pool = before.filter((id) => id !== userId);
    if (pool.length < task.overlap) {
      const name = first(await tx.select({ name: users.name }).from(users).where(eq(users.id, userId)).limit(1))?.name ?? `User ${userId}`;
      throw new TaskError(
        `Removing ${name} would leave ${pool.length} annotator${pool.length === 1 ? "" : "s"} in the pool, but this task has overlap k = ${task.overlap}: each unit needs ${task.overlap} distinct annotators. Add an annotator first.`,
        "userId",
      );
    }
    const rows = await heldRows(taskId, d);
    let moves: Move[];
    try {
      moves = planRemoval(regularHeld(rows), pool, userId, task.seed);
    } catch (err) {
      if (err instanceof AssignmentError) throw new TaskError(err.message, "userId");
      throw err;
    }
    await tx
      .update(tasks)
      .set({ config: { ...readConfig(task.config), pool } })
      .where(eq(tasks.id, taskId));
    const moved = await applyMoves(moves, rows, task.seed, tx, d);
    const goldIds = rows.filter((r) => r.isGold && r.annotatorId === userId && unstarted(r)).map((r) => r.assignmentId);
    if (goldIds.length) {
      await tx.delete(assignments).where(and(inArray(assignments.id, goldIds), eq(assignments.status, "pending")));
    }
    const kept = rows.filter((r) => r.annotatorId === userId && !unstarted(r)).length;
    return { moved, kept, goldWithdrawn: goldIds.length, pool };
  });
}

/**
 * Closes (labels frozen) or reopens a task. An archived task is neither: it is brought back from the archive
 * (archiveTask) first, so closing it never unarchives it by the way (409).
 */
export async function setTaskStatus(projectId: number, taskId: number, status: "open" | "closed", db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const t = d.t.tasks;
  const changed = await d.tx((tx) =>
    tx
      .update(t)
      .set({ status })
      .where(and(eq(t.id, taskId), eq(t.projectId, projectId), ne(t.status, "archived")))
      .returning({ id: t.id }),
  );
  if (changed.length > 0) return;
  if (await findTask(projectId, taskId, d))
    throw new DomainError("This task is archived: bring it back from the archive on its page before closing or reopening it.", {
      status: 409,
    });
  throw new TaskError("No such task.");
}

export async function setAdjudicators(projectId: number, taskId: number, userIds: number[], db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const t = d.t.tasks;
  await d.tx(async (tx) => {
    const task = await findTask(projectId, taskId, d);
    if (!task) throw new TaskError("No such task.");
    const memberIds = new Set((await projectMembers(projectId, d)).map((m) => m.id));
    const ids = [...new Set(userIds)].filter((id) => memberIds.has(id));
    await tx
      .update(t)
      .set({ config: { ...readConfig(task.config), adjudicators: ids } })
      .where(eq(t.id, taskId));
  });
}

/** Records the known answer of a gold unit (JSON text in units.goldLabel). */
export async function setGoldLabel(taskId: number, unitId: number, label: unknown, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const u = d.t.units;
  const changed = await d.tx((tx) =>
    tx
      .update(u)
      .set({ goldLabel: JSON.stringify(label) })
      .where(and(eq(u.id, unitId), eq(u.taskId, taskId), eq(u.isGold, true)))
      .returning({ id: u.id }),
  );
  if (changed.length === 0) throw new TaskError("No such gold unit in this task.", "unitId");
}

/** The current (highest) revision of each assignment of a task. */
export async function currentAnnotations(taskId: number, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { assignments, units, annotations } = d.t;
  return d.q
    .select({
      assignmentId: assignments.id,
      unitId: assignments.unitId,
      annotatorId: assignments.annotatorId,
      assignmentStatus: assignments.status,
      skipReason: assignments.skipReason,
      label: annotations.label,
      penaltyReasons: annotations.penaltyReasons,
      notes: annotations.notes,
      shownOrder: annotations.shownOrder,
      status: annotations.status,
      revision: annotations.revision,
      durationMs: annotations.durationMs,
    })
    .from(assignments)
    .innerJoin(units, eq(units.id, assignments.unitId))
    .leftJoin(
      annotations,
      and(
        eq(annotations.assignmentId, assignments.id),
        sql`${annotations.revision} = (select max(a2.revision) from ${annotations} a2 where a2.assignment_id = ${assignments.id})`,
      ),
    )
    .where(eq(units.taskId, taskId));
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
export async function taskProgress(task: { id: number; kind: string }, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { users, units } = d.t;
  const names = new Map((await d.q.select({ id: users.id, name: users.name }).from(users)).map((u) => [u.id, u.name]));
  const golds = new Map(
    (
      await d.q
        .select({ id: units.id, goldLabel: units.goldLabel })
        .from(units)
        .where(and(eq(units.taskId, task.id), eq(units.isGold, true)))
    ).map((u) => [u.id, u.goldLabel]),
  );
  const per = new Map<number, AnnotatorProgress & { durations: number[] }>();
  for (const row of await currentAnnotations(task.id, d)) {
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
export async function listTasks(projectId: number, userId: number, researcher: boolean, db: DalLike = getDal()) {
  const d = dalOf(db);
  const { tasks: t, assignments, units } = d.t;
  const tasks = await d.q
    .select({
      id: t.id,
      name: t.name,
      kind: t.kind,
      status: t.status,
      overlap: t.overlap,
      createdAt: t.createdAt,
    })
    .from(t)
    .where(eq(t.projectId, projectId))
    .orderBy(asc(t.id));
  if (tasks.length === 0) return [];
  // PostgreSQL answers count(*) and sum(…) as bigint, i.e. strings: read as numbers.
  const counts = await d.q
    .select({
      taskId: units.taskId,
      total: sql<number>`count(*)`.mapWith(Number),
      done: sql<number>`sum(case when ${assignments.status} in ('submitted','skipped') then 1 else 0 end)`.mapWith(Number),
      mine: sql<number>`sum(case when ${assignments.annotatorId} = ${userId} then 1 else 0 end)`.mapWith(Number),
      mineDone:
        sql<number>`sum(case when ${assignments.annotatorId} = ${userId} and ${assignments.status} in ('submitted','skipped') then 1 else 0 end)`.mapWith(
          Number,
        ),
    })
    .from(assignments)
    .innerJoin(units, eq(units.id, assignments.unitId))
    .where(
      inArray(
        units.taskId,
        tasks.map((x) => x.id),
      ),
    )
    .groupBy(units.taskId);
  const byTask = new Map(counts.map((c) => [c.taskId, c]));
  return tasks
    .map((x) => {
      const c = byTask.get(x.id);
      return { ...x, total: c?.total ?? 0, done: c?.done ?? 0, mine: c?.mine ?? 0, mineDone: c?.mineDone ?? 0 };
    })
    .filter((x) => researcher || (x.mine > 0 && x.status !== "archived"));
}

/** Labelling work already done on a task: annotation rows (drafts included) and skips. */
export async function taskWork(taskId: number, db: DalLike = getDal()): Promise<{ annotations: number; skips: number }> {
  const d = dalOf(db);
  const row = first(
    await d.rows<{ annotations: number | string; skips: number | string }>(sql`
    select
      (select count(*) from annotations an join assignments a on a.id = an.assignment_id join units u on u.id = a.unit_id where u.task_id = ${taskId}) as annotations,
      (select count(*) from assignments a join units u on u.id = a.unit_id where u.task_id = ${taskId} and a.status = 'skipped') as skips`),
  );
  // Counts come back as strings from PostgreSQL (bigint).
  return { annotations: Number(row?.annotations ?? 0), skips: Number(row?.skips ?? 0) };
}

/**
 * Deletes a task with its units and assignments — only while nobody has labelled
 * or skipped anything in it. Once labels exist the task is archived instead
 * (archiveTask), so no human judgement is ever thrown away.
 */
export async function deleteTask(projectId: number, taskId: number, db: DalLike = getDal()): Promise<{ units: number }> {
  const d = dalOf(db);
  const { tasks, units: u } = d.t;
  return d.tx(async (tx) => {
    const task = await findTask(projectId, taskId, d);
    if (!task) throw new TaskError("No such task.");
    const work = await taskWork(taskId, d);
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
      first(
        await tx
          .select({ n: sql<number>`count(*)`.mapWith(Number) })
          .from(u)
          .where(eq(u.taskId, taskId)),
      )?.n ?? 0;
    // Units and assignments go with the task (ON DELETE CASCADE).
    await tx.delete(tasks).where(and(eq(tasks.id, taskId), eq(tasks.projectId, projectId)));
    return { units };
  });
}

/** Archives a task (or brings it back as closed): labels frozen, hidden from annotators, reports kept. */
export async function archiveTask(projectId: number, taskId: number, archived = true, db: DalLike = getDal()): Promise<void> {
  const d = dalOf(db);
  const t = d.t.tasks;
  const changed = await d.tx((tx) =>
    tx
      .update(t)
      .set({ status: archived ? "archived" : "closed" })
      .where(and(eq(t.id, taskId), eq(t.projectId, projectId)))
      .returning({ id: t.id }),
  );
  if (changed.length === 0) throw new TaskError("No such task.");
}
