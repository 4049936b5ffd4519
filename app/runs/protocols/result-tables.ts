/**
 * A protocol's result tables as data: each protocol turns one judge's results into
 * blocks (tables, notes, the table beside its figure) on the server, and the results
 * page renders any protocol's blocks the same way (./views/index.tsx). Pure: no React,
 * no zod, so the page's JavaScript holds no protocol code.
 */

/** A line of small print beside or under a cell's value (class names of the app's stylesheet). */
export type CellNote = { text: string; className: string };

/**
 * One cell: its value as text, optionally with a note after it on the same line
 * (`aside`) and one under it (`below`). `className` replaces its column's class;
 * `bold` sets the value in bold; `colSpan` spans columns.
 */
export type Cell =
  string | number | { text: string | number; aside?: CellNote; below?: CellNote; className?: string; bold?: boolean; colSpan?: number };

/** A column: its header and the class of its cells ("num" for figures, none for text). */
export type ResultColumn = { header: string; className?: string };

export type ResultRow = { key: string; cells: Cell[] };

/**
 * A table: a title (a heading over it), its header row (none when `columns` is null) and its rows. `id` names it
 * in its CSV and LaTeX downloads and in the run-results export's `table` column (app/runs/results-export.server.ts).
 */
export type ResultTable = { id?: string; title?: string; columns: ResultColumn[] | null; rows: ResultRow[] };

/** What the results page shows for one judge, in order. `figure`: the table beside the protocol's figure (left out when there is none). */
export type ResultBlock =
  { kind: "table"; table: ResultTable } | { kind: "figure"; table: ResultTable } | { kind: "note"; text: string; className: string };

/** One decimal, "—" for a value that cannot be computed (no instance scored). */
export const f1 = (x: number | null | undefined) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(1) : "—");
/** Two decimals, "—" when absent. */
export const f2 = (x: number | null | undefined) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(2) : "—");
/** Three decimals, "—" when absent. */
export const f3 = (x: number | null | undefined) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(3) : "—");

/** A column of a per-model table: its header, the cell for one model's row, and whether it holds text (else figures, right-aligned). */
export type ModelColumn<M> = { header: string; cell: (m: M) => Cell; text?: boolean };

/** A table with one row per model: the model's name, then one cell per column. */
export function modelTable<M extends { model: string }>(rows: readonly M[], columns: ModelColumn<M>[], title?: string): ResultTable {
  return {
    title,
    columns: [{ header: "Model" }, ...columns.map((c) => ({ header: c.header, className: c.text ? undefined : "num" }))],
    rows: rows.map((m) => ({ key: m.model, cells: [m.model, ...columns.map((c) => c.cell(m))] })),
  };
}
