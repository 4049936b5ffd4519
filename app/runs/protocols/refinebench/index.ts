/**
 * RefineBench (seed 000): checklist-graded multi-turn refinement.
 * Prompts: appendix G.1 (user turns) and G.2 (checklist evaluation), as published.
 * Version "1" = the G.1/G.2 text below; change the version when a prompt changes.
 */
import { z } from "zod";
import type { ChatMessage } from "../../providers/types";
import { differenceEstimate, NO_WHOLE, PERCENT, responseDraws, stratumOf, type Term, unitKey } from "../calibration";
import { parseChecklistLines } from "../checklist-parse";
import { sampling } from "../sampling";
import { fillTemplate } from "../template";
import type { ItemData, JobPayload, JobSpec, Outcome, PlanInput, CalibrationInput, Protocol, ResultsInput, VerdictWrite } from "../types";
import { CHECKLIST_PLANS, judgeJobSpec } from "../types";
import { refineBenchTables } from "./results-tables";
import { orderFreeMean, orderFreeSum } from "../../../stats/orderFreeSum";

export const REFINEBENCH_VERSION = "1";

export const SETTINGS = ["self-refinement", "guided", "partially-guided", "criteria-provided"] as const;

export const RefineBenchConfig = z.object({
  setting: z.enum(SETTINGS).default("self-refinement"),
  maxTurns: z.number().int().min(1).max(20).default(5),
  /** Partially guided: share of items that may ever be given as feedback (N' = floor(N·ratio)). */
  knownRatio: z.number().min(0).max(1).default(0.5),
  seed: z.number().int().default(1),
  /** How many times a judge is re-asked when its reply cannot be fully parsed. */
  parseRetries: z.number().int().min(0).max(5).default(1),
  /** Appendix C (implementation details): target top-p 0.9, temperature 1.0, at most 10,000 tokens. Each field can be overridden. */
  targetSampling: sampling({ temperature: 1.0, top_p: 0.9, max_tokens: 10_000 }),
  /** Appendix C: the evaluator LM at top-p 1.0, temperature 0.0, at most 10,000 tokens. */
  judgeSampling: sampling({ temperature: 0, top_p: 1, max_tokens: 10_000 }),
});
export type RefineBenchConfig = z.infer<typeof RefineBenchConfig>;

// ─── Prompts (G.1, G.2) ──────────────────────────────────────────────────────

export const SELF_REFINE_PROMPT =
  "If you think there is absolutely nothing left to refine, respond with “[TERMINATE]”. Otherwise, if there is still room for improvement, continue refining your previous response.";

export const GUIDED_PROMPT = "Please refine your previous response by considering the following feedbacks: {feedback}";

export const CRITERIA_PROMPT =
  "You are provided with evaluation criteria to determine if a given answer satisfies the requirements of the question.\n\n### Evaluation Criteria:\n- {checklist}\n\nConsidering the provided criteria, if you think there is absolutely nothing left to refine, respond with “[TERMINATE]”. Otherwise, if there is still room for improvement, continue refining your previous response. Do not format your response as answers to individual questions within the evaluation criteria.";

export const JUDGE_PROMPT =
  "You will be provided with a model’s answer to the given query and an evaluation checklist that contains multiple questions. Your task is to evaluate the quality of the model’s answer based on the given evaluation checklist that contains multiple questions, by answering “Yes” or “No” to each question.\n\n### Query:\n{query}\n\n### Model’s Answer:\n{model_answer}\n\n### Checklist (Evaluation Items)\n{checklist}\n\n### Output Format:\n- Provide the final answer in the format of “<Q>: <Yes or No>”.\n- Do not provide any decision except “Yes” or “No”.\n- Do not include any additional explanations or descriptions.\n\nAnswer:";

/** "Does the response X?" → "The response should X." (G.1's heuristic). */
export function toFeedback(question: string): string {
  const m = question.trim().match(/^Does the response\s+(.*?)\s*\?*$/is);
  if (m) return `The response should ${m[1]}.`;
  return `The response should satisfy: ${question.trim()}`;
}

export function userQuery(item: Pick<ItemData, "query" | "passage">): string {
  return item.passage ? `${item.passage}\n\n${item.query}` : item.query;
}

export function guidedPrompt(failed: string[]): string {
  return fillTemplate(GUIDED_PROMPT, { feedback: failed.map((q) => `\n- ${toFeedback(q)}`).join("") });
}

export function criteriaPrompt(checklist: string[]): string {
  return fillTemplate(CRITERIA_PROMPT, { checklist: checklist.join("\n- ") });
}

export function judgePrompt(query: string, answer: string, checklist: string[]): string {
  return fillTemplate(JUDGE_PROMPT, { query, model_answer: answer, checklist: checklist.map((q, i) => `Q${i + 1}: ${q}`).join("\n") });
}

export function isTerminate(text: string): boolean {
  return /\[\s*TERMINATE\s*\]/i.test(text);
}

/** Partially guided: the N' = floor(N·ratio) known items, chosen by a seeded shuffle per item. */
export function knownItemIds(checklist: { id: number }[], ratio: number, seed: number, itemId: number): number[] {
  const n = Math.floor(checklist.length * ratio);
  const ids = checklist.map((c) => c.id);
  let s = (seed * 2654435761 + itemId * 40503) >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids.slice(0, n).sort((a, b) => a - b);
}

// ─── Jobs ────────────────────────────────────────────────────────────────────

type Judge = { judgeId: number; providerId: number };
type ConvState = {
  runId: number;
  itemId: number;
  model: string;
  turn: number;
  query: string;
  checklist: { id: number; text: string }[];
  judges: Judge[];
  knownIds: number[] | null;
  messages: ChatMessage[];
};

const enc = (s: string) => encodeURIComponent(s);
const convKey = (s: { itemId: number; model: string }) => `rb:i${s.itemId}:${enc(s.model)}`;
export const responseKey = (runId: number, model: string, turn: number) => `run${runId}/${model}/t${turn}`;

function genJob(state: ConvState, providerId: number, cfg: RefineBenchConfig): JobSpec {
  return {
    key: `${convKey(state)}:t${state.turn}:gen`,
    payload: {
      step: "generate",
      providerId,
      request: { kind: "chat", messages: state.messages, params: cfg.targetSampling },
      state: { ...state, targetProviderId: providerId },
    },
  };
}

function judgeJob(state: ConvState, answer: string, judge: Judge, attempt: number, cfg: RefineBenchConfig): JobSpec {
  const prompt = judgePrompt(
    state.query,
    answer,
    state.checklist.map((c) => c.text),
  );
  const request = { kind: "chat" as const, messages: [{ role: "user" as const, content: prompt }], params: cfg.judgeSampling };
  return judgeJobSpec(`${convKey(state)}:t${state.turn}`, judge, request, state, answer, attempt);
}

export const refineBench: Protocol<RefineBenchConfig, ReturnType<typeof refineBenchResults>> = {
  id: "refinebench",
  version: REFINEBENCH_VERSION,
  title: "RefineBench (checklist-graded refinement)",
  configSchema: RefineBenchConfig as unknown as z.ZodType<RefineBenchConfig>,
  validate: (items) => (items.some((i) => i.checklist.length > 0) ? [] : ["no item of the dataset (or the chosen subset) has a checklist"]),
  turns: (settings) => Number(settings.maxTurns ?? 5),
  jobStep: (job) => job.turn,
  results: (input) => refineBenchResults(input),
  // Pass_t by turn, one curve per model (the paper's turn-wise figures).
  figure: (results, judge) => {
    return {
      title: `Pass_t by turn (${judge})`,
      yMax: 100,
      series: results.metrics.map((m) => ({ name: m.model, points: m.turns.map((t) => ({ x: t.turn, y: t.pass })) })),
      testId: "pass-figure",
    };
  },
  tables: (results, judge) => refineBenchTables(results, judge),
  calibration: { unit: "checklist-item", plans: CHECKLIST_PLANS, targets: (input) => refineBenchCalibration(input) },

  plan({ runId, items, models, judges, config }: PlanInput<RefineBenchConfig>): JobSpec[] {
    const jobs: JobSpec[] = [];
    for (const item of items) {
      if (item.checklist.length === 0) continue;
      const checklist = item.checklist.map((c) => ({ id: c.id, text: c.text }));
      const knownIds = config.setting === "partially-guided" ? knownItemIds(checklist, config.knownRatio, config.seed, item.id) : null;
      for (const m of models) {
        const query = userQuery(item);
        const state: ConvState = {
          runId,
          itemId: item.id,
          model: m.name,
          turn: 1,
          query,
          checklist,
          judges: judges.map((j) => ({ judgeId: j.judgeId, providerId: j.providerId })),
          knownIds,
          messages: [{ role: "user", content: query }],
        };
        jobs.push(genJob(state, m.providerId, config));
      }
    }
    return jobs;
  },

  onReply(payload: JobPayload, text: string, cfg: RefineBenchConfig): Outcome {
    const s = payload.state as ConvState & { targetProviderId: number; answer?: string; judgeId?: number; attempt?: number };
    if (payload.step === "generate") {
      const terminated = s.turn > 1 && isTerminate(text);
      const out: Outcome = {
        responses: [
          {
            itemId: s.itemId,
            model: s.model,
            turn: s.turn,
            text,
            sourceKey: responseKey(s.runId, s.model, s.turn),
            metadata: { protocol: "refinebench", setting: cfg.setting, terminated },
          },
        ],
        verdicts: [],
        next: [],
        result: { terminated },
      };
      if (terminated) return out; // the previous answer stands
      for (const j of s.judges) out.next.push(judgeJob(s, text, j, 0, cfg));
      // Unguided settings need no judgement to continue: the next turn runs alongside the judges.
      if (s.turn < cfg.maxTurns && (cfg.setting === "self-refinement" || cfg.setting === "criteria-provided")) {
        const prompt = cfg.setting === "self-refinement" ? SELF_REFINE_PROMPT : criteriaPrompt(s.checklist.map((c) => c.text));
        const next: ConvState = {
          ...stripJobState(s),
          turn: s.turn + 1,
          messages: [...s.messages, { role: "assistant", content: text }, { role: "user", content: prompt }],
        };
        out.next.push(genJob(next, s.targetProviderId, cfg));
      }
      return out;
    }

    // Judge reply
    const parsed = parseChecklistLines(text, s.checklist.length, "Q");
    const attempt = s.attempt ?? 0;
    const complete = parsed.every((p) => p.status !== "failed");
    const judge = s.judges.find((j) => j.judgeId === s.judgeId)!;
    if (!complete && attempt < cfg.parseRetries) {
      return {
        responses: [],
        verdicts: [],
        next: [judgeJob(stripJobState(s), s.answer!, judge, attempt + 1, cfg)],
        result: { reparse: attempt + 1 },
      };
    }
    const verdicts: VerdictWrite[] = parsed.map((p, i) => ({
      judgeId: s.judgeId!,
      itemId: s.itemId,
      responseSourceKey: responseKey(s.runId, s.model, s.turn),
      checklistItemId: s.checklist[i].id,
      value: p.value,
      score: p.value === "Yes" ? 1 : p.value === "No" ? 0 : null,
      rawOutput: text,
      parseStatus: p.status,
    }));
    const out: Outcome = {
      responses: [],
      verdicts,
      next: [],
      result: { parsed: parsed.map((p) => p.value), failed: parsed.filter((p) => p.status === "failed").length },
    };
    const primary = s.judges[0]?.judgeId === s.judgeId;
    if (primary && s.turn < cfg.maxTurns && (cfg.setting === "guided" || cfg.setting === "partially-guided")) {
      // The conversation continues while ANY checklist item fails (§3.2): in the
      // partially guided setting only the known failing items are given as
      // feedback; when every failing item is unknown, the model gets no feedback
      // and must find them itself (the G.1 self-refinement turn).
      const allowed = s.knownIds ? new Set(s.knownIds) : null;
      const failingAll = s.checklist.filter((_c, i) => parsed[i].value === "No");
      const failing = failingAll.filter((c) => !allowed || allowed.has(c.id));
      if (failingAll.length > 0) {
        const prompt = failing.length > 0 ? guidedPrompt(failing.map((c) => c.text)) : SELF_REFINE_PROMPT;
        const next: ConvState = {
          ...stripJobState(s),
          turn: s.turn + 1,
          messages: [...s.messages, { role: "assistant", content: s.answer! }, { role: "user", content: prompt }],
        };
        out.next.push(genJob(next, s.targetProviderId, cfg));
      } else {
        out.result = {
          ...(out.result as object),
          stopped: parsed.some((p) => p.value === null) ? "judge-unparseable" : "no-feedback-left",
        };
      }
    }
    return out;
  },
};

function stripJobState<T extends ConvState>(s: T): ConvState & { targetProviderId: number } {
  const { answer: _a, judgeId: _j, attempt: _t, ...rest } = s as T & { answer?: string; judgeId?: number; attempt?: number };
  return rest as unknown as ConvState & { targetProviderId: number };
}

// ─── Metrics ─────────────────────────────────────────────────────────────────

export type RbObservation = {
  model: string;
  itemId: number;
  turn: number;
  /** The reply was [TERMINATE]: this turn and the following carry the previous answer. */
  terminated: boolean;
  /** Verdicts of one judge on this turn's response (empty when terminated). */
  verdicts: { checklistItemId: number; value: "Yes" | "No" | null }[];
  /**
   * A job of this turn failed (the provider's error after its retries): the
   * generation (no response; the conversation cannot go on), or this judge's
   * call. A failure is counted, never imputed.
   */
  failed?: "generate" | "judge";
  /** The failed judge drove the conversation (guided settings): no later turn could be asked. */
  breaksChain?: boolean;
  /** A job of this turn has not finished yet. */
  pending?: boolean;
};

export type RbTurnMetrics = {
  turn: number;
  acc: number;
  pass: number;
  /** Instances scored at this turn (the metrics are over these only). */
  n: number;
  /** Instances whose generation or judge job failed at this turn or earlier in the conversation. */
  failed: number;
  /** Instances whose verdicts at this turn contain an unparseable item. */
  unparsed: number;
  /** Instances not finished yet at this turn. */
  pending: number;
  accKnown?: number;
  accUnknown?: number;
};
export type RbModelMetrics = {
  model: string;
  turns: RbTurnMetrics[];
  /** Pass_T − Pass_1 (T = last turn). */
  delta: number;
  /** Self-refinement: instances that sent [TERMINATE], by turn; mean termination turn over those. */
  termination: { byTurn: Record<number, number>; mean: number | null; never: number };
  /** Pass transitions between consecutive turns, summed over turns. */
  transitions: { correctToCorrect: number; correctToIncorrect: number; incorrectToCorrect: number; incorrectToIncorrect: number };
};

const FAILED = Symbol("failed");

/**
 * Acc_t = 100·mean(N_c/N), Pass_t = 100·mean(all satisfied) (§3.3), over the
 * instances scored at turn t. After [TERMINATE] (the previous answer stands,
 * G.1) or after a guided conversation had nothing left to refine, the last
 * judged answer carries forward. Nothing else is carried: an instance whose
 * generation or judge call failed at turn t is counted in `failed` at t (and,
 * when the conversation could not go on, at every later turn); an instance
 * whose verdicts at t contain a parse failure is counted in `unparsed` —
 * neither is ever scored as "No" nor given an earlier turn's verdicts.
 */
export function refineBenchMetrics(
  obs: RbObservation[],
  opts: {
    maxTurns: number;
    knownIds?: Map<number, Set<number>>;
    /** Called for every instance scored at a turn, with the turn whose answer it scores (calibration weighs human labels by it). */
    onScored?: (s: {
      model: string;
      itemId: number;
      turn: number;
      fromTurn: number;
      verdicts: { checklistItemId: number; value: "Yes" | "No" | null }[];
    }) => void;
  },
): RbModelMetrics[] {
  const byModel = new Map<string, Map<number, Map<number, RbObservation>>>();
  for (const o of obs) {
    const m = byModel.get(o.model) ?? new Map();
    byModel.set(o.model, m);
    const conv = m.get(o.itemId) ?? new Map();
    m.set(o.itemId, conv);
    conv.set(o.turn, o);
  }
  const out: RbModelMetrics[] = [];
  const T = opts.maxTurns;
  for (const [model, convs] of [...byModel].sort((a, b) => a[0].localeCompare(b[0]))) {
    const acc: number[][] = Array.from({ length: T }, () => []);
    const pass: number[][] = Array.from({ length: T }, () => []);
    const accK: number[][] = Array.from({ length: T }, () => []);
    const accU: number[][] = Array.from({ length: T }, () => []);
    const unparsed = new Array(T).fill(0);
    const failed = new Array(T).fill(0);
    const pending = new Array(T).fill(0);
    const termination = { byTurn: {} as Record<number, number>, mean: null as number | null, never: 0 };
    const transitions = { correctToCorrect: 0, correctToIncorrect: 0, incorrectToCorrect: 0, incorrectToIncorrect: 0 };
    const termTurns: number[] = [];
    for (const [itemId, conv] of convs) {
      let carried: RbObservation["verdicts"] | typeof FAILED | null = null;
      let carriedFrom = 0;
      let stopped = false;
      let broken = false;
      let prevPass: boolean | null = null;
      let terminatedAt: number | null = null;
      const lastTurn = Math.max(...conv.keys());
      for (let t = 1; t <= T; t++) {
        const o = conv.get(t);
        if (broken || o?.failed === "generate") {
          failed[t - 1]++;
          broken = true;
          prevPass = null;
          continue;
        }
        if (o?.pending) {
          pending[t - 1]++;
          carried = null;
          prevPass = null;
          continue;
        }
        if (o?.failed === "judge") {
          failed[t - 1]++;
          carried = FAILED;
          prevPass = null;
          if (o.breaksChain) broken = true;
          continue;
        }
        let v: RbObservation["verdicts"] | typeof FAILED | null;
        if (o && o.terminated) {
          terminatedAt ??= t;
          stopped = true;
          v = carried;
        } else if (o && o.verdicts.length > 0) {
          v = o.verdicts;
          carriedFrom = t;
        } else if (!o && carried && (stopped || t > lastTurn)) {
          // Conversation ended early (terminated, or guided refinement had nothing left): the last answer stands.
          stopped = true;
          v = carried;
        } else v = null;
        if (v === FAILED) {
          failed[t - 1]++;
          prevPass = null;
          continue;
        }
        if (!v) {
          pending[t - 1]++;
          prevPass = null;
          continue;
        }
        carried = v;
        if (v.some((x) => x.value === null)) {
          unparsed[t - 1]++;
          prevPass = null;
          continue;
        }
        const yes = v.filter((x) => x.value === "Yes").length;
        const p = yes === v.length;
        acc[t - 1].push(yes / v.length);
        pass[t - 1].push(p ? 1 : 0);
        opts.onScored?.({ model, itemId, turn: t, fromTurn: carriedFrom, verdicts: v });
        const known = opts.knownIds?.get(itemId);
        if (known) {
          const k = v.filter((x) => known.has(x.checklistItemId));
          const u = v.filter((x) => !known.has(x.checklistItemId));
          if (k.length) accK[t - 1].push(k.filter((x) => x.value === "Yes").length / k.length);
          if (u.length) accU[t - 1].push(u.filter((x) => x.value === "Yes").length / u.length);
        }
        if (prevPass !== null) {
          if (prevPass && p) transitions.correctToCorrect++;
          else if (prevPass && !p) transitions.correctToIncorrect++;
          else if (!prevPass && p) transitions.incorrectToCorrect++;
          else transitions.incorrectToIncorrect++;
        }
        prevPass = p;
      }
      if (terminatedAt !== null) {
        termination.byTurn[terminatedAt] = (termination.byTurn[terminatedAt] ?? 0) + 1;
        termTurns.push(terminatedAt);
      } else termination.never++;
    }
    termination.mean = termTurns.length ? orderFreeMean(termTurns) : null;
    const mean = (xs: number[]) => (xs.length ? (100 * orderFreeSum(xs)) / xs.length : NaN);
    const turns: RbTurnMetrics[] = acc.map((_, i) => ({
      turn: i + 1,
      acc: mean(acc[i]),
      pass: mean(pass[i]),
      n: acc[i].length,
      failed: failed[i],
      unparsed: unparsed[i],
      pending: pending[i],
      ...(opts.knownIds ? { accKnown: mean(accK[i]), accUnknown: mean(accU[i]) } : {}),
    }));
    out.push({ model, turns, delta: turns[turns.length - 1].pass - turns[0].pass, termination, transitions });
  }
  return out;
}

// ─── Results ─────────────────────────────────────────────────────────────────

/** RefineBench observations of one judge (with failures and unfinished jobs), for the results and for calibration. */
export function refineBenchInputs(x: ResultsInput) {
  const { responses, byResponse, jobs, judgeJobs, genJobs, jobKey, itemIds, primaryJudgeId } = x;
  const settings = RefineBenchConfig.parse(x.settings);
  const guided = settings.setting === "guided" || settings.setting === "partially-guided";
  const primary = primaryJudgeId === x.judgeId;
  const obs: RbObservation[] = responses.map((r) => {
    const vs = byResponse.get(r.id) ?? [];
    const terminated = Boolean(r.metadata.terminated);
    const jj = judgeJobs.get(jobKey(r.itemId, r.model, r.turn));
    // The primary judge drives guided feedback: when ITS call failed, no later turn could be asked.
    const failedJudge = !terminated && vs.length === 0 && jj?.status === "failed";
    const breaksChain =
      failedJudge && guided && !primary
        ? jobs.some(
            (j) =>
              j.step === "judge" &&
              j.status === "failed" &&
              j.judgeId === primaryJudgeId &&
              j.itemId === r.itemId &&
              j.model === r.model &&
              j.turn === r.turn,
          )
        : failedJudge && guided;
    return {
      model: r.model,
      itemId: r.itemId,
      turn: r.turn,
      terminated,
      verdicts: vs.map((v) => ({ checklistItemId: v.checklistItemId!, value: v.value as "Yes" | "No" | null })),
      ...(failedJudge ? { failed: "judge" as const, breaksChain } : {}),
      ...(!terminated && vs.length === 0 && jj && jj.status !== "failed" ? { pending: true } : {}),
    };
  });
  for (const g of genJobs.values())
    if (g.turn !== null)
      obs.push({
        model: g.model,
        itemId: g.itemId,
        turn: g.turn,
        terminated: false,
        verdicts: [],
        ...(g.status === "failed" ? { failed: "generate" as const } : { pending: true }),
      });
  // In guided settings, a non-primary judge's conversation also stops where the primary judge's call failed.
  if (guided && !primary)
    for (const j of jobs)
      if (j.step === "judge" && j.status === "failed" && j.judgeId === primaryJudgeId && j.turn !== null) {
        const o = obs.find((y) => y.itemId === j.itemId && y.model === j.model && y.turn === j.turn);
        if (o) o.breaksChain = true;
      }
  let knownIds: Map<number, Set<number>> | undefined;
  if (settings.setting === "partially-guided") {
    knownIds = new Map();
    const cl = x.checklist(itemIds);
    for (const id of itemIds)
      knownIds.set(
        id,
        new Set(
          knownItemIds(
            cl.filter((c) => c.itemId === id && c.retiredAt == null).sort((a, b) => a.position - b.position || a.id - b.id),
            settings.knownRatio,
            settings.seed,
            id,
          ),
        ),
      );
  }
  return { settings, obs, knownIds };
}

/** Acc_t and Pass_t per model and turn (§3.3), with the setting and turn count they were run with. */
export function refineBenchResults(x: ResultsInput) {
  const { settings, obs, knownIds } = refineBenchInputs(x);
  return {
    setting: settings.setting,
    maxTurns: settings.maxTurns,
    metrics: refineBenchMetrics(obs, { maxTurns: settings.maxTurns, knownIds }),
  };
}

// ─── Calibration ─────────────────────────────────────────────────────────────

/**
 * Acc_t (a = 100/(I_t·N_i) per checklist pair) and Pass_t (a = 100/I_t per
 * response, all pairs satisfied) per model and turn, as sums over the units
 * the first judge scored at t (§3.3); Pass_t is corrected only from whole
 * drawn responses.
 */
export function refineBenchCalibration(x: CalibrationInput): void {
  const { obs, settings } = refineBenchInputs(x.results);
  const rid = new Map(x.results.responses.map((r) => [`${r.itemId}\u0000${r.model}\u0000${r.turn}`, r.id]));
  const scored: {
    model: string;
    itemId: number;
    turn: number;
    fromTurn: number;
    verdicts: { checklistItemId: number; value: "Yes" | "No" | null }[];
  }[] = [];
  refineBenchMetrics(obs, { maxTurns: settings.maxTurns, onScored: (s) => scored.push(s) });
  const models = [...new Set(scored.map((s) => s.model))].sort();
  const checklistCount = new Map<number, number>();
  for (const model of models)
    for (let t = 1; t <= settings.maxTurns; t++) {
      const inst = scored.filter((s) => s.model === model && s.turn === t);
      if (!inst.length) continue;
      const acc: Term[] = [];
      const pass: Term[] = [];
      for (const s of inst) {
        const r = rid.get(`${s.itemId}\u0000${model}\u0000${s.fromTurn}`)!;
        const stratum = stratumOf({ model, turn: s.fromTurn, condition: null });
        checklistCount.set(r, s.verdicts.length);
        for (const v of s.verdicts)
          acc.push({
            key: unitKey(r, v.checklistItemId),
            a: 100 / (inst.length * s.verdicts.length),
            f: v.value === "Yes" ? 1 : 0,
            stratum,
          });
        pass.push({ key: String(r), a: 100 / inst.length, f: s.verdicts.every((v) => v.value === "Yes") ? 1 : 0, stratum });
      }
      x.push(`Acc_${t}`, model, null, differenceEstimate(acc, x.pairs, PERCENT));
      const pr = differenceEstimate(
        pass,
        x.wholeResponses
          ? responseDraws(
              x.byResponse,
              (r) => checklistCount.get(r) ?? -1,
              (ys) => (ys.every((y) => y === 1) ? 1 : 0),
            )
          : new Map(),
        PERCENT,
      );
      x.push(`Pass_${t}`, model, null, pr, x.wholeResponses ? null : NO_WHOLE);
    }
}
