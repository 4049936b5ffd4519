/**
 * Problems found while importing a file. Every problem names where it is
 * (`row`: the spreadsheet row with the header as row 1 for CSV, the line
 * number for JSONL, the record number for a JSON array), the field, and why.
 */
export type Problem = {
  /** Spreadsheet row (CSV, header = 1), line (JSONL) or record number (JSON); 0 = the whole file. */
  row: number;
  field?: string;
  message: string;
};

/** A file the importer refuses outright (empty, binary, not UTF-8, unparseable). */
export class ImportRefusal extends Error {
  constructor(
    message: string,
    readonly problem: Problem = { row: 0, message },
  ) {
    super(message);
    this.name = "ImportRefusal";
  }
}

/** A bad request rather than a bad file (an unknown preset, a flag missing): the command line exits 2. */
export class ImportUsageError extends Error {}

/**
 * Why JSON.parse refused a text, in words that never quote it: V8's own message quotes the
 * text ("Unexpected token 'x', \"...\" is not valid JSON"), and the text may hold secrets.
 */
export function jsonSyntaxReason(err: unknown, of = ""): { cutOff: boolean; reason: string } {
  const msg = String((err as Error | undefined)?.message ?? "");
  if (/end of (JSON|data) input|Unterminated string/i.test(msg)) return { cutOff: true, reason: "the JSON is cut off before it ends" };
  const pos = /at position (\d+)/.exec(msg);
  return { cutOff: false, reason: pos ? `not valid JSON (at character ${Number(pos[1]) + 1}${of ? ` of ${of}` : ""})` : "not valid JSON" };
}

export function formatProblem(p: Problem): string {
  const where = p.row > 0 ? `row ${p.row}` : "file";
  return p.field ? `${where}, field "${p.field}": ${p.message}` : `${where}: ${p.message}`;
}
