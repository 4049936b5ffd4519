/**
 * FB-Bench (seed 002): a follow-up response to (query, preset response,
 * feedback), judged on a weighted checklist with the human-curated reference
 * follow-up in view.
 *
 * The paper's judge prompt (its Figure 12, Chinese) is an image, not text, in
 * the published PDF; the prompt below follows its described inputs and output
 * (query, preset response, feedback, reference follow-up, checklist; 是/否 per
 * item, temperature 0). It is version "1-fig12-reconstructed" so a verbatim
 * transcription can replace it under a new version.
 */
import { z } from "zod";
import {
  clipNote,
  differenceEstimate,
  meanOfCorrected,
  NO_WHOLE,
  PERCENT,
  responseDraws,
  stratumOf,
  type Term,
  unitKey,
} from "../calibration";
import { parseChecklistLines } from "../checklist-parse";
import { sampling } from "../sampling";
import { fillTemplate } from "../template";
import type { ItemData, JobPayload, JobSpec, Outcome, PlanInput, CalibrationInput, Protocol, ResultsInput, StoredVerdict } from "../types";
import { CHECKLIST_PLANS, judgeJobSpec } from "../types";
import { fbBenchTables } from "./results-tables";
import { orderFreeSum } from "../../../stats/orderFreeSum";

export const FBBENCH_VERSION = "1-fig12-reconstructed";

export const FbBenchConfig = z.object({
  /** Response maintenance: 1 if ANY criterion is met (released code, default) or only if ALL are (paper formula). */
  maintenanceRule: z.enum(["any", "all"]).default("any"),
  parseRetries: z.number().int().min(0).max(5).default(1),
  /**
   * Follow-up generation. Appendix A.2.1: at most 4,096 output tokens; the
   * temperature depends on the task (below) unless set here for every task.
   */
  targetSampling: sampling({ max_tokens: 4096 }),
  /** Appendix A.2.1: 0.7 for text creation and text translation, 0.1 for knowledge Q&A, 0 for every other task. */
  temperatureByTask: z
    .record(z.string(), z.number().min(0).max(2))
    .default({ "Text Creation": 0.7, "Text Translation": 0.7, "Knowledge Q&A": 0.1 }),
  otherTasksTemperature: z.number().min(0).max(2).default(0),
  /** §4.1 (evaluation): the judge at temperature 0 with an output length of 4,096. */
  judgeSampling: sampling({ temperature: 0, max_tokens: 4096 }),
});
export type FbBenchConfig = z.infer<typeof FbBenchConfig>;

export const FB_JUDGE_PROMPT = `你是一名严谨的评审员。请根据给定的检查清单，评估模型在收到用户反馈后的跟进回复是否满足每一项标准。

### 用户问题
{query}

### 模型的初始回复
{preset_response}

### 用户反馈
{feedback}

### 参考跟进回复（人工撰写）
{reference}

### 待评估的模型跟进回复
{follow_up}

### 检查清单
{checklist}

### 输出格式
- 对检查清单中的每一项，按“<序号>: <是或否>”的格式逐行作答。
- 只回答“是”或“否”，不要输出其他内容。

答案：`;

export function fbJudgePrompt(a: {
  query: string;
  preset: string;
  feedback: string;
  reference: string;
  followUp: string;
  checklist: string[];
}): string {
  return fillTemplate(FB_JUDGE_PROMPT, {
    query: a.query,
    preset_response: a.preset,
    feedback: a.feedback,
    reference: a.reference,
    follow_up: a.followUp,
    checklist: a.checklist.map((c, i) => `${i + 1}: ${c}`).join("\n"),
  });
}

export type FbScenario = "error_correction" | "response_maintenance";

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === "string" && v.trim() && v !== "None" ? [v] : []);

/**
 * An item's FB-Bench facts, read from what the `fb-bench` import preset stores
 * for the released fields: `bench_type` ("Error Correction" | "Response
 * Maintenance") as the item's task type (error_correction | response_maintenance)
 * and in metadata, `task_type` as the domain, `origin_first_response`,
 * `feedback`, `error_type` and `feedback_type` (lists) in metadata.
 */
export function fbItemFacts(item: Pick<ItemData, "taskType" | "domain" | "metadata">) {
  const md = item.metadata ?? {};
  const bench = String(md.bench_type ?? item.taskType ?? "")
    .toLowerCase()
    .replace(/[\s-]+/g, "_");
  const scenario: FbScenario | null =
    bench === "response_maintenance" ? "response_maintenance" : bench === "error_correction" ? "error_correction" : null;
  return {
    scenario,
    task: item.domain ?? (md.task_type == null ? null : String(md.task_type)),
    preset: typeof md.origin_first_response === "string" ? md.origin_first_response : null,
    feedback: typeof md.feedback === "string" ? md.feedback : null,
    feedbackTypes: list(md.feedback_type),
    deficiencyTypes: list(md.error_type),
  };
}

/** Items the protocol cannot run: no scenario, no preset first response, no feedback, or no checklist. */
export function validateFbDataset(items: ItemData[]): string[] {
  const problems: string[] = [];
  for (const item of items) {
    const f = fbItemFacts(item);
    const missing = [
      f.scenario ? null : "bench_type",
      f.preset === null ? "origin_first_response" : null,
      f.feedback === null ? "feedback" : null,
      item.checklist.length ? null : "checklist",
    ].filter(Boolean);
    if (missing.length) problems.push(`item ${item.sourceId}: no ${missing.join(", ")} (import FB-Bench with the fb-bench preset)`);
  }
  return problems;
}

type FbState = {
  runId: number;
  itemId: number;
  model: string;
  query: string;
  preset: string;
  feedback: string;
  reference: string;
  checklist: { id: number; text: string }[];
  judges: { judgeId: number; providerId: number }[];
  answer?: string;
  judgeId?: number;
  attempt?: number;
};

const key = (s: { itemId: number; model: string }) => `fb:i${s.itemId}:${encodeURIComponent(s.model)}`;
export const fbResponseKey = (runId: number, model: string) => `run${runId}/${model}/followup`;

function judgeJob(s: FbState, answer: string, j: { judgeId: number; providerId: number }, attempt: number, cfg: FbBenchConfig): JobSpec {
  const prompt = fbJudgePrompt({
    query: s.query,
    preset: s.preset,
    feedback: s.feedback,
    reference: s.reference,
    followUp: answer,
    checklist: s.checklist.map((c) => c.text),
  });
  return judgeJobSpec(
    key(s),
    j,
    { kind: "chat", messages: [{ role: "user", content: prompt }], params: cfg.judgeSampling },
    s,
    answer,
    attempt,
  );
}

export const fbBench: Protocol<FbBenchConfig, ReturnType<typeof fbBenchResults>> = {
  id: "fb-bench",
  version: FBBENCH_VERSION,
  title: "FB-Bench (follow-up to user feedback)",
  configSchema: FbBenchConfig as unknown as z.ZodType<FbBenchConfig>,
  validate: (items) => validateFbDataset(items),
  results: (input) => fbBenchResults(input),
  tables: (results) => fbBenchTables(results),
  calibration: { unit: "checklist-item", plans: CHECKLIST_PLANS, targets: (input) => fbBenchCalibration(input) },
  plan({ runId, items, models, judges, config }: PlanInput<FbBenchConfig>): JobSpec[] {
    const jobs: JobSpec[] = [];
    for (const item of items) {
      const facts = fbItemFacts(item);
      const preset = facts.preset ?? "";
      const feedback = facts.feedback ?? "";
      const temperature =
        config.targetSampling.temperature ??
        (facts.task != null && facts.task in config.temperatureByTask
          ? config.temperatureByTask[facts.task]
          : config.otherTasksTemperature);
      for (const m of models) {
        const s: FbState = {
          runId,
          itemId: item.id,
          model: m.name,
          query: item.query,
          preset,
          feedback,
          reference: item.reference ?? "",
          checklist: item.checklist.map((c) => ({ id: c.id, text: c.text })),
          judges: judges.map((j) => ({ judgeId: j.judgeId, providerId: j.providerId })),
        };
        jobs.push({
          key: `${key(s)}:gen`,
          payload: {
            step: "generate",
            providerId: m.providerId,
            request: {
              kind: "chat",
              messages: [
                { role: "user", content: item.query },
                { role: "assistant", content: preset },
                { role: "user", content: feedback },
              ],
              params: { ...config.targetSampling, temperature },
            },
            state: s,
          },
        });
      }
    }
    return jobs;
  },
  onReply(payload: JobPayload, text: string, cfg: FbBenchConfig): Outcome {
    const s = payload.state as FbState;
    if (payload.step === "generate") {
      return {
        responses: [
          {
            itemId: s.itemId,
            model: s.model,
            turn: 2,
            text,
            sourceKey: fbResponseKey(s.runId, s.model),
            metadata: { protocol: "fb-bench" },
          },
        ],
        verdicts: [],
        next: s.judges.map((j) => judgeJob(s, text, j, 0, cfg)),
      };
    }
    const parsed = parseChecklistLines(text, s.checklist.length, "");
    const attempt = s.attempt ?? 0;
    if (parsed.some((p) => p.status === "failed") && attempt < cfg.parseRetries) {
      const j = s.judges.find((x) => x.judgeId === s.judgeId)!;
      return { responses: [], verdicts: [], next: [judgeJob(s, s.answer!, j, attempt + 1, cfg)] };
    }
    return {
      responses: [],
      verdicts: parsed.map((p, i) => ({
        judgeId: s.judgeId!,
        itemId: s.itemId,
        responseSourceKey: fbResponseKey(s.runId, s.model),
        checklistItemId: s.checklist[i].id,
        value: p.value,
        score: p.value === "Yes" ? 1 : p.value === "No" ? 0 : null,
        rawOutput: text,
        parseStatus: p.status,
      })),
      next: [],
    };
  },
};

// ─── Scores ──────────────────────────────────────────────────────────────────

/**
 * One response's score in [0, 1], or null when a criterion could not be parsed.
 * Error correction: Σ w_j·r_j (weights as given; equal weights when none are set).
 * Response maintenance: 1 if any (or all, by `rule`) criteria are met.
 */
export function fbScore(
  scenario: FbScenario,
  criteria: { weight: number | null; met: boolean | null }[],
  rule: "any" | "all",
): number | null {
  if (criteria.length === 0 || criteria.some((c) => c.met === null)) return null;
  if (scenario === "response_maintenance") return (rule === "any" ? criteria.some((c) => c.met) : criteria.every((c) => c.met)) ? 1 : 0;
  const haveWeights = criteria.every((c) => c.weight !== null);
  const w = criteria.map((c) => (haveWeights ? (c.weight as number) : 1 / criteria.length));
  return criteria.reduce((sum, c, i) => sum + (c.met ? w[i] : 0), 0);
}

export type FbObservation = {
  model: string;
  scenario: FbScenario;
  task: string | null;
  /** An item may carry several feedback types and deficiency types; it counts in each. */
  feedbackTypes: string[];
  deficiencyTypes: string[];
  score: number | null;
  /** The generation or judge job failed: counted, not scored. */
  failed?: boolean;
};

type Cell = { mean: number; n: number };
export type FbModelScores = {
  model: string;
  /** The response-maintenance rule these scores use; shown next to every score. */
  rule: "any" | "all";
  errorCorrection: Cell;
  responseMaintenance: Cell;
  overall: number;
  unparsed: number;
  failed: number;
  byTask: Record<string, Cell>;
  byFeedbackType: Record<string, Cell>;
  byDeficiencyType: Record<string, Cell>;
};

/** Scores ×100; overall = mean of the two scenario scores (§3.3); failed jobs and unparsed verdicts are counted, not scored. */
export function fbBenchScores(obs: FbObservation[], rule: "any" | "all"): FbModelScores[] {
  const models = [...new Set(obs.map((o) => o.model))].sort();
  const cell = (xs: number[]): Cell => ({ mean: xs.length ? (100 * orderFreeSum(xs)) / xs.length : NaN, n: xs.length });
  const group = (rows: FbObservation[], f: (o: FbObservation) => string[]) => {
    const m = new Map<string, number[]>();
    for (const o of rows) {
      if (o.score === null || o.failed) continue;
      for (const k of f(o)) m.set(k, [...(m.get(k) ?? []), o.score]);
    }
    return Object.fromEntries([...m].sort().map(([k, v]) => [k, cell(v)]));
  };
  return models.map((model) => {
    const all = obs.filter((o) => o.model === model);
    const rows = all.filter((o) => !o.failed);
    const ok = rows.filter((o) => o.score !== null);
    const ec = cell(ok.filter((o) => o.scenario === "error_correction").map((o) => o.score!));
    const rm = cell(ok.filter((o) => o.scenario === "response_maintenance").map((o) => o.score!));
    // Overall is defined only when both scenarios have scored items (the paper's mean of the two).
    return {
      model,
      rule,
      errorCorrection: ec,
      responseMaintenance: rm,
      overall: ec.n > 0 && rm.n > 0 ? (ec.mean + rm.mean) / 2 : NaN,
      unparsed: rows.length - ok.length,
      failed: all.length - rows.length,
      byTask: group(rows, (o) => (o.task == null ? [] : [o.task])),
      byFeedbackType: group(rows, (o) => o.feedbackTypes),
      byDeficiencyType: group(
        rows.filter((o) => o.scenario === "error_correction"),
        (o) => o.deficiencyTypes,
      ),
    };
  });
}

// ─── Results ─────────────────────────────────────────────────────────────────

/** Error-correction, response-maintenance and overall scores per model (§3.3), under the run's maintenance rule. */
export function fbBenchResults(x: ResultsInput) {
  const rule = FbBenchConfig.parse(x.settings).maintenanceRule;
  const facts = new Map(
    x.items(x.itemIds).map((i) => [i.id, fbItemFacts({ taskType: i.taskType, domain: i.domain, metadata: i.metadata ?? {} })]),
  );
  const weight = new Map(x.checklist(x.itemIds).map((c) => [c.id, c.weight]));
  const obs: FbObservation[] = [];
  const observe = (itemId: number, model: string, vs: StoredVerdict[], failed: boolean) => {
    const f = facts.get(itemId);
    const scenario: FbScenario = f?.scenario ?? "error_correction";
    obs.push({
      model,
      scenario,
      task: f?.task ?? null,
      feedbackTypes: f?.feedbackTypes ?? [],
      deficiencyTypes: f?.deficiencyTypes ?? [],
      score: vs.length
        ? fbScore(
            scenario,
            vs.map((v) => ({ weight: weight.get(v.checklistItemId!) ?? null, met: v.value == null ? null : v.value === "Yes" })),
            rule,
          )
        : null,
      failed,
    });
  };
  for (const r of x.responses) {
    const vs = x.byResponse.get(r.id) ?? [];
    const st = x.outcome(r, null, vs.length > 0);
    if (st !== "pending") observe(r.itemId, r.model, vs, st === "failed");
  }
  for (const g of x.genJobs.values()) if (g.status === "failed") observe(g.itemId, g.model, [], true);
  return { rule, metrics: fbBenchScores(obs, rule) };
}

// ─── Calibration ─────────────────────────────────────────────────────────────

/**
 * Error correction (a = 100·w_j/I per checklist pair, equal weights when none
 * are set), response maintenance (a = 100/I per response, any/all rule) and
 * their mean, per model, over the first judge's fully parsed responses (§3.3).
 */
export function fbBenchCalibration(x: CalibrationInput): void {
  const rule = FbBenchConfig.parse(x.results.settings).maintenanceRule;
  const checklist = new Map(x.results.checklist(x.results.itemIds).map((c) => [c.id, c]));
  type Row = {
    responseId: number;
    itemId: number;
    model: string;
    turn: number;
    checklistItemId: number;
    value: string | null;
    weight: number | null;
  };
  const byResp = new Map<number, Row[]>();
  for (const r of x.results.responses) {
    const vs = (x.results.byResponse.get(r.id) ?? [])
      .filter((v) => v.checklistItemId !== null && checklist.has(v.checklistItemId))
      .map((v) => ({ v, c: checklist.get(v.checklistItemId!)! }))
      .sort((a, b) => a.c.position - b.c.position || a.c.id - b.c.id)
      .map(({ v, c }) => ({
        responseId: r.id,
        itemId: r.itemId,
        model: r.model,
        turn: r.turn,
        checklistItemId: c.id,
        value: v.value,
        weight: c.weight,
      }));
    if (vs.length) byResp.set(r.id, vs);
  }
  const scenario = new Map(
    x.results
      .items(x.results.itemIds)
      .map((i) => [
        i.id,
        fbItemFacts({ taskType: i.taskType, domain: i.domain, metadata: i.metadata ?? {} }).scenario ?? "error_correction",
      ]),
  );
  // Only fully parsed responses are scored (as in the results).
  const complete = [...byResp.values()].filter((vs) => vs.every((v) => v.value === "Yes" || v.value === "No"));
  for (const model of [...new Set(complete.map((vs) => vs[0].model))].sort()) {
    const mine = complete.filter((vs) => vs[0].model === model);
    const ec = mine.filter((vs) => scenario.get(vs[0].itemId) === "error_correction");
    const rm = mine.filter((vs) => scenario.get(vs[0].itemId) === "response_maintenance");
    const ecTerms: Term[] = ec.flatMap((vs) => {
      const weighted = vs.every((v) => v.weight !== null);
      return vs.map((v) => ({
        key: unitKey(v.responseId, v.checklistItemId),
        a: (100 * (weighted ? v.weight! : 1 / vs.length)) / ec.length,
        f: v.value === "Yes" ? 1 : 0,
        stratum: stratumOf({ model, turn: v.turn, condition: null }),
      }));
    });
    const g = (ys: number[]) => (rule === "any" ? (ys.some((y) => y === 1) ? 1 : 0) : ys.every((y) => y === 1) ? 1 : 0);
    const rmTerms: Term[] = rm.map((vs) => ({
      key: String(vs[0].responseId),
      a: 100 / rm.length,
      f: g(vs.map((v) => (v.value === "Yes" ? 1 : 0))),
      stratum: stratumOf({ model, turn: vs[0].turn, condition: null }),
    }));
    const counts = new Map(mine.map((vs) => [vs[0].responseId, vs.length]));
    const e = differenceEstimate(ecTerms, x.pairs, PERCENT);
    const m = differenceEstimate(
      rmTerms,
      x.wholeResponses ? responseDraws(x.byResponse, (r) => counts.get(r) ?? -1, g) : new Map(),
      PERCENT,
    );
    x.push("Error correction", model, null, e);
    x.push(`Response maintenance (rule: ${rule})`, model, null, m, x.wholeResponses ? null : NO_WHOLE);
    // The mean of the two scenarios (different responses, so independent): MOVER for the sum of their intervals.
    const both = e.corrected && m.corrected && x.weighable ? meanOfCorrected([e.corrected, m.corrected], PERCENT) : null;
    x.add({
      metric: `Overall (rule: ${rule})`,
      model,
      group: null,
      raw: (e.raw + m.raw) / 2,
      corrected: both,
      note: both ? clipNote(both) : "needs both scenarios corrected",
    });
  }
}
