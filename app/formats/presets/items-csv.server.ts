import { z } from "zod";
import type { SourceRecord } from "../source.server";
import type { ImportWriter } from "../writer.server";
import { ITEM_FIELDS, check, itemBase, itemFrom, optText, optWeight, reqId } from "./fields";
import { baseName, eachRow } from "./rows.server";
import type { Preset } from "./types";

export const itemsCsv: Preset = {
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
    const schema = z.object({ ...itemBase, item_id: reqId, id: z.any().optional(), checklist_item: optText, weight: optWeight });
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

/**
 * items-csv's fast path for one row: true when the row was handled, false
 * when it must go through the zod schema (a blank or missing required field,
 * a weight that is not a plain positive number, a weight without a checklist item).
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
          if (!Number.isFinite(weight) || weight <= 0) return false;
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
