/**
 * Exports, as CSV (RFC 4180, UTF-8 without BOM, "\n" line ends, a header row:
 * `pd.read_csv(path)` loads them with no options) or JSONL (one object per
 * line, same keys). Empty cells are missing values; lists and objects are
 * JSON text; timestamps are ISO 8601 (UTC).
 *
 * Columns (stable; new columns are only ever added at the end):
 *
 * annotations — one row per annotation (the current revision of each assignment):
 *   task_id, task, task_kind, unit_id, item, item_id, checklist_item_id, checklist_item,
 *   response_id, annotator, annotator_id, label, penalty_reasons, notes, shown_order,
 *   status, revision, duration_ms, started_at, submitted_at, annotated_at, stale_at
 *   (`item` is the item's source ID; `label` is "Yes"/"No", a number, or JSON for structured labels;
 *   `stale_at` is set when curation edited what the label judged)
 *
 * agreement — one row per task with scalar labels:
 *   task_id, task, task_kind, level, units, annotators, ratings, pairable_units, categories,
 *   percent_agreement, fleiss_kappa, krippendorff_alpha, gwet_ac1, cohen_kappa
 *   (cohen_kappa only when the task has exactly two annotators; NaN/undefined values are empty)
 *
 * judge-agreement — one row per (task, judge): the human label of a unit is the majority of
 *   its submitted labels (ties are left out and counted), compared with the judge's verdict
 *   on the same response and checklist item:
 *   task_id, task, judge, judge_id, n, ties_excluded, accuracy, cohen_kappa,
 *   human_yes_rate, judge_yes_rate, yes_yes, yes_no, no_yes, no_no
 *   (yes_no = human Yes, judge No; the four counts are empty unless labels are Yes/No)
 *
 * runs — one row per verdict (responses without verdicts get one row with empty judge columns):
 *   dataset, dataset_version, item, item_id, response_id, model, turn, origin, run_id, run,
 *   response, judge, checklist_item_id, checklist_item, checklist_weight, value, score,
 *   parse_status, raw_output, stale_at
 */
import Papa from "papaparse";
import type Database from "better-sqlite3";
import { accuracy, cohenKappa, confusionMatrix, fleissKappa, gwetAC1, krippendorffAlpha, percentAgreement, type MeasurementLevel } from "../stats";

export const EXPORT_KINDS = ["annotations", "agreement", "judge-agreement", "runs"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const COLUMNS: Record<ExportKind, string[]> = {
  annotations: [
    "task_id", "task", "task_kind", "unit_id", "item", "item_id", "checklist_item_id", "checklist_item",
    "response_id", "annotator", "annotator_id", "label", "penalty_reasons", "notes", "shown_order",
    "status", "revision", "duration_ms", "started_at", "submitted_at", "annotated_at", "stale_at",
  ],
  agreement: [
    "task_id", "task", "task_kind", "level", "units", "annotators", "ratings", "pairable_units", "categories",
    "percent_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "cohen_kappa",
  ],
  "judge-agreement": [
    "task_id", "task", "judge", "judge_id", "n", "ties_excluded", "accuracy", "cohen_kappa",
    "human_yes_rate", "judge_yes_rate", "yes_yes", "yes_no", "no_yes", "no_no",
  ],
  runs: [
    "dataset", "dataset_version", "item", "item_id", "response_id", "model", "turn", "origin", "run_id", "run",
    "response", "judge", "checklist_item_id", "checklist_item", "checklist_weight", "value", "score",
    "parse_status", "raw_output", "stale_at",
  ],
};

type Row = Record<string, unknown>;
const iso = (t: number | null) => (t === null || t === undefined ? null : new Date(t * 1000).toISOString());
const parseJson = (s: string | null): unknown => (s === null ? null : JSON.parse(s));
const finite = (x: number) => (Number.isFinite(x) ? x : null);

/** A label as one cell: strings and numbers as they are, anything else as JSON. */
function labelCell(v: unknown): string | number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string" || typeof v === "number") return v;
  return JSON.stringify(v);
}

type AnnotationRow = {
  task_id: number; task: string; task_kind: string; config: string; unit_id: number; item: string; item_id: number;
  checklist_item_id: number | null; checklist_item: string | null; response_id: number | null; annotator: string;
  annotator_id: number; label: string; penalty_reasons: string | null; notes: string | null; shown_order: string | null;
  status: string; revision: number; duration_ms: number | null; started_at: number | null; submitted_at: number | null;
  annotated_at: number;
  stale_at: number | null;
};

function annotationRows(conn: Database.Database, projectId: number, submittedOnly = false): AnnotationRow[] {
  return conn
    .prepare(
      `select t.id as task_id, t.name as task, t.kind as task_kind, t.config as config, u.id as unit_id,
              i.source_id as item, i.id as item_id, u.checklist_item_id, c.text as checklist_item, u.response_id,
              usr.name as annotator, usr.id as annotator_id, an.label, an.penalty_reasons, an.notes,
              coalesce(an.shown_order, a.shown_order) as shown_order, an.status, an.revision, an.duration_ms,
              a.started_at, a.submitted_at, an.created_at as annotated_at, an.stale_at
       from annotations an
       join assignments a on a.id = an.assignment_id
       join units u on u.id = a.unit_id
       join tasks t on t.id = u.task_id
       join items i on i.id = u.item_id
       join users usr on usr.id = a.annotator_id
       left join checklist_items c on c.id = u.checklist_item_id
       where t.project_id = ?
         and an.revision = (select max(an2.revision) from annotations an2 where an2.assignment_id = an.assignment_id)
         ${submittedOnly ? "and an.status = 'submitted'" : ""}
       order by t.id, u.position, u.id, usr.name, usr.id`,
    )
    .all(projectId) as AnnotationRow[];
}

function annotations(conn: Database.Database, projectId: number): Row[] {
  return annotationRows(conn, projectId).map((r) => ({
    task_id: r.task_id,
    task: r.task,
    task_kind: r.task_kind,
    unit_id: r.unit_id,
    item: r.item,
    item_id: r.item_id,
    checklist_item_id: r.checklist_item_id,
    checklist_item: r.checklist_item,
    response_id: r.response_id,
    annotator: r.annotator,
    annotator_id: r.annotator_id,
    label: labelCell(parseJson(r.label)),
    penalty_reasons: r.penalty_reasons,
    notes: r.notes === null ? null : typeof parseJson(r.notes) === "string" ? parseJson(r.notes) : r.notes,
    shown_order: r.shown_order,
    status: r.status,
    revision: r.revision,
    duration_ms: r.duration_ms,
    started_at: iso(r.started_at),
    submitted_at: iso(r.submitted_at),
    annotated_at: iso(r.annotated_at),
    stale_at: iso(r.stale_at),
  }));
}

type Scalar = string | number;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "number";

/** Submitted scalar labels grouped by task: unit → annotator → label. */
function labelsByTask(conn: Database.Database, projectId: number) {
  const tasks = new Map<number, { name: string; kind: string; level: MeasurementLevel; units: Map<number, Map<number, Scalar>>; meta: Map<number, { responseId: number | null; checklistItemId: number | null }>; skipped: number }>();
  for (const r of annotationRows(conn, projectId, true)) {
    let t = tasks.get(r.task_id);
    if (!t) {
      const cfg = (parseJson(r.config) ?? {}) as { level?: string };
      const level = (["nominal", "ordinal", "interval", "ratio"].includes(cfg.level ?? "") ? cfg.level : "nominal") as MeasurementLevel;
      t = { name: r.task, kind: r.task_kind, level, units: new Map(), meta: new Map(), skipped: 0 };
      tasks.set(r.task_id, t);
    }
    const label = parseJson(r.label);
    if (!isScalar(label)) {
      t.skipped++;
      continue;
    }
    if (!t.units.has(r.unit_id)) t.units.set(r.unit_id, new Map());
    t.units.get(r.unit_id)!.set(r.annotator_id, label);
    t.meta.set(r.unit_id, { responseId: r.response_id, checklistItemId: r.checklist_item_id });
  }
  return tasks;
}

function agreement(conn: Database.Database, projectId: number): Row[] {
  const out: Row[] = [];
  for (const [taskId, t] of labelsByTask(conn, projectId)) {
    if (t.units.size === 0) continue;
    const annotators = [...new Set([...t.units.values()].flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
    const matrix = [...t.units.values()].map((m) => annotators.map((a) => m.get(a) ?? null));
    const ratings = matrix.reduce((n, row) => n + row.filter((v) => v !== null).length, 0);
    const categories = [...new Set(matrix.flat().filter((v): v is Scalar => v !== null))].sort((a, b) =>
      typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b)),
    );
    const numeric = categories.every((c) => typeof c === "number");
    const level: MeasurementLevel = !numeric && t.level !== "nominal" ? "nominal" : t.level;
    const safe = <T>(f: () => T): T | null => {
      try {
        return f();
      } catch {
        return null;
      }
    };
    const alpha = safe(() => krippendorffAlpha(matrix, { level, categories: numeric ? undefined : categories }));
    out.push({
      task_id: taskId,
      task: t.name,
      task_kind: t.kind,
      level,
      units: matrix.length,
      annotators: annotators.length,
      ratings,
      pairable_units: matrix.filter((row) => row.filter((v) => v !== null).length >= 2).length,
      categories: JSON.stringify(categories),
      percent_agreement: finiteOrNull(safe(() => percentAgreement(matrix, { categories }))),
      fleiss_kappa: finiteOrNull(safe(() => fleissKappa(matrix, { categories }).kappa)),
      krippendorff_alpha: finiteOrNull(alpha?.alpha ?? null),
      gwet_ac1: finiteOrNull(safe(() => gwetAC1(matrix, { categories }).value)),
      cohen_kappa:
        annotators.length === 2
          ? finiteOrNull(safe(() => cohenKappa(matrix.map((r) => r[0]), matrix.map((r) => r[1])).kappa))
          : null,
    });
  }
  return out;
}

const finiteOrNull = (x: number | null) => (x === null ? null : finite(x));

function majority(labels: Iterable<Scalar>): Scalar | "tie" {
  const counts = new Map<string, { v: Scalar; n: number }>();
  for (const v of labels) {
    const k = JSON.stringify(v);
    counts.set(k, { v, n: (counts.get(k)?.n ?? 0) + 1 });
  }
  const sorted = [...counts.values()].sort((a, b) => b.n - a.n);
  if (sorted.length > 1 && sorted[0].n === sorted[1].n) return "tie";
  return sorted[0].v;
}

function judgeAgreement(conn: Database.Database, projectId: number): Row[] {
  const out: Row[] = [];
  const verdictsFor = conn.prepare(
    `select v.judge_id, j.name as judge, v.value from verdicts v join judges j on j.id = v.judge_id
     where v.response_id = ? and (v.checklist_item_id is ? or v.checklist_item_id = ?) and j.project_id = ?`,
  );
  for (const [taskId, t] of labelsByTask(conn, projectId)) {
    const perJudge = new Map<number, { name: string; human: Scalar[]; judge: Scalar[]; ties: number }>();
    for (const [unitId, byAnnotator] of t.units) {
      const meta = t.meta.get(unitId)!;
      if (meta.responseId === null) continue;
      const human = majority(byAnnotator.values());
      const vs = verdictsFor.all(meta.responseId, meta.checklistItemId, meta.checklistItemId, projectId) as { judge_id: number; judge: string; value: string | null }[];
      for (const v of vs) {
        if (v.value === null) continue;
        let e = perJudge.get(v.judge_id);
        if (!e) perJudge.set(v.judge_id, (e = { name: v.judge, human: [], judge: [], ties: 0 }));
        if (human === "tie") {
          e.ties++;
          continue;
        }
        e.human.push(human);
        e.judge.push(typeof human === "number" && !Number.isNaN(Number(v.value)) ? Number(v.value) : v.value);
      }
    }
    for (const [judgeId, e] of perJudge) {
      const yesNo = [...e.human, ...e.judge].every((x) => x === "Yes" || x === "No");
      const cm = yesNo && e.human.length ? confusionMatrix(e.human, e.judge, ["Yes", "No"]).matrix : null;
      const rate = (xs: Scalar[]) => (yesNo && xs.length ? xs.filter((x) => x === "Yes").length / xs.length : null);
      out.push({
        task_id: taskId,
        task: t.name,
        judge: e.name,
        judge_id: judgeId,
        n: e.human.length,
        ties_excluded: e.ties,
        accuracy: e.human.length ? finite(accuracy(e.human, e.judge)) : null,
        cohen_kappa: e.human.length ? finite(cohenKappa(e.human, e.judge).kappa) : null,
        human_yes_rate: rate(e.human),
        judge_yes_rate: rate(e.judge),
        yes_yes: cm?.[0][0] ?? null,
        yes_no: cm?.[0][1] ?? null,
        no_yes: cm?.[1][0] ?? null,
        no_no: cm?.[1][1] ?? null,
      });
    }
  }
  return out;
}

function runs(conn: Database.Database, projectId: number): Row[] {
  return conn
    .prepare(
      `select d.name as dataset, d.version as dataset_version, i.source_id as item, i.id as item_id, r.id as response_id,
              r.model, r.turn, r.origin, r.run_id, ru.name as run, r.text as response, j.name as judge,
              v.checklist_item_id, c.text as checklist_item, c.weight as checklist_weight, v.value, v.score,
              v.parse_status, v.raw_output, v.stale_at
       from responses r
       join items i on i.id = r.item_id
       join datasets d on d.id = i.dataset_id
       left join runs ru on ru.id = r.run_id
       left join verdicts v on v.response_id = r.id
       left join judges j on j.id = v.judge_id
       left join checklist_items c on c.id = v.checklist_item_id
       where d.project_id = ?
       order by d.name, d.version, i.id, r.id, j.name, c.position, v.id`,
    )
    .all(projectId)
    .map((r) => ({ ...(r as Row), stale_at: iso((r as { stale_at: number | null }).stale_at) }));
}

export function exportRows(conn: Database.Database, projectId: number, what: ExportKind): Row[] {
  switch (what) {
    case "annotations":
      return annotations(conn, projectId);
    case "agreement":
      return agreement(conn, projectId);
    case "judge-agreement":
      return judgeAgreement(conn, projectId);
    case "runs":
      return runs(conn, projectId);
  }
}

/** Serialises rows in chunks (so a large export streams) through `write`. */
export function writeExport(rows: Row[], what: ExportKind, format: ExportFormat, write: (chunk: string) => void): void {
  const columns = COLUMNS[what];
  if (format === "jsonl") {
    for (let i = 0; i < rows.length; i += 1000) {
      write(rows.slice(i, i + 1000).map((r) => JSON.stringify(Object.fromEntries(columns.map((c) => [c, r[c] ?? null])))).join("\n") + "\n");
    }
    return;
  }
  write(Papa.unparse([columns], { newline: "\n" }) + "\n");
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000).map((r) => columns.map((c) => csvCell(r[c])));
    write(Papa.unparse(chunk, { newline: "\n", header: false }) + "\n");
  }
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
  if (typeof v === "boolean") return v ? "true" : "false";
  return String(v);
}

export function exportToString(conn: Database.Database, projectId: number, what: ExportKind, format: ExportFormat): string {
  const parts: string[] = [];
  writeExport(exportRows(conn, projectId, what), what, format, (c) => parts.push(c));
  return parts.join("");
}
