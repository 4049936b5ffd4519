/** Field helpers (zod) shared by the presets: text, numbers, checklists, items, and the per-row check. */
import { z } from "zod";
import type { ChecklistEntry, ImportWriter, ItemRecord } from "../writer.server";
import type { FieldSpec } from "./types";

export const describe = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "string" ? `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"` : typeof v;

export const blankToUndef = (v: unknown) => (v === null || (typeof v === "string" && v.trim() === "") ? undefined : v);

export const reqText = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z
    .string({ error: (iss) => (iss.input === undefined ? "is missing" : `expected text, got ${describe(iss.input)}`) })
    .refine((s) => s.trim().length > 0, "is empty"),
);
export const optText = z.preprocess(
  (v) => blankToUndef(typeof v === "number" ? String(v) : v),
  z.string({ error: (iss) => `expected text, got ${describe(iss.input)}` }).optional(),
);
export const numberLike = (v: unknown) => {
  const b = blankToUndef(v);
  if (typeof b === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(b)) return Number(b);
  return b;
};
export const optNumber = z.preprocess(numberLike, z.number({ error: (iss) => `expected a number, got ${describe(iss.input)}` }).optional());
export const optTurn = z.preprocess(
  numberLike,
  z
    .number({ error: (iss) => `expected a whole number, got ${describe(iss.input)}` })
    .int("expected a whole number")
    .min(1, "must be 1 or more")
    .optional(),
);

export const checklistEntry = z.union(
  [z.string().min(1), z.tuple([z.string().min(1), z.number()]), z.object({ text: z.string().min(1), weight: z.number().nullish() })],
  { error: "each checklist entry must be a text, a [text, weight] pair or {text, weight}" },
);
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
  id: reqText,
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
