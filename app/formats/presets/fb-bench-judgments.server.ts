import { z } from "zod";
import { fbBenchId } from "./fb-bench.server";
import { check, describe, notFiniteReason, reqId, reqText } from "./fields";
import { eachRecord } from "./rows.server";
import type { Preset } from "./types";

const number = z.number({ error: (iss) => notFiniteReason(iss.input) ?? `expected a number, got ${describe(iss.input)}` });

const fbJudgment = z.object({
  user_query: reqText,
  origin_first_response: z.string(),
  feedback: z.string(),
  second_response: z.string({ error: "is missing" }),
  infer_model: reqId,
  judge_model: reqId,
  judgement: z.record(z.string(), z.object({ 评判结果: z.string().optional(), weight: number.nullish() }).passthrough(), {
    error: "expected an object: checklist item → {评判理由, 评判结果}",
  }),
  score: number.nullish(),
});

export const fbBenchJudgments: Preset = {
  name: "fb-bench-judgments",
  summary:
    "FB-Bench judge output (model_judgment/JUDGE/MODEL.jsonl, or the same records as a JSON array): the model's follow-up response and a 是/否 verdict per checklist item",
  kind: "attach",
  formats: ["jsonl", "json"],
  datasetName: () => "FB-Bench",
  async run(ctx) {
    await eachRecord(
      ctx,
      (raw, row) => {
        const d = check(fbJudgment, raw, row, ctx.sink);
        if (!d) return;
        const item = fbBenchId(d);
        const key = `${d.infer_model}#2`;
        ctx.sink.response({ item, model: d.infer_model, turn: 2, text: d.second_response, key }, row);
        Object.entries(d.judgement).forEach(([text, v], i) => {
          const result = v["评判结果"];
          const value = result === "是" ? "Yes" : result === "否" ? "No" : null;
          ctx.sink.verdict(
            {
              judge: d.judge_model,
              judgeModel: d.judge_model,
              item,
              response: key,
              checklist: { text, position: i + 1 },
              value,
              score: value === "Yes" ? 1 : value === "No" ? 0 : null,
              raw: JSON.stringify(v),
              parseStatus: value ? "ok" : "failed",
            },
            row,
          );
        });
        if (d.score !== undefined && d.score !== null) {
          ctx.sink.verdict(
            {
              judge: d.judge_model,
              judgeModel: d.judge_model,
              item,
              response: key,
              checklist: null,
              value: String(d.score),
              score: d.score,
              raw: null,
            },
            row,
          );
        }
      },
      "Expected FB-Bench judgments: JSON lines, or a JSON array of {user_query, origin_first_response, feedback, second_response, infer_model, judge_model, judgement}.",
    );
  },
};
