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
 *   (cohen_kappa only when the task has exactly two annotators; NaN/undefined values are empty;
 *   categories = the task's scale as the report page counts it — Yes/No, 1–5, or a declared
 *   config.categories with its unused categories — so gwet_ac1's q is the page's)
 *
 * judge-agreement — one row per (task, judge) for the chosen reference (default: the strict
 *   majority of the unit's annotators; units without one are left out and counted in
 *   ties_excluded), the judge's verdict on the same response and checklist item (or unit of
 *   imported labels); the figures of the judge page and of `npm run judge-agreement`
 *   (app/reports/judgeAgreement.ts), for any label set:
 *   task_id, task, judge, judge_id, n, ties_excluded, accuracy, cohen_kappa,
 *   human_yes_rate, judge_yes_rate, yes_yes, yes_no, no_yes, no_no,
 *   reference, unparsed_policy, unparsed, accuracy_ci_low, accuracy_ci_high,
 *   cohen_kappa_ci_low, cohen_kappa_ci_high, macro_precision, macro_recall, macro_f1,
 *   macro_f1_ci_low, macro_f1_ci_high, missing, unparsed_compared, missing_policy, missing_verdicts
 *   (yes_no = human Yes, judge No; the Yes/No columns are empty unless labels are Yes/No;
 *   unparsed = the judge's verdicts outside the label set (or empty) on all the task's units,
 *   unparsed_compared = those on units with a reference, which n and the confusion hold as
 *   unparsed_policy says; accuracy CI Wilson, kappa CI asymptotic SE — under reference each,
 *   both a seeded bootstrap over units —, macro F1 CI a seeded bootstrap over units;
 *   missing = compared units without a verdict — none, or (missing_policy "missing", the default)
 *   one imported without a value or as NA/N/A; missing_verdicts = those imported verdicts on all
 *   the task's units; under missing_policy "unparsed" they count as unparsed instead),
 *   then, on ordinal and interval tasks, the score columns (SCORE_EXPORT_COLUMNS below)
 *
 * judge-confusion — the confusion matrix and per-label figures behind judge-agreement: one row
 *   per (task, judge, reference label, judge label), over the labels either side used:
 *   task_id, task, judge, judge_id, reference, unparsed_policy, human_label, judge_label, count,
 *   precision, recall, f1, support, missing_policy
 *   (precision/recall/f1/support of the label are filled on its diagonal row, human_label =
 *   judge_label, so `df[df.human_label == df.judge_label]` is the per-label table)
 *
 * runs — one row per verdict (responses without verdicts get one row with empty judge columns):
 *   dataset, dataset_version, item, item_id, response_id, model, turn, origin, run_id, run,
 *   response, judge, checklist_item_id, checklist_item, checklist_weight, value, score,
 *   parse_status, raw_output, stale_at
 */
import { and, asc, eq, gt, inArray, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { dalOf, first, type Dal, type DalLike } from "~/dal.server";
import { visible } from "../../db/visibility";
import { cohenKappa, fleissKappa, gwetAC1, krippendorffAlpha, percentAgreement, type MeasurementLevel } from "../stats";
import type { JudgeAgreementRow, MissingPolicy, Reference, UnparsedPolicy } from "../reports/judgeAgreement";
import { UNPARSED as UNPARSED_CLASS } from "../reports/judgeAgreement";
import { parseMissingPolicy, parseReference, parseUnparsedPolicy } from "../reports/judgeAgreement";
import { judgeAgreementFor, judgeReportFor } from "../reports/report.server";
import { labelKindOf, taskScale } from "../reports/subjects";
import { findKind } from "../task-kinds/registry";
import { toCsv } from "./csv";
import { runResultRows, runResultTables, RUN_RESULT_COLUMNS } from "../runs/results-export.server";
import { DomainError } from "../errors";

/**
 * judge-agreement's score columns (tasks on an ordinal or interval scale; empty otherwise): the
 * judges page's score table (app/reports/scoreJudgeAgreement.ts) against the final score by the
 * task's default rule (score_reference): score_n, out_of_scale, Pearson, Spearman, Kendall tau-b,
 * the three pairwise consistencies (pairs of responses to one item) with their pair counts, each
 * with its seeded bootstrap interval over items.
 */
const SCORE_EXPORT_COLUMNS = [
  "score_reference",
  "score_n",
  "out_of_scale",
  ...["pearson", "spearman", "kendall_tau_b"].flatMap((k) => [k, `${k}_ci_low`, `${k}_ci_high`]),
  ...["ties_counted", "ties_excluded", "human_differing"].flatMap((k) => [
    `consistency_${k}`,
    `consistency_${k}_ci_low`,
    `consistency_${k}_ci_high`,
  ]),
  "pairs",
  "pairs_ties_excluded",
  "pairs_human_differing",
];

/** The project's exports (the Export page's list). */
export const EXPORT_KINDS = ["annotations", "agreement", "judge-agreement", "runs", "judge-confusion"] as const;
export type ProjectExportKind = (typeof EXPORT_KINDS)[number];
/** Every export: the project's, and one run's results (run-results, with the `run` option: app/runs/results-export.server.ts). */
export const ALL_EXPORT_KINDS = [...EXPORT_KINDS, "run-results"] as const;
export type ExportKind = (typeof ALL_EXPORT_KINDS)[number];
/** The exports that take the `task` option; the judge exports also take reference, unparsed and missing. */
export const TASK_EXPORT_KINDS: readonly ExportKind[] = ["annotations", "agreement", "judge-agreement", "judge-confusion"];
export const JUDGE_EXPORT_KINDS: readonly ExportKind[] = ["judge-agreement", "judge-confusion"];
export const EXPORT_FORMATS = ["csv", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const COLUMNS: Record<ExportKind, string[]> = {
  annotations: [
    "task_id",
    "task",
    "task_kind",
    "unit_id",
    "item",
    "item_id",
    "checklist_item_id",
    "checklist_item",
    "response_id",
    "annotator",
    "annotator_id",
    "label",
    "penalty_reasons",
    "notes",
    "shown_order",
    "status",
    "revision",
    "duration_ms",
    "started_at",
    "submitted_at",
    "annotated_at",
    "stale_at",
  ],
  agreement: [
    "task_id",
    "task",
    "task_kind",
    "level",
    "units",
    "annotators",
    "ratings",
    "pairable_units",
    "categories",
    "percent_agreement",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "cohen_kappa",
  ],
  "judge-agreement": [
    "task_id",
    "task",
    "judge",
    "judge_id",
    "n",
    "ties_excluded",
    "accuracy",
    "cohen_kappa",
    "human_yes_rate",
    "judge_yes_rate",
    "yes_yes",
    "yes_no",
    "no_yes",
    "no_no",
    "reference",
    "unparsed_policy",
    "unparsed",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "cohen_kappa_ci_low",
    "cohen_kappa_ci_high",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "macro_f1_ci_low",
    "macro_f1_ci_high",
    "missing",
    "unparsed_compared",
    "missing_policy",
    "missing_verdicts",
    ...SCORE_EXPORT_COLUMNS,
  ],
  runs: [
    "dataset",
    "dataset_version",
    "item",
    "item_id",
    "response_id",
    "model",
    "turn",
    "origin",
    "run_id",
    "run",
    "response",
    "judge",
    "checklist_item_id",
    "checklist_item",
    "checklist_weight",
    "value",
    "score",
    "parse_status",
    "raw_output",
    "stale_at",
  ],
  "judge-confusion": [
    "task_id",
    "task",
    "judge",
    "judge_id",
    "reference",
    "unparsed_policy",
    "human_label",
    "judge_label",
    "count",
    "precision",
    "recall",
    "f1",
    "support",
    "missing_policy",
  ],
  "run-results": [...RUN_RESULT_COLUMNS],
};

/** Options of the judge exports (the `--reference`, `--unparsed` and `--missing-as` flags). */
export type JudgeExportOptions = { reference?: Reference; unparsed?: UnparsedPolicy; missing?: MissingPolicy };
/**
 * Every export's options: the judge exports' (above); `task`: only this task's rows (annotations, agreement and
 * the judge exports); `run`: the run of the run-results export (required there).
 */
export type ExportOptions = JudgeExportOptions & { task?: number; run?: number };

type Row = Record<string, unknown>;
const iso = (t: number | null) => (t === null || t === undefined ? null : new Date(t * 1000).toISOString());

const finite = (x: number) => (Number.isFinite(x) ? x : null);

/** A label as one cell: strings and numbers as they are, anything else as JSON. */
function labelCell(v: unknown): string | number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string" || typeof v === "number") return v;
  return JSON.stringify(v);
}

type AnnotationRow = {
  task_id: number;
  unit_position: number;
  task: string;
  task_kind: string;
  config: Record<string, unknown> | null;
  unit_id: number;
  item: string;
  item_id: number;
  checklist_item_id: number | null;
  checklist_item: string | null;
  response_id: number | null;
  annotator: string;
  annotator_id: number;
  label: unknown;
  penalty_reasons: unknown;
  notes: unknown;
  shown_order: unknown;
  assignment_shown_order: unknown;
  status: string;
  revision: number;
  duration_ms: number | null;
  started_at: number | null;
  submitted_at: number | null;
  annotated_at: number;
  stale_at: number | null;
};

/** Text ordered by code point on both dialects (SQLite's BINARY; PostgreSQL's default collation would order by locale). */
const byText = (d: Dal, col: AnyColumn): SQL | AnyColumn => (d.dialect === "postgres" ? sql`${col} collate "C"` : col);

/** A JSON column's value as the JSON text stored (SQLite keeps the text JSON.stringify wrote; PostgreSQL's jsonb gives it back the same). */
const jsonText = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/**
 * Units per window of the annotations export (each with its annotators' rows), items per window of the
 * runs export, and responses per window of its rows (each with its verdicts): an export holds one
 * window in memory, never the whole file.
 */
export const EXPORT_WINDOWS = { units: 2000, items: 500, responses: 100 };

/** The project's tasks, in id order (only `task` when given). */
async function taskIds(d: Dal, projectId: number, task?: number): Promise<number[]> {
  const t = d.t.tasks;
  return (
    await d.q
      .select({ id: t.id })
      .from(t)
      .where(and(eq(t.projectId, projectId), task === undefined ? undefined : eq(t.id, task)))
      .orderBy(asc(t.id))
  ).map((r) => r.id);
}

/**
 * Where a read of the annotations resumes: the unit at (position, id) of task `task`, after its first `skip`
 * rows (the rows of a unit are ordered by annotator, so a page may end inside a unit).
 */
export type AnnotationStart = { task: number; position: number; id: number; skip: number };

/** Text in code-point order, the order of SQLite's BINARY collation and PostgreSQL's "C" (UTF-8 byte order). */
function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}

/**
 * The annotations of one task, a window of units at a time (EXPORT_WINDOWS.units, or `units`): the current
 * revision of each assignment, in unit order (position, id: the units_task_idx index's order, so each window
 * is one range read of it) and, within a unit, by annotator name (in code-point order) and id. One query per
 * window reads the rows as arrays (no object per row from the driver); the task's and the annotators' names
 * are read once.
 */
async function* annotationWindows(
  d: Dal,
  projectId: number,
  taskId: number,
  submittedOnly = false,
  from?: AnnotationStart,
  units = EXPORT_WINDOWS.units,
): AsyncGenerator<AnnotationRow[]> {
  const { units: u, tasks: t, users: usr } = d.t;
  const task = first(
    await d.q
      .select({ name: t.name, kind: t.kind, config: t.config })
      .from(t)
      .where(and(eq(t.id, taskId), eq(t.projectId, projectId))),
  );
  if (!task) return;
  const names = new Map<number, string>();
  const sqlite = d.dialect === "sqlite";
  const json = (v: unknown): unknown => (sqlite && typeof v === "string" ? JSON.parse(v) : v);
  let after: { position: number; id: number; inclusive: boolean } | null = from ? { ...from, inclusive: true } : null;
  for (;;) {
    const window: { position: number; id: number }[] = await d.q
      .select({ position: u.position, id: u.id })
      .from(u)
      .where(
        and(
          eq(u.taskId, taskId),
          after
            ? after.inclusive
              ? sql`(${u.position}, ${u.id}) >= (${after.position}, ${after.id})`
              : sql`(${u.position}, ${u.id}) > (${after.position}, ${after.id})`
            : undefined,
        ),
      )
      .orderBy(asc(u.position), asc(u.id))
      .limit(units);
    if (window.length === 0) return;
    const lo = window[0];
    const hi = window[window.length - 1];
    const raw = await d.arrays(sql`
      SELECT u.id, u.position, i.source_id, i.id, u.checklist_item_id, c.text, u.response_id, a.annotator_id,
             an.label, an.penalty_reasons, an.notes, an.shown_order, a.shown_order, an.status, an.revision, an.duration_ms,
             a.started_at, a.submitted_at, an.created_at, an.stale_at
        FROM units u
        JOIN assignments a ON a.unit_id = u.id
        JOIN annotations an ON an.assignment_id = a.id
        JOIN items i ON i.id = u.item_id
        LEFT JOIN checklist_items c ON c.id = u.checklist_item_id
       WHERE u.task_id = ${taskId}
         AND (u.position, u.id) >= (${lo.position}, ${lo.id}) AND (u.position, u.id) <= (${hi.position}, ${hi.id})
         AND NOT EXISTS (SELECT 1 FROM annotations an2 WHERE an2.assignment_id = an.assignment_id AND an2.revision > an.revision)
         ${submittedOnly ? sql`AND an.status = 'submitted'` : sql``}
       ORDER BY u.position, u.id`);
    const missing = [...new Set(raw.map((r) => Number(r[7])))].filter((id) => !names.has(id));
    for (let k = 0; k < missing.length; k += 5000)
      for (const x of await d.q
        .select({ id: usr.id, name: usr.name })
        .from(usr)
        .where(inArray(usr.id, missing.slice(k, k + 5000))))
        names.set(x.id, x.name);
    const rows: AnnotationRow[] = raw.map((r) => ({
      task_id: taskId,
      task: task.name,
      task_kind: task.kind,
      config: task.config as Record<string, unknown> | null,
      unit_id: Number(r[0]),
      unit_position: Number(r[1]),
      item: r[2] as string,
      item_id: Number(r[3]),
      checklist_item_id: r[4] === null ? null : Number(r[4]),
      checklist_item: r[5] as string | null,
      response_id: r[6] === null ? null : Number(r[6]),
      annotator: names.get(Number(r[7])) ?? "",
      annotator_id: Number(r[7]),
      label: json(r[8]),
      penalty_reasons: json(r[9]),
      notes: json(r[10]),
      shown_order: json(r[11]),
      assignment_shown_order: json(r[12]),
      status: r[13] as string,
      revision: Number(r[14]),
      duration_ms: r[15] === null ? null : Number(r[15]),
      started_at: r[16] === null ? null : Number(r[16]),
      submitted_at: r[17] === null ? null : Number(r[17]),
      annotated_at: Number(r[18]),
      stale_at: r[19] === null ? null : Number(r[19]),
    }));
    // Within a unit (the query keeps units in order), by annotator name in code-point order, then id.
    let at = 0;
    while (at < rows.length) {
      let end = at + 1;
      while (end < rows.length && rows[end].unit_id === rows[at].unit_id) end++;
      if (end - at > 1) {
        const sorted = rows.slice(at, end).sort((x, y) => byCodePoint(x.annotator, y.annotator) || x.annotator_id - y.annotator_id);
        rows.splice(at, end - at, ...sorted);
      }
      at = end;
    }
    const out = from && after?.inclusive && from.skip > 0 ? rows.filter((r, k) => !(r.unit_id === from.id && k < from.skip)) : rows;
    if (out.length > 0) yield out;
    if (window.length < units) return;
    after = { position: hi.position, id: hi.id, inclusive: false };
  }
}

const annotationExportRow = (r: AnnotationRow): Row => ({
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
  label: labelCell(r.label),
  penalty_reasons: jsonText(r.penalty_reasons),
  notes: r.notes === null || r.notes === undefined ? null : typeof r.notes === "string" ? r.notes : jsonText(r.notes),
  shown_order: jsonText(r.shown_order ?? r.assignment_shown_order),
  status: r.status,
  revision: r.revision,
  duration_ms: r.duration_ms,
  started_at: iso(r.started_at),
  submitted_at: iso(r.submitted_at),
  annotated_at: iso(r.annotated_at),
  stale_at: iso(r.stale_at),
});

/** A window of export rows with, for each, the key a page that ends at it resumes after (keyset cursors). */
type KeyedWindow = { rows: Row[]; keys: Key[] };
/** A page cursor's sort key: numbers (ids, positions, a count of rows already given within a unit or response). */
export type Key = number[];

/** The annotations export, task by task, each row with its resume key [task, unit position, unit id, rows of the unit so far]. */
async function* annotations(
  d: Dal,
  projectId: number,
  opts: ExportOptions,
  from?: AnnotationStart,
  units?: number,
): AsyncGenerator<KeyedWindow> {
  for (const taskId of await taskIds(d, projectId, opts.task)) {
    if (from && taskId < from.task) continue;
    let unit = -1;
    let count = 0;
    const start = from && taskId === from.task ? from : undefined;
    for await (const rows of annotationWindows(d, projectId, taskId, false, start, units)) {
      const keys: Key[] = [];
      for (const r of rows) {
        if (r.unit_id !== unit) {
          unit = r.unit_id;
          count = start && r.unit_id === start.id ? start.skip : 0;
        }
        count++;
        keys.push([taskId, r.unit_position, r.unit_id, count]);
      }
      yield { rows: rows.map(annotationExportRow), keys };
    }
  }
}

type Scalar = string | number;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "number";

type TaskLabels = {
  name: string;
  kind: string;
  config: Record<string, unknown>;
  level: MeasurementLevel;
  units: Map<number, Map<number, Scalar>>;
  meta: Map<number, { responseId: number | null; checklistItemId: number | null }>;
  skipped: number;
};

/** One task's submitted scalar labels: unit → annotator → label (undefined when the task has no submitted label). */
async function taskLabels(d: Dal, projectId: number, taskId: number): Promise<TaskLabels | undefined> {
  let t: TaskLabels | undefined;
  for await (const rows of annotationWindows(d, projectId, taskId, true))
    for (const r of rows) {
      if (!t) {
        const cfg = (r.config ?? {}) as { level?: string };
        // A labelled kind's level is its coding's (binary counts as nominal); imported labels declare theirs.
        const coded = findKind(r.task_kind)?.coding.level;
        const level = (
          coded
            ? coded === "ordinal"
              ? "ordinal"
              : "nominal"
            : ["nominal", "ordinal", "interval", "ratio"].includes(cfg.level ?? "")
              ? cfg.level
              : "nominal"
        ) as MeasurementLevel;
        t = {
          name: r.task,
          kind: r.task_kind,
          config: cfg as Record<string, unknown>,
          level,
          units: new Map(),
          meta: new Map(),
          skipped: 0,
        };
      }
      const label = r.label;
      if (!isScalar(label)) {
        t.skipped++;
        continue;
      }
      if (!t.units.has(r.unit_id)) t.units.set(r.unit_id, new Map());
      t.units.get(r.unit_id)!.set(r.annotator_id, label);
      t.meta.set(r.unit_id, { responseId: r.response_id, checklistItemId: r.checklist_item_id });
    }
  return t;
}

/** One row per task with scalar labels, a task at a time (memory holds one task's labels). */
async function* agreement(d: Dal, projectId: number, opts: ExportOptions): AsyncGenerator<Row[]> {
  for (const taskId of await taskIds(d, projectId, opts.task)) {
    const t = await taskLabels(d, projectId, taskId);
    if (!t || t.units.size === 0) continue;
    const annotators = [...new Set([...t.units.values()].flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
    const matrix = [...t.units.values()].map((m) => annotators.map((a) => m.get(a) ?? null));
    const ratings = matrix.reduce((n, row) => n + row.filter((v) => v !== null).length, 0);
    // The task's scale, as the report page counts it (Yes/No, 1–5, or a declared config.categories with
    // its unused categories): Gwet's AC1 depends on the number of categories q.
    const seen = matrix.flat().filter((v): v is Scalar => v !== null);
    const scale = taskScale(t.kind, labelKindOf(t.kind, t.config), t.config, seen).categories.filter(isScalar);
    const categories = seen.every((v) => typeof v === "number") ? scale.filter((c) => typeof c === "number") : scale;
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
    yield [
      {
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
            ? finiteOrNull(
                safe(
                  () =>
                    cohenKappa(
                      matrix.map((r) => r[0]),
                      matrix.map((r) => r[1]),
                    ).kappa,
                ),
              )
            : null,
      },
    ];
  }
}

const finiteOrNull = (x: number | null) => (x === null ? null : finite(x));

/**
 * The judge figures of every task with one scalar label per unit, from the report engine
 * (app/reports/report.server judgeAgreementFor), so the export, the judge page and its CSV
 * agree. It reads through the app's database client, which every caller shares with `d`.
 */
async function judgeTasks(d: Dal, projectId: number, opts: ExportOptions) {
  const pages = [];
  for (const taskId of await taskIds(d, projectId, opts.task))
    pages.push(
      await judgeAgreementFor(projectId, taskId, {
        reference: opts.reference ?? "majority",
        unparsed: opts.unparsed ?? "count-as-wrong",
        missing: opts.missing ?? "missing",
      }),
    );
  return pages.filter((p): p is NonNullable<typeof p> => !!p && !!p.result);
}

type JudgePage = Awaited<ReturnType<typeof judgeTasks>>[number];

/** One judge's row of the judge-agreement export (also the rows of the judge page's CSV). */
export function judgeAgreementRow(task: { id: number; name: string }, r: NonNullable<JudgePage["result"]>, j: JudgeAgreementRow): Row {
  const yesNo = r.labels.length > 0 && r.labels.every((l) => l === "Yes" || l === "No");
  const cm = j.confusion;
  const cell = (h: string, v: string) => cm[h]?.[v] ?? 0;
  const humanYes = cell("Yes", "Yes") + cell("Yes", "No") + cell("Yes", UNPARSED_CLASS);
  const judgeYes = Object.keys(cm).reduce((s, h) => s + cell(h, "Yes"), 0);
  return {
    task_id: task.id,
    task: task.name,
    judge: j.judge,
    judge_id: r.judgeIds[j.judge],
    n: j.n,
    ties_excluded: r.unitsWithoutMajority,
    accuracy: j.accuracy,
    cohen_kappa: j.cohenKappa,
    human_yes_rate: yesNo && j.n ? humanYes / j.n : null,
    judge_yes_rate: yesNo && j.n ? judgeYes / j.n : null,
    yes_yes: yesNo ? cell("Yes", "Yes") : null,
    yes_no: yesNo ? cell("Yes", "No") : null,
    no_yes: yesNo ? cell("No", "Yes") : null,
    no_no: yesNo ? cell("No", "No") : null,
    reference: r.reference,
    unparsed_policy: r.unparsedPolicy,
    unparsed: j.unparsed,
    accuracy_ci_low: j.accuracyCI?.[0] ?? null,
    accuracy_ci_high: j.accuracyCI?.[1] ?? null,
    cohen_kappa_ci_low: j.cohenKappaCI?.[0] ?? null,
    cohen_kappa_ci_high: j.cohenKappaCI?.[1] ?? null,
    macro_precision: j.macroPrecision,
    macro_recall: j.macroRecall,
    macro_f1: j.macroF1,
    macro_f1_ci_low: j.macroF1CI?.[0] ?? null,
    macro_f1_ci_high: j.macroF1CI?.[1] ?? null,
    missing: j.missing,
    unparsed_compared: j.unparsedCompared,
    missing_policy: r.missingPolicy,
    missing_verdicts: j.missingVerdicts,
  };
}

async function judgeAgreement(d: Dal, projectId: number, opts: ExportOptions): Promise<Row[]> {
  const out: Row[] = [];
  for (const page of await judgeTasks(d, projectId, opts)) {
    // Scores: the judges page's score table (its figures, by the task's default rule), by judge.
    const report = await judgeReportFor(projectId, page.task.id, { rule: null, delta: 0.05 });
    const numeric = report && (report.labelKind === "ordinal" || report.labelKind === "interval");
    const scoreRows = new Map((numeric ? report.tables.judges.rows : []).map((r) => [r.judge as string, r]));
    for (const j of page.result!.judges) {
      const s = scoreRows.get(j.judge);
      out.push({ ...judgeAgreementRow(page.task, page.result!, j), ...(s ? scoreExportCells(report!.rule, s) : {}) });
    }
  }
  return out;
}

/** A score-table row (app/reports/tables.ts scoreCells) as the export's score columns. */
function scoreExportCells(rule: string, s: Row): Row {
  const lo = (v: unknown) => (Array.isArray(v) ? v[0] : null);
  const hi = (v: unknown) => (Array.isArray(v) ? v[1] : null);
  const out: Row = { score_reference: rule, score_n: s.n, out_of_scale: s.outOfScale };
  for (const [k, key] of [
    ["pearson", "pearson"],
    ["spearman", "spearman"],
    ["kendall_tau_b", "kendallTauB"],
    ["consistency_ties_counted", "consistencyTiesCounted"],
    ["consistency_ties_excluded", "consistencyTiesExcluded"],
    ["consistency_human_differing", "consistencyHumanDiffering"],
  ]) {
    out[k] = s[key];
    out[`${k}_ci_low`] = lo(s[`${key}Ci`]);
    out[`${k}_ci_high`] = hi(s[`${key}Ci`]);
  }
  return { ...out, pairs: s.pairs, pairs_ties_excluded: s.pairsTiesExcluded, pairs_human_differing: s.pairsHumanDiffering };
}

/** The columns of the judge page's judge-agreement CSV: the export's, without the task and Yes/No columns. */
export const JUDGE_PAGE_COLUMNS = [
  "judge",
  "reference",
  "unparsed_policy",
  "n",
  "unparsed",
  "accuracy",
  "accuracy_ci_low",
  "accuracy_ci_high",
  "cohen_kappa",
  "cohen_kappa_ci_low",
  "cohen_kappa_ci_high",
  "macro_precision",
  "macro_recall",
  "macro_f1",
  "unparsed_compared",
  "missing",
  "missing_policy",
];

/**
 * The judge page's judge-agreement CSV: one row per judge, the export's rows (judgeAgreementRow) in
 * JUDGE_PAGE_COLUMNS, then the human baseline the page shows beside the judges (empty where the
 * figure is not defined for humans).
 */
export function judgeAgreementPageCsv(page: { task: { id: number; name: string }; result: JudgePage["result"] }): string {
  const r = page.result;
  const rows: Row[] = r ? r.judges.map((j) => judgeAgreementRow(page.task, r, j)) : [];
  if (r?.humans) {
    rows.push({
      judge: r.reference === "each" ? "Humans (every two annotators)" : "Humans (each annotator vs the others' majority)",
      reference: r.reference,
      unparsed_policy: r.unparsedPolicy,
      missing_policy: r.missingPolicy,
      n: r.humans.n,
      accuracy: r.humans.accuracy,
      accuracy_ci_low: r.humans.accuracyCI?.[0] ?? null,
      accuracy_ci_high: r.humans.accuracyCI?.[1] ?? null,
      cohen_kappa: r.humans.cohenKappa,
    });
  }
  return toCsv([JUDGE_PAGE_COLUMNS, ...rows.map((row) => JUDGE_PAGE_COLUMNS.map((c) => row[c]))]) + "\n";
}

async function judgeConfusion(d: Dal, projectId: number, opts: ExportOptions): Promise<Row[]> {
  const out: Row[] = [];
  for (const page of await judgeTasks(d, projectId, opts)) {
    const r = page.result!;
    for (const j of r.judges) {
      const labels = Object.keys(j.confusion);
      for (const h of labels) {
        for (const v of labels) {
          const m = h === v ? j.perLabel[h] : undefined;
          out.push({
            task_id: page.task.id,
            task: page.task.name,
            judge: j.judge,
            judge_id: r.judgeIds[j.judge],
            reference: r.reference,
            unparsed_policy: r.unparsedPolicy,
            human_label: h,
            judge_label: v,
            count: j.confusion[h][v],
            precision: m?.precision ?? null,
            recall: m?.recall ?? null,
            f1: m?.f1 ?? null,
            support: m?.support ?? null,
            missing_policy: r.missingPolicy,
          });
        }
      }
    }
  }
  return out;
}

/** The runs export's rows of the responses `responseFilter` selects, in export order. */
async function runRows(d: Dal, projectId: number, responseFilter: SQL): Promise<Row[]> {
  const { responses: r, items: i, datasets: ds, runs: ru, verdicts: v, judges: j, checklistItems: c } = d.t;
  const rows = await d.q
    .select({
      dataset: ds.name,
      dataset_version: ds.version,
      item: i.sourceId,
      item_id: i.id,
      response_id: r.id,
      model: r.model,
      turn: r.turn,
      origin: r.origin,
      run_id: r.runId,
      run: ru.name,
      response: r.text,
      judge: j.name,
      checklist_item_id: v.checklistItemId,
      checklist_item: c.text,
      checklist_weight: c.weight,
      value: v.value,
      score: v.score,
      parse_status: v.parseStatus,
      raw_output: v.rawOutput,
      stale_at: v.staleAt,
    })
    .from(r)
    .innerJoin(i, eq(i.id, r.itemId))
    .innerJoin(ds, eq(ds.id, i.datasetId))
    .leftJoin(ru, eq(ru.id, r.runId))
    .leftJoin(v, and(eq(v.responseId, r.id), visible(v.pendingImportId)))
    .leftJoin(j, eq(j.id, v.judgeId))
    .leftJoin(c, eq(c.id, v.checklistItemId))
    .where(and(eq(ds.projectId, projectId), responseFilter, visible(r.pendingImportId)))
    .orderBy(asc(byText(d, ds.name)), asc(ds.version), asc(i.id), asc(r.id), asc(byText(d, j.name)), asc(c.position), asc(v.id));
  return rows.map((row) => ({ ...(row as Row), stale_at: iso(row.stale_at) }));
}

/** Where a read of the runs export resumes: the response `response` of item `item` in dataset `dataset`, after its first `skip` rows. */
export type RunsStart = { dataset: number; item: number; response: number; skip: number };

/**
 * Responses and their verdicts, dataset by dataset (in name and version order), a window of items
 * at a time (keyset on the item id), their responses in windows of EXPORT_WINDOWS.responses; each row with
 * its resume key [dataset, item, response, rows of the response so far].
 */
async function* runs(d: Dal, projectId: number, from?: RunsStart): AsyncGenerator<KeyedWindow> {
  const { responses: r, items: i, datasets: ds } = d.t;
  const sets = await d.q
    .select({ id: ds.id })
    .from(ds)
    .where(eq(ds.projectId, projectId))
    .orderBy(asc(byText(d, ds.name)), asc(ds.version), asc(ds.id));
  let at = 0;
  if (from) {
    at = sets.findIndex((x) => x.id === from.dataset);
    if (at < 0)
      throw new DomainError("cursor: its dataset no longer exists; start again without a cursor.", { status: 400, field: "cursor" });
  }
  for (const set of sets.slice(at)) {
    const start = from && set.id === from.dataset ? from : undefined;
    let afterItem = start ? start.item - 1 : 0;
    for (;;) {
      const itemIds = (
        await d.q
          .select({ id: i.id })
          .from(i)
          .where(and(eq(i.datasetId, set.id), gt(i.id, afterItem)))
          .orderBy(asc(i.id))
          .limit(EXPORT_WINDOWS.items)
      ).map((x) => x.id);
      if (itemIds.length === 0) break;
      const responses = await d.q
        .select({ id: r.id, itemId: r.itemId })
        .from(r)
        .where(and(inArray(r.itemId, itemIds), visible(r.pendingImportId)))
        .orderBy(asc(r.itemId), asc(r.id));
      // Resuming: the responses after the cursor's (in its item), then every response of the later items.
      const responseIds = responses
        .filter((x) => !start || x.itemId > start.item || (x.itemId === start.item && x.id >= start.response))
        .map((x) => x.id);
      for (let k = 0; k < responseIds.length; k += EXPORT_WINDOWS.responses) {
        let rows = await runRows(d, projectId, inArray(r.id, responseIds.slice(k, k + EXPORT_WINDOWS.responses)));
        if (start && k === 0 && start.skip > 0) rows = rows.filter((row, n) => !(row.response_id === start.response && n < start.skip));
        const keys: Key[] = [];
        let response = -1;
        let count = 0;
        for (const row of rows) {
          if (row.response_id !== response) {
            response = row.response_id as number;
            count = start && response === start.response ? start.skip : 0;
          }
          count++;
          keys.push([set.id, row.item_id as number, response, count]);
        }
        if (rows.length > 0) yield { rows, keys };
      }
      if (itemIds.length < EXPORT_WINDOWS.items) break;
      afterItem = itemIds[itemIds.length - 1];
    }
  }
}

/** The rows of the run-results export (every table of the run's results page, tidy), or a 404 DomainError for no such run. */
async function runResultsRows(d: Dal, projectId: number, opts: ExportOptions): Promise<Row[]> {
  const x = opts.run === undefined ? null : await runResultTables(d, projectId, opts.run);
  if (!x)
    throw new DomainError(opts.run === undefined ? "run: the run-results export needs a run (run=ID)." : "Run not found.", {
      status: opts.run === undefined ? 400 : 404,
      field: "run",
    });
  return runResultRows(x);
}

/**
 * Refuses, before anything is streamed, an export its options cannot give: run-results without a run, or with
 * a run the project does not have (404); a task the project does not have (404). The routes and the command
 * call it first, so a refusal is an error status, never a file cut short.
 */
export async function checkExport(db: DalLike, projectId: number, what: ExportKind, opts: ExportOptions): Promise<void> {
  const d = dalOf(db);
  if (what === "run-results") {
    if (opts.run === undefined) throw new DomainError("run: the run-results export needs a run (run=ID).", { status: 400, field: "run" });
    const ru = d.t.runs;
    if (
      !first(
        await d.q
          .select({ id: ru.id })
          .from(ru)
          .where(and(eq(ru.id, opts.run), eq(ru.projectId, projectId))),
      )
    )
      throw new DomainError("Run not found.", { status: 404, field: "run" });
  }
  if (opts.task !== undefined && TASK_EXPORT_KINDS.includes(what)) {
    const t = d.t.tasks;
    if (
      !first(
        await d.q
          .select({ id: t.id })
          .from(t)
          .where(and(eq(t.id, opts.task), eq(t.projectId, projectId))),
      )
    )
      throw new DomainError("Task not found.", { status: 404, field: "task" });
  }
}

/**
 * An export's rows, a window at a time: the annotations a window of units, the runs a window of
 * responses, agreement a task, the judge exports and run-results the whole (one row per task and judge,
 * label pair, or figure).
 * A page, `npm run export`, the API and the tests all read through this one function (or exportPage).
 */
export async function* exportWindows(db: DalLike, projectId: number, what: ExportKind, opts: ExportOptions = {}): AsyncGenerator<Row[]> {
  const d = dalOf(db);
  switch (what) {
    case "annotations":
      for await (const w of annotations(d, projectId, opts)) yield w.rows;
      return;
    case "agreement":
      return yield* agreement(d, projectId, opts);
    case "judge-agreement":
      yield await judgeAgreement(d, projectId, opts);
      return;
    case "judge-confusion":
      yield await judgeConfusion(d, projectId, opts);
      return;
    case "runs":
      for await (const w of runs(d, projectId)) yield w.rows;
      return;
    case "run-results":
      yield await runResultsRows(d, projectId, opts);
      return;
  }
}

/** Every row of an export (for tests and comparisons; downloads stream exportChunks instead). */
export async function exportRows(db: DalLike, projectId: number, what: ExportKind, opts: ExportOptions = {}): Promise<Row[]> {
  const out: Row[] = [];
  for await (const rows of exportWindows(db, projectId, what, opts)) for (const row of rows) out.push(row);
  return out;
}

/** An export's row as the file has it: its columns, in order, missing values null (a JSONL line; a JSON page's object). */
export const exportRecord = (what: ExportKind, row: Row): Row => Object.fromEntries(COLUMNS[what].map((c) => [c, row[c] ?? null]));

/**
 * One page of an export (the HTTP API's `format=json`): up to `limit` rows after the key `after` (null: from
 * the start), as the file's records, and the key of the last one when more follow. The annotations and the
 * runs page by a keyset in SQL (task, unit position, unit id, rows of the unit so far; dataset, item,
 * response, rows of the response so far), reading only the windows the page needs; the computed exports
 * (agreement, the judge exports, run-results: a row per task, judge or figure) are computed and sliced,
 * their key the count of rows given so far.
 */
export async function exportPage(
  db: DalLike,
  projectId: number,
  what: ExportKind,
  opts: ExportOptions,
  after: Key | null,
  limit: number,
): Promise<{ rows: Row[]; next: Key | null }> {
  const d = dalOf(db);
  const rows: Row[] = [];
  const keys: Key[] = [];
  const take = async (windows: AsyncGenerator<KeyedWindow>) => {
    for await (const w of windows) {
      for (let k = 0; k < w.rows.length && rows.length <= limit; k++) {
        rows.push(exportRecord(what, w.rows[k]));
        keys.push(w.keys[k]);
      }
      if (rows.length > limit) {
        await windows.return(undefined);
        break;
      }
    }
  };
  if (what === "annotations") {
    const from = after ? { task: after[0], position: after[1], id: after[2], skip: after[3] } : undefined;
    // Each unit has at least one row, so limit + 1 units hold the page and the row that says more follow.
    await take(annotations(d, projectId, opts, from, Math.min(EXPORT_WINDOWS.units, limit + 1)));
  } else if (what === "runs") {
    await take(runs(d, projectId, after ? { dataset: after[0], item: after[1], response: after[2], skip: after[3] } : undefined));
  } else {
    const all = await exportRows(d, projectId, what, opts);
    const start = after ? after[0] : 0;
    for (let k = start; k < all.length && rows.length <= limit; k++) {
      rows.push(exportRecord(what, all[k]));
      keys.push([k + 1]);
    }
  }
  if (rows.length <= limit) return { rows, next: null };
  return { rows: rows.slice(0, limit), next: keys[limit - 1] };
}

/**
 * The file name of an export's download (the Export page's link, the run results page's and the API's
 * Content-Disposition): SLUG-WHAT.FORMAT; one task's: SLUG-WHAT-task-ID.FORMAT; a run's results: SLUG-run-ID-results.FORMAT.
 */
export function exportFileName(slug: string, what: ExportKind, format: ExportFormat, opts: ExportOptions = {}): string {
  if (what === "run-results") return `${slug}-run-${opts.run}-results.${format}`;
  const task = opts.task !== undefined && TASK_EXPORT_KINDS.includes(what) ? `-task-${opts.task}` : "";
  return `${slug}-${what}${task}.${format}`;
}

/**
 * An export's options from a query string (the download routes and the API, after the API's zod schema):
 * reference, unparsed and missing as the judge page parses them, task and run as ids. Null values for words
 * that do not parse are reported by field, so the caller can refuse them (400) before anything is read.
 */
export function exportOptionsFrom(q: {
  reference?: string | null;
  unparsed?: string | null;
  missing?: string | null;
  task?: string | null;
  run?: string | null;
}): { opts: ExportOptions; errors: { field: string; message: string }[] } {
  const opts: ExportOptions = {};
  const errors: { field: string; message: string }[] = [];
  const id = (field: "task" | "run", v: string | null | undefined) => {
    if (v === null || v === undefined || v === "") return;
    if (/^[1-9]\d{0,14}$/.test(v) && Number.isSafeInteger(Number(v))) opts[field] = Number(v);
    else errors.push({ field, message: `${field}: a positive whole number (an id), not "${v.slice(0, 40)}".` });
  };
  if (q.reference) {
    const r = parseReference(q.reference);
    if (r) opts.reference = r;
    else errors.push({ field: "reference", message: "reference: majority, each or adjudicated." });
  }
  if (q.unparsed) {
    const u = parseUnparsedPolicy(q.unparsed);
    if (u) opts.unparsed = u;
    else errors.push({ field: "unparsed", message: "unparsed: count-as-wrong, exclude or as:LABEL." });
  }
  if (q.missing) {
    const m = parseMissingPolicy(q.missing);
    if (m) opts.missing = m;
    else errors.push({ field: "missing", message: "missing: missing or unparsed." });
  }
  id("task", q.task);
  id("run", q.run);
  return { opts, errors };
}

/** The length of a page cursor's key for each export (see exportPage). */
export const exportKeyLength = (what: ExportKind): number => (what === "annotations" || what === "runs" ? 4 : 1);

/**
 * An export as text, a window at a time: the CSV header first (CSV), then each window's rows as CSV
 * (formula cells escaped: app/formats/csv.ts) or JSONL. `onRows` hears how many rows each window had.
 */
export async function* exportChunks(
  db: DalLike,
  projectId: number,
  what: ExportKind,
  format: ExportFormat,
  opts: ExportOptions = {},
  onRows?: (n: number) => void,
): AsyncGenerator<string> {
  const columns = COLUMNS[what];
  if (format === "csv") yield toCsv([columns]) + "\n";
  for await (const rows of exportWindows(db, projectId, what, opts)) {
    if (rows.length === 0) continue;
    onRows?.(rows.length);
    yield format === "jsonl"
      ? rows.map((r) => JSON.stringify(exportRecord(what, r))).join("\n") + "\n"
      : toCsv(rows.map((r) => columns.map((c) => r[c]))) + "\n";
  }
}

export async function exportToString(
  db: DalLike,
  projectId: number,
  what: ExportKind,
  format: ExportFormat,
  opts: ExportOptions = {},
): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of exportChunks(db, projectId, what, format, opts)) parts.push(chunk);
  return parts.join("");
}
