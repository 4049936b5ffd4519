/**
 * A team's own files for judge–human agreement, read without a database: a labels file
 * (wide: a unit column plus the annotator columns named; long: unit, annotator, label)
 * and a verdicts file (long: unit, judge, verdict), each CSV, JSONL or a JSON array.
 * Column names resolve as in the import presets (aliases, or `--map field=column`).
 * Every problem is a {@link JudgeFileError} naming the file, row and field.
 */
import fs from "node:fs";
import path from "node:path";
import { resolveColumns, type FieldSpec } from "./presets.server";
import { ImportRefusal, formatProblem, type Problem } from "./problems";
import { formatFromName, readCsv, readJson, readJsonl, sniffFile, type SourceRecord } from "./source.server";
import { labelText, type JudgeAgreementInput } from "~/reports/judgeAgreement";

export class JudgeFileError extends Error {}

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

type Table = { header: string[]; rows: { record: SourceRecord; row: number }[] };

/** Reads a CSV, JSONL or JSON-array file into records with their row numbers; the header is every key seen, in order. */
export async function readTable(file: string, what: string): Promise<Table> {
  const format = formatFromName(file);
  const where = `${what} ${path.basename(file)}`;
  if (!format) throw new JudgeFileError(`${where}: name it .csv, .jsonl or .json so its format is known.`);
  const rows: Table["rows"] = [];
  const keys = new Map<string, true>();
  let header: string[] = [];
  const problems: Problem[] = [];
  const add = (record: SourceRecord, row: number) => {
    for (const k of Object.keys(record)) keys.set(k, true);
    rows.push({ record, row });
  };
  if (!fs.existsSync(file)) throw new JudgeFileError(`${where}: no such file.`);
  try {
    sniffFile(file);
    if (format === "csv") {
      await readCsv(file, { header: (h) => (header = h), row: add, problem: (p) => problems.push(p) });
    } else if (format === "jsonl") {
      await readJsonl(file, { row: add, problem: (p) => problems.push(p) });
    } else {
      const doc = await readJson(file);
      if (!Array.isArray(doc)) throw new JudgeFileError(`${where}: expected a JSON array of objects.`);
      doc.forEach((r, i) => {
        if (r === null || typeof r !== "object" || Array.isArray(r)) problems.push({ row: i + 1, message: "each record must be a JSON object ({...})" });
        else add(r as SourceRecord, i + 1);
      });
    }
  } catch (err) {
    if (err instanceof ImportRefusal) throw new JudgeFileError(`${where}: ${err.message}`);
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new JudgeFileError(`${where}: no such file.`);
    throw err;
  }
  if (problems.length) throw new JudgeFileError(`${where}: ${formatProblem(problems[0])}${problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : ""}`);
  if (rows.length === 0) throw new JudgeFileError(`${where}: no records.`);
  if (format !== "csv") header = [...keys.keys()];
  return { header, rows };
}

function columns(t: Table, fields: FieldSpec[], mapping: Record<string, string>, where: string): Record<string, string | undefined> {
  try {
    return resolveColumns(fields, t.header, mapping);
  } catch (err) {
    if (err instanceof ImportRefusal) throw new JudgeFileError(`${where}: ${err.problem.message}`);
    throw err;
  }
}

const cellText = (v: unknown) => (v === null || v === undefined ? null : typeof v === "object" ? JSON.stringify(v) : String(v));

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
}

/**
 * Reads the two files into the input of `judgeAgreement`. `annotators` (wide form) names
 * the annotator columns; without it the labels file must be long (unit, annotator, label).
 */
export async function readJudgeFiles(o: {
  labels: string;
  verdicts: string;
  annotators?: string[];
  mapping?: Record<string, string>;
}): Promise<{ input: JudgeAgreementInput; summary: JudgeFilesSummary }> {
  const mapping = o.mapping ?? {};
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
    if (missing.length) throw new JudgeFileError(`${lwhere}: --annotators names ${missing.map((m) => `"${m}"`).join(", ")}, not in the file; its columns are: ${lt.header.join(", ")}`);
    if (new Set(o.annotators).size !== o.annotators.length) throw new JudgeFileError(`${lwhere}: --annotators names a column twice.`);
    annotators = o.annotators;
    ignored = lt.header.filter((h) => h !== cols.unit && !annotators.includes(h));
    const seen = new Map<string, number>();
    for (const { record, row } of lt.rows) {
      const key = unitKey(record, cols.unit, row, lwhere);
      if (seen.has(key)) throw new JudgeFileError(`${lwhere}: row ${row}, field "${cols.unit}": unit "${key}" appears again (first at row ${seen.get(key)})`);
      seen.set(key, row);
      const u = unitOf(key);
      annotators.forEach((a, i) => {
        const t = labelText(record[a]);
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
      const t = labelText(record[cols.label!]);
      if (t === null) continue;
      const dup = `${key}\u0000${who}`;
      if (seen.has(dup)) throw new JudgeFileError(`${lwhere}: row ${row}: annotator "${who}" already labelled unit "${key}" at row ${seen.get(dup)}`);
      seen.set(dup, row);
      let a = annIndex.get(who);
      if (a === undefined) {
        a = annotators.length;
        annIndex.set(who, a);
        annotators.push(who);
      }
      cells[unitOf(key)].set(a, t);
    }
    ignored = lt.header.filter((h) => h !== cols.unit && h !== cols.annotator && h !== cols.label);
  }
  const labels = cells.map((m) => annotators.map((_, a) => m.get(a) ?? null));

  const vt = await readTable(o.verdicts, "VERDICTS");
  const vwhere = `VERDICTS ${path.basename(o.verdicts)}`;
  const vc = columns(vt, VERDICT_FIELDS, mapping, vwhere);
  const judges = new Map<string, { name: string; verdicts: (string | null | undefined)[]; rows: Map<number, number> }>();
  let verdictsWithoutLabels = 0;
  for (const { record, row } of vt.rows) {
    const key = unitKey(record, vc.unit, row, vwhere);
    const name = cellText(record[vc.judge!])?.trim();
    if (!name) throw new JudgeFileError(`${vwhere}: row ${row}, field "${vc.judge}": the judge is empty`);
    let j = judges.get(name);
    if (!j) judges.set(name, (j = { name, verdicts: new Array(units.length).fill(undefined), rows: new Map() }));
    const u = unitIndex.get(key);
    if (u === undefined) {
      verdictsWithoutLabels++;
      continue;
    }
    if (j.rows.has(u)) throw new JudgeFileError(`${vwhere}: row ${row}: judge "${name}" already gave a verdict on unit "${key}" at row ${j.rows.get(u)}`);
    j.rows.set(u, row);
    // The verdict as written (trimmed); an empty cell is an unparsed output, not a missing one.
    const raw = record[vc.verdict!];
    j.verdicts[u] = cellText(raw)?.trim() || null;
  }
  return {
    input: { annotators, labels, judges: [...judges.values()].map((j) => ({ name: j.name, verdicts: j.verdicts })) },
    summary: { labelsLayout: layout, annotatorColumns: annotators, ignoredColumns: ignored, verdictsWithoutLabels, units },
  };
}
