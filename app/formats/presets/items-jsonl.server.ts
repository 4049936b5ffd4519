import { z } from "zod";
import { ITEM_FIELDS, blankToUndef, check, checklistList, itemBase, itemFrom, toEntry } from "./fields";
import { baseName, eachRow } from "./rows.server";
import type { Preset } from "./types";

export const itemsJsonl: Preset = {
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
