/**
 * The shape every protocol module has. A protocol is pure: it plans the first
 * jobs of a run, and turns one model reply into the records to write and the
 * jobs that follow. The runner persists both in one transaction, so a crash
 * never loses or duplicates a result.
 */
import type { z } from "zod";
import type { LlmRequest } from "../providers/types";
import type { CalibratedMetric, Draw, Estimate, ResponseDraws } from "./calibration";
import type { ResultBlock } from "./result-tables";

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

/** A stored response, as a protocol's results see it. */
export type StoredResponse = { id: number; itemId: number; model: string; turn: number; text: string; metadata: Record<string, unknown> };
/** A stored verdict of the judge being scored. */
export type StoredVerdict = { responseId: number; checklistItemId: number | null; value: string | null; score: number | null };
/** A stored item: the fields a protocol's results group by. */
export type StoredItem = { id: number; taskType: string | null; domain: string | null; metadata: Record<string, unknown> | null };
/** A stored checklist item: its weight, order and whether it is retired. */
export type StoredChecklistItem = { id: number; itemId: number; weight: number | null; position: number; retiredAt: number | null };

/** A job that has not finished well: failed (with the provider's error) or still queued/leased. */
export type OpenJob = {
  status: "failed" | "queued" | "leased";
  step: "generate" | "judge";
  itemId: number;
  model: string;
  turn: number | null;
  condition: string | null;
  judgeId: number | null;
};

/** What a protocol's results are computed from: one judge's verdicts on the run's responses, and the run's open jobs. */
export type ResultsInput = {
  /** The run's stored protocol settings (before defaults). */
  settings: Record<string, unknown>;
  /** The judge being scored, and the run's first judge. */
  judgeId: number;
  primaryJudgeId: number | undefined;
  responses: StoredResponse[];
  /** This judge's verdicts, by response id. */
  byResponse: Map<number, StoredVerdict[]>;
  /** Every open job of the run (every judge). */
  jobs: OpenJob[];
  /** Open generation jobs and this judge's open judge jobs, by jobKey. */
  genJobs: Map<string, OpenJob>;
  judgeJobs: Map<string, OpenJob>;
  jobKey(itemId: number, model: string, extra: string | number | null): string;
  /** Items with a response or a generation job. */
  itemIds: number[];
  /**
   * Whether one response counts: "ok" when it has verdicts (or the run has
   * ended), "failed" when its judge job failed, "pending" while it runs.
   */
  outcome(r: { itemId: number; model: string }, extra: string | null, hasVerdicts: boolean): "ok" | "failed" | "pending";
  items(ids: number[]): StoredItem[];
  checklist(ids: number[]): StoredChecklistItem[];
};

/** What a protocol's calibration targets are computed from, and where they go. */
export type CalibrationInput = {
  /** The run's first judge's verdicts and the run's jobs, as for the results. */
  results: ResultsInput;
  /** The drawn units by unitKey, with their human values. */
  pairs: Map<string, Draw>;
  /** The drawn units grouped by response. */
  byResponse: ResponseDraws;
  /** The task was drawn by whole responses (every checklist pair of a drawn response). */
  wholeResponses: boolean;
  /** The task stored inclusion probabilities (else no corrected values). */
  weighable: boolean;
  /** Adds a metric from a difference estimate, with the standard notes (or `note`). */
  push(metric: string, model: string, group: string | null, r: Estimate, note?: string | null): void;
  /** Adds a metric as given (a combination of estimates). */
  add(m: CalibratedMetric): void;
};

/** The sampling plans of a calibration task (their parameters are chosen on the run page). */
export type PlanKind = "e4" | "stratified" | "responses" | "uniform";

/** The plans of the checklist protocols (RefineBench, FB-Bench) and of Self-Correction Bench, E.4 first. */
export const CHECKLIST_PLANS = [
  { kind: "e4", label: "RefineBench E.4: one checklist item and one response per problem" },
  { kind: "stratified", label: "Stratified by model × turn" },
  { kind: "responses", label: "Whole responses per model × turn (needed for Pass_t and response maintenance)" },
  { kind: "uniform", label: "Uniform: this many units at random (the units-per-stratum field)" },
] as const satisfies readonly { kind: PlanKind; label: string }[];

export type PlanInput<C> = { runId: number; items: ItemData[]; models: ModelRef[]; judges: JudgeRef[]; config: C };

/**
 * A protocol: C is its settings, R what its results() returns for one judge (its
 * figure and tables read the same object).
 */
export interface Protocol<C = Record<string, unknown>, R extends { metrics: unknown } = { metrics: unknown }> {
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
  /**
   * What tells one job of a conversation (item × model) from another in the
   * results: the turn, the condition, or nothing when there is one per conversation.
   */
  /** Turns per conversation at most, from the run's stored settings (the job estimate); 1 when absent. */
  turns?(settings: Record<string, unknown>): number;
  jobStep?(job: { turn: number | null; condition: string | null }): string | number | null;
  /** The protocol's results for one judge: its metrics and any settings shown beside them. */
  results?(input: ResultsInput): R;
  /**
   * A figure of those results (curves of a metric by turn, one per model),
   * drawn by the results page above the tables; null when there is nothing to draw.
   */
  figure?(results: R, judge: string): FigureSpec | null;
  /**
   * Those results as the results page shows them: tables (with the breakdowns),
   * notes, and the table beside the figure, as data (./result-tables.ts) that the
   * page renders for every protocol alike.
   */
  tables?(results: R, judge: string): ResultBlock[];
  /**
   * How the run's first judge is calibrated against human labels: what a
   * human labels (one checklist item of a response, the whole response, or a
   * score on the judge's scale), and the protocol's headline metrics as
   * weighted sums over those units, raw and bias-corrected.
   */
  calibration?: {
    unit: "checklist-item" | "response" | "score";
    /** The sampling plans this protocol's calibration offers, the default first, with the words the run page shows. */
    plans: readonly { kind: PlanKind; label: string }[];
    targets?(input: CalibrationInput): void;
  };
}

/** What a protocol's figure shows: curves (x = turn) with a title; `testId` names the panel for tests. */
export type FigureSpec = { title: string; yMax: number; series: { name: string; points: { x: number; y: number }[] }[]; testId: string };
/** A figure as the page receives it: the SVG the server drew from a FigureSpec (our own chart code, no user markup) and its legend. */
export type ResultsFigure = { svg: string; legend: { name: string; color: string }[]; testId: string };

/**
 * The job that asks `judge` about one reply (`answer`): keyed `<base>:judge<id>`,
 * `:retry<n>` for a re-ask after an unparseable verdict; the answer, the judge
 * and the attempt ride along in the state for onReply.
 */
export function judgeJobSpec(
  base: string,
  judge: { judgeId: number; providerId: number },
  request: LlmRequest,
  state: object,
  answer: string,
  attempt: number,
): JobSpec {
  return {
    key: `${base}:judge${judge.judgeId}${attempt ? `:retry${attempt}` : ""}`,
    payload: { step: "judge", providerId: judge.providerId, request, state: { ...state, answer, judgeId: judge.judgeId, attempt } },
  };
}

export const emptyOutcome = (): Outcome => ({ responses: [], verdicts: [], next: [] });
