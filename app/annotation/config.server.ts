/**
 * The zod schemas of a task's configuration (tasks.config JSON) and of an
 * adjudication, and `readConfig`. Server-only; app/annotation/config.ts
 * re-exports them beside the kinds' constants.
 */
import { z } from "zod";

// Writing quality's scale and penalty reasons, for loaders (config.ts re-exports them for the rest).
export { penaltyReasonsOf, scoreScaleOf } from "~/task-kinds/writing-quality/scale";

export const AdjudicationSchema = z.object({
  label: z.unknown(),
  penaltyReasons: z.record(z.string(), z.array(z.string())).nullable().optional(),
  reason: z.string(),
  by: z.number().int(),
  at: z.number().int(),
});
export type Adjudication = z.infer<typeof AdjudicationSchema>;

export const TaskConfigSchema = z
  .object({
    plan: z.string().optional(),
    models: z.array(z.string()).optional(),
    turn: z.number().int().optional(),
    itemLimit: z.number().int().positive().optional(),
    responsesPerItem: z.number().int().positive().optional(),
    strata: z.enum(["model", "domain", "turn"]).optional(),
    perStratum: z.number().int().positive().optional(),
    showReference: z.boolean().optional(),
    penaltyReasons: z.array(z.string()).optional(),
    /** Writing quality: the top of the 1–N score scale (default 5, the human scale of RAVEL F.1; 10 = the judge's scale, E.1–E.4). */
    scoreMax: z.number().int().min(2).max(10).optional(),
    /** Writing quality: the score the shown reference stands for (default 4, F.1; 6 on the judge's 1–10 scale). */
    referenceScore: z.number().int().min(1).max(10).optional(),
    /** Writing quality: scores below this need a penalty reason (default 3, F.1; 4 on 1–10, whose 1–3 band is "significant errors"). */
    penaltyBelow: z.number().int().min(1).max(10).optional(),
    allowTies: z.boolean().optional(),
    includeReference: z.boolean().optional(),
    n: z.number().int().min(2).max(4).optional(),
    goldRate: z.number().min(0).max(1).optional(),
    pool: z.array(z.number().int()).optional(),
    adjudicators: z.array(z.number().int()).optional(),
    adjudications: z.record(z.string(), AdjudicationSchema).optional(),
  })
  .passthrough();
export type TaskConfig = z.infer<typeof TaskConfigSchema>;

export function readConfig(raw: unknown): TaskConfig {
  const parsed = TaskConfigSchema.safeParse(raw ?? {});
  return parsed.success ? parsed.data : {};
}
