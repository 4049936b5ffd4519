/**
 * Reads what the reports need, and only that: one query per table, columns
 * the engine uses. Labels are turned into subjects and ratings here (pure
 * helpers in ./subjects).
 */
import { sql } from "drizzle-orm";
import { getDb } from "~/db.server";
import { readConfig } from "~/annotation/config";
import type { JudgeInfo, VerdictRow } from "./judges";
import { buildTaskData, type RawAnnotation, type RawResponse, type RawUnit } from "./subjects";
import type { TaskData, TaskInfo } from "./types";

export interface TaskRow extends TaskInfo {
  config: Record<string, unknown>;
  status: string;
}

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function listTasks(projectId: number) {
  return getDb().all<{ id: number; name: string; kind: string; overlap: number; status: string; units: number; annotations: number }>(sql`
    SELECT t.id, t.name, t.kind, t.overlap, t.status,
      (SELECT COUNT(*) FROM units u WHERE u.task_id = t.id) AS units,
      (SELECT COUNT(*) FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
        WHERE u.task_id = t.id AND an.status = 'submitted') AS annotations
    FROM tasks t WHERE t.project_id = ${projectId} ORDER BY t.id`);
}

export function findTask(projectId: number, taskId: number): TaskRow | undefined {
  const row = getDb().get<{ id: number; name: string; kind: string; dataset_id: number; seed: number; overlap: number; config: string; status: string }>(
    sql`SELECT id, name, kind, dataset_id, seed, overlap, config, status FROM tasks WHERE id = ${taskId} AND project_id = ${projectId}`,
  );
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    datasetId: row.dataset_id,
    seed: row.seed,
    overlap: row.overlap,
    config: (parseJson(row.config) as Record<string, unknown>) ?? {},
    status: row.status,
  };
}

/** Changes whenever a label is submitted or revised, or the task's config (adjudications) changes. */
export function taskVersion(task: TaskRow): string {
  const v = getDb().get<{ n: number; mx: number | null }>(sql`
    SELECT COUNT(*) AS n, MAX(an.id) AS mx FROM annotations an
    JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id WHERE u.task_id = ${task.id}`);
  const cfg = getDb().get<{ config: string }>(sql`SELECT config FROM tasks WHERE id = ${task.id}`);
  return `${v?.n ?? 0}:${v?.mx ?? 0}:${cfg?.config ?? ""}`;
}

/**
 * A prepared statement of the shared connection returning rows as arrays
 * (better-sqlite3 `raw()`): no per-row object, which is most of the cost of
 * reading 50,000 labels. The SQL itself stays portable.
 */
function rawRows(text: string, ...params: unknown[]): unknown[][] {
  return getDb().$client.prepare(text).raw(true).all(...params) as unknown[][];
}

/** JSON text → value, memoised per distinct text (labels repeat: "Yes"/"No"; parsed values are never mutated). */
function jsonCache() {
  const seen = new Map<string, unknown>();
  return (text: unknown): unknown => {
    if (typeof text !== "string") return text ?? null;
    let v = seen.get(text);
    if (v === undefined && !seen.has(text)) {
      v = parseJson(text);
      if (text.length <= 64) seen.set(text, v);
    }
    return v;
  };
}

export function loadTaskData(task: TaskRow): TaskData {
  const db = getDb();
  // Units with the item fields the breakdowns use.
  const units = rawRows(
    `SELECT u.id, u.item_id, u.checklist_item_id, u.response_id, u.response_ids, u.is_gold, u.gold_label, i.domain, i.subject, i.task_type
     FROM units u JOIN items i ON i.id = u.item_id WHERE u.task_id = ? ORDER BY u.position, u.id`,
    task.id,
  );
  const responses = rawRows(
    `SELECT r.id, r.model, r.turn, length(r.text) FROM responses r
     WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ?)`,
    task.id,
  );
  // Submitted labels in one query, only the columns used; the current label of an
  // assignment is its highest submitted revision. Shown orders only matter for
  // multi-response kinds.
  const shown = task.kind === "writing-quality" || task.kind === "best-of-n";
  const rows = rawRows(
    `SELECT an.assignment_id, an.revision, a.unit_id, a.annotator_id, an.label, an.duration_ms${shown ? ", an.shown_order, a.shown_order" : ""}
     FROM units u
     JOIN assignments a ON a.unit_id = u.id
     JOIN annotations an ON an.assignment_id = a.id
     WHERE u.task_id = ? AND an.status = 'submitted'`,
    task.id,
  );
  // Latest revision per assignment (typed arrays: assignment id → row index).
  const latest = new Map<number, number>();
  for (let i = 0; i < rows.length; i++) {
    const asg = rows[i][0] as number;
    const j = latest.get(asg);
    if (j === undefined || (rows[j][1] as number) < (rows[i][1] as number)) latest.set(asg, i);
  }
  const keep = Int32Array.from(latest.values()).sort();
  const annotatorIds = [...new Set(Array.from(keep, (i) => rows[i][3] as number))].sort((a, b) => a - b);
  const names = annotatorIds.length
    ? db.all<{ id: number; name: string }>(sql`SELECT id, name FROM users WHERE id IN (${sql.join(annotatorIds.map((i) => sql`${i}`), sql`, `)})`)
    : [];
  const nameOf = new Map(names.map((n) => [n.id, n.name]));
  const config = readConfig(task.config);
  const label = jsonCache();
  const rawUnits: RawUnit[] = units.map((u) => ({
    id: u[0] as number,
    itemId: u[1] as number,
    checklistItemId: u[2] as number | null,
    responseId: u[3] as number | null,
    responseIds: (parseJson(u[4]) as (number | "reference")[] | null) ?? null,
    isGold: !!u[5],
    goldLabel: u[6] as string | null,
    domain: u[7] as string | null,
    subject: u[8] as string | null,
    taskType: u[9] as string | null,
  }));
  const rawResponses: RawResponse[] = responses.map((r) => ({ id: r[0] as number, model: r[1] as string, turn: r[2] as number, length: r[3] as number }));
  const rawAnns: RawAnnotation[] = Array.from(keep, (i) => {
    const a = rows[i];
    return {
      unitId: a[2] as number,
      annotatorId: a[3] as number,
      label: label(a[4]),
      durationMs: a[5] as number | null,
      shownOrder: shown ? ((parseJson(a[6]) ?? parseJson(a[7])) as (number | "reference")[] | null) : null,
    };
  });
  return buildTaskData({
    task: { id: task.id, name: task.name, kind: task.kind, datasetId: task.datasetId, seed: task.seed, overlap: task.overlap },
    config: task.config,
    adjudications: Object.fromEntries(Object.entries(config.adjudications ?? {}).map(([k, v]) => [k, v.label])),
    units: rawUnits,
    responses: rawResponses,
    annotations: rawAnns,
    annotators: annotatorIds.map((id) => ({ id, name: nameOf.get(id) ?? `User ${id}` })),
  });
}

export function loadJudges(projectId: number): JudgeInfo[] {
  return getDb()
    .all<{ id: number; name: string; model: string; prompt_version: string; settings: string }>(
      sql`SELECT id, name, model, prompt_version, settings FROM judges WHERE project_id = ${projectId} ORDER BY id`,
    )
    .map((j) => ({ id: j.id, name: j.name, model: j.model, promptVersion: j.prompt_version, settings: (parseJson(j.settings) as Record<string, unknown>) ?? {} }));
}

export function loadVerdicts(projectId: number, taskId: number): VerdictRow[] {
  return rawRows(
    `SELECT v.judge_id, v.response_id, v.checklist_item_id, v.value, v.score, v.parse_status
     FROM verdicts v JOIN judges j ON j.id = v.judge_id
     WHERE j.project_id = ?
       AND v.response_id IN (SELECT r.id FROM responses r WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ?))`,
    projectId,
    taskId,
  ).map((v) => ({
    judgeId: v[0] as number,
    responseId: v[1] as number,
    checklistItemId: v[2] as number | null,
    value: v[3] as string | null,
    score: v[4] as number | null,
    parseStatus: v[5] as string,
  }));
}

/** Texts for a page of rows: item query, checklist item text, response text. */
export function loadTexts(itemIds: number[], checklistIds: number[], responseIds: number[]) {
  const db = getDb();
  const list = (ids: number[]) => sql.join([...new Set(ids)].map((i) => sql`${i}`), sql`, `);
  const items = itemIds.length ? db.all<{ id: number; query: string; source_id: string }>(sql`SELECT id, query, source_id FROM items WHERE id IN (${list(itemIds)})`) : [];
  const checklist = checklistIds.length ? db.all<{ id: number; text: string }>(sql`SELECT id, text FROM checklist_items WHERE id IN (${list(checklistIds)})`) : [];
  const responses = responseIds.length ? db.all<{ id: number; text: string }>(sql`SELECT id, text FROM responses WHERE id IN (${list(responseIds)})`) : [];
  return {
    items: new Map(items.map((i) => [i.id, { query: i.query, sourceId: i.source_id }])),
    checklist: new Map(checklist.map((c) => [c.id, c.text])),
    responses: new Map(responses.map((r) => [r.id, r.text])),
  };
}

/**
 * Labels and verdicts of a task that judged an older version of what they
 * rate (marked stale by a curation edit). They still count in the figures;
 * the report says how many there are.
 */
export function staleCounts(taskId: number): { labels: number; verdicts: number } {
  const labels = getDb().get<{ n: number }>(sql`
    SELECT COUNT(*) AS n FROM annotations an
    JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
    WHERE u.task_id = ${taskId} AND an.status = 'submitted' AND an.stale_at IS NOT NULL`);
  const verdicts = getDb().get<{ n: number }>(sql`
    SELECT COUNT(*) AS n FROM verdicts v JOIN units u ON u.response_id = v.response_id
      AND (u.checklist_item_id = v.checklist_item_id OR (u.checklist_item_id IS NULL AND v.checklist_item_id IS NULL))
    WHERE u.task_id = ${taskId} AND v.stale_at IS NOT NULL`);
  return { labels: labels?.n ?? 0, verdicts: verdicts?.n ?? 0 };
}
