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

export function loadTaskData(task: TaskRow): TaskData {
  const db = getDb();
  const units = db.all<{ id: number; item_id: number; checklist_item_id: number | null; response_id: number | null; response_ids: string | null; is_gold: number; gold_label: string | null; domain: string | null; subject: string | null; task_type: string | null }>(sql`
    SELECT u.id, u.item_id, u.checklist_item_id, u.response_id, u.response_ids, u.is_gold, u.gold_label, i.domain, i.subject, i.task_type
    FROM units u JOIN items i ON i.id = u.item_id WHERE u.task_id = ${task.id} ORDER BY u.position, u.id`);
  const responses = db.all<{ id: number; model: string; turn: number; len: number }>(sql`
    SELECT r.id, r.model, r.turn, length(r.text) AS len FROM responses r
    WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ${task.id})`);
  // The current submitted label of each assignment: its highest submitted revision
  const all = db.all<{ assignment_id: number; revision: number; unit_id: number; annotator_id: number; label: string; duration_ms: number | null; shown_order: string | null; a_shown: string | null }>(sql`
    SELECT an.assignment_id, an.revision, a.unit_id, a.annotator_id, an.label, an.duration_ms, an.shown_order, a.shown_order AS a_shown
    FROM units u
    JOIN assignments a ON a.unit_id = u.id
    JOIN annotations an ON an.assignment_id = a.id
    WHERE u.task_id = ${task.id} AND an.status = 'submitted'`);
  const latest = new Map<number, (typeof all)[number]>();
  for (const row of all) {
    const seen = latest.get(row.assignment_id);
    if (!seen || seen.revision < row.revision) latest.set(row.assignment_id, row);
  }
  const anns = [...latest.values()];
  const annotatorIds = [...new Set(anns.map((a) => a.annotator_id))].sort((a, b) => a - b);
  const names = annotatorIds.length
    ? db.all<{ id: number; name: string }>(sql`SELECT id, name FROM users WHERE id IN (${sql.join(annotatorIds.map((i) => sql`${i}`), sql`, `)})`)
    : [];
  const nameOf = new Map(names.map((n) => [n.id, n.name]));
  const config = readConfig(task.config);
  const rawUnits: RawUnit[] = units.map((u) => ({
    id: u.id,
    itemId: u.item_id,
    checklistItemId: u.checklist_item_id,
    responseId: u.response_id,
    responseIds: (parseJson(u.response_ids) as (number | "reference")[] | null) ?? null,
    isGold: !!u.is_gold,
    goldLabel: u.gold_label,
    domain: u.domain,
    subject: u.subject,
    taskType: u.task_type,
  }));
  const rawResponses: RawResponse[] = responses.map((r) => ({ id: r.id, model: r.model, turn: r.turn, length: r.len }));
  const rawAnns: RawAnnotation[] = anns.map((a) => ({
    unitId: a.unit_id,
    annotatorId: a.annotator_id,
    label: parseJson(a.label),
    durationMs: a.duration_ms,
    shownOrder: (parseJson(a.shown_order) ?? parseJson(a.a_shown)) as (number | "reference")[] | null,
  }));
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
  return getDb()
    .all<{ judge_id: number; response_id: number; checklist_item_id: number | null; value: string | null; score: number | null; parse_status: string }>(sql`
      SELECT v.judge_id, v.response_id, v.checklist_item_id, v.value, v.score, v.parse_status
      FROM verdicts v JOIN judges j ON j.id = v.judge_id
      WHERE j.project_id = ${projectId}
        AND v.response_id IN (SELECT r.id FROM responses r WHERE r.item_id IN (SELECT DISTINCT u.item_id FROM units u WHERE u.task_id = ${taskId}))`)
    .map((v) => ({ judgeId: v.judge_id, responseId: v.response_id, checklistItemId: v.checklist_item_id, value: v.value, score: v.score, parseStatus: v.parse_status }));
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
