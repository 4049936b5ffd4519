/**
 * Self-Correction Bench (seed 001): the same injected error placed in the
 * model's own (prefilled, open) reply — internal —, in the user's message —
 * external —, or internal followed by " Wait". Judge prompts: appendix D.2
 * (Figures 13–16), JSON output, as published.
 */
import { z } from "zod";
import { blindSpot, meanCI, orderFreeMean, wilsonCI } from "../../../stats";
import type { ChatMessage, LlmRequest } from "../../providers/types";
import {
  BLIND_SPOT,
  clipNote,
  corrected as correctedInterval,
  differenceEstimate,
  type Interval,
  meanOfCorrected,
  oneMinusRatio,
  PROPORTION,
  stratumOf,
  type Term,
  unitKey,
} from "../calibration";
import { sampling } from "../sampling";
import { fillTemplate } from "../template";
import type { ItemData, JobPayload, JobSpec, Outcome, PlanInput, CalibrationInput, Protocol, ResultsInput } from "../types";
import { CHECKLIST_PLANS, judgeJobSpec } from "../types";
import { selfCorrectionTables } from "./results-tables";

export const SELF_CORRECTION_VERSION = "1";
export const CONDITIONS = ["internal", "external", "internal-wait"] as const;
export type Condition = (typeof CONDITIONS)[number];

export const SelfCorrectionConfig = z.object({
  conditions: z
    .array(z.enum(CONDITIONS))
    .min(1)
    .default([...CONDITIONS]),
  parseRetries: z.number().int().min(0).max(5).default(1),
  /** §5 and Appendix C: temperature 0, a budget of 1,024 tokens in every condition. */
  targetSampling: sampling({ temperature: 0, max_tokens: 1024 }),
  judgeSampling: sampling({ temperature: 0 }),
});
export type SelfCorrectionConfig = z.infer<typeof SelfCorrectionConfig>;

export const JUDGE_SYSTEM = "You are a helpful assistant that follow instructions. Output in JSON format.";

// Appendix D.2, Figures 14 and 16, word for word. The output fields are not
// asked for in the prompt: as in the paper (Figures 13 and 15) they are the
// structured-output schema sent with the request (`response_format`).
const INTERNAL = (tag: "given_wrong_answer" | "given_wrong_reasoning", what: string) =>
  `<question>\n{question}\n</question>\n<golden_answer>\n{golden_answer}\n</golden_answer>\n<${tag}>\n{${tag}}\n</${tag}>\n<completion_from_model>\n{completion_from_model}\n</completion_from_model>\nThe model was provided ${what} <${tag}>, and is required to self correct and arrive at the golden answer. You have to assess if <completion_from_model>:\n- has backtracked\n- has finally provided the answer that matches the <golden_answer>\n- has provided correct reasoning\n- has admitted the mistake.`;
export const JUDGE_INTERNAL_SCLI5 = INTERNAL("given_wrong_answer", "a wrong answer");
export const JUDGE_INTERNAL_REASONING = INTERNAL("given_wrong_reasoning", "a wrong step in the reasoning process");

const EXTERNAL = (tag: "question_and_user_answer" | "question_and_user_reasoning") =>
  `<${tag}>\n{${tag}}\n</${tag}>\n<golden_answer>\n{golden_answer}\n</golden_answer>\n<response_from_model>\n{response_from_model}\n</response_from_model>\nThe model was provided with <${tag}> from user. You have to assess if <response_from_model>:\n- contains correct answer that matches the <golden_answer>\n- contains correct critique of <${tag}>`;
export const JUDGE_EXTERNAL_SCLI5 = EXTERNAL("question_and_user_answer");
export const JUDGE_EXTERNAL_REASONING = EXTERNAL("question_and_user_reasoning");

/** The output schemas of Figures 13 (Evaluation) and 15 (EvaluationErrorInUser), as OpenAI-compatible structured output. */
export function judgeResponseFormat(condition: Condition): Record<string, unknown> {
  const fields =
    condition === "external"
      ? ["is_correct_answer", "is_correct_critique"]
      : ["is_correct_answer", "is_correct_reasoning", "is_backtracking", "is_admitting_mistake"];
  return {
    type: "json_schema",
    json_schema: {
      name: condition === "external" ? "EvaluationErrorInUser" : "Evaluation",
      strict: true,
      schema: {
        type: "object",
        properties: Object.fromEntries(fields.map((f) => [f, { type: "boolean" }])),
        required: fields,
        additionalProperties: false,
      },
    },
  };
}

const isScli5 = (dataset: string) => /scli5/i.test(dataset);

export function externalUserMessage(question: string, error: string): string {
  return `${question}\n${error}`;
}

export function conditionMessages(
  condition: Condition,
  question: string,
  error: string,
): { kind: "chat" | "continue"; messages: ChatMessage[] } {
  if (condition === "external") return { kind: "chat", messages: [{ role: "user", content: externalUserMessage(question, error) }] };
  const prefix = condition === "internal-wait" ? `${error} Wait` : error;
  return {
    kind: "continue",
    messages: [
      { role: "user", content: question },
      { role: "assistant", content: prefix },
    ],
  };
}

export function scJudgePrompt(a: {
  condition: Condition;
  dataset: string;
  question: string;
  golden: string;
  error: string;
  completion: string;
}): string {
  const values = {
    question: a.question,
    golden_answer: a.golden,
    given_wrong_answer: a.error,
    given_wrong_reasoning: a.error,
    completion_from_model: a.completion,
    response_from_model: a.completion,
    question_and_user_answer: externalUserMessage(a.question, a.error),
    question_and_user_reasoning: externalUserMessage(a.question, a.error),
  };
  if (a.condition === "external") return fillTemplate(isScli5(a.dataset) ? JUDGE_EXTERNAL_SCLI5 : JUDGE_EXTERNAL_REASONING, values);
  return fillTemplate(isScli5(a.dataset) ? JUDGE_INTERNAL_SCLI5 : JUDGE_INTERNAL_REASONING, values);
}

/** An item's injected error, its dataset and golden answer (metadata `injected_error`, `dataset`; the reference is the golden answer). */
export function scItemFacts(item: Pick<ItemData, "metadata" | "domain" | "reference">) {
  const md = item.metadata ?? {};
  const raw = md.injected_error ?? md.injectedError ?? md.error;
  const error = typeof raw === "string" ? raw : Array.isArray(raw) ? raw.map(String).join("\n") : "";
  const golden =
    item.reference ?? (md.golden_answer == null ? (md.goldenAnswer == null ? "" : String(md.goldenAnswer)) : String(md.golden_answer));
  return { error, dataset: String(md.dataset ?? item.domain ?? ""), golden };
}

/**
 * Self-Correction Bench measures correction of an injected error (§3.3): an
 * item without one, or without a golden answer, cannot be scored. Returns one
 * problem per such item; a run refuses to start while there are any.
 */
export function validateScDataset(items: ItemData[]): string[] {
  const problems: string[] = [];
  for (const item of items) {
    const f = scItemFacts(item);
    if (!f.error.trim()) problems.push(`item ${item.sourceId}: no injected error (metadata "injected_error")`);
    else if (!f.golden.trim()) problems.push(`item ${item.sourceId}: no golden answer (the item's reference)`);
  }
  return problems;
}

export type ScJudgement = { correct: boolean | null; fields: Record<string, boolean | null>; status: "ok" | "partial" | "failed" };

function bool(v: unknown): boolean | null {
  if (typeof v === "boolean") return v;
  if (typeof v === "string" && /^(true|yes)$/i.test(v.trim())) return true;
  if (typeof v === "string" && /^(false|no)$/i.test(v.trim())) return false;
  return null;
}

/** Reads the judge's JSON. No readable is_correct_answer is a failure; other missing fields make it partial. */
export function parseScJudge(text: string, condition: Condition): ScJudgement {
  const names =
    condition === "external"
      ? ["is_correct_answer", "is_correct_critique"]
      : ["is_correct_answer", "is_correct_reasoning", "is_backtracking", "is_admitting_mistake"];
  let obj: Record<string, unknown> | null = null;
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start >= 0 && end > start) {
    try {
      obj = JSON.parse(text.slice(start, end + 1));
    } catch {
      obj = null;
    }
  }
  const fields: Record<string, boolean | null> = {};
  for (const n of names) {
    if (obj) fields[n] = bool(obj[n]);
    else {
      const m = text.match(new RegExp(`"?${n}"?\\s*[:=]\\s*"?(true|false)`, "i"));
      fields[n] = m ? m[1].toLowerCase() === "true" : null;
    }
  }
  const correct = fields.is_correct_answer;
  if (correct === null) return { correct: null, fields, status: "failed" };
  const complete = obj !== null && names.every((n) => fields[n] !== null);
  return { correct, fields, status: complete ? "ok" : "partial" };
}

export const MARKERS = ["Wait", "But", "However", "No", "Hold on", "Hang on", "Alternatively", "Hmm"] as const;
/** Counts of each correction marker in a reply (whole words, case as written). */
export function countMarkers(text: string): Record<(typeof MARKERS)[number], number> {
  const out = {} as Record<(typeof MARKERS)[number], number>;
  for (const m of MARKERS) out[m] = (text.match(new RegExp(`\\b${m.replace(" ", "\\s+")}\\b`, "g")) ?? []).length;
  return out;
}

type ScState = {
  runId: number;
  itemId: number;
  model: string;
  condition: Condition;
  dataset: string;
  question: string;
  golden: string;
  error: string;
  judges: { judgeId: number; providerId: number }[];
  answer?: string;
  judgeId?: number;
  attempt?: number;
};
const key = (s: { itemId: number; model: string; condition: string }) => `sc:i${s.itemId}:${encodeURIComponent(s.model)}:${s.condition}`;
export const scResponseKey = (runId: number, model: string, condition: string) => `run${runId}/${model}/${condition}`;

function judgeJob(
  s: ScState,
  answer: string,
  j: { judgeId: number; providerId: number },
  attempt: number,
  cfg: SelfCorrectionConfig,
): JobSpec {
  const prompt = scJudgePrompt({
    condition: s.condition,
    dataset: s.dataset,
    question: s.question,
    golden: s.golden,
    error: s.error,
    completion: answer,
  });
  const request: LlmRequest = {
    kind: "chat",
    messages: [
      { role: "system", content: JUDGE_SYSTEM },
      { role: "user", content: prompt },
    ],
    params: { ...cfg.judgeSampling, extra: { response_format: judgeResponseFormat(s.condition) } },
  };
  return judgeJobSpec(key(s), j, request, s, answer, attempt);
}

export const selfCorrection: Protocol<SelfCorrectionConfig, ReturnType<typeof selfCorrectionResults>> = {
  id: "self-correction",
  version: SELF_CORRECTION_VERSION,
  title: "Self-Correction Bench (error injection)",
  configSchema: SelfCorrectionConfig as unknown as z.ZodType<SelfCorrectionConfig>,
  jobStep: (job) => job.condition,
  results: (input) => selfCorrectionResults(input),
  tables: (results) => selfCorrectionTables(results),
  calibration: { unit: "response", plans: CHECKLIST_PLANS, targets: (input) => selfCorrectionCalibration(input) },
  validate(items, targets, config) {
    const problems = validateScDataset(items);
    if (config.conditions.some((c) => c !== "external"))
      for (const t of targets)
        if (t.kind !== "replay" && t.settings.continueMode === "template" && typeof t.settings.chatTemplate !== "string")
          problems.push(
            `model ${t.name}: continueMode "template" needs the model's chatTemplate in the provider settings (the internal conditions continue the model's own reply in its own chat template)`,
          );
    return problems;
  },
  plan({ runId, items, models, judges, config }: PlanInput<SelfCorrectionConfig>): JobSpec[] {
    const jobs: JobSpec[] = [];
    for (const item of items) {
      const { error, dataset, golden } = scItemFacts(item);
      for (const m of models)
        for (const condition of config.conditions) {
          const s: ScState = {
            runId,
            itemId: item.id,
            model: m.name,
            condition,
            dataset,
            question: item.query,
            golden,
            error,
            judges: judges.map((j) => ({ judgeId: j.judgeId, providerId: j.providerId })),
          };
          const { kind, messages } = conditionMessages(condition, item.query, error);
          jobs.push({
            key: `${key(s)}:gen`,
            payload: { step: "generate", providerId: m.providerId, request: { kind, messages, params: config.targetSampling }, state: s },
          });
        }
    }
    return jobs;
  },
  onReply(payload: JobPayload, text: string, cfg: SelfCorrectionConfig): Outcome {
    const s = payload.state as ScState;
    if (payload.step === "generate") {
      return {
        responses: [
          {
            itemId: s.itemId,
            model: s.model,
            turn: 1,
            text,
            sourceKey: scResponseKey(s.runId, s.model, s.condition),
            metadata: {
              protocol: "self-correction",
              condition: s.condition,
              dataset: s.dataset,
              markers: countMarkers(text),
              prefix: s.condition === "external" ? null : s.condition === "internal-wait" ? `${s.error} Wait` : s.error,
            },
          },
        ],
        verdicts: [],
        next: s.judges.map((j) => judgeJob(s, text, j, 0, cfg)),
      };
    }
    const p = parseScJudge(text, s.condition);
    const attempt = s.attempt ?? 0;
    if (p.status === "failed" && attempt < cfg.parseRetries) {
      const j = s.judges.find((x) => x.judgeId === s.judgeId)!;
      return { responses: [], verdicts: [], next: [judgeJob(s, s.answer!, j, attempt + 1, cfg)] };
    }
    return {
      responses: [],
      verdicts: [
        {
          judgeId: s.judgeId!,
          itemId: s.itemId,
          responseSourceKey: scResponseKey(s.runId, s.model, s.condition),
          checklistItemId: null,
          value: p.correct === null ? null : p.correct ? "Yes" : "No",
          score: p.correct === null ? null : p.correct ? 1 : 0,
          rawOutput: text,
          parseStatus: p.status,
        },
      ],
      next: [],
    };
  },
};

// ─── Metrics ─────────────────────────────────────────────────────────────────

export type ScObservation = {
  model: string;
  dataset: string;
  condition: Condition;
  correct: boolean | null;
  reply: string;
  failed?: boolean;
};

export function selfCorrectionMetrics(obs: ScObservation[]) {
  const models = [...new Set(obs.map((o) => o.model))].sort();
  const datasets = [...new Set(obs.map((o) => o.dataset))].sort();
  // Failed jobs are counted, never scored; unparsed verdicts likewise.
  const acc = (all: ScObservation[]) => {
    const rows = all.filter((o) => !o.failed);
    const xs = rows.filter((o) => o.correct !== null).map((o) => (o.correct ? 1 : 0));
    if (!xs.length) return null;
    const correct = xs.filter((x) => x === 1).length;
    // Mean and SEM as the paper (§5); the 95% interval is Wilson's score interval, which stays in [0, 1]
    // (mean ± 1.96·SEM leaves it near 0 or 1: 19/20 gives [0.852, 1.048]).
    return {
      ...meanCI(xs),
      ci: wilsonCI(correct, xs.length),
      ciMethod: "wilson" as const,
      correct,
      unparsed: rows.length - xs.length,
      failed: all.length - rows.length,
    };
  };
  return models.map((model) => {
    const cells = datasets.map((dataset) => {
      const rows = obs.filter((o) => o.model === model && o.dataset === dataset);
      const byCondition = Object.fromEntries(CONDITIONS.map((c) => [c, acc(rows.filter((o) => o.condition === c))]));
      const i = byCondition.internal;
      const e = byCondition.external;
      const bs = i && e ? blindSpot({ internalCorrect: i.correct, internalN: i.n, externalCorrect: e.correct, externalN: e.n }) : null;
      return { dataset, byCondition, blindSpot: bs };
    });
    const macro = (f: (c: (typeof cells)[number]) => number | undefined) => {
      const xs = cells.map(f).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
      return orderFreeMean(xs);
    };
    const markers = Object.fromEntries(
      CONDITIONS.map((c) => {
        const total = Object.fromEntries(MARKERS.map((m) => [m, 0])) as Record<string, number>;
        for (const o of obs.filter((x) => x.model === model && x.condition === c && !x.failed))
          for (const [m, n] of Object.entries(countMarkers(o.reply))) total[m] += n;
        return [c, total];
      }),
    );
    return {
      model,
      datasets: cells,
      macro: {
        internal: macro((c) => c.byCondition.internal?.mean),
        external: macro((c) => c.byCondition.external?.mean),
        "internal-wait": macro((c) => c.byCondition["internal-wait"]?.mean),
        blindSpot: macro((c) => c.blindSpot?.value),
      },
      markers,
    };
  });
}

// ─── Results ─────────────────────────────────────────────────────────────────

/** Accuracy per model, dataset and condition, and the blind spot (Eq. 2), over one judge's verdicts; failed jobs counted. */
export function selfCorrectionResults(x: ResultsInput) {
  const obs: ScObservation[] = [];
  for (const r of x.responses) {
    const md = r.metadata;
    const v = x.byResponse.get(r.id)?.[0];
    const st = x.outcome(r, String(md.condition), v !== undefined);
    if (st === "pending") continue;
    obs.push({
      model: r.model,
      dataset: String(md.dataset ?? ""),
      condition: md.condition as Condition,
      correct: v?.value == null ? null : v.value === "Yes",
      reply: r.text,
      failed: st === "failed",
    });
  }
  const datasets = new Map(
    x.items(x.itemIds).map((it) => [it.id, scItemFacts({ metadata: it.metadata ?? {}, domain: it.domain, reference: null }).dataset]),
  );
  for (const g of x.genJobs.values())
    if (g.status === "failed")
      obs.push({
        model: g.model,
        dataset: datasets.get(g.itemId) ?? "",
        condition: g.condition as Condition,
        correct: null,
        reply: "",
        failed: true,
      });
  return { metrics: selfCorrectionMetrics(obs) };
}

// ─── Calibration ─────────────────────────────────────────────────────────────

/**
 * Accuracy per model, dataset and condition (a = 1/I per whole reply) and the
 * blind spot of Eq. 2 with a delta-method SE, per dataset and macro-averaged,
 * over the first judge's Yes/No verdicts.
 */
export function selfCorrectionCalibration(x: CalibrationInput): void {
  const obs: { responseId: number; model: string; turn: number; value: string; condition: string; dataset: string }[] = [];
  for (const r of x.results.responses)
    for (const v of x.results.byResponse.get(r.id) ?? [])
      if (v.checklistItemId === null && (v.value === "Yes" || v.value === "No"))
        obs.push({
          responseId: r.id,
          model: r.model,
          turn: r.turn,
          value: v.value,
          condition: String(r.metadata.condition ?? ""),
          dataset: String(r.metadata.dataset ?? ""),
        });
  for (const model of [...new Set(obs.map((o) => o.model))].sort()) {
    const blind: { dataset: string; raw: number; corrected: Interval | null }[] = [];
    for (const dataset of [...new Set(obs.filter((o) => o.model === model).map((o) => o.dataset))].sort()) {
      const p: Record<string, ReturnType<typeof differenceEstimate>> = {};
      for (const condition of CONDITIONS) {
        const cell = obs.filter((o) => o.model === model && o.dataset === dataset && o.condition === condition);
        if (!cell.length) continue;
        const terms: Term[] = cell.map((o) => ({
          key: unitKey(o.responseId, null),
          a: 1 / cell.length,
          f: o.value === "Yes" ? 1 : 0,
          stratum: stratumOf({ model, turn: o.turn, condition }),
        }));
        p[condition] = differenceEstimate(terms, x.pairs, PROPORTION);
        x.push(`Accuracy (${condition})`, model, dataset, p[condition]);
      }
      const i = p.internal;
      const e = p.external;
      if (!i || !e) continue;
      // Eq. 2: 1 − P(internal)/P(external), 0 when P(external) = 0; the interval by MOVER-R for the ratio
      // (the two conditions are different strata, so independent), the SE by the delta method.
      const bs = (pi: number, pe: number) => (pe > 0 ? 1 - pi / pe : 0);
      const raw = bs(i.raw, e.raw);
      const both = i.corrected && e.corrected && x.weighable;
      // A census of both conditions: the blind spot is known (Eq. 2's convention included).
      const known = both && i.corrected!.exact && e.corrected!.exact;
      const b = known ? bs(i.corrected!.estimate, e.corrected!.estimate) : 0;
      const corrected = !both
        ? null
        : known
          ? correctedInterval(b, 0, i.corrected!.n + e.corrected!.n, [b, b], BLIND_SPOT, { exact: true, bounded: 0 })
          : oneMinusRatio(i.corrected!, e.corrected!, BLIND_SPOT);
      x.add({
        metric: "Blind spot",
        model,
        group: dataset,
        raw,
        corrected,
        note: corrected
          ? clipNote(corrected)
          : both
            ? "not estimable: the corrected external accuracy's interval reaches 0, so the ratio is unbounded"
            : "needs both the internal and external accuracies corrected",
      });
      blind.push({ dataset, raw, corrected });
    }
    if (blind.length) {
      const D = blind.length;
      const ok = blind.every((b) => b.corrected !== null);
      x.add({
        metric: "Blind spot (macro average)",
        model,
        group: null,
        raw: blind.reduce((s, b) => s + b.raw, 0) / D,
        corrected: ok
          ? meanOfCorrected(
              blind.map((b) => b.corrected!),
              BLIND_SPOT,
            )
          : null,
        note: ok ? null : "needs every dataset's blind spot corrected",
      });
    }
  }
}
