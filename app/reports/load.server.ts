/**
 * Reads what the reports need, and only that: one query per table, columns
 * the engine uses. Labels are turned into subjects and ratings here (pure
 * helpers in ./subjects).
 */
import { count, eq, sql, type SQL } from "drizzle-orm";
import { visibleSql } from "~/db.server";
import { countOf, dalOf, first, getDal, type DalLike } from "~/dal.server";
import { readConfig } from "~/annotation/config";
import { findKind } from "~/task-kinds/registry";
import type { JudgeInfo, Verdicts } from "./judges";
import { TaskDataBuilder, type RawResponse } from "./subjects";
import type { StaleMode, TaskData, TaskInfo } from "./types";

export interface TaskRow extends TaskInfo {
  config: Record<string, unknown>;
  status: string;
  /** task_data_versions.version (bumped by triggers on every change to a report input) and the config text. */
  version: string;
  projectId: number;
}

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function listTasks(projectId: number, db: DalLike = getDal()) {
  const rows = await dalOf(db).rows<{
    id: number;
    name: string;
    kind: string;
    overlap: number;
    status: string;
    units: number;
    annotations: number;
  }>(sql`
    SELECT t.id, t.name, t.kind, t.overlap, t.status,
      (SELECT COUNT(*) FROM units u WHERE u.task_id = t.id) AS units,
      (SELECT COUNT(*) FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
        WHERE u.task_id = t.id AND an.status = 'submitted') AS annotations
    FROM tasks t WHERE t.project_id = ${projectId} ORDER BY t.id`);
  // COUNT(*) is bigint on PostgreSQL.
  return rows.map((r) => ({ ...r, units: Number(r.units), annotations: Number(r.annotations) }));
}

export async function findTask(projectId: number, taskId: number, db: DalLike = getDal()): Promise<TaskRow | undefined> {
  const d = dalOf(db);
  const row = first(
    await d.rows<{
      id: number;
      name: string;
      kind: string;
      dataset_id: number;
      seed: number;
      overlap: number;
      config: unknown;
      status: string;
      data_version: number | string | null;
      bumps: number | string;
    }>(
      sql`SELECT t.id, t.name, t.kind, t.dataset_id, t.seed, t.overlap, t.config, t.status,
          (SELECT v.version FROM task_data_versions v WHERE v.task_id = t.id) AS data_version,
          (SELECT COUNT(*) FROM task_data_bumps b WHERE b.task_id = t.id) AS bumps
        FROM tasks t WHERE t.id = ${taskId} AND t.project_id = ${projectId}`,
    ),
  );
  if (!row) return undefined;
  // The version is the counter plus its unfolded bumps (one statement, so one snapshot: a fold moves bumps into the
  // counter in one transaction, and the sum reads the same before and after it).
  const bumps = Number(row.bumps);
  if (bumps >= FOLD_BUMPS_AT) await foldTaskBumps(d, taskId);
  // The config as text on both dialects (jsonb arrives parsed from PostgreSQL): part of the version.
  const configText = typeof row.config === "string" ? row.config : JSON.stringify(row.config);
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    datasetId: row.dataset_id,
    seed: row.seed,
    overlap: row.overlap,
    config: (parseJson(row.config) as Record<string, unknown>) ?? {},
    status: row.status,
    version: `${Number(row.data_version ?? 0) + bumps}:${configText}`,
    projectId,
  };
}

/** Unfolded bumps of a task at which reading it folds them into its counter (task_data_bumps in db/schema.ts). */
export const FOLD_BUMPS_AT = 500;

/**
 * Moves a task's bump rows into its counter, in one transaction: the version (counter plus bumps) is the same
 * before and after. Concurrent submits only add bump rows, so they do not conflict with it; two folds at once do,
 * and the loser, run again, finds the rows gone and adds nothing.
 */
export async function foldTaskBumps(db: DalLike, taskId: number): Promise<void> {
  const d = dalOf(db);
  const { taskDataBumps, taskDataVersions } = d.t;
  await d.tx(async (q) => {
    // One snapshot for both statements (serializable on both dialects): the rows counted are the rows deleted.
    const [counted] = await q.select({ n: count() }).from(taskDataBumps).where(eq(taskDataBumps.taskId, taskId));
    const n = Number(counted?.n ?? 0);
    if (n === 0) return;
    await q.delete(taskDataBumps).where(eq(taskDataBumps.taskId, taskId));
    await q
      .update(taskDataVersions)
      .set({ version: sql`${taskDataVersions.version} + ${n}` })
      .where(eq(taskDataVersions.taskId, taskId));
  });
}

/**
 * The version of a task's report inputs: changes whenever a label is submitted, revised,
 * marked stale or removed, an item's or response's fields used by the breakdowns change
 * (task_data_versions, kept by triggers), or the task's config (adjudications) changes.
 */
export function taskVersion(task: TaskRow): string {
  return task.version;
}

/** The version of a project's judges and verdicts (project_verdict_versions, kept by triggers). */
export async function verdictVersion(projectId: number, db: DalLike = getDal()): Promise<number> {
  const rows = await dalOf(db).rows<{ v: number }>(sql`SELECT version AS v FROM project_verdict_versions WHERE project_id = ${projectId}`);
  return Number(first(rows)?.v ?? 0);
}

/**
 * Rows as arrays (the data-access layer's `arrays`): no per-row object, which
 * is most of the cost of reading 50,000 labels. The SQL text stays portable;
 * `?` marks each parameter, in order.
 */
function rawRows(db: DalLike, text: string, ...params: unknown[]): Promise<unknown[][]> {
  const parts = text.split("?");
  if (parts.length !== params.length + 1) throw new Error("rawRows: one parameter per ?");
  const chunks: SQL[] = [sql.raw(parts[0])];
  params.forEach((p, i) => chunks.push(sql`${p}`, sql.raw(parts[i + 1])));
  return dalOf(db).arrays(sql.join(chunks));
}

/** JSON text → value, memoised per distinct short text (labels repeat: "Yes"/"No"; parsed values are never mutated). */
function jsonCache() {
  const seen = new Map<string, unknown>();
  return (text: unknown): unknown => {
    if (typeof text !== "string") return text ?? null;
    let v = seen.get(text);
    if (v === undefined && !seen.has(text)) {
      v = parseJson(text);
      if (text.length <= 16) seen.set(text, v); // short labels repeat ("Yes", 3); long ones (score maps) rarely do
    }
    return v;
  };
}

/** The task's subjects and current labels; with `stale: "exclude"`, labels marked stale are left out. */
export async function loadTaskData(task: TaskRow, opts: { stale?: StaleMode } = {}, db: DalLike = getDal()): Promise<TaskData> {
  const fresh = opts.stale === "exclude" ? " AND an.stale_at IS NULL" : "";
  const config = readConfig(task.config);
  // Responses of the task's items first (their model, turn and length go into every subject).
  const responses = await rawRows(
    db,
    `SELECT r.id, r.model, r.turn, length(r.text) FROM responses r
     WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ?) AND ${visibleSql("r")}`,
    task.id,
  );
  const builder = new TaskDataBuilder({
    task: { id: task.id, name: task.name, kind: task.kind, datasetId: task.datasetId, seed: task.seed, overlap: task.overlap },
    config: task.config,
    adjudications: Object.fromEntries(Object.entries(config.adjudications ?? {}).map(([k, v]) => [k, v.label])),
    responses: responses.map((r): RawResponse => ({
      id: r[0] as number,
      model: r[1] as string,
      turn: r[2] as number,
      length: r[3] as number,
    })),
  });
  // The item fields the breakdowns use, one row per distinct item (not per unit), so each
  // domain/subject/task type string is read once and shared by every subject of the item.
  const itemRows = await rawRows(
    db,
    `SELECT i.id, i.domain, i.subject, i.task_type FROM items i WHERE i.id IN (SELECT u.item_id FROM units u WHERE u.task_id = ?)`,
    task.id,
  );
  const itemById = new Map<number, unknown[]>();
  for (const r of itemRows) itemById.set(r[0] as number, r);
  const noItem = [null, null, null, null];
  // Units into the builder in task order (ORDER BY follows units_task_idx: no sort). Every
  // value read costs (~50,000 rows here), so columns a kind never uses are not selected:
  // shown orders and the response list only matter for multi-response kinds.
  const multi = findKind(task.kind)?.multiResponse === true;
  for (const u of await rawRows(
    db,
    `SELECT u.id, u.item_id, u.checklist_item_id, u.response_id, u.is_gold, u.gold_label${multi ? ", u.response_ids" : ""}
     FROM units u WHERE u.task_id = ? ORDER BY u.position, u.id`,
    task.id,
  )) {
    const it = itemById.get(u[1] as number) ?? noItem;
    builder.addUnit({
      id: u[0] as number,
      itemId: u[1] as number,
      checklistItemId: u[2] as number | null,
      responseId: u[3] as number | null,
      responseIds: u[6] == null ? null : ((parseJson(u[6]) as (number | "reference")[] | null) ?? null),
      isGold: !!u[4],
      goldLabel: u[5] as string | null,
      domain: it[1] as string | null,
      subject: it[2] as string | null,
      taskType: it[3] as string | null,
    });
  }
  // Submitted labels in one query, only the columns used. The current label of an
  // assignment is its highest submitted revision: rows come ordered by assignment (unit,
  // annotator) and revision — the order of the indexes the plan walks, so the ORDER BY costs
  // no sort — and the last row of each assignment's run is its current label.
  const label = jsonCache();
  const annotatorSet = new Set<number>();
  const add = (a: unknown[]) => {
    annotatorSet.add(a[2] as number);
    builder.addAnnotation({
      unitId: a[1] as number,
      annotatorId: a[2] as number,
      label: label(a[3]),
      durationMs: a[4] as number | null,
      shownOrder: multi ? ((parseJson(a[5]) ?? parseJson(a[6])) as (number | "reference")[] | null) : null,
    });
  };
  let prev: unknown[] | null = null;
  for (const row of await rawRows(
    db,
    `SELECT an.assignment_id, a.unit_id, a.annotator_id, an.label, an.duration_ms${multi ? ", an.shown_order, a.shown_order" : ""}
     FROM units u
     JOIN assignments a ON a.unit_id = u.id
     JOIN annotations an ON an.assignment_id = a.id
     WHERE u.task_id = ? AND an.status = 'submitted'${fresh}
     ORDER BY u.position, u.id, a.annotator_id, an.revision`,
    task.id,
  )) {
    if (prev !== null && prev[0] !== row[0]) add(prev);
    prev = row;
  }
  if (prev !== null) add(prev);
  const annotatorIds = [...annotatorSet].sort((a, b) => a - b);
  const names = annotatorIds.length
    ? await rawRows(db, `SELECT id, name FROM users WHERE id IN (${annotatorIds.map(() => "?").join(", ")})`, ...annotatorIds)
    : [];
  const nameOf = new Map(names.map((n) => [n[0] as number, n[1] as string]));
  return builder.finish(annotatorIds.map((id) => ({ id, name: nameOf.get(id) ?? `User ${id}` })));
}

export async function loadJudges(projectId: number, db: DalLike = getDal()): Promise<JudgeInfo[]> {
  const rows = await dalOf(db).rows<{ id: number; name: string; model: string; prompt_version: string; settings: unknown }>(
    sql`SELECT id, name, model, prompt_version, settings FROM judges WHERE project_id = ${projectId} ORDER BY id`,
  );
  return rows.map((j) => ({
    id: j.id,
    name: j.name,
    model: j.model,
    promptVersion: j.prompt_version,
    settings: (parseJson(j.settings) as Record<string, unknown>) ?? {},
  }));
}

/** Verdicts on the task's responses; with `stale: "exclude"`, verdicts marked stale are left out. */
export async function loadVerdicts(
  projectId: number,
  taskId: number,
  opts: { stale?: StaleMode } = {},
  db: DalLike = getDal(),
): Promise<Verdicts> {
  const rows = await rawRows(
    db,
    `SELECT v.judge_id, v.response_id, v.checklist_item_id, v.value, v.score,
       CASE WHEN v.parse_status = 'failed' THEN 2
            WHEN v.parse_status = 'unparsed' AND v.value IS NULL AND COALESCE(TRIM(v.raw_output), '') = '' THEN 3
            WHEN v.parse_status = 'unparsed' THEN 1 ELSE 0 END
     FROM verdicts v JOIN judges j ON j.id = v.judge_id
     WHERE j.project_id = ?${opts.stale === "exclude" ? " AND v.stale_at IS NULL" : ""} AND ${visibleSql("v")}
       AND v.response_id IN (SELECT r.id FROM responses r WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ?) AND ${visibleSql("r")})`,
    projectId,
    taskId,
  );
  const n = rows.length;
  const out = {
    length: n,
    judgeId: new Int32Array(n),
    responseId: new Int32Array(n),
    checklistItemId: new Int32Array(n),
    value: new Array<string | null>(n),
    score: new Float64Array(n),
    failed: new Uint8Array(n),
  };
  for (let i = 0; i < n; i++) {
    const v = rows[i];
    out.judgeId[i] = v[0] as number;
    out.responseId[i] = v[1] as number;
    out.checklistItemId[i] = v[2] == null ? -1 : (v[2] as number);
    out.value[i] = v[3] as string | null;
    out.score[i] = v[4] == null ? NaN : (v[4] as number);
    out.failed[i] = Number(v[5]);
  }
  return out;
}

/** Texts for a page of rows: item query, checklist item text, response text. */
export async function loadTexts(itemIds: number[], checklistIds: number[], responseIds: number[], db: DalLike = getDal()) {
  const d = dalOf(db);
  const list = (ids: number[]) =>
    sql.join(
      [...new Set(ids)].map((i) => sql`${i}`),
      sql`, `,
    );
  const items = itemIds.length
    ? await d.rows<{ id: number; query: string; source_id: string }>(
        sql`SELECT id, query, source_id FROM items WHERE id IN (${list(itemIds)})`,
      )
    : [];
  const checklist = checklistIds.length
    ? await d.rows<{ id: number; text: string }>(sql`SELECT id, text FROM checklist_items WHERE id IN (${list(checklistIds)})`)
    : [];
  const responses = responseIds.length
    ? await d.rows<{ id: number; text: string }>(sql`SELECT id, text FROM responses WHERE id IN (${list(responseIds)})`)
    : [];
  return {
    items: new Map(items.map((i) => [i.id, { query: i.query, sourceId: i.source_id }])),
    checklist: new Map(checklist.map((c) => [c.id, c.text])),
    responses: new Map(responses.map((r) => [r.id, r.text])),
  };
}

/**
 * Labels and verdicts of a task that judged an older version of what they
 * rate (marked stale by a curation edit). They count in the figures unless the
 * page is asked to leave them out (?stale=exclude); the report says how many there are.
 */
export async function staleCounts(taskId: number, db: DalLike = getDal()): Promise<{ labels: number; verdicts: number }> {
  // Stale rows are rare (only after a curation edit): a probe of the partial stale_at index answers
  // "none" at once, and the task's joins — tens of milliseconds on every page view of a large
  // task — run only when some row is stale.
  const d = dalOf(db);
  const anyStale = async (table: "annotations" | "verdicts") =>
    (await d.rows<{ x: number }>(sql.raw(`SELECT 1 AS x FROM ${table} WHERE stale_at IS NOT NULL LIMIT 1`))).length > 0;
  const count = (query: SQL) => countOf(d, query);
  const labels = (await anyStale("annotations"))
    ? await count(sql`
    SELECT COUNT(*) AS n FROM annotations an
    JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
    WHERE u.task_id = ${taskId} AND an.status = 'submitted' AND an.stale_at IS NOT NULL`)
    : 0;
  const verdicts = (await anyStale("verdicts"))
    ? await count(sql`
    SELECT COUNT(*) AS n FROM verdicts v JOIN units u ON u.response_id = v.response_id
      AND (u.checklist_item_id = v.checklist_item_id OR (u.checklist_item_id IS NULL AND v.checklist_item_id IS NULL))
    WHERE u.task_id = ${taskId} AND v.stale_at IS NOT NULL`)
    : 0;
  return { labels, verdicts };
}
