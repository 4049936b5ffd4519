import { createHash } from "node:crypto";
import { z } from "zod";
import { readJsonArray } from "../source.server";
import { check, checklistEntry, optText, reqText, toEntry } from "./fields";
import type { Preset } from "./types";

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
  checklist: z.array(checklistEntry, { error: "expected a list" }),
  reference_second_response: z.string().nullish(),
});

export const fbBench: Preset = {
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
          checklist: d.checklist.map(toEntry),
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
