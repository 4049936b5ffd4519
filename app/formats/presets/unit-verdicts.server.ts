import { z } from "zod";
import { parseLabel } from "../labels";
import { CSV_MISSING_TOKENS } from "~/reports/judgeAgreementLabels";
import { check, notFiniteReason, reqId } from "./fields";
import { baseName, eachRow } from "./rows.server";
import { optText, VARIANT_OF } from "./fields";
import type { Preset } from "./types";

export const unitVerdicts: Preset = {
  name: "unit-verdicts",
  summary:
    'Judge verdicts on units of imported labels: unit, judge, verdict (raw optional); out-of-set verdicts and empty answers (JSON "") are kept as unparsed, missing ones (CSV empty, NA, N/A; JSON null) as missing',
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
    VARIANT_OF,
  ],
  datasetName: baseName,
  async run(ctx) {
    const schema = z.object({
      unit: reqId,
      judge: reqId,
      verdict: z.unknown().superRefine((v, c) => {
        const infinite = notFiniteReason(v);
        if (infinite) c.addIssue({ code: "custom", message: infinite, input: v });
      }),
      raw: z.preprocess(
        (v) => (v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v)),
        z.string().optional(),
      ),
      variant_of: optText,
    });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      // Compared as text after trimming (a judge's "1" is the human label 1). Written as missing (a
      // CSV cell empty, NA or N/A; JSON null): no value (the reports count it as missing); an empty
      // answer (JSON ""): the value "" (unparsed), as `npm run judge-agreement` reads the same file.
      const l = parseLabel(d.verdict);
      const text = typeof d.verdict === "string" ? d.verdict.trim() : d.verdict;
      const missing =
        text === null || text === undefined || (ctx.format === "csv" && (text === "" || CSV_MISSING_TOKENS.includes(text as string)));
      ctx.sink.unitVerdict(
        {
          judge: d.judge.trim(),
          unit: d.unit.trim(),
          value: missing ? null : l === null ? "" : String(l),
          score: typeof l === "number" ? l : null,
          raw: d.raw ?? null,
          variantOf: d.variant_of?.trim() || null,
        },
        row,
      );
    });
  },
};
