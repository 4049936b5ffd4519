/**
 * Task configuration (tasks.config JSON): kind-specific settings, the pool,
 * adjudicators and adjudications. Pure; shared by server and tests.
 */
import type { TaskConfig } from "./config.server";

export const DEFAULT_PENALTY_REASONS = ["consistency", "accuracy", "fluency", "safety"] as const;

export const PLANS = {
  "checklist-appropriateness": ["all-items"],
  "response-satisfaction": ["paper", "all-items-of-sampled-responses", "stratified"],
  "writing-quality": ["all-responses"],
  "best-of-n": ["sample-n"],
} as const;
export type AnnotatableKind = keyof typeof PLANS;
export const ANNOTATABLE_KINDS = Object.keys(PLANS) as AnnotatableKind[];

export const KIND_TITLES: Record<AnnotatableKind, string> = {
  "checklist-appropriateness": "Checklist appropriateness",
  "response-satisfaction": "Response satisfaction",
  "writing-quality": "Writing quality",
  "best-of-n": "Best-of-N / pairwise",
};

// The zod schemas live in config.server.ts, so that pages importing the
// constants below do not ship zod to the browser (Remix empties `.server`
// modules in the client build; readConfig is only called by loaders and actions).
export { AdjudicationSchema, readConfig, TaskConfigSchema } from "./config.server";
export type { Adjudication, TaskConfig } from "./config.server";

export function penaltyReasonsOf(config: TaskConfig): string[] {
  return config.penaltyReasons && config.penaltyReasons.length > 0 ? config.penaltyReasons : [...DEFAULT_PENALTY_REASONS];
}

/** The writing-quality score scale of a task: 1..max, the reference's score, and the score below which a penalty reason is needed. */
export type ScoreScale = { max: number; reference: number; penaltyBelow: number };
export const DEFAULT_SCORE_SCALE: ScoreScale = { max: 5, reference: 4, penaltyBelow: 3 };
export function scoreScaleOf(config: TaskConfig): ScoreScale {
  return {
    max: config.scoreMax ?? DEFAULT_SCORE_SCALE.max,
    reference: config.referenceScore ?? DEFAULT_SCORE_SCALE.reference,
    penaltyBelow: config.penaltyBelow ?? DEFAULT_SCORE_SCALE.penaltyBelow,
  };
}

export function isAnnotatable(kind: string): kind is AnnotatableKind {
  return kind in PLANS;
}
