import { z } from "zod";
import { parseLabel } from "../labels";
import { RESPONSE_LINK, check, notFiniteReason, optId, optText, reqId } from "./fields";
import { baseName, eachRow } from "./rows.server";
import type { Preset } from "./types";

export const labelsLong: Preset = {
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
    const schema = z.object({ unit: reqId, annotator: reqId, label: z.any(), text: optText, response: optId });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      const infinite = notFiniteReason(d.label);
      if (infinite) {
        ctx.sink.error({ row, field: cols.label, message: infinite });
        return;
      }
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
