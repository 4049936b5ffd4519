import { z } from "zod";
import { ImportRefusal } from "../problems";
import { readJsonl } from "../source.server";
import { check, optText, reqText } from "./fields";
import { baseName } from "./rows.server";
import type { Preset } from "./types";

const ravelRecord = z.object({
  infer_id: reqText,
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
  summary: "C3EBench / RAVEL task files (english_dataset/TASK/*.jsonl): writing instructions, grounding and a reference text",
  kind: "benchmark",
  formats: ["jsonl"],
  datasetName: (f) => `C3EBench ${baseName(f)}`,
  async run(ctx) {
    let n = 0;
    await readJsonl(ctx.file, {
      row: (raw, row) => {
        n++;
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
      problem: (p) => ctx.sink.error(p),
      bytes: ctx.onBytes,
    });
    if (n === 0 && ctx.sink.errorCount === 0) throw new ImportRefusal("The file has no JSON lines.");
  },
};
