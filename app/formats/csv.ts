/**
 * The one CSV writer of every download (the exports, `npm run export`, the report tables and the
 * judge page's table): RFC 4180 quoting by papaparse, with spreadsheet formula injection escaped.
 *
 * A spreadsheet program (Excel, LibreOffice Calc, Google Sheets) reads a cell that begins with
 * `=`, `+`, `-`, `@`, TAB or CR as a formula, so a model response such as `=HYPERLINK("http://x","y")`
 * would run when a researcher opens the file. Such a text cell gets a leading `'` (which the
 * spreadsheet takes as "this is text") and is quoted: the OWASP "CSV Injection" rule, and OWASP
 * ASVS 5.0 requirement 1.2.10, which adds the NUL character to the list.
 *
 * Numbers are never escaped: a JavaScript number is written as it is (papaparse leaves numbers
 * alone), and a text cell that is exactly a decimal number (`-0.12`, `+1`, `1e-5`) is left as it
 * is too, since a spreadsheet reads it as that number and nothing else. So a numeric column,
 * negative values and all, still loads in `pandas.read_csv` as a numeric column.
 */
import Papa from "papaparse";

/** A text cell a spreadsheet would read as a formula: a trigger character first, unless the whole cell is a number. */
export const FORMULA_CELL = /^(?![-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$)[=+\-@\t\r\0]/;

/** What a cell may hold: null and undefined are empty; a number that is not finite is empty too. */
export type CsvCell = string | number | boolean | null | undefined;

const cell = (v: unknown): unknown => (typeof v === "number" && !Number.isFinite(v) ? null : v);

/**
 * Rows (arrays of cells, the header row first when there is one) as CSV text, formula cells
 * escaped. Lines end with `newline` ("\n" unless told); no line end after the last row.
 */
export function toCsv(rows: readonly (readonly unknown[])[], opts: { newline?: string } = {}): string {
  return Papa.unparse(
    rows.map((r) => r.map(cell)),
    { newline: opts.newline ?? "\n", escapeFormulae: FORMULA_CELL },
  );
}

/** Objects as CSV: a header of the first object's keys, then one row per object (empty text for none). */
export function objectsToCsv(rows: readonly Record<string, unknown>[], opts: { newline?: string } = {}): string {
  if (rows.length === 0) return "";
  const keys = Object.keys(rows[0]);
  return toCsv([keys, ...rows.map((r) => keys.map((k) => r[k]))], opts);
}
