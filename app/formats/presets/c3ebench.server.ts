import { z } from "zod";
import { check, optText, reqId, reqText } from "./fields";
import { baseName, eachRecord } from "./rows.server";
import type { Preset } from "./types";

const ravelRecord = z.object({
  infer_id: reqId,
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

export const c3ebench: Preset = {
  name: "c3ebench",
  summary:
    "C3EBench / RAVEL task files (english_dataset/TASK/*.jsonl, or the same records as a JSON array): writing instructions, grounding and a reference text",
  kind: "benchmark",
  formats: ["jsonl", "json"],
  datasetName: (f) => `C3EBench ${baseName(f)}`,
  async run(ctx) {
    await eachRecord(
      ctx,
      (raw, row) => {
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
      "Expected C3EBench records: JSON lines, or a JSON array of {infer_id, task_type, instruction, input, reference}.",
    );
  },
};
