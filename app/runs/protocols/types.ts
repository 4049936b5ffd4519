/**
 * The shape every protocol module has. A protocol is pure: it plans the first
 * jobs of a run, and turns one model reply into the records to write and the
 * jobs that follow. The runner persists both in one transaction, so a crash
 * never loses or duplicates a result.
 */
import type { z } from "zod";
import type { LlmRequest } from "../providers/types";

export type ChecklistEntry = { id: number; text: string; weight: number | null; position: number };

export type ItemData = {
  id: number;
  sourceId: string;
  query: string;
  passage: string | null;
  domain: string | null;
  subject: string | null;
  taskType: string | null;
  metadata: Record<string, unknown>;
  checklist: ChecklistEntry[];
  reference: string | null;
};

/** A target model: the provider that serves it and the name responses are stored under. */
export type ModelRef = { providerId: number; name: string };
/** What validate() may check of a target model's provider. */
export type TargetInfo = { name: string; kind: string; settings: Record<string, unknown> };
/** A judge: its judges row and the provider that serves it. */
export type JudgeRef = { providerId: number; judgeId: number; name: string };

export type JobPayload = {
  step: "generate" | "judge";
  providerId: number;
  request: LlmRequest;
  /** Protocol state carried from job to job (ids, turn, history). */
  state: Record<string, unknown>;
};

export type JobSpec = { key: string; payload: JobPayload };

export type ResponseWrite = {
  itemId: number;
  model: string;
  turn: number;
  text: string;
  /** Deterministic within the run; verdicts refer to their response by it. */
  sourceKey: string;
  metadata: Record<string, unknown>;
};

export type VerdictWrite = {
  judgeId: number;
  itemId: number;
  responseSourceKey: string;
  checklistItemId: number | null;
  value: string | null;
  score: number | null;
  rawOutput: string;
  parseStatus: "ok" | "partial" | "failed";
};

export type Outcome = {
  responses: ResponseWrite[];
  verdicts: VerdictWrite[];
  next: JobSpec[];
  /** Small summary stored on the job row. */
  result?: unknown;
};

export type PlanInput<C> = { runId: number; items: ItemData[]; models: ModelRef[]; judges: JudgeRef[]; config: C };

export interface Protocol<C = Record<string, unknown>> {
  id: string;
  /** Version of the prompts and parsing; stored on the run and the judges row. */
  version: string;
  title: string;
  configSchema: z.ZodType<C>;
  /**
   * Problems that stop a run before it starts (one line each: the item or
   * model and the reason); empty when the run can go ahead.
   */
  validate?(items: ItemData[], targets: TargetInfo[], config: C): string[];
  plan(input: PlanInput<C>): JobSpec[];
  onReply(payload: JobPayload, text: string, config: C): Outcome;
}

export const emptyOutcome = (): Outcome => ({ responses: [], verdicts: [], next: [] });
