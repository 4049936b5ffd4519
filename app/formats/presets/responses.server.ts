import { z } from "zod";
import { check, optId, optTurn, reqId } from "./fields";
import { baseName, eachRow } from "./rows.server";
import type { Preset } from "./types";

export const responsesPreset: Preset = {
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
      item: reqId,
      model: reqId,
      turn: optTurn,
      text: z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string({ error: "is missing" })),
      response_id: optId,
    });
    await eachRow(ctx, this.fields!, (m, row, _r, cols) => {
      const d = check(schema, m, row, ctx.sink, cols);
      if (!d) return;
      ctx.sink.response({ item: d.item.trim(), model: d.model.trim(), turn: d.turn ?? 1, text: d.text, key: d.response_id }, row);
    });
  },
};
