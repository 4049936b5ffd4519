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
import { dalOf, type Dal, type DalLike } from "~/dal.server";
import { visible } from "../../db/visibility";
import { cohenKappa, fleissKappa, gwetAC1, krippendorffAlpha, percentAgreement, type MeasurementLevel } from "../stats";
import type { JudgeAgreementRow, MissingPolicy, Reference, UnparsedPolicy } from "../reports/judgeAgreement";
import { UNPARSED as UNPARSED_CLASS } from "../reports/judgeAgreement";
import { judgeAgreementFor, judgeReportFor } from "../reports/report.server";
import { labelKindOf, taskScale } from "../reports/subjects";
import { findKind } from "../task-kinds/registry";
import { toCsv } from "./csv";

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

export const EXPORT_KINDS = ["annotations", "agreement", "judge-agreement", "runs", "judge-confusion"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
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
};

/** Options of the judge exports (the `--reference`, `--unparsed` and `--missing-as` flags). */
export type JudgeExportOptions = { reference?: Reference; unparsed?: UnparsedPolicy; missing?: MissingPolicy };

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
export const EXPORT_WINDOWS = { units: 500, items: 500, responses: 100 };

/** The project's tasks, in id order. */
async function taskIds(d: Dal, projectId: number): Promise<number[]> {
  const t = d.t.tasks;
  return (await d.q.select({ id: t.id }).from(t).where(eq(t.projectId, projectId)).orderBy(asc(t.id))).map((r) => r.id);
}

/** The current revision of each annotation of the units `unitFilter` selects, in export order. */
async function annotationRows(d: Dal, projectId: number, unitFilter: SQL, submittedOnly: boolean): Promise<AnnotationRow[]> {
  const { annotations: an, assignments: a, units: u, tasks: t, items: i, users: usr, checklistItems: c } = d.t;
  return (await d.q
    .select({
      task_id: t.id,
      task: t.name,
      task_kind: t.kind,
      config: t.config,
      unit_id: u.id,
      item: i.sourceId,
      item_id: i.id,
      checklist_item_id: u.checklistItemId,
      checklist_item: c.text,
      response_id: u.responseId,
      annotator: usr.name,
      annotator_id: usr.id,
      label: an.label,
      penalty_reasons: an.penaltyReasons,
      notes: an.notes,
      shown_order: an.shownOrder,
      assignment_shown_order: a.shownOrder,
      status: an.status,
      revision: an.revision,
      duration_ms: an.durationMs,
      started_at: a.startedAt,
      submitted_at: a.submittedAt,
      annotated_at: an.createdAt,
      stale_at: an.staleAt,
    })
    .from(an)
    .innerJoin(a, eq(a.id, an.assignmentId))
    .innerJoin(u, eq(u.id, a.unitId))
    .innerJoin(t, eq(t.id, u.taskId))
    .innerJoin(i, eq(i.id, u.itemId))
    .innerJoin(usr, eq(usr.id, a.annotatorId))
    .leftJoin(c, eq(c.id, u.checklistItemId))
    .where(
      and(
        eq(t.projectId, projectId),
        unitFilter,
        sql`${an.revision} = (select max(an2.revision) from annotations an2 where an2.assignment_id = ${an.assignmentId})`,
        submittedOnly ? eq(an.status, "submitted") : undefined,
      ),
    )
    .orderBy(asc(t.id), asc(u.position), asc(u.id), asc(byText(d, usr.name)), asc(usr.id))) as AnnotationRow[];
}

/**
 * The annotations of one task, a window of units at a time: the next window starts after the last
 * unit's (position, id), the order the units_task_idx index keeps, so each window is one range read.
 */
async function* annotationWindows(d: Dal, projectId: number, taskId: number, submittedOnly = false): AsyncGenerator<AnnotationRow[]> {
  const u = d.t.units;
  let after: { position: number; id: number } | null = null;
  for (;;) {
    const window: { position: number; id: number }[] = await d.q
      .select({ position: u.position, id: u.id })
      .from(u)
      .where(and(eq(u.taskId, taskId), after ? sql`(${u.position}, ${u.id}) > (${after.position}, ${after.id})` : undefined))
      .orderBy(asc(u.position), asc(u.id))
      .limit(EXPORT_WINDOWS.units);
    if (window.length === 0) return;
    const rows = await annotationRows(
      d,
      projectId,
      inArray(
        u.id,
        window.map((w) => w.id),
      ),
      submittedOnly,
    );
    if (rows.length > 0) yield rows;
    if (window.length < EXPORT_WINDOWS.units) return;
    after = window[window.length - 1];
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

async function* annotations(d: Dal, projectId: number): AsyncGenerator<Row[]> {
  for (const taskId of await taskIds(d, projectId))
    for await (const rows of annotationWindows(d, projectId, taskId)) yield rows.map(annotationExportRow);
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
async function* agreement(d: Dal, projectId: number): AsyncGenerator<Row[]> {
  for (const taskId of await taskIds(d, projectId)) {
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
async function judgeTasks(d: Dal, projectId: number, opts: JudgeExportOptions) {
  const t = d.t.tasks;
  const tasks = await d.q.select({ id: t.id }).from(t).where(eq(t.projectId, projectId)).orderBy(asc(t.id));
  const pages = [];
  for (const task of tasks)
    pages.push(
      await judgeAgreementFor(projectId, task.id, {
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

async function judgeAgreement(d: Dal, projectId: number, opts: JudgeExportOptions): Promise<Row[]> {
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

async function judgeConfusion(d: Dal, projectId: number, opts: JudgeExportOptions): Promise<Row[]> {
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

/**
 * Responses and their verdicts, dataset by dataset (in name and version order), a window of items
 * at a time (keyset on the item id), their responses in windows of EXPORT_WINDOWS.responses.
 */
async function* runs(d: Dal, projectId: number): AsyncGenerator<Row[]> {
  const { responses: r, items: i, datasets: ds } = d.t;
  const sets = await d.q
    .select({ id: ds.id })
    .from(ds)
    .where(eq(ds.projectId, projectId))
    .orderBy(asc(byText(d, ds.name)), asc(ds.version));
  for (const set of sets) {
    let afterItem = 0;
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
      const responseIds = (
        await d.q
          .select({ id: r.id })
          .from(r)
          .where(and(inArray(r.itemId, itemIds), visible(r.pendingImportId)))
          .orderBy(asc(r.itemId), asc(r.id))
      ).map((x) => x.id);
      for (let k = 0; k < responseIds.length; k += EXPORT_WINDOWS.responses) {
        const rows = await runRows(d, projectId, inArray(r.id, responseIds.slice(k, k + EXPORT_WINDOWS.responses)));
        if (rows.length > 0) yield rows;
      }
      if (itemIds.length < EXPORT_WINDOWS.items) break;
      afterItem = itemIds[itemIds.length - 1];
    }
  }
}

/**
 * An export's rows, a window at a time: the annotations a window of units, the runs a window of
 * responses, agreement a task, the judge exports the whole (one row per task and judge, or label pair).
 * A page, `npm run export` and the tests all read through this one function.
 */
export async function* exportWindows(
  db: DalLike,
  projectId: number,
  what: ExportKind,
  opts: JudgeExportOptions = {},
): AsyncGenerator<Row[]> {
  const d = dalOf(db);
  switch (what) {
    case "annotations":
      return yield* annotations(d, projectId);
    case "agreement":
      return yield* agreement(d, projectId);
    case "judge-agreement":
      yield await judgeAgreement(d, projectId, opts);
      return;
    case "judge-confusion":
      yield await judgeConfusion(d, projectId, opts);
      return;
    case "runs":
      return yield* runs(d, projectId);
  }
}

/** Every row of an export (for tests and comparisons; downloads stream exportChunks instead). */
export async function exportRows(db: DalLike, projectId: number, what: ExportKind, opts: JudgeExportOptions = {}): Promise<Row[]> {
  const out: Row[] = [];
  for await (const rows of exportWindows(db, projectId, what, opts)) for (const row of rows) out.push(row);
  return out;
}

/**
 * An export as text, a window at a time: the CSV header first (CSV), then each window's rows as CSV
 * (formula cells escaped: app/formats/csv.ts) or JSONL. `onRows` hears how many rows each window had.
 */
export async function* exportChunks(
  db: DalLike,
  projectId: number,
  what: ExportKind,
  format: ExportFormat,
  opts: JudgeExportOptions = {},
  onRows?: (n: number) => void,
): AsyncGenerator<string> {
  const columns = COLUMNS[what];
  if (format === "csv") yield toCsv([columns]) + "\n";
  for await (const rows of exportWindows(db, projectId, what, opts)) {
    if (rows.length === 0) continue;
    onRows?.(rows.length);
    yield format === "jsonl"
      ? rows.map((r) => JSON.stringify(Object.fromEntries(columns.map((c) => [c, r[c] ?? null])))).join("\n") + "\n"
      : toCsv(rows.map((r) => columns.map((c) => r[c]))) + "\n";
  }
}

export async function exportToString(
  db: DalLike,
  projectId: number,
  what: ExportKind,
  format: ExportFormat,
  opts: JudgeExportOptions = {},
): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of exportChunks(db, projectId, what, format, opts)) parts.push(chunk);
  return parts.join("");
}
