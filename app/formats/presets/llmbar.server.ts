import { createHash } from "node:crypto";
import { z } from "zod";
import { readJsonArray } from "../source.server";
import { check, reqText } from "./fields";
import { baseName } from "./rows.server";
import type { Preset } from "./types";

const llmbarRecord = z.object({
  input: reqText,
  output_1: z.string({ error: "is missing" }),
  output_2: z.string({ error: "is missing" }),
  label: z.union([z.literal(1), z.literal(2), z.literal("1"), z.literal("2")], { error: "expected 1 or 2" }),
  results: z
    .array(
      z.record(
        z.string(),
        z.object({ winner: z.union([z.string(), z.number()]).nullish(), completion: z.unknown().optional() }).passthrough(),
      ),
    )
    .optional(),
});

export function llmbarId(r: { input: string; output_1: string; output_2: string }): string {
  return "llmbar-" + createHash("sha256").update(`${r.input}\u0000${r.output_1}\u0000${r.output_2}`).digest("hex").slice(0, 16);
}

/** "…/LLMBar/Adversarial/Neighbor/evaluators/GPT-4/Vanilla/result.json" → dataset "LLMBar Adversarial/Neighbor", judge "GPT-4/Vanilla". */
function llmbarNames(fileName: string): { dataset: string; judge: string } {
  const parts = fileName.split(/[\\/]/);
  const ev = parts.indexOf("evaluators");
  const dataEnd = ev >= 0 ? ev : parts.length - 1;
  let top = -1;
  for (let i = dataEnd - 1; i >= 0; i--)
    if (parts[i] === "LLMBar" || parts[i] === "Processed") {
      top = i;
      break;
    }
  const dataParts = top >= 0 ? parts.slice(top, dataEnd) : [];
  const dataset = dataParts.length ? `LLMBar ${dataParts.join("/").replace(/^LLMBar\//, "")}` : `LLMBar ${baseName(fileName)}`;
  const judge = ev >= 0 ? parts.slice(ev + 1, parts.length - 1).join("/") : "LLMBar judge";
  return { dataset, judge };
}

export const llmbar: Preset = {
  name: "llmbar",
  summary:
    "LLMBar pairwise sets (dataset.json: input, output_1, output_2, gold label) and judge results (evaluators/…/result.json, both orders)",
  kind: "benchmark",
  attachesToExistingVersion: true,
  formats: ["json"],
  datasetName: (f) => llmbarNames(f).dataset,
  async run(ctx) {
    const judge = llmbarNames(ctx.fileName).judge;
    const each = (raw: unknown, row: number) => {
      const d = check(llmbarRecord, raw, row, ctx.sink);
      if (!d) return;
      const item = llmbarId(d);
      const gold = Number(d.label);
      ctx.sink.item({ sourceId: item, query: d.input, metadata: { goldLabel: gold }, references: [] }, row);
      ctx.sink.response({ item, model: "output_1", turn: 1, text: d.output_1, key: "output_1" }, row);
      ctx.sink.response({ item, model: "output_2", turn: 1, text: d.output_2, key: "output_2" }, row);
      for (const result of d.results ?? []) {
        for (const [order, r] of Object.entries(result)) {
          const swapped = /true/i.test(order);
          const winner = r.winner === undefined || r.winner === null ? null : String(r.winner);
          const ok = winner === "1" || winner === "2";
          ctx.sink.verdict(
            {
              judge: swapped ? `${judge} (swapped)` : judge,
              judgeModel: judge.split("/")[0],
              item,
              response: "output_1",
              checklist: null,
              value: ok ? winner : null,
              score: ok ? Number(winner) : null,
              raw: JSON.stringify(r.completion ?? null),
              parseStatus: ok ? "ok" : "failed",
            },
            row,
          );
        }
      }
    };
    await readJsonArray(
      ctx.file,
      { element: each, problem: (p) => ctx.sink.error(p), bytes: ctx.onBytes },
      "Expected LLMBar pairs: a JSON list of {input, output_1, output_2, label}.",
    );
  },
};
