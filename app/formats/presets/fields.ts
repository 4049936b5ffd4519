/** Field helpers (zod) shared by the presets: text, numbers, checklists, items, and the per-row check. */
import { z } from "zod";
import type { ChecklistEntry, ImportWriter, ItemRecord } from "../writer.server";
import type { FieldSpec } from "./types";

/** A value in plain words, for "expected …, got …" (a long text is cut, never the whole cell). */
export const describe = (v: unknown): string =>
  v === null
    ? "null"
    : v === undefined
      ? "nothing"
      : Array.isArray(v)
        ? "a list"
        : typeof v === "string"
          ? `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`
          : typeof v === "number"
            ? Number.isFinite(v)
              ? `the number ${v}`
              : "a number too large to store"
            : typeof v === "boolean"
              ? String(v)
              : typeof v === "object"
                ? "an object"
                : typeof v;

export const blankToUndef = (v: unknown) => (v === null || (typeof v === "string" && v.trim() === "") ? undefined : v);

/** A number written as text ("12", "-0.5", "1e3"), spaces around allowed. */
const NUMBER_TEXT = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * Why a value that reads as a number is not a finite one (`1e999` in a CSV cell or a JSON file is Infinity), or
 * undefined. A CSV cell keeps its text, so the message quotes it; JSON has already turned it into Infinity.
 */
export function notFiniteReason(v: unknown): string | undefined {
  if (typeof v === "string" && NUMBER_TEXT.test(v) && !Number.isFinite(Number(v))) return `${v.trim()} is not a finite number`;
  if (typeof v === "number" && !Number.isFinite(v)) return "not a finite number (too large to store)";
  return undefined;
}

/**
 * Free text (a prompt, a domain, a checklist item): a string only. A number, yes/no or an object in a JSON file is
 * refused rather than turned into text ("expected text, got the number 123"): it is almost always the wrong field.
 */
export const reqText = z
  .string({ error: (iss) => (iss.input === undefined ? "is missing" : `expected text, got ${describe(iss.input)}`) })
  .refine((s) => s.trim().length > 0, "is empty");
export const optText = z.preprocess(blankToUndef, z.string({ error: (iss) => `expected text, got ${describe(iss.input)}` }).optional());

/** An identifier or a name (an item ID, a unit, an annotator, a model, a judge): text, or a number as JSON files often give IDs. */
const idLike = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? String(v) : v);
export const reqId = z.preprocess(
  idLike,
  z
    .string({ error: (iss) => (iss.input === undefined ? "is missing" : `expected text or a number, got ${describe(iss.input)}`) })
    .refine((s) => s.trim().length > 0, "is empty"),
);
export const optId = z.preprocess(
  (v) => blankToUndef(idLike(v)),
  z.string({ error: (iss) => `expected text or a number, got ${describe(iss.input)}` }).optional(),
);

/** A number: a JSON number or a number written as text; anything else, and infinite values, refused in words. */
function toNumber(v: unknown, ctx: z.RefinementCtx, expected: string, path: (string | number)[] = []): number {
  const why = notFiniteReason(v);
  if (why) {
    ctx.addIssue({ code: "custom", message: why, input: v, path });
    return z.NEVER;
  }
  if (typeof v === "number") return v;
  if (typeof v === "string" && NUMBER_TEXT.test(v)) return Number(v);
  ctx.addIssue({ code: "custom", message: `expected ${expected}, got ${describe(v)}`, input: v, path });
  return z.NEVER;
}

export const optNumber = z.preprocess(
  blankToUndef,
  z.unknown().transform((v, ctx) => (v === undefined ? undefined : toNumber(v, ctx, "a number"))),
);
export const optTurn = z.preprocess(
  blankToUndef,
  z.unknown().transform((v, ctx) => {
    if (v === undefined) return undefined;
    const n = toNumber(v, ctx, "a whole number");
    if (n === z.NEVER) return z.NEVER;
    if (!Number.isInteger(n)) ctx.addIssue({ code: "custom", message: `expected a whole number, got ${describe(v)}`, input: v });
    else if (n < 1) ctx.addIssue({ code: "custom", message: `must be 1 or more, got ${n}`, input: v });
    else return n;
    return z.NEVER;
  }),
);

/** A checklist weight: a finite number above zero (a weight of 0 or less would count an item for nothing or against the score). */
function toWeight(v: unknown, ctx: z.RefinementCtx, path: (string | number)[] = []): number {
  const n = toNumber(v, ctx, "a number", path);
  if (n === z.NEVER) return z.NEVER;
  if (!(n > 0)) {
    ctx.addIssue({
      code: "custom",
      message: `weight must be a positive number, got ${typeof v === "string" ? v.trim() : n}`,
      input: v,
      path,
    });
    return z.NEVER;
  }
  return n;
}
export const optWeight = z.preprocess(
  blankToUndef,
  z.unknown().transform((v, ctx) => (v === undefined ? undefined : toWeight(v, ctx))),
);

const ENTRY_SHAPE = "each checklist entry must be a text, a [text, weight] pair or {text, weight}";
/** One checklist entry: a text, a [text, weight] pair or {text, weight}; a bad weight is named at its place in the entry. */
export const checklistEntry = z.unknown().transform((e, ctx): string | [string, number] | { text: string; weight: number | null } => {
  const isText = (t: unknown): t is string => typeof t === "string" && t.length > 0;
  if (isText(e)) return e;
  if (Array.isArray(e) && e.length === 2 && isText(e[0])) {
    if (typeof e[1] !== "number") {
      ctx.addIssue({ code: "custom", message: `weight: expected a number, got ${describe(e[1])}`, path: [1], input: e[1] });
      return z.NEVER;
    }
    const w = toWeight(e[1], ctx, [1]);
    return w === z.NEVER ? z.NEVER : [e[0], w];
  }
  if (e && typeof e === "object" && !Array.isArray(e) && isText((e as { text?: unknown }).text)) {
    const raw = (e as { weight?: unknown }).weight;
    if (raw === undefined || raw === null) return { text: (e as { text: string }).text, weight: null };
    if (typeof raw !== "number") {
      ctx.addIssue({ code: "custom", message: `weight: expected a number, got ${describe(raw)}`, path: ["weight"], input: raw });
      return z.NEVER;
    }
    const w = toWeight(raw, ctx, ["weight"]);
    return w === z.NEVER ? z.NEVER : { text: (e as { text: string }).text, weight: w };
  }
  ctx.addIssue({ code: "custom", message: ENTRY_SHAPE, input: e });
  return z.NEVER;
});
export const checklistList = z.array(checklistEntry, { error: (iss) => `expected a list, got ${describe(iss.input)}` });
export const referenceField = z.preprocess(
  blankToUndef,
  z.union([z.string(), z.array(z.string())], { error: (iss) => `expected text or a list of texts, got ${describe(iss.input)}` }).optional(),
);

export function toEntry(e: z.infer<typeof checklistEntry>): ChecklistEntry {
  if (typeof e === "string") return { text: e, weight: null };
  if (Array.isArray(e)) return { text: e[0], weight: e[1] };
  return { text: e.text, weight: e.weight ?? null };
}

/** Reports every zod issue of one row; returns the data or undefined. */
export function check<T extends z.ZodTypeAny>(
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

export const ITEM_FIELDS: FieldSpec[] = [
  { name: "id", aliases: ["item_id", "item", "index", "infer_id", "uid"], required: true, help: "the item's ID in the source" },
  { name: "prompt", aliases: ["query", "question", "instruction", "input", "user_query"], required: true, help: "the prompt" },
  { name: "reference", aliases: ["reference_answer", "answer", "references", "gold"], required: false, help: "reference answer(s)" },
  { name: "domain", aliases: ["field", "category"], required: false, help: "domain" },
  { name: "passage", aliases: ["context", "grounding"], required: false, help: "passage or grounding" },
  { name: "subject", aliases: ["sub_task", "subtask"], required: false, help: "subject" },
  { name: "task_type", aliases: ["type", "exam_type"], required: false, help: "task type" },
  { name: "language", aliases: ["lang"], required: false, help: "language" },
];

export const itemBase = {
  id: reqId,
  prompt: reqText,
  reference: referenceField,
  domain: optText,
  passage: optText,
  subject: optText,
  task_type: optText,
  language: optText,
};

export function itemFrom(d: {
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

/**
 * Labels presets: an optional column naming an imported response (its key, or its model when the
 * item has one response of that model). With it, `unit` names the item, and the unit of the task is
 * that response, so verdicts imported with the `verdicts` preset meet the labels.
 */
export const RESPONSE_LINK: FieldSpec = {
  name: "response",
  aliases: ["response_key", "model"],
  required: false,
  help: "the imported response labelled (key or model; optional)",
};

/** Verdict presets: the base judge this judge is a variant (ablation) of; the judges page's variant table pairs them. */
export const VARIANT_OF: FieldSpec = {
  name: "variant_of",
  aliases: ["variantOf", "base_judge"],
  required: false,
  help: "the base judge this judge is a variant (ablation) of (optional)",
};
