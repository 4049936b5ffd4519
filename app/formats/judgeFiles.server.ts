/**
 * A team's own files for judge–human agreement, read without a database: a labels file
 * (wide: a unit column plus the annotator columns named; long: unit, annotator, label)
 * and a verdicts file (long: unit, judge, verdict), each CSV, JSONL or a JSON array.
 * Column names resolve as in the import presets (aliases, or a mapping field=column: `--map`
 * for both files, `--labels-map` / `--verdicts-map` for one, which wins over `--map`).
 * Every problem is a {@link JudgeFileError} naming the file, row and field.
 *
 * Missing values, as the tools that write these files write them: in CSV an empty cell, `NA` or
 * `N/A` (pandas' to_csv writes a missing value as an empty cell, R's write.csv as NA) is missing —
 * a label not given, a verdict {@link MISSING}; in JSONL/JSON `null` (or no key) is missing and
 * `""` is an empty answer: no label, or an unparsed verdict (null).
 */
import fs from "node:fs";
import path from "node:path";
import type { FieldSpec } from "./presets/types";
import { isUtf8 } from "node:buffer";
import Papa from "papaparse";
import { ImportRefusal, jsonSyntaxReason } from "./problems";
import { CSV_MISSING_TOKENS, labelText, MISSING, type JudgeAgreementInput, type Verdict } from "~/reports/judgeAgreement";

export class JudgeFileError extends Error {}

/**
 * Which column each field reads: `--map field=column`, else the field's name or an alias
 * (case-insensitive), as the import presets resolve them. Throws an ImportRefusal naming
 * the missing field and the header.
 */
function resolveColumns(fields: FieldSpec[], header: string[], mapping: Mapping): Record<string, string | undefined> {
  const lower = new Map(header.map((h) => [h.toLowerCase(), h]));
  const out: Record<string, string | undefined> = {};
  for (const f of fields) {
    const mapped = mapping.columns[f.name];
    if (mapped) {
      const flag = `${mapping.flags[f.name] ?? "--map"} ${f.name}=${mapped}`;
      if (!header.includes(mapped))
        throw new ImportRefusal(flag, {
          row: 1,
          field: mapped,
          message: `${flag}: column "${mapped}" is not in the header (${header.join(", ")})`,
        });
      out[f.name] = mapped;
      continue;
    }
    out[f.name] = [f.name, ...f.aliases].map((a) => lower.get(a.toLowerCase())).find(Boolean);
    if (!out[f.name] && f.required) {
      throw new ImportRefusal(`missing column "${f.name}"`, {
        row: 1,
        field: f.name,
        message: `missing column "${f.name}" (also looked for ${f.aliases.join(", ")}; the header has: ${header.join(", ")}); map it with ${mapping.own} ${f.name}=COLUMN`,
      });
    }
  }
  return out;
}

const UNIT: FieldSpec = { name: "unit", aliases: ["unit_id", "item", "item_id", "id"], required: true, help: "what was labelled" };
export const LABEL_FIELDS: FieldSpec[] = [
  UNIT,
  { name: "annotator", aliases: ["annotator_name", "rater", "coder", "user"], required: true, help: "who labelled it" },
  { name: "label", aliases: ["value", "rating", "score", "answer"], required: true, help: "the label" },
];
export const VERDICT_FIELDS: FieldSpec[] = [
  UNIT,
  { name: "judge", aliases: ["judge_model", "evaluator", "judge_name"], required: true, help: "the judge's name" },
  { name: "verdict", aliases: ["value", "label", "prediction", "winner", "output"], required: true, help: "the judge's verdict" },
];

export type Table = { header: string[]; rows: { record: SourceRecord; row: number }[]; format: "csv" | "jsonl" | "json" };
/** One file's columns by field, and the flag each came from (for messages). */
type Mapping = { columns: Record<string, string>; flags: Record<string, string>; own: string };

/** `--map` (both files) overlaid by the file's own mapping (`--labels-map`, `--verdicts-map`). */
function mappingFor(shared: Record<string, string>, own: Record<string, string>, ownFlag: string): Mapping {
  const flags: Record<string, string> = {};
  for (const k of Object.keys(shared)) flags[k] = "--map";
  for (const k of Object.keys(own)) flags[k] = ownFlag;
  return { columns: { ...shared, ...own }, flags, own: ownFlag };
}
type SourceRecord = Record<string, unknown>;

/** Largest file read (the whole file is held in memory: label and verdict files are small). */
const MAX_BYTES = 512 * 1024 * 1024;

export function formatFromName(name: string): "csv" | "jsonl" | "json" | undefined {
  const lower = name.toLowerCase();
  if (/\.(csv|tsv|txt)$/.test(lower)) return "csv";
  if (/\.(jsonl|ndjson)$/.test(lower)) return "jsonl";
  if (/\.json$/.test(lower)) return "json";
  return undefined;
}

/**
 * Reads a CSV (header row; quoted fields, CRLF), JSONL or JSON-array file into records
 * with the row numbers a person sees (CSV: header = row 1; JSONL: line; JSON: record).
 * UTF-8 only (a BOM is dropped). The header is the CSV header, or every key seen in order.
 * Self-contained (papaparse only), so the command starts fast.
 */
export async function readTable(file: string, what: string): Promise<Table> {
  const format = formatFromName(file);
  const where = `${what} ${path.basename(file)}`;
  if (!format) throw new JudgeFileError(`${where}: name it .csv, .jsonl or .json so its format is known.`);
  let buf: Buffer;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_BYTES) throw new JudgeFileError(`${where}: the file is larger than ${MAX_BYTES / 1024 / 1024} MB.`);
    buf = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof JudgeFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new JudgeFileError(
      `${where}: ${code === "ENOENT" ? "no such file." : code === "EISDIR" ? "is a directory, not a file." : "cannot be read."}`,
    );
  }
  if (buf.length === 0) throw new JudgeFileError(`${where}: the file is empty (0 bytes).`);
  if (buf.includes(0)) throw new JudgeFileError(`${where}: this is not a text file (it contains NUL bytes).`);
  if (!isUtf8(buf)) throw new JudgeFileError(`${where}: the file is not UTF-8 text; save it as UTF-8 first.`);
  let text = buf.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const rows: Table["rows"] = [];
  const keys = new Map<string, true>();
  const add = (record: SourceRecord, row: number) => {
    for (const k of Object.keys(record)) keys.set(k, true);
    rows.push({ record, row });
  };
  const bad = (row: number, message: string): never => {
    throw new JudgeFileError(`${where}: row ${row}: ${message}`);
  };
  let header: string[] = [];
  if (format === "csv") {
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true, transformHeader: (h) => h.trim() });
    const e = parsed.errors.find((x) => x.code !== "UndetectableDelimiter");
    if (e) bad((e.row ?? 0) + 2, e.code === "MissingQuotes" ? "a quoted field is never closed (unbalanced quote)" : e.message);
    header = parsed.meta.fields ?? [];
    parsed.data.forEach((r, i) => add(r, i + 2));
  } else if (format === "jsonl") {
    text.split("\n").forEach((line, i) => {
      if (!line.trim()) return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (err) {
        // Never V8's message: it quotes the line, which may hold anything (a key, a password).
        const why = jsonSyntaxReason(err, "this line");
        bad(i + 1, why.cutOff ? "the JSON on this line is cut off before it ends" : why.reason);
      }
      if (v === null || typeof v !== "object" || Array.isArray(v)) bad(i + 1, "each line must hold one JSON object ({...})");
      add(v as SourceRecord, i + 1);
    });
  } else {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      const why = jsonSyntaxReason(err);
      const pos = Number(/at position (\d+)/.exec(String((err as Error).message))?.[1]);
      const at = Number.isFinite(pos) ? ` (line ${text.slice(0, pos).split("\n").length})` : "";
      throw new JudgeFileError(`${where}: ${why.cutOff ? "the JSON is cut off before it ends" : "not valid JSON"}${at}.`);
    }
    if (!Array.isArray(doc)) throw new JudgeFileError(`${where}: expected a JSON array of objects.`);
    doc.forEach((r, i) => {
      if (r === null || typeof r !== "object" || Array.isArray(r)) bad(i + 1, "each record must be a JSON object ({...})");
      add(r as SourceRecord, i + 1);
    });
  }
  if (rows.length === 0) throw new JudgeFileError(`${where}: no records.`);
  if (format !== "csv") header = [...keys.keys()];
  return { header, rows, format };
}

function columns(t: Table, fields: FieldSpec[], mapping: Mapping, where: string): Record<string, string | undefined> {
  try {
    return resolveColumns(fields, t.header, mapping);
  } catch (err) {
    if (err instanceof ImportRefusal) throw new JudgeFileError(`${where}: ${err.problem.message}`);
    throw err;
  }
}

const cellText = (v: unknown) => (v === null || v === undefined ? null : typeof v === "object" ? JSON.stringify(v) : String(v));

/** A CSV cell that holds a missing value: empty, or one of CSV_MISSING_TOKENS (after trimming). */
const csvMissing = (v: unknown) => {
  const t = typeof v === "string" ? v.trim() : v;
  return t === undefined || t === null || t === "" || CSV_MISSING_TOKENS.includes(t as string);
};

/** A verdict cell: CSV empty/NA/N/A and JSON null (or no key) → MISSING; JSON "" → null (an unparsed, empty answer); else the trimmed text. */
function verdictOf(raw: unknown, format: Table["format"]): Verdict {
  if (format === "csv" ? csvMissing(raw) : raw === null || raw === undefined) return MISSING;
  return cellText(raw)!.trim() || null;
}

/** A label cell: the label text, or null (not labelled: CSV empty/NA/N/A, JSON null or ""). */
function labelOf(raw: unknown, format: Table["format"]): string | null {
  if (format === "csv" && csvMissing(raw)) return null;
  return labelText(raw);
}

export interface JudgeFilesSummary {
  /** "wide" or "long". */
  labelsLayout: "wide" | "long";
  /** Annotator columns used (wide) or annotator names found (long). */
  annotatorColumns: string[];
  /** Columns of the labels file that were not read. */
  ignoredColumns: string[];
  /** Verdicts on units with no human label (not compared). */
  verdictsWithoutLabels: number;
  /** Unit keys in input order. */
  units: string[];
  /** With `group`: each unit's group (null where the file gives none), in units' order; and which file it was read from. */
  groups?: (string | null)[];
  groupFrom?: "LABELS" | "VERDICTS";
}

/**
 * Reads the two files into the input of `judgeAgreement`. `annotators` (wide form) names
 * the annotator columns; without it the labels file must be long (unit, annotator, label).
 */
export async function readJudgeFiles(o: {
  labels: string;
  verdicts: string;
  annotators?: string[];
  /** field → column for both files (`--map`). */
  mapping?: Record<string, string>;
  /** field → column for the labels file only (`--labels-map`; wins over `mapping`). */
  labelsMapping?: Record<string, string>;
  /** field → column for the verdicts file only (`--verdicts-map`; wins over `mapping`). */
  verdictsMapping?: Record<string, string>;
  /**
   * The column that forms pairs (`--group`: an instruction or prompt): read from the labels file,
   * or from the verdicts file when the labels file has no such column. A unit's group is one value.
   */
  group?: string;
}): Promise<{ input: JudgeAgreementInput; summary: JudgeFilesSummary }> {
  const mapping = mappingFor(o.mapping ?? {}, o.labelsMapping ?? {}, "--labels-map");
  const vmapping = mappingFor(o.mapping ?? {}, o.verdictsMapping ?? {}, "--verdicts-map");
  const lt = await readTable(o.labels, "LABELS");
  const lwhere = `LABELS ${path.basename(o.labels)}`;
  const unitIndex = new Map<string, number>();
  const units: string[] = [];
  const cells: Map<number, string | null>[] = [];
  const unitOf = (key: string) => {
    let u = unitIndex.get(key);
    if (u === undefined) {
      u = units.length;
      unitIndex.set(key, u);
      units.push(key);
      cells.push(new Map());
    }
    return u;
  };
  const unitKey = (rec: SourceRecord, col: string | undefined, row: number, where: string) => {
    const k = col ? cellText(rec[col])?.trim() : undefined;
    if (!k) throw new JudgeFileError(`${where}: row ${row}, field "${col ?? "unit"}": the unit is empty`);
    return k;
  };
  let annotators: string[];
  let ignored: string[];
  let layout: "wide" | "long";
  if (o.annotators && o.annotators.length) {
    layout = "wide";
    const cols = columns(lt, [UNIT], mapping, lwhere);
    const missing = o.annotators.filter((a) => !lt.header.includes(a));
    if (missing.length)
      throw new JudgeFileError(
        `${lwhere}: --annotators names ${missing.map((m) => `"${m}"`).join(", ")}, not in the file; its columns are: ${lt.header.join(", ")}`,
      );
    if (new Set(o.annotators).size !== o.annotators.length) throw new JudgeFileError(`${lwhere}: --annotators names a column twice.`);
    annotators = o.annotators;
    ignored = lt.header.filter((h) => h !== cols.unit && h !== o.group && !annotators.includes(h));
    const seen = new Map<string, number>();
    for (const { record, row } of lt.rows) {
      const key = unitKey(record, cols.unit, row, lwhere);
      if (seen.has(key))
        throw new JudgeFileError(
          `${lwhere}: row ${row}, field "${cols.unit}": unit "${key}" appears again (first at row ${seen.get(key)})`,
        );
      seen.set(key, row);
      const u = unitOf(key);
      annotators.forEach((a, i) => {
        const t = labelOf(record[a], lt.format);
        if (t !== null) cells[u].set(i, t);
      });
    }
  } else {
    layout = "long";
    let cols: Record<string, string | undefined>;
    try {
      cols = resolveColumns(LABEL_FIELDS, lt.header, mapping);
    } catch (err) {
      if (!(err instanceof ImportRefusal)) throw err;
      throw new JudgeFileError(
        `${lwhere}: ${err.problem.message}. A wide file (one column per annotator) needs --annotators COL,COL naming them; its columns are: ${lt.header.join(", ")}`,
      );
    }
    annotators = [];
    const annIndex = new Map<string, number>();
    const seen = new Map<string, number>();
    for (const { record, row } of lt.rows) {
      const key = unitKey(record, cols.unit, row, lwhere);
      const who = cellText(record[cols.annotator!])?.trim();
      if (!who) throw new JudgeFileError(`${lwhere}: row ${row}, field "${cols.annotator}": the annotator is empty`);
      const t = labelOf(record[cols.label!], lt.format);
      if (t === null) continue;
      const dup = `${key}\u0000${who}`;
      if (seen.has(dup))
        throw new JudgeFileError(`${lwhere}: row ${row}: annotator "${who}" already labelled unit "${key}" at row ${seen.get(dup)}`);
      seen.set(dup, row);
      let a = annIndex.get(who);
      if (a === undefined) {
        a = annotators.length;
        annIndex.set(who, a);
        annotators.push(who);
      }
      cells[unitOf(key)].set(a, t);
    }
    ignored = lt.header.filter((h) => h !== cols.unit && h !== cols.annotator && h !== cols.label && h !== o.group);
  }
  const labels = cells.map((m) => annotators.map((_, a) => m.get(a) ?? null));
  const groups: (string | null)[] | undefined = o.group ? new Array(units.length).fill(null) : undefined;
  const groupRows = new Map<number, number>();
  /** Reads the unit's group from a record; a unit given two groups is refused. */
  const readGroup = (record: SourceRecord, key: string, row: number, where: string) => {
    const u = unitIndex.get(key);
    if (!groups || u === undefined) return;
    const raw = record[o.group!];
    const g = raw === null || raw === undefined ? null : cellText(raw)!.trim() || null;
    if (g === null) return;
    if (groups[u] !== null && groups[u] !== g)
      throw new JudgeFileError(
        `${where}: row ${row}, field "${o.group}": unit "${key}" is in group "${groups[u]}" (row ${groupRows.get(u)}), not "${g}"`,
      );
    groups[u] = g;
    groupRows.set(u, row);
  };
  let groupFrom: "LABELS" | "VERDICTS" | undefined;
  if (o.group && lt.header.includes(o.group)) {
    groupFrom = "LABELS";
    const cols = columns(lt, [UNIT], mapping, lwhere);
    for (const { record, row } of lt.rows) readGroup(record, cellText(record[cols.unit!])?.trim() ?? "", row, lwhere);
  }

  const vt = await readTable(o.verdicts, "VERDICTS");
  const vwhere = `VERDICTS ${path.basename(o.verdicts)}`;
  const vc = columns(vt, VERDICT_FIELDS, vmapping, vwhere);
  if (o.group && !groupFrom) {
    if (!vt.header.includes(o.group))
      throw new JudgeFileError(
        `--group ${o.group}: no such column in LABELS ${path.basename(o.labels)} (${lt.header.join(", ")}) or VERDICTS ${path.basename(o.verdicts)} (${vt.header.join(", ")})`,
      );
    groupFrom = "VERDICTS";
    for (const { record, row } of vt.rows) readGroup(record, cellText(record[vc.unit!])?.trim() ?? "", row, vwhere);
  }
  const judges = new Map<string, { name: string; verdicts: Verdict[]; rows: Map<number, number> }>();
  let verdictsWithoutLabels = 0;
  for (const { record, row } of vt.rows) {
    const key = unitKey(record, vc.unit, row, vwhere);
    const name = cellText(record[vc.judge!])?.trim();
    if (!name) throw new JudgeFileError(`${vwhere}: row ${row}, field "${vc.judge}": the judge is empty`);
    let j = judges.get(name);
    if (!j) judges.set(name, (j = { name, verdicts: new Array(units.length).fill(undefined), rows: new Map() }));
    const verdict = verdictOf(record[vc.verdict!], vt.format);
    const u = unitIndex.get(key);
    if (u === undefined) {
      verdictsWithoutLabels++;
      continue;
    }
    if (j.rows.has(u))
      throw new JudgeFileError(`${vwhere}: row ${row}: judge "${name}" already gave a verdict on unit "${key}" at row ${j.rows.get(u)}`);
    j.rows.set(u, row);
    j.verdicts[u] = verdict;
  }
  return {
    input: { annotators, labels, judges: [...judges.values()].map((j) => ({ name: j.name, verdicts: j.verdicts })) },
    summary: {
      labelsLayout: layout,
      annotatorColumns: annotators,
      ignoredColumns: ignored,
      verdictsWithoutLabels,
      units,
      ...(groups ? { groups, groupFrom } : {}),
    },
  };
}
