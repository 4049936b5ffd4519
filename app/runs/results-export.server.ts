/**
 * A run's results as data a paper author takes away: every table of the run's results page (the protocol's
 * tables for each judge, and each calibration task's raw vs corrected table) as tidy long rows, one figure a
 * row at full precision, with a `table` column naming the page table it belongs to — the `run-results`
 * export (app/formats/export.server.ts, `npm run export -- --what run-results --run N`, the API) — and each
 * table as a LaTeX booktabs table at the page's precision (the page's "LaTeX" link under each table).
 *
 * One function reads the run (runResultTables): the results page's tables (Protocol.tables over
 * ./project-runs.server runResultsReport, the page's own report), the export's rows and the per-table downloads all
 * come from it, so a figure in the file is the figure on the page.
 *
 * Columns (stable; new columns are only ever added at the end):
 *   run_id, run, protocol, judge, table, model, group, turn, metric, estimate, value, ci_low, ci_high, n,
 *   failed, unparsed, pending, note
 * `estimate` is "judge" (a figure from the judge's verdicts) or "corrected" (the calibration's bias-corrected
 * estimate from the human labels); `group` is the breakdown (dataset, task type, feedback type, …); `turn`
 * the turn of a per-turn figure; `n`, `failed`, `unparsed`, `pending` the counts behind the figure where the
 * page shows them. A corrected figure with no interval (too few labels) or an exact one (every unit labelled)
 * has empty ci columns and says why in `note`: an interval of zero width is never given as a result.
 */
import { dalOf, type DalLike } from "~/dal.server";
import { latexEscape } from "~/reports/format";
import type { CalibrationReport } from "./calibration.server";
import { runResultsReport } from "./project-runs.server";
import { PROTOCOLS } from "./protocols";
import type { Cell, ResultBlock, ResultTable } from "./protocols/result-tables";
import { f3 } from "./protocols/result-tables";
import type { c3eBenchResults } from "./protocols/c3ebench";
import type { fbBenchResults } from "./protocols/fb-bench";
import type { refineBenchResults } from "./protocols/refinebench";
import type { selfCorrectionResults } from "./protocols/self-correction";
import { runRow, type RunResults } from "./results.server";

export const RUN_RESULT_COLUMNS = [
  "run_id",
  "run",
  "protocol",
  "judge",
  "table",
  "model",
  "group",
  "turn",
  "metric",
  "estimate",
  "value",
  "ci_low",
  "ci_high",
  "n",
  "failed",
  "unparsed",
  "pending",
  "note",
] as const;

export type RunResultRow = Record<(typeof RUN_RESULT_COLUMNS)[number], string | number | null>;

/** One figure, before the run's columns are added. */
type Figure = {
  model?: string | null;
  group?: string | null;
  turn?: number | null;
  metric: string;
  estimate?: "judge" | "corrected";
  value: number | null;
  ci?: readonly [number, number] | readonly number[] | null;
  n?: number | null;
  failed?: number | null;
  unparsed?: number | null;
  pending?: number | null;
  note?: string | null;
};

/** A table of the results page: its id (as in its download links), its judge, its title, what the page shows, and its figures. */
export type RunResultTable = {
  id: string;
  judge: string;
  judgeId: number | null;
  title: string;
  display: ResultTable;
  figures: Figure[];
};

const num = (x: number | null | undefined): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);

type Rb = ReturnType<typeof refineBenchResults>;
type Fb = ReturnType<typeof fbBenchResults>;
type C3 = ReturnType<typeof c3eBenchResults>;
type Sc = ReturnType<typeof selfCorrectionResults>;

/** RefineBench (§3.3): Pass_t by turn (the figure's table), Acc_t / Pass_t with their counts, Δ, termination, transitions. */
function refineBenchFigures(r: Rb): Record<string, Figure[]> {
  const perTurn = (metric: "acc" | "pass") =>
    r.metrics.flatMap((m) =>
      m.turns.map((t): Figure => ({
        model: m.model,
        turn: t.turn,
        metric: metric === "acc" ? "Acc" : "Pass",
        value: num(t[metric]),
        n: t.n,
        failed: t.failed,
        unparsed: t.unparsed,
        pending: t.pending,
      })),
    );
  const known = r.metrics.flatMap((m) =>
    m.turns.flatMap((t): Figure[] =>
      t.accKnown === undefined
        ? []
        : [
            { model: m.model, turn: t.turn, metric: "Acc (known checklist items)", value: num(t.accKnown) },
            { model: m.model, turn: t.turn, metric: "Acc (unknown checklist items)", value: num(t.accUnknown) },
          ],
    ),
  );
  return {
    "pass-by-turn": perTurn("pass"),
    "acc-pass": [
      ...perTurn("acc"),
      ...perTurn("pass"),
      ...known,
      ...r.metrics.flatMap((m): Figure[] => [
        { model: m.model, metric: "Delta (Pass_T - Pass_1)", value: num(m.delta) },
        {
          model: m.model,
          metric: "Mean termination turn",
          value: num(m.termination.mean),
          n: Object.values(m.termination.byTurn).reduce((a, b) => a + b, 0),
          note: m.termination.never ? `${m.termination.never} never terminated` : null,
        },
      ]),
    ],
    transitions: r.metrics.flatMap((m) =>
      (
        [
          ["correctToCorrect", "correct->correct"],
          ["correctToIncorrect", "correct->incorrect"],
          ["incorrectToCorrect", "incorrect->correct"],
          ["incorrectToIncorrect", "incorrect->incorrect"],
        ] as const
      ).map(([k, metric]): Figure => ({ model: m.model, metric, value: m.transitions[k] })),
    ),
  };
}

/** FB-Bench (§3.3): error correction, response maintenance and overall per model, and the breakdowns, under the run's maintenance rule. */
function fbBenchFigures(r: Fb): Record<string, Figure[]> {
  const rule = `rule: ${r.rule}`;
  const breakdown = (k: "byTask" | "byFeedbackType" | "byDeficiencyType") =>
    r.metrics.flatMap((m) =>
      Object.entries(m[k]).map(([g, c]): Figure => ({
        model: m.model,
        group: g,
        metric: "Mean score",
        value: num(c.mean),
        n: c.n,
        note: rule,
      })),
    );
  return {
    scores: r.metrics.flatMap((m): Figure[] => [
      { model: m.model, metric: "Error correction", value: num(m.errorCorrection.mean), n: m.errorCorrection.n },
      { model: m.model, metric: "Response maintenance", value: num(m.responseMaintenance.mean), n: m.responseMaintenance.n, note: rule },
      { model: m.model, metric: "Overall", value: num(m.overall), failed: m.failed, unparsed: m.unparsed, note: rule },
    ]),
    "by-task": breakdown("byTask"),
    "by-feedback-type": breakdown("byFeedbackType"),
    "by-deficiency-type": breakdown("byDeficiencyType"),
  };
}

/** C3EBench: the judge's mean score per model and task type, and overall. */
function c3eBenchFigures(r: C3): Record<string, Figure[]> {
  return {
    scores: r.metrics.flatMap((m): Figure[] => [
      ...Object.entries(m.byTask).map(([t, c]): Figure => ({ model: m.model, group: t, metric: "Mean score", value: num(c.mean), n: c.n })),
      { model: m.model, metric: "Overall", value: num(m.overall), n: m.n, failed: m.failed, unparsed: m.unparsed },
    ]),
  };
}

/** Self-Correction Bench: accuracy per model, dataset and condition (Wilson 95% CI), the blind spot (Eq. 2), macro averages, correction markers. */
function selfCorrectionFigures(r: Sc): Record<string, Figure[]> {
  const rows: Figure[] = [];
  for (const m of r.metrics) {
    for (const d of m.datasets) {
      for (const [c, a] of Object.entries(d.byCondition)) {
        if (!a) continue;
        rows.push({
          model: m.model,
          group: d.dataset,
          metric: `Accuracy (${c})`,
          value: num(a.mean),
          ci: a.ci,
          n: a.n,
          failed: a.failed,
          unparsed: a.unparsed,
          note: "95% Wilson score interval",
        });
      }
      if (d.blindSpot)
        rows.push({
          model: m.model,
          group: d.dataset,
          metric: "Blind spot",
          value: num(d.blindSpot.value),
          ci: d.blindSpot.ci,
          note: `95% CI by the delta method${d.blindSpot.clipped ? "; upper end clipped at 1" : ""}`,
        });
    }
    for (const [k, v] of Object.entries(m.macro))
      rows.push({ model: m.model, group: "macro average", metric: k === "blindSpot" ? "Blind spot" : `Accuracy (${k})`, value: num(v) });
    for (const [c, counts] of Object.entries(m.markers))
      for (const [k, n] of Object.entries(counts)) rows.push({ model: m.model, group: c, metric: `Correction marker "${k}"`, value: n });
  }
  return { accuracy: rows };
}

const FIGURES: Record<string, (r: never) => Record<string, Figure[]>> = {
  refinebench: refineBenchFigures,
  "fb-bench": fbBenchFigures,
  c3ebench: c3eBenchFigures,
  "self-correction": selfCorrectionFigures,
};

/** A table's id as its download links and the export's `table` column name it. */
const tableIdOf = (t: ResultTable, index: number) => t.id ?? `table-${index + 1}`;

/** One judge's page tables (the protocol's blocks that are tables) with their figures. */
function judgeTables(r: RunResults, blocks: ResultBlock[] | null): RunResultTable[] {
  const tables = (blocks ?? []).flatMap((b) => (b.kind === "note" ? [] : [b.table]));
  const figures = r.metrics && FIGURES[r.protocol] ? FIGURES[r.protocol](r as never) : {};
  return tables.map((t, i) => {
    const id = tableIdOf(t, i);
    return { id, judge: r.judge, judgeId: r.judgeId, title: t.title ?? TITLES[id] ?? id, display: t, figures: figures[id] ?? [] };
  });
}

/** Titles of the tables the page shows without a heading. */
const TITLES: Record<string, string> = {
  "pass-by-turn": "Pass_t by turn",
  "acc-pass": "Acc_t / Pass_t by turn",
  scores: "Scores per model",
  accuracy: "Accuracy per model, dataset and condition",
};

/** The calibration table of the results page (raw vs corrected), its display at the page's precision. */
function calibrationTable(taskId: number, name: string, judge: string, report: CalibrationReport): RunResultTable {
  const figures: Figure[] = [];
  const rows: ResultTable["rows"] = [];
  report.metrics.forEach((m, i) => {
    figures.push({ model: m.model, group: m.group, metric: m.metric, estimate: "judge", value: num(m.raw), note: m.note });
    const c = m.corrected;
    const zeroWidth = !c || !(c.ci[0] < c.ci[1]);
    figures.push({
      model: m.model,
      group: m.group,
      metric: m.metric,
      estimate: "corrected",
      value: c ? num(c.estimate) : null,
      ci: zeroWidth ? null : c.ci,
      n: c?.n ?? 0,
      note:
        [
          !c ? "too few labels" : c.exact ? "exact: every unit labelled" : zeroWidth ? "interval of zero width: not estimable" : null,
          m.note,
        ]
          .filter(Boolean)
          .join("; ") || null,
    });
    const ciText = !c ? "too few labels" : c.exact ? "exact" : zeroWidth ? "—" : `[${f3(c.ci[0])}, ${f3(c.ci[1])}]`;
    rows.push({
      key: String(i),
      cells: [m.metric, m.model, m.group ?? "", f3(m.raw), c ? f3(c.estimate) : "—", ciText, c?.n ?? 0] as Cell[],
    });
  });
  return {
    id: `calibration-${taskId}`,
    judge,
    judgeId: null,
    title: `Calibrated against human labels: ${name}`,
    display: {
      title: `Calibrated against human labels: ${name}`,
      columns: [
        { header: "Metric" },
        { header: "Model" },
        { header: "Group" },
        { header: "Judge (raw)", className: "num" },
        { header: "Corrected", className: "num" },
        { header: "95% CI", className: "num" },
        { header: "Labelled", className: "num" },
      ],
      rows,
    },
    figures,
  };
}

export type RunResultsExport = {
  run: { id: number; name: string; protocol: string };
  tables: RunResultTable[];
};

/**
 * Every table of the run's results page, in the page's order (each judge's protocol tables, then each
 * calibration task's table), with its figures; null when the project has no such run.
 */
export async function runResultTables(db: DalLike, projectId: number, runId: number): Promise<RunResultsExport | null> {
  const d = dalOf(db);
  const run = await runRow(d, projectId, runId);
  if (!run) return null;
  const protocol = PROTOCOLS[run.protocol];
  // The results page's report (app/runs/project-runs.server.ts): every judge's results, then each calibration task's.
  const report = await runResultsReport(d, run, projectId);
  const tables: RunResultTable[] = [];
  for (const r of report.judges)
    tables.push(...judgeTables(r, r.metrics && protocol?.tables ? protocol.tables(r as never, r.judge) : null));
  for (const c of report.calibration)
    if (c.report) tables.push(calibrationTable(c.taskId, c.name, report.judges[0]?.judge ?? "", c.report));
  return { run: { id: run.id, name: run.name, protocol: run.protocol }, tables };
}

/** The tidy rows of some tables of a run (all of them unless `only` picks one by id and judge). */
export function runResultRows(x: RunResultsExport, only?: { table: string; judgeId?: number | null }): RunResultRow[] {
  const out: RunResultRow[] = [];
  for (const t of x.tables) {
    if (only && (t.id !== only.table || (only.judgeId != null && t.judgeId !== only.judgeId))) continue;
    for (const f of t.figures) {
      const ci = f.ci && f.ci.length === 2 && Number.isFinite(f.ci[0]) && Number.isFinite(f.ci[1]) ? f.ci : null;
      out.push({
        run_id: x.run.id,
        run: x.run.name,
        protocol: x.run.protocol,
        judge: t.judge,
        table: t.id,
        model: f.model ?? null,
        group: f.group ?? null,
        turn: f.turn ?? null,
        metric: f.metric,
        estimate: f.estimate ?? "judge",
        value: f.value,
        ci_low: ci ? ci[0] : null,
        ci_high: ci ? ci[1] : null,
        n: f.n ?? null,
        failed: f.failed ?? null,
        unparsed: f.unparsed ?? null,
        pending: f.pending ?? null,
        note: f.note ?? null,
      });
    }
  }
  return out;
}

/** A cell's text as the page shows it (its value; its notes go into the comments under the table). */
const cellText = (c: Cell): string => (typeof c === "object" ? String(c.text) : String(c));
const cellNotes = (c: Cell): string[] => (typeof c === "object" ? [c.aside?.text, c.below?.text].filter((x): x is string => !!x) : []);

/**
 * A table of the results page as a LaTeX booktabs table at the page's precision (needs \usepackage{booktabs}).
 * What the page prints beside or under a figure (counts, notes) follows the table as comments, by row and column.
 */
export function runResultTableLatex(x: RunResultsExport, t: RunResultTable, source: string): string {
  const cols = t.display.columns;
  const width = Math.max(
    cols?.length ?? 0,
    ...t.display.rows.map((r) => r.cells.reduce((n: number, c: Cell) => n + (typeof c === "object" ? (c.colSpan ?? 1) : 1), 0)),
  );
  const align = Array.from({ length: width }, (_, i) => (i === 0 || !cols?.[i]?.className?.includes("num") ? "l" : "r")).join("");
  const line = (cells: string[]) => `${cells.join(" & ")} \\\\`;
  const notes: string[] = [];
  const body = t.display.rows.map((r) => {
    const cells: string[] = [];
    r.cells.forEach((c, i) => {
      const span = typeof c === "object" ? (c.colSpan ?? 1) : 1;
      const text = latexEscape(cellText(c));
      cells.push(span > 1 ? `\\multicolumn{${span}}{l}{${text}}` : text);
      for (const n of cellNotes(c)) notes.push(`% ${cellText(r.cells[0])}, ${cols?.[i]?.header ?? `column ${i + 1}`}: ${n}`);
    });
    return line(cells);
  });
  const caption = `${t.title} (run ${x.run.name}, judge ${t.judge})`;
  return [
    `% ${caption}: from Concord (${source}). Needs \\usepackage{booktabs}.`,
    "\\begin{table}[t]",
    "\\centering",
    `\\caption{${latexEscape(caption)}}`,
    `\\label{tab:concord-run-${x.run.id}-${t.id.replace(/[^a-z0-9-]/gi, "-")}${t.judgeId != null ? `-j${t.judgeId}` : ""}}`,
    `\\begin{tabular}{${align}}`,
    "\\toprule",
    ...(cols ? [line(cols.map((c) => latexEscape(c.header))), "\\midrule"] : []),
    ...body,
    "\\bottomrule",
    "\\end{tabular}",
    "\\end{table}",
    ...notes.map((n) => n.replace(/\n/g, " ")),
    "",
  ].join("\n");
}
