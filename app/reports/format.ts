/**
 * Fixed display precision for report figures (pages), the CSV form of a
 * report table (full precision, CIs as two columns, formula cells escaped by
 * app/formats/csv.ts), and its LaTeX form for a paper (display precision, booktabs).
 */
import { toCsv } from "~/formats/csv";
import type { Column, ColumnKind, ReportTable, Row } from "./types";

const num = (v: unknown): number | null => (typeof v === "number" ? v : null);

export function formatNumber(kind: ColumnKind, v: number): string {
  if (!Number.isFinite(v)) return "n/a";
  switch (kind) {
    case "int":
      return String(Math.round(v));
    case "pct":
      return `${(100 * v).toFixed(1)}%`;
    case "num":
      return v.toFixed(2);
    case "ms":
      return `${(v / 1000).toFixed(1)} s`;
    case "p":
      return v < 0.001 ? "<0.001" : v.toFixed(3);
    default:
      return v.toFixed(3);
  }
}

/** The kind a CI column is shown in: that of the figure it belongs to (the column before it). */
export function ciKind(columns: Column[], index: number): ColumnKind {
  for (let i = index - 1; i >= 0; i--) if (columns[i].kind !== "ci") return columns[i].kind === "int" ? "coef" : columns[i].kind;
  return "coef";
}

export function formatCell(columns: Column[], index: number, row: Row): string {
  const col = columns[index];
  const v = row[col.key];
  if (v === null || v === undefined) return "—";
  if (col.kind === "ci") {
    if (!Array.isArray(v)) return "—";
    const k = ciKind(columns, index);
    return `[${formatNumber(k, v[0])}, ${formatNumber(k, v[1])}]`;
  }
  if (col.kind === "flag") return v === true ? (col.key === "small" ? "small n" : "yes") : "";
  if (col.kind === "text" || col.kind === "link") return String(v);
  const n = num(v);
  return n === null ? String(v) : formatNumber(col.kind, n);
}

export function tableToCsv(table: ReportTable): string {
  const header: string[] = [];
  table.columns.forEach((c, i) => {
    if (c.kind !== "ci") return void header.push(c.label);
    // Name the CI after the figure it belongs to (the column before it), so headers are unique.
    const of = i > 0 && table.columns[i - 1].kind !== "ci" ? `${table.columns[i - 1].label} ` : "";
    header.push(`${of}${c.label} low`, `${of}${c.label} high`);
  });
  const rows = table.rows.map((row) => {
    const out: (string | number | boolean | null)[] = [];
    for (const c of table.columns) {
      const v = row[c.key];
      if (c.kind === "ci") {
        if (Array.isArray(v)) out.push(v[0], v[1]);
        else out.push(null, null);
      } else if (Array.isArray(v)) out.push(v.join(" "));
      else if (typeof v === "number" && !Number.isFinite(v)) out.push("NaN");
      else out.push(v ?? null);
    }
    return out;
  });
  return toCsv([header, ...rows], { newline: "\r\n" });
}

const LATEX_SPECIAL: Record<string, string> = {
  "\\": "\\textbackslash{}",
  "&": "\\&",
  "%": "\\%",
  $: "\\$",
  "#": "\\#",
  _: "\\_",
  "{": "\\{",
  "}": "\\}",
  "~": "\\textasciitilde{}",
  "^": "\\textasciicircum{}",
  "<": "\\textless{}",
  ">": "\\textgreater{}",
};
/** Characters of report labels that plain pdfLaTeX (utf8 input, no extra packages) cannot set as text. */
const LATEX_UNICODE: Record<string, string> = {
  "—": "---",
  "–": "--",
  "−": "$-$",
  "±": "$\\pm$",
  "×": "$\\times$",
  "·": "$\\cdot$",
  "≥": "$\\geq$",
  "≤": "$\\leq$",
  "→": "$\\rightarrow$",
  δ: "$\\delta$",
  κ: "$\\kappa$",
  α: "$\\alpha$",
  ρ: "$\\rho$",
  τ: "$\\tau$",
  "√": "$\\surd$",
  "“": "``",
  "”": "''",
  "’": "'",
};

/** Text as LaTeX: special characters escaped, the few non-ASCII symbols of report labels as math. */
export function latexEscape(text: string): string {
  return text.replace(/[\\&%$#_{}~^<>]/g, (c) => LATEX_SPECIAL[c]).replace(/[—–−±×·≥≤→δκαρτ√“”’]/g, (c) => LATEX_UNICODE[c]);
}

/**
 * A report table as a LaTeX booktabs table for a paper, at the page's display
 * precision (the CSV has full precision). Link columns are left out; the
 * table's note becomes a comment. Needs \usepackage{booktabs}.
 */
export function tableToLatex(table: ReportTable, source: string): string {
  const keep = table.columns.map((c, i) => ({ c, i })).filter(({ c }) => c.kind !== "link");
  const align = keep.map(({ c }) => (c.kind === "text" || c.kind === "flag" ? "l" : "r")).join("");
  const line = (cells: string[]) => `${cells.join(" & ")} \\\\`;
  const comment = (text: string) => text.split("\n").map((l) => `% ${l}`);
  return [
    `% ${table.title}: from Concord (${source}). Needs \\usepackage{booktabs}.`,
    ...(table.note ? comment(table.note) : []),
    "\\begin{table}[t]",
    "\\centering",
    `\\caption{${latexEscape(table.title)}}`,
    `\\label{tab:concord-${table.id.replace(/[^a-z0-9-]/gi, "-")}}`,
    `\\begin{tabular}{${align}}`,
    "\\toprule",
    line(keep.map(({ c }) => latexEscape(c.label))),
    "\\midrule",
    ...table.rows.map((row) => line(keep.map(({ i }) => latexEscape(formatCell(table.columns, i, row))))),
    "\\bottomrule",
    "\\end{tabular}",
    "\\end{table}",
    "",
  ].join("\n");
}
