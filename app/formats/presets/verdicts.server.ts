import { z } from "zod";
import { parseLabel } from "../labels";
import type { ChecklistRef } from "../writer.server";
import { blankToUndef, check, describe, notFiniteReason, reqId } from "./fields";
import { baseName, eachRow } from "./rows.server";
import { optText, VARIANT_OF } from "./fields";
import type { Preset } from "./types";

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

export const verdictsPreset: Preset = {
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
    VARIANT_OF,
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({
      judge: reqId,
      item: reqId,
      response: reqId,
      checklist_item: z.preprocess(blankToUndef, z.union([z.string(), z.number()]).optional()),
      // Empty is allowed here: the writer keeps it as unparsed on a response with imported labels, and refuses it elsewhere.
      value: z.preprocess(
        blankToUndef,
        z
          .union([z.string(), z.number(), z.boolean()], {
            error: (iss) => notFiniteReason(iss.input) ?? `expected text, a number or yes/no, got ${describe(iss.input)}`,
          })
          .superRefine((v, c) => {
            const infinite = notFiniteReason(v);
            if (infinite) c.addIssue({ code: "custom", message: infinite, input: v });
          })
          .optional(),
      ),
      raw: z.preprocess(
        (v) => (v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v)),
        z.string().optional(),
      ),
      variant_of: optText,
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
          variantOf: d.variant_of?.trim() || null,
        },
        row,
      );
    });
  },
};
