/**
 * Task configuration (tasks.config JSON): kind-specific settings, the pool,
 * adjudicators and adjudications. Pure; shared by server and tests. What each
 * kind does with its settings is declared by the kind (app/task-kinds).
 */
import { TASK_KIND_LIST, type AnnotatableKind } from "~/task-kinds/registry";

export { ANNOTATABLE_KINDS, isAnnotatable, type AnnotatableKind } from "~/task-kinds/registry";
export type { ScoreScale } from "~/task-kinds/types";
export { DEFAULT_PENALTY_REASONS, DEFAULT_SCORE_SCALE, penaltyReasonsOf, scoreScaleOf } from "~/task-kinds/writing-quality/scale";

/** Each kind's sampling plans, the default first. */
export const PLANS = Object.fromEntries(TASK_KIND_LIST.map((k) => [k.id, k.plans])) as Record<
  AnnotatableKind,
  readonly [string, ...string[]]
>;

export const KIND_TITLES = Object.fromEntries(TASK_KIND_LIST.map((k) => [k.id, k.title])) as Record<AnnotatableKind, string>;

// The zod schemas live in config.server.ts, so that pages importing the
// constants above do not ship zod to the browser (Remix empties `.server`
// modules in the client build; readConfig is only called by loaders and actions).
export { AdjudicationSchema, readConfig, TaskConfigSchema } from "./config.server";
export type { Adjudication, TaskConfig } from "./config.server";
