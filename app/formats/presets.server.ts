/**
 * Import presets: each one reads one file layout and hands normalised records
 * to the ImportWriter. Generic presets take a column mapping (`--map
 * field=column`); the public-benchmark presets know their layout.
 *
 * | preset              | file                        | becomes                                                   |
 * |---------------------|-----------------------------|-----------------------------------------------------------|
 * | items-jsonl         | JSONL, nested checklist     | items, checklist items (weighted or not), references      |
 * | items-csv           | CSV, one row per checklist item | the same                                              |
 * | responses           | CSV/JSONL item,model,turn,text | responses (origin "import")                            |
 * | verdicts            | CSV/JSONL judge,item,response,checklist_item,value,raw | judges + verdicts (unparsed kept on labelled responses) |
 * | labels-long         | CSV/JSONL unit,annotator,label | an "imported-labels" task with placeholder annotators  |
 * | labels-wide         | CSV/JSONL/JSON, unit + the annotator columns (--annotators COL,COL or all) | the same   |
 * | unit-verdicts       | CSV/JSONL/JSON unit,judge,verdict[,raw] | verdicts on imported-label units (unparsed kept) |
 * | refinebench         | refinebench_samples.json    | items (domain = field), checklist, reference answers       |
 * | fb-bench            | fb_bench_dataset_v3.json    | items, weighted (error correction) or plain checklists     |
 * | fb-bench-judgments  | model_judgment/JUDGE/MODEL.jsonl | the follow-up response + per-item 是/否 verdicts      |
 * | c3ebench            | RAVEL english_dataset/TASK/*.jsonl | writing items with grounding and reference         |
 * | llmbar              | LLMBar dataset.json / evaluators/.../result.json | pairwise items, both outputs, judge picks |
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { parseLabel } from "./labels";
import { ImportRefusal, ImportUsageError } from "./problems";
import { readCsv, readJson, readJsonArray, readJsonl, type FileFormat, type SourceRecord } from "./source.server";
import type { ChecklistEntry, ChecklistRef, ImportWriter, ItemRecord } from "./writer.server";

export type FieldSpec = { name: string; aliases: string[]; required: boolean; help: string };

export type PresetContext = {
  file: string;
  fileName: string;
  format: FileFormat;
  mapping: Record<string, string>;
  sink: ImportWriter;
  onBytes?: (chunk: Buffer) => void;
  /** labels-wide: the annotator columns (`--annotators`, or the columns picked on the Import page). */
  annotators?: string[];
};

export type Preset = {
  name: string;
  summary: string;
  /** benchmark: creates a dataset version; attach: adds to existing items; labels: dataset + imported-labels task. */
  kind: "benchmark" | "attach" | "labels";
  formats: FileFormat[];
  fields?: FieldSpec[];
  weightsSumToOne?: boolean;
  /**
   * Re-importing a file whose content matches an existing version also adds
   * rows to that version (LLMBar judge results onto its pairs), so the import
   * is redone against it. Other presets only create the version: an identical
   * file needs no second pass.
   */
  attachesToExistingVersion?: boolean;
  datasetName(fileName: string): string;
  run(ctx: PresetContext): Promise<void>;
};

// ─── Field helpers (zod) ─────────────────────────────────────────────────────

const describe = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "string" ? `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"` : typeof v;

const blankToUndef = (v: unknown) => (v === null || (typeof v === "string" && v.trim() === "") ? undefined : v);

const reqText = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z
    .string({ error: (iss) => (iss.input === undefined ? "is missing" : `expected text, got ${describe(iss.input)}`) })
    .refine((s) => s.trim().length > 0, "is empty"),
);
const optText = z.preprocess(
  (v) => blankToUndef(typeof v === "number" ? String(v) : v),
  z.string({ error: (iss) => `expected text, got ${describe(iss.input)}` }).optional(),
);
const numberLike = (v: unknown) => {
  const b = blankToUndef(v);
  if (typeof b === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(b)) return Number(b);
  return b;
};
const optNumber = z.preprocess(numberLike, z.number({ error: (iss) => `expected a number, got ${describe(iss.input)}` }).optional());
const optTurn = z.preprocess(
  numberLike,
  z
    .number({ error: (iss) => `expected a whole number, got ${describe(iss.input)}` })
    .int("expected a whole number")
    .min(1, "must be 1 or more")
    .optional(),
);

const checklistEntry = z.union(
  [z.string().min(1), z.tuple([z.string().min(1), z.number()]), z.object({ text: z.string().min(1), weight: z.number().nullish() })],
  { error: "each checklist entry must be a text, a [text, weight] pair or {text, weight}" },
);
const checklistList = z.array(checklistEntry, { error: (iss) => `expected a list, got ${describe(iss.input)}` });
const referenceField = z.preprocess(
  blankToUndef,
  z.union([z.string(), z.array(z.string())], { error: (iss) => `expected text or a list of texts, got ${describe(iss.input)}` }).optional(),
);

function toEntry(e: z.infer<typeof checklistEntry>): ChecklistEntry {
  if (typeof e === "string") return { text: e, weight: null };
  if (Array.isArray(e)) return { text: e[0], weight: e[1] };
  return { text: e.text, weight: e.weight ?? null };
}

/** Reports every zod issue of one row; returns the data or undefined. */
function check<T extends z.ZodTypeAny>(
  schema: T,
  value: unknown,
  row: number,
  sink: ImportWriter,
  columns: Record<string, string | undefined> = {},
): z.infer<T> | undefined {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  for (const iss of r.error.issues) {
    const key = iss.path.map(String).join(".");
    const top = String(iss.path[0] ?? "");
    sink.error({ row, field: columns[top] ? columns[top] + key.slice(top.length) : key || undefined, message: iss.message });
  }
  return undefined;
}

// ─── Column mapping ──────────────────────────────────────────────────────────

/** Which source column each canonical field reads, from the mapping or the aliases. */
export function resolveColumns(fields: FieldSpec[], header: string[], mapping: Record<string, string>): Record<string, string | undefined> {
  const have = new Set(header);
  const lower = new Map(header.map((h) => [h.toLowerCase(), h]));
  const out: Record<string, string | undefined> = {};
  for (const f of fields) {
    const mapped = mapping[f.name];
    if (mapped) {
      if (!have.has(mapped)) {
        throw new ImportRefusal(`Mapped column "${mapped}" (for ${f.name}) is not in the file; the header has: ${header.join(", ")}.`, {
          row: 1,
          field: mapped,
          message: `mapped column "${mapped}" for ${f.name} is not in the header (${header.join(", ")})`,
        });
      }
      out[f.name] = mapped;
      continue;
    }
    out[f.name] = [f.name, ...f.aliases].map((a) => lower.get(a.toLowerCase())).find(Boolean);
    if (!out[f.name] && f.required) {
      throw new ImportRefusal(`Missing column "${f.name}": the header has ${header.join(", ")}.`, {
        row: 1,
        field: f.name,
        message: `missing column "${f.name}" (also looked for ${f.aliases.join(", ") || "no other name"}; the header has: ${header.join(", ")}); map it with --map ${f.name}=COLUMN`,
      });
    }
  }
  return out;
}

function pick(record: SourceRecord, columns: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, col] of Object.entries(columns)) if (col) out[k] = record[col];
  return out;
}

/** Runs rows of a CSV or JSONL file through `each`, resolving columns from the header / each record's keys. */
async function eachRow(
  ctx: PresetContext,
  fields: FieldSpec[],
  each: (mapped: Record<string, unknown>, row: number, record: SourceRecord, columns: Record<string, string | undefined>) => void,
  /** CSV only: tries a row first; returns false to hand it to `each`. */
  fastCsv?: (record: SourceRecord, row: number, columns: Record<string, string | undefined>) => boolean,
): Promise<void> {
  let columns: Record<string, string | undefined> | undefined;
  let rows: number;
  if (ctx.format === "csv") {
    rows = await readCsv(ctx.file, {
      header: (h) => {
        columns = resolveColumns(fields, h, ctx.mapping);
      },
      row:
        fastCsv && tuning.fastPaths
          ? (rec, row) => {
              if (!fastCsv(rec, row, columns!)) each(pick(rec, columns!), row, rec, columns!);
            }
          : (rec, row) => each(pick(rec, columns!), row, rec, columns!),
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
  } else if (ctx.format === "json") {
    // A JSON array of records, streamed one record at a time, read as JSONL would read one record per line.
    rows = await readJsonArray(
      ctx.file,
      {
        element: (rec, row) => {
          if (rec === null || typeof rec !== "object" || Array.isArray(rec)) {
            ctx.sink.error({ row, message: "each record must be a JSON object ({...})" });
            return;
          }
          const cols = resolveJsonColumns(fields, rec as SourceRecord, ctx.mapping);
          each(pick(rec as SourceRecord, cols), row, rec as SourceRecord, cols);
        },
        problem: (p) => ctx.sink.error(p),
        bytes: ctx.onBytes,
      },
      "Expected a JSON array of records ([{...}, {...}]).",
    );
  } else {
    rows = await readJsonl(ctx.file, {
      row: (rec, row) => {
        const cols = resolveJsonColumns(fields, rec, ctx.mapping);
        each(pick(rec, cols), row, rec, cols);
      },
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
  }
  if (rows === 0 && ctx.sink.errorCount === 0) {
    throw new ImportRefusal(
      ctx.format === "csv"
        ? "The file has a header row but no data rows."
        : ctx.format === "json"
          ? "The file's JSON array is empty."
          : "The file has no JSON lines.",
    );
  }
}

function resolveJsonColumns(fields: FieldSpec[], rec: SourceRecord, mapping: Record<string, string>) {
  const out: Record<string, string | undefined> = {};
  for (const f of fields) out[f.name] = mapping[f.name] ?? [f.name, ...f.aliases].find((a) => a in rec) ?? f.name;
  return out;
}

const baseName = (fileName: string) => path.basename(fileName).replace(/\.(jsonl|ndjson|json|csv|tsv|txt)$/i, "");

// ─── Generic presets ─────────────────────────────────────────────────────────

const ITEM_FIELDS: FieldSpec[] = [
  { name: "id", aliases: ["item_id", "item", "index", "infer_id", "uid"], required: true, help: "the item's ID in the source" },
  { name: "prompt", aliases: ["query", "question", "instruction", "input", "user_query"], required: true, help: "the prompt" },
  { name: "reference", aliases: ["reference_answer", "answer", "references", "gold"], required: false, help: "reference answer(s)" },
  { name: "domain", aliases: ["field", "category"], required: false, help: "domain" },
  { name: "passage", aliases: ["context", "grounding"], required: false, help: "passage or grounding" },
  { name: "subject", aliases: ["sub_task", "subtask"], required: false, help: "subject" },
  { name: "task_type", aliases: ["type", "exam_type"], required: false, help: "task type" },
  { name: "language", aliases: ["lang"], required: false, help: "language" },
];

const itemBase = {
  id: reqText,
  prompt: reqText,
  reference: referenceField,
  domain: optText,
  passage: optText,
  subject: optText,
  task_type: optText,
  language: optText,
};

function itemFrom(d: {
  id: string;
  prompt: string;
  reference?: string | string[];
  domain?: string;
  passage?: string;
  subject?: string;
  task_type?: string;
  language?: string;
}): ItemRecord {
  return {
    sourceId: d.id.trim(),
    query: d.prompt,
    passage: d.passage ?? null,
    domain: d.domain ?? null,
    subject: d.subject ?? null,
    taskType: d.task_type ?? null,
    language: d.language ?? null,
    references: d.reference === undefined ? [] : Array.isArray(d.reference) ? d.reference : [d.reference],
  };
}

const itemsJsonl: Preset = {
  name: "items-jsonl",
  summary: "Benchmark items, one JSON object per line, with a nested checklist (texts, [text, weight] pairs or {text, weight})",
  kind: "benchmark",
  formats: ["jsonl", "json"],
  fields: [...ITEM_FIELDS, { name: "checklist", aliases: ["criteria", "rubric"], required: false, help: "the checklist (a list)" }],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({ ...itemBase, checklist: z.preprocess(blankToUndef, checklistList.optional()) });
    const known = new Set<string>();
    await eachRow(ctx, this.fields!, (m, row, rec, cols) => {
      for (const c of Object.values(cols)) if (c) known.add(c);
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      const metadata = Object.fromEntries(Object.entries(rec).filter(([k]) => !known.has(k)));
      ctx.sink.item({ ...itemFrom(d), metadata, checklist: (d.checklist ?? []).map(toEntry) }, row);
    });
  },
};

const itemsCsv: Preset = {
  name: "items-csv",
  summary: "Benchmark items in long form: one row per checklist item (item_id, prompt, checklist_item, weight, reference, domain)",
  kind: "benchmark",
  formats: ["csv"],
  fields: [
    ...ITEM_FIELDS.map((f) => (f.name === "id" ? { ...f, name: "item_id", aliases: ["id", "item", "index", "uid"] } : f)),
    { name: "checklist_item", aliases: ["checklist", "criterion", "question_text"], required: false, help: "one checklist item" },
    { name: "weight", aliases: ["checklist_weight"], required: false, help: "its weight (optional)" },
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({ ...itemBase, item_id: reqText, id: z.any().optional(), checklist_item: optText, weight: optNumber });
    const sink = ctx.sink;
    const fields = this.fields!;
    let fast: ((rec: SourceRecord, row: number) => boolean) | undefined;
    await eachRow(
      ctx,
      fields,
      (m, row, _rec, cols) => {
        const d = check(schema, m, row, sink, cols);
        if (!d) return;
        const checklist = d.checklist_item ? [{ text: d.checklist_item, weight: d.weight ?? null }] : [];
        if (!d.checklist_item && d.weight !== undefined) {
          sink.error({ row, field: cols.weight, message: "a weight without a checklist item" });
          return;
        }
        sink.item({ ...itemFrom({ ...d, id: d.item_id }), checklist }, row, true);
      },
      // CSV rows that pass a cheap check that accepts exactly what the schema
      // accepts (and gives the same values) skip the schema; any other row
      // goes through it, so its problems read the same.
      (rec, row, cols) => (fast ??= csvFastRow(cols, sink))(rec, row),
    );
  },
};

/** Whether a fast path may be used (tests turn it off to compare it with the schema path). */
export const tuning = { fastPaths: true };

/**
 * items-csv's fast path for one row: true when the row was handled, false
 * when it must go through the zod schema (a blank or missing required field,
 * a weight that is not a plain number, a weight without a checklist item).
 */
function csvFastRow(cols: Record<string, string | undefined>, sink: ImportWriter): (rec: SourceRecord, row: number) => boolean {
  const c = (name: string) => cols[name];
  const [cId, cPrompt, cRef, cDomain, cPassage, cSubject, cTask, cLang, cText, cWeight] = [
    c("item_id"),
    c("prompt"),
    c("reference"),
    c("domain"),
    c("passage"),
    c("subject"),
    c("task_type"),
    c("language"),
    c("checklist_item"),
    c("weight"),
  ];
  if (!cId || !cPrompt) return () => false;
  return (rec, row) => {
    const id = rec[cId];
    const prompt = rec[cPrompt];
    if (typeof id !== "string" || typeof prompt !== "string" || isBlank(id) || isBlank(prompt)) return false;
    const reference = cRef ? optional(rec[cRef]) : undefined;
    const domain = cDomain ? optional(rec[cDomain]) : undefined;
    const passage = cPassage ? optional(rec[cPassage]) : undefined;
    const subject = cSubject ? optional(rec[cSubject]) : undefined;
    const task = cTask ? optional(rec[cTask]) : undefined;
    const lang = cLang ? optional(rec[cLang]) : undefined;
    const text = cText ? optional(rec[cText]) : undefined;
    if (reference === NOT || domain === NOT || passage === NOT || subject === NOT || task === NOT || lang === NOT || text === NOT)
      return false;
    let weight: number | null = null;
    if (cWeight) {
      const w = rec[cWeight];
      if (w !== undefined && w !== null) {
        if (typeof w !== "string") return false;
        if (!isBlank(w)) {
          if (text === undefined || !NUMBER.test(w)) return false;
          weight = Number(w);
          if (!Number.isFinite(weight)) return false;
        }
      }
    }
    sink.longFormRow(
      row,
      id.trim(),
      prompt,
      passage ?? null,
      domain ?? null,
      subject ?? null,
      task ?? null,
      lang ?? null,
      reference,
      text,
      weight,
    );
    return true;
  };
}

const NOT = Symbol("not a plain optional text");
const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/** The schema's "is empty" check (`s.trim().length === 0`), without trimming printable ASCII. */
function isBlank(s: string): boolean {
  if (s.length === 0) return true;
  const c = s.charCodeAt(0);
  if (c > 32 && c < 127) return false;
  return s.trim().length === 0;
}

/** optText on a CSV value: blank or absent → undefined, text → itself, anything else → NOT (let the schema say why). */
function optional(v: unknown): string | undefined | typeof NOT {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") return NOT;
  return isBlank(v) ? undefined : v;
}

const responsesPreset: Preset = {
  name: "responses",
  summary: "Model responses: item, model, turn, text (optional response_id)",
  kind: "attach",
  formats: ["csv", "jsonl", "json"],
  fields: [
    { name: "item", aliases: ["item_id", "id"], required: true, help: "the item's source ID" },
    { name: "model", aliases: ["model_name", "infer_model"], required: true, help: "the model" },
    { name: "turn", aliases: ["round"], required: false, help: "turn number (default 1)" },
    { name: "text", aliases: ["response", "output", "answer"], required: true, help: "the response text" },
    { name: "response_id", aliases: ["response_key", "key"], required: false, help: "a stable key (default model#turn)" },
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({
      item: reqText,
      model: reqText,
      turn: optTurn,
      text: z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string({ error: "is missing" })),
      response_id: optText,
    });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      ctx.sink.response({ item: d.item.trim(), model: d.model.trim(), turn: d.turn ?? 1, text: d.text, key: d.response_id }, row);
    });
  },
};

/** Judge outputs: yes/no (also 是/否, true/false) become "Yes"/"No", numbers stay numbers. */
function verdictValue(v: unknown): { value: string | null; score: number | null } {
  const l = parseLabel(v);
  if (l === null) return { value: null, score: null };
  if (l === "Yes") return { value: "Yes", score: 1 };
  if (l === "No") return { value: "No", score: 0 };
  if (typeof l === "number") return { value: String(l), score: l };
  return { value: l, score: null };
}

function checklistRef(v: string | number | undefined): ChecklistRef {
  if (v === undefined) return null;
  const s = String(v).trim();
  return /^\d+$/.test(s) ? { position: Number(s) } : { text: s };
}

const verdictsPreset: Preset = {
  name: "verdicts",
  summary:
    "Judge verdicts: judge, item, response, checklist_item (number or text; blank = whole response), value, raw; on a response with imported labels an empty or out-of-set value is kept as unparsed",
  kind: "attach",
  formats: ["csv", "jsonl", "json"],
  fields: [
    { name: "judge", aliases: ["judge_model", "evaluator"], required: true, help: "the judge's name" },
    { name: "item", aliases: ["item_id", "id"], required: true, help: "the item's source ID" },
    { name: "response", aliases: ["response_id", "response_key", "model"], required: true, help: "response key or model" },
    { name: "checklist_item", aliases: ["checklist", "criterion"], required: false, help: "checklist item (1-based number or text)" },
    { name: "value", aliases: ["verdict", "label", "result"], required: true, help: "the verdict (Yes/No or a score)" },
    { name: "raw", aliases: ["raw_output", "reason", "explanation"], required: false, help: "the judge's raw output" },
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({
      judge: reqText,
      item: reqText,
      response: reqText,
      checklist_item: z.preprocess(blankToUndef, z.union([z.string(), z.number()]).optional()),
      // Empty is allowed here: the writer keeps it as unparsed on a response with imported labels, and refuses it elsewhere.
      value: z.preprocess(
        blankToUndef,
        z
          .union([z.string(), z.number(), z.boolean()], { error: (iss) => `expected text, a number or yes/no, got ${describe(iss.input)}` })
          .optional(),
      ),
      raw: z.preprocess(
        (v) => (v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v)),
        z.string().optional(),
      ),
    });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      const { value, score } = verdictValue(d.value);
      ctx.sink.verdict(
        {
          judge: d.judge.trim(),
          item: d.item.trim(),
          response: d.response.trim(),
          checklist: checklistRef(d.checklist_item),
          value,
          score,
          raw: d.raw ?? null,
          againstLabels: { valueField: cols.value },
        },
        row,
      );
    });
  },
};

/**
 * Labels presets: an optional column naming an imported response (its key, or its model when the
 * item has one response of that model). With it, `unit` names the item, and the unit of the task is
 * that response, so verdicts imported with the `verdicts` preset meet the labels.
 */
const RESPONSE_LINK: FieldSpec = {
  name: "response",
  aliases: ["response_key", "model"],
  required: false,
  help: "the imported response labelled (key or model; optional)",
};

const labelsLong: Preset = {
  name: "labels-long",
  summary: "Labels from another tool, long form: unit, annotator, label (one row each)",
  kind: "labels",
  formats: ["csv", "jsonl", "json"],
  fields: [
    { name: "unit", aliases: ["unit_id", "item", "item_id", "id"], required: true, help: "what was labelled" },
    { name: "annotator", aliases: ["annotator_name", "rater", "coder", "user"], required: true, help: "who labelled it" },
    { name: "label", aliases: ["value", "rating", "score", "answer"], required: true, help: "the label" },
    { name: "text", aliases: ["unit_text", "prompt"], required: false, help: "what the unit shows (optional)" },
    RESPONSE_LINK,
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({ unit: reqText, annotator: reqText, label: z.any(), text: optText, response: optText });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      const label = parseLabel(d.label);
      if (label === null) {
        ctx.sink.error({ row, field: cols.label, message: "the label is empty" });
        return;
      }
      ctx.sink.label(
        { unit: d.unit.trim(), annotator: d.annotator.trim(), label, text: d.text, ...(d.response ? { response: d.response.trim() } : {}) },
        row,
        cols.label,
      );
    });
  },
};

const labelsWide: Preset = {
  name: "labels-wide",
  summary:
    "Labels from another tool, wide form: a unit column and one column per annotator, named with --annotators COL,COL (or --annotators all); other columns are ignored (blank = not labelled)",
  kind: "labels",
  formats: ["csv", "jsonl", "json"],
  fields: [{ name: "unit", aliases: ["unit_id", "item", "item_id", "id"], required: true, help: "what was labelled" }, RESPONSE_LINK],
  datasetName: baseName,
  async run(ctx) {
    const unitSchema = z.object({ unit: reqText, response: optText });
    let named = ctx.annotators?.map((a) => a.trim()).filter(Boolean) ?? [];
    /** `--annotators all`: every column but the unit (and response) is an annotator, asked for explicitly. */
    let all = false;
    let checked = false;
    const used = new Set<string>();
    const ignored = new Set<string>();
    await eachRow(ctx, this.fields!, (m, row, rec, cols) => {
      if (!checked) {
        checked = true;
        const others = Object.keys(rec).filter((k) => k !== cols.unit && k !== cols.response);
        if (named.length === 1 && named[0].toLowerCase() === "all" && !(named[0] in rec)) {
          all = true;
          named = [];
        } else if (!named.length) {
          // Never guessed: a stray column (a prompt, a note) would otherwise become an annotator unnoticed.
          throw new ImportUsageError(
            `labels-wide needs its annotator columns named: the file's columns besides the unit are ${others.map((x) => `"${x}"`).join(", ") || "none"}; ` +
              "give --annotators COL,COL (or --annotators all to take every one of them).",
          );
        }
        // CSV: every row has every column; JSON(L): a named column may be absent from a record (not labelled).
        const missing = ctx.format === "csv" ? named.filter((a) => !(a in rec)) : [];
        if (missing.length) {
          throw new ImportRefusal(
            `--annotators names ${missing.map((x) => `"${x}"`).join(", ")}, not a column of the file; its columns are: ${Object.keys(rec).join(", ")}.`,
            {
              row: 1,
              field: missing[0],
              message: `annotator column ${missing.map((x) => `"${x}"`).join(", ")} is not in the header (${Object.keys(rec).join(", ")})`,
            },
          );
        }
      }
      const d = check(unitSchema, m, row, ctx.sink, cols);
      if (!d) return;
      for (const col of all ? Object.keys(rec) : named) {
        if (col === cols.unit || col === cols.response) continue;
        used.add(col);
        const label = parseLabel(rec[col]);
        if (label === null) continue;
        ctx.sink.label({ unit: d.unit.trim(), annotator: col, label, ...(d.response ? { response: d.response.trim() } : {}) }, row, col);
      }
      if (!all)
        for (const col of Object.keys(rec)) if (col !== cols.unit && col !== cols.response && !named.includes(col)) ignored.add(col);
    });
    // Which columns became annotators is always said.
    if (all) {
      if (used.size)
        ctx.sink.warn({
          row: 1,
          message: `--annotators all: every column other than the unit became an annotator (${[...used].join(", ")})`,
        });
    } else if (ignored.size) ctx.sink.warn({ row: 1, message: `columns ignored (not among --annotators): ${[...ignored].join(", ")}` });
  },
};

const unitVerdicts: Preset = {
  name: "unit-verdicts",
  summary:
    "Judge verdicts on units of imported labels: unit, judge, verdict (raw optional); empty or out-of-set verdicts are kept as unparsed",
  kind: "attach",
  formats: ["csv", "jsonl", "json"],
  fields: [
    { name: "unit", aliases: ["unit_id", "item", "item_id", "id"], required: true, help: "the unit key of the imported labels" },
    { name: "judge", aliases: ["judge_model", "evaluator", "judge_name"], required: true, help: "the judge's name" },
    {
      name: "verdict",
      aliases: ["value", "label", "prediction", "winner", "output"],
      required: true,
      help: "the verdict (a label of the task)",
    },
    { name: "raw", aliases: ["raw_output", "reason", "explanation", "completion"], required: false, help: "the judge's raw output" },
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({
      unit: reqText,
      judge: reqText,
      verdict: z.unknown(),
      raw: z.preprocess(
        (v) => (v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v)),
        z.string().optional(),
      ),
    });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      // Compared as text after trimming (a judge's "1" is the human label 1); blank = an unparsed output.
      const l = parseLabel(d.verdict);
      ctx.sink.unitVerdict(
        {
          judge: d.judge.trim(),
          unit: d.unit.trim(),
          value: l === null ? null : String(l),
          score: typeof l === "number" ? l : null,
          raw: d.raw ?? null,
        },
        row,
      );
    });
  },
};

// ─── Public benchmark presets ────────────────────────────────────────────────

const refinebenchRecord = z.object({
  index: reqText,
  field: optText,
  subject: optText,
  question: reqText,
  reference_answer: z.union([z.string(), z.array(z.string())]).optional(),
  materials: z.array(z.unknown()).optional(),
  checklist: z.array(z.string().min(1), { error: "expected a list of yes/no questions" }),
  exam_type: optText,
});

const refinebench: Preset = {
  name: "refinebench",
  summary: "RefineBench samples (refinebench_samples.json): a JSON object field → list of problems, unweighted checklists",
  kind: "benchmark",
  formats: ["json"],
  datasetName: () => "RefineBench",
  async run(ctx) {
    // Read whole: the file is a JSON object (field → list of problems), not an array of records.
    const doc = await readJson(ctx.file, ctx.onBytes);
    const records: [string, unknown][] = Array.isArray(doc)
      ? doc.map((r, i) => [`[${i}]`, r])
      : doc && typeof doc === "object"
        ? Object.entries(doc as Record<string, unknown>).flatMap(([k, list]) =>
            Array.isArray(list) ? list.map((r, i) => [`${k}[${i}]`, r] as [string, unknown]) : [],
          )
        : [];
    if (records.length === 0)
      throw new ImportRefusal("Expected RefineBench problems: a JSON object of field → list of problems, or a list.");
    records.forEach(([where, raw], i) => {
      const row = i + 1;
      const r = refinebenchRecord.safeParse(raw);
      if (!r.success) {
        for (const iss of r.error.issues) ctx.sink.error({ row, field: `${where}.${iss.path.join(".")}`, message: iss.message });
        return;
      }
      const d = r.data;
      const rec = raw as Record<string, unknown>;
      const materials = (d.materials ?? []).map((m) => (typeof m === "string" ? m : JSON.stringify(m))).filter((m) => m.trim());
      const known = new Set(["index", "field", "subject", "question", "reference_answer", "checklist", "exam_type"]);
      ctx.sink.item(
        {
          sourceId: d.index,
          query: d.question,
          passage: materials.length ? materials.join("\n\n") : null,
          domain: d.field ?? null,
          subject: d.subject ?? null,
          taskType: d.exam_type ? d.exam_type.toLowerCase().replace(/\s+/g, "-") : null,
          language: "en",
          metadata: Object.fromEntries(Object.entries(rec).filter(([k]) => !known.has(k))),
          references: d.reference_answer === undefined ? [] : Array.isArray(d.reference_answer) ? d.reference_answer : [d.reference_answer],
          checklist: d.checklist.map((text) => ({ text, weight: null })),
        },
        row,
      );
    });
  },
};

/** FB-Bench has no IDs; an item's ID is a hash of its query, preset first response and feedback. */
export function fbBenchId(r: { user_query: string; origin_first_response: string; feedback: string }): string {
  return (
    "fb-" + createHash("sha256").update(`${r.user_query}\u0000${r.origin_first_response}\u0000${r.feedback}`).digest("hex").slice(0, 16)
  );
}

const fbRecord = z.object({
  bench_type: reqText,
  task_type: optText,
  sub_task_type: optText,
  user_query: reqText,
  origin_first_response: z.string({ error: "is missing" }),
  feedback: z.string({ error: "is missing" }),
  checklist: z.array(
    z.union([z.string().min(1), z.tuple([z.string().min(1), z.number()])], { error: "expected a text or a [text, weight] pair" }),
    {
      error: "expected a list",
    },
  ),
  reference_second_response: z.string().nullish(),
});

const fbBench: Preset = {
  name: "fb-bench",
  summary:
    "FB-Bench (fb_bench_dataset_v3.json): error-correction checklists are [text, weight] pairs, response-maintenance ones plain texts",
  kind: "benchmark",
  formats: ["json"],
  weightsSumToOne: true,
  datasetName: () => "FB-Bench",
  async run(ctx) {
    const known = new Set(["task_type", "sub_task_type", "user_query", "checklist", "reference_second_response"]);
    const each = (raw: unknown, row: number) => {
      const d = check(fbRecord, raw, row, ctx.sink);
      if (!d) return;
      const rec = raw as Record<string, unknown>;
      ctx.sink.item(
        {
          sourceId: fbBenchId(d),
          query: d.user_query,
          passage: null,
          domain: d.task_type ?? null,
          subject: d.sub_task_type ?? null,
          taskType: d.bench_type.toLowerCase().replace(/\s+/g, "_"),
          language: "zh",
          metadata: Object.fromEntries(Object.entries(rec).filter(([k]) => !known.has(k))),
          references: d.reference_second_response ? [d.reference_second_response] : [],
          checklist: d.checklist.map((c) => (typeof c === "string" ? { text: c, weight: null } : { text: c[0], weight: c[1] })),
        },
        row,
      );
    };
    await readJsonArray(
      ctx.file,
      { element: each, problem: (p) => ctx.sink.error(p), bytes: ctx.onBytes },
      "Expected FB-Bench records: a JSON list of objects.",
    );
  },
};

const fbJudgment = z.object({
  user_query: reqText,
  origin_first_response: z.string(),
  feedback: z.string(),
  second_response: z.string({ error: "is missing" }),
  infer_model: reqText,
  judge_model: reqText,
  judgement: z.record(z.string(), z.object({ 评判结果: z.string().optional(), weight: z.number().nullish() }).passthrough(), {
    error: "expected an object: checklist item → {评判理由, 评判结果}",
  }),
  score: z.number().nullish(),
});

const fbBenchJudgments: Preset = {
  name: "fb-bench-judgments",
  summary:
    "FB-Bench judge output (model_judgment/JUDGE/MODEL.jsonl): the model's follow-up response and a 是/否 verdict per checklist item",
  kind: "attach",
  formats: ["jsonl"],
  datasetName: () => "FB-Bench",
  async run(ctx) {
    let n = 0;
    await readJsonl(ctx.file, {
      row: (raw, row) => {
        n++;
        const d = check(fbJudgment, raw, row, ctx.sink);
        if (!d) return;
        const item = fbBenchId(d);
        const key = `${d.infer_model}#2`;
        ctx.sink.response({ item, model: d.infer_model, turn: 2, text: d.second_response, key }, row);
        Object.entries(d.judgement).forEach(([text, v], i) => {
          const result = v["评判结果"];
          const value = result === "是" ? "Yes" : result === "否" ? "No" : null;
          ctx.sink.verdict(
            {
              judge: d.judge_model,
              judgeModel: d.judge_model,
              item,
              response: key,
              checklist: { text, position: i + 1 },
              value,
              score: value === "Yes" ? 1 : value === "No" ? 0 : null,
              raw: JSON.stringify(v),
              parseStatus: value ? "ok" : "failed",
            },
            row,
          );
        });
        if (d.score !== undefined && d.score !== null) {
          ctx.sink.verdict(
            {
              judge: d.judge_model,
              judgeModel: d.judge_model,
              item,
              response: key,
              checklist: null,
              value: String(d.score),
              score: d.score,
              raw: null,
            },
            row,
          );
        }
      },
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
    if (n === 0 && ctx.sink.errorCount === 0) throw new ImportRefusal("The file has no JSON lines.");
  },
};

const ravelRecord = z.object({
  infer_id: reqText,
  task_type: reqText,
  sub_task: optText,
  instruction: reqText,
  input: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
  reference: z.string({ error: "is missing" }),
});

function ravelPassage(taskType: string, input: Record<string, unknown> | string | undefined): string | null {
  if (input === undefined) return null;
  if (typeof input === "string") return input;
  const s = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
  if (taskType === "cloze" && ("prefix" in input || "suffix" in input)) return `${s(input.prefix)}[fill in the blank]${s(input.suffix)}`;
  if (taskType === "edit" && "content" in input) return `${s(input.content)}\n\nCritique:\n${s(input.critique)}`;
  return Object.entries(input)
    .map(([k, v]) => `${k}: ${s(v)}`)
    .join("\n");
}

const c3ebench: Preset = {
  name: "c3ebench",
  summary: "C3EBench / RAVEL task files (english_dataset/TASK/*.jsonl): writing instructions, grounding and a reference text",
  kind: "benchmark",
  formats: ["jsonl"],
  datasetName: (f) => `C3EBench ${baseName(f)}`,
  async run(ctx) {
    let n = 0;
    await readJsonl(ctx.file, {
      row: (raw, row) => {
        n++;
        const d = check(ravelRecord, raw, row, ctx.sink);
        if (!d) return;
        const lang = /_(en|zh)_/.exec(d.infer_id)?.[1] ?? null;
        ctx.sink.item(
          {
            sourceId: d.infer_id,
            query: d.instruction,
            passage: ravelPassage(d.task_type, d.input),
            domain: d.sub_task ?? null,
            subject: d.sub_task ?? null,
            taskType: d.task_type,
            language: lang,
            metadata: { input: d.input ?? null },
            references: [d.reference],
          },
          row,
        );
      },
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
    if (n === 0 && ctx.sink.errorCount === 0) throw new ImportRefusal("The file has no JSON lines.");
  },
};

const llmbarRecord = z.object({
  input: reqText,
  output_1: z.string({ error: "is missing" }),
  output_2: z.string({ error: "is missing" }),
  label: z.union([z.literal(1), z.literal(2), z.literal("1"), z.literal("2")], { error: "expected 1 or 2" }),
  results: z
    .array(
      z.record(
        z.string(),
        z.object({ winner: z.union([z.string(), z.number()]).nullish(), completion: z.unknown().optional() }).passthrough(),
      ),
    )
    .optional(),
});

export function llmbarId(r: { input: string; output_1: string; output_2: string }): string {
  return "llmbar-" + createHash("sha256").update(`${r.input}\u0000${r.output_1}\u0000${r.output_2}`).digest("hex").slice(0, 16);
}

/** "…/LLMBar/Adversarial/Neighbor/evaluators/GPT-4/Vanilla/result.json" → dataset "LLMBar Adversarial/Neighbor", judge "GPT-4/Vanilla". */
function llmbarNames(fileName: string): { dataset: string; judge: string } {
  const parts = fileName.split(/[\\/]/);
  const ev = parts.indexOf("evaluators");
  const dataEnd = ev >= 0 ? ev : parts.length - 1;
  let top = -1;
  for (let i = dataEnd - 1; i >= 0; i--)
    if (parts[i] === "LLMBar" || parts[i] === "Processed") {
      top = i;
      break;
    }
  const dataParts = top >= 0 ? parts.slice(top, dataEnd) : [];
  const dataset = dataParts.length ? `LLMBar ${dataParts.join("/").replace(/^LLMBar\//, "")}` : `LLMBar ${baseName(fileName)}`;
  const judge = ev >= 0 ? parts.slice(ev + 1, parts.length - 1).join("/") : "LLMBar judge";
  return { dataset, judge };
}

const llmbar: Preset = {
  name: "llmbar",
  summary:
    "LLMBar pairwise sets (dataset.json: input, output_1, output_2, gold label) and judge results (evaluators/…/result.json, both orders)",
  kind: "benchmark",
  attachesToExistingVersion: true,
  formats: ["json"],
  datasetName: (f) => llmbarNames(f).dataset,
  async run(ctx) {
    const judge = llmbarNames(ctx.fileName).judge;
    const each = (raw: unknown, row: number) => {
      const d = check(llmbarRecord, raw, row, ctx.sink);
      if (!d) return;
      const item = llmbarId(d);
      const gold = Number(d.label);
      ctx.sink.item({ sourceId: item, query: d.input, metadata: { goldLabel: gold }, references: [] }, row);
      ctx.sink.response({ item, model: "output_1", turn: 1, text: d.output_1, key: "output_1" }, row);
      ctx.sink.response({ item, model: "output_2", turn: 1, text: d.output_2, key: "output_2" }, row);
      for (const result of d.results ?? []) {
        for (const [order, r] of Object.entries(result)) {
          const swapped = /true/i.test(order);
          const winner = r.winner === undefined || r.winner === null ? null : String(r.winner);
          const ok = winner === "1" || winner === "2";
          ctx.sink.verdict(
            {
              judge: swapped ? `${judge} (swapped)` : judge,
              judgeModel: judge.split("/")[0],
              item,
              response: "output_1",
              checklist: null,
              value: ok ? winner : null,
              score: ok ? Number(winner) : null,
              raw: JSON.stringify(r.completion ?? null),
              parseStatus: ok ? "ok" : "failed",
            },
            row,
          );
        }
      }
    };
    await readJsonArray(
      ctx.file,
      { element: each, problem: (p) => ctx.sink.error(p), bytes: ctx.onBytes },
      "Expected LLMBar pairs: a JSON list of {input, output_1, output_2, label}.",
    );
  },
};

export const PRESETS: Record<string, Preset> = Object.fromEntries(
  [
    itemsJsonl,
    itemsCsv,
    responsesPreset,
    verdictsPreset,
    labelsLong,
    labelsWide,
    unitVerdicts,
    refinebench,
    fbBench,
    fbBenchJudgments,
    c3ebench,
    llmbar,
  ].map((p) => [p.name, p]),
);
