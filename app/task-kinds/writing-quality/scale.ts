/** Writing quality's scale and penalty reasons, from the task config (RAVEL F.1 defaults). */
import type { TaskConfig } from "~/annotation/config.server";
import type { ScoreScale } from "../types";

export const DEFAULT_PENALTY_REASONS = ["consistency", "accuracy", "fluency", "safety"] as const;

export function penaltyReasonsOf(config: TaskConfig): string[] {
  return config.penaltyReasons && config.penaltyReasons.length > 0 ? config.penaltyReasons : [...DEFAULT_PENALTY_REASONS];
}

export const DEFAULT_SCORE_SCALE: ScoreScale = { max: 5, reference: 4, penaltyBelow: 3 };
export function scoreScaleOf(config: TaskConfig): ScoreScale {
  return {
    max: config.scoreMax ?? DEFAULT_SCORE_SCALE.max,
    reference: config.referenceScore ?? DEFAULT_SCORE_SCALE.reference,
    penaltyBelow: config.penaltyBelow ?? DEFAULT_SCORE_SCALE.penaltyBelow,
  };
}
