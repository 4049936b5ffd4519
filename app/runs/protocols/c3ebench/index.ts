/**
 * RAVEL / C3EBench writing judge (seed 003): task-specific prompts E.1–E.4
 * (End2End, Cloze, Expand, Edit) as published, each followed by the fields it
 * compares; a 1–10 score taken from the judge's JSON; reported per task type.
 */
import { z } from "zod";
import { sampling } from "../sampling";
import type { ItemData, JobPayload, JobSpec, Outcome, PlanInput, Protocol, ResultsInput } from "../types";
import { judgeJobSpec } from "../types";
import { c3eBenchTables } from "./results-tables";
import { orderFreeMean } from "../../../stats/orderFreeSum";

export const C3EBENCH_VERSION = "1";
export const TASK_TYPES = ["End2End", "Cloze", "Expand", "Edit"] as const;
export type C3eTaskType = (typeof TASK_TYPES)[number];

export const C3eBenchConfig = z.object({
  parseRetries: z.number().int().min(0).max(5).default(1),
  /** §5.1: every model generates with temperature 0.7. */
  targetSampling: sampling({ temperature: 0.7 }),
  /** The paper gives no judge sampling; temperature 0 for determinism. */
  judgeSampling: sampling({ temperature: 0 }),
});
export type C3eBenchConfig = z.infer<typeof C3eBenchConfig>;

export const C3E_PROMPTS: Record<C3eTaskType, string> = {
  End2End:
    '# Role\nYou are a versatile literary editor and critic specializing in instruction adherence and creative quality across essays, poetry, and fiction.\n# Evaluation Criteria\nInstruction Adherence (Completion of core requirements), Structure & Logic (Genre-appropriate framework), Creativity & Diversity (Idiomatic vocabulary), Form & Format (Visual layout).\n# Scoring Rubric (Baseline: 6)\n8–10: Exceptional creativity or depth; infectious language.\n6–7: Fully satisfies instructions with smooth prose.\n4–5: Follows instructions superficially; lacks depth.\n1–3: Significant language barriers or wrong format.\n# Output Format (JSON)\n{ "score": [1-10], "analysis": { "instruction_and_logic": "...", "language_and_creativity": "...", "format_check": "..." }, "verdict": "..." }',
  Cloze:
    '# Role\nYou are an expert professor specializing in textual logic and semantic analysis. Your task is to evaluate the quality gap between a generated text and a standard Reference in a Cloze (fill-in-the-blank) task.\n# Task & Data Fields\nCompare the following fields: 1. [Context], 2. [Reference Answer] (Baseline: 6 points), 3. [Candidate Answer].\n# Evaluation Criteria\nSemantic Fit: Accuracy of meaning within the context.\nCohesion: Naturalness of transitions between sentences.\nGrammar & Expression: Correctness of word collocations and syntax.\nComparison Gap: Whether Candidate optimizes expression or introduces errors.\n# Scoring Rubric (1–10)\nUse Reference as 6-point baseline:\n8–10: Superior to Reference. More idiomatic or sophisticated.\n6–7: Equal or slightly better. Completely fluent.\n4–5: Sub-par. Semantically correct but awkward.\n1–3: Significant errors. Logical breaks or inappropriate context.\n# Output Format (JSON)\n{ "score": [1-10], "critique": { "pros_cons": "...", "key_reason": "..." }, "verdict": "..." }',
  Expand:
    '# Role\nYou are a chief judge proficient in multi-genre literary creation and editing, specializing in assessing works based on outline fidelity and artistic creativity.\n# Evaluation Criteria (Traits)\nOutline Fidelity: Coverage of key nodes (years, names, philosophies).\nGenre Suitability: Matches characteristics of target genre.\nLogical Flow: Organic integration rather than mechanical listing.\nCreativity: Vividness and rhetorical richness compared to Reference.\n# Scoring Rubric (1–10)\n9–10: Perfectly covers outline; infectious prose.\n7–8: Accurately follows outline; clear logic.\n6: Baseline (Equal to Sample).\n4–5: Stiff logic or misses 1–2 minor details.\n1–3: Severely deviates or wrong genre.\n# Output Format (JSON)\n{ "score": [1-10], "analysis": { "outline_completeness": "...", "logic_and_style": "...", "vs_reference": "..." }, "verdict": "..." }',
  Edit: '# Role\nSenior literary editor specializing in evaluating a writer’s revision ability by comparing Draft, Critique, and Reference.\n# Evaluation Criteria (Traits)\nInstruction Adherence: Replacing “telling” with “showing.”\nLiterary Tension: Conveying raw emotion rather than “safe” observations.\nImagery Precision: Details carrying the weight of the theme.\nFlow & Pace: Unexpected perspectives or psychological shifts.\n# Output Format (JSON)\n{ "score": [1-10], "critique_fulfillment": { "imagery_change": "...", "emotional_depth": "...", "ending_treatment": "..." }, "vs_reference": "...", "verdict": "..." }',
};

/**
 * The prompt family of a task type. The released English files say `cloze`,
 * `edit`, `condition` (= Expand: the input is an outline) and `end2end`; an
 * unknown type is null (the run refuses it rather than judging it with the
 * wrong prompt).
 */
export function taskTypeOf(raw: string | null | undefined): C3eTaskType | null {
  const t = (raw ?? "").toLowerCase().replace(/[^a-z0-9]/g, "");
  if (t.startsWith("cloze")) return "Cloze";
  if (t.startsWith("expand") || t.startsWith("condition")) return "Expand";
  if (t.startsWith("edit")) return "Edit";
  if (t.startsWith("end2end") || t === "endtoend") return "End2End";
  return null;
}

/** Items whose task type is not one of the four, or that have no reference (every prompt compares with it). */
export function validateC3eDataset(items: ItemData[]): string[] {
  const problems: string[] = [];
  for (const item of items) {
    if (!taskTypeOf(item.taskType))
      problems.push(`item ${item.sourceId}: task type "${item.taskType ?? ""}" is not cloze, edit, condition/expand or end2end`);
    else if (!item.reference) problems.push(`item ${item.sourceId}: no reference text`);
  }
  return problems;
}

const GROUNDING_LABEL: Record<C3eTaskType, string> = {
  End2End: "Context",
  Cloze: "Context",
  Expand: "Outline",
  Edit: "Draft and Critique",
};

/**
 * The grounding G of an item (§3.1, Figure 3) from RAVEL's `input` object as
 * released: Cloze {prefix, suffix} (the context around the blank), Edit
 * {content, critique} (the draft and its critique), Expand — code name
 * `condition` — {genre, brief, condition, audience, word} (the outline
 * G_outline is `condition`; E.3 also judges genre suitability), End2End
 * {genre, brief, audience, word}. Every field the file gives reaches the model
 * and the judge, under a readable name. Without such an object (an item
 * imported otherwise) the item's stored passage is the grounding.
 */
export function c3eGrounding(taskType: C3eTaskType, input: unknown, passage: string | null): string | null {
  if (!input || typeof input !== "object" || Array.isArray(input)) return passage;
  const o = input as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
  const has = (k: string) => s(o[k]).trim() !== "";
  if (taskType === "Cloze" && ("prefix" in o || "suffix" in o)) return `${s(o.prefix)}[fill in the blank]${s(o.suffix)}`;
  if (taskType === "Edit" && ("content" in o || "critique" in o)) return `Draft:\n${s(o.content)}\n\nCritique:\n${s(o.critique)}`;
  if (taskType === "Expand" || taskType === "End2End") {
    const named: [string, string][] = [
      ["condition", "Outline"],
      ["genre", "Genre"],
      ["brief", "Brief"],
      ["audience", "Audience"],
      ["word", "Word count"],
    ];
    const known = new Set(named.map(([k]) => k));
    const lines = [
      ...named.filter(([k]) => has(k)).map(([k, label]) => `${label}: ${s(o[k])}`),
      ...Object.keys(o)
        .filter((k) => !known.has(k) && has(k))
        .map((k) => `${k}: ${s(o[k])}`),
    ];
    if (lines.length) return lines.join("\n");
  }
  return passage;
}

export function c3eJudgePrompt(a: {
  taskType: C3eTaskType;
  instruction: string;
  grounding: string | null;
  reference: string;
  candidate: string;
}): string {
  const fields = [
    `[Instruction]\n${a.instruction}`,
    a.grounding ? `[${GROUNDING_LABEL[a.taskType]}]\n${a.grounding}` : null,
    `[Reference Answer]\n${a.reference}`,
    `[Candidate Answer]\n${a.candidate}`,
  ].filter(Boolean);
  return `${C3E_PROMPTS[a.taskType]}\n\n${fields.join("\n\n")}`;
}

export type ScoreParse = { score: number | null; status: "ok" | "partial" | "failed"; json: Record<string, unknown> | null };

/** The first balanced {...} in the text (inside a ```json fence or not). */
export function extractJsonObject(text: string): string | null {
  const start = text.indexOf("{");
  if (start < 0) return null;
  let depth = 0;
  let inStr = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inStr) {
      if (ch === "\\") i++;
      else if (ch === '"') inStr = false;
    } else if (ch === '"') inStr = true;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

function toScore(v: unknown): number | null {
  if (Array.isArray(v) && v.length === 1) v = v[0];
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 1 && n <= 10 ? n : null;
}

/** Score 1–10 from the judge's JSON. Invalid JSON with a readable "score" field is partial; no score is a failure. */
export function parseScoreJson(text: string): ScoreParse {
  const raw = extractJsonObject(text);
  if (raw) {
    try {
      const json = JSON.parse(raw) as Record<string, unknown>;
      const score = toScore(json.score);
      return score === null ? { score: null, status: "failed", json } : { score, status: "ok", json };
    } catch {
      /* fall through */
    }
  }
  const m = text.match(/"?score"?\s*[:：]\s*\[?\s*"?(\d+(?:\.\d+)?)/i);
  const score = m ? toScore(m[1]) : null;
  return score === null ? { score: null, status: "failed", json: null } : { score, status: "partial", json: null };
}

type C3State = {
  runId: number;
  itemId: number;
  model: string;
  taskType: C3eTaskType;
  instruction: string;
  grounding: string | null;
  reference: string;
  judges: { judgeId: number; providerId: number }[];
  answer?: string;
  judgeId?: number;
  attempt?: number;
};
const key = (s: { itemId: number; model: string }) => `c3e:i${s.itemId}:${encodeURIComponent(s.model)}`;
export const c3eResponseKey = (runId: number, model: string) => `run${runId}/${model}/writing`;

function judgeJob(s: C3State, answer: string, j: { judgeId: number; providerId: number }, attempt: number, cfg: C3eBenchConfig): JobSpec {
  const prompt = c3eJudgePrompt({
    taskType: s.taskType,
    instruction: s.instruction,
    grounding: s.grounding,
    reference: s.reference,
    candidate: answer,
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

export const c3eBench: Protocol<C3eBenchConfig, ReturnType<typeof c3eBenchResults>> = {
  id: "c3ebench",
  version: C3EBENCH_VERSION,
  title: "C3EBench writing judge (1–10)",
  results: (input) => c3eBenchResults(input),
  tables: (results) => c3eBenchTables(results),
  // Humans score whole writings on the judge's 1–10 scale; the server's score-scale calibration (RAVEL E.1–E.4) reports per-task means.
  calibration: {
    unit: "score",
    // A unit is an instruction with every model's writing, scored 1–10 (reference = 6).
    plans: [
      { kind: "stratified", label: "Stratified by task type: instructions per type, every model's writing, scored 1–10" },
      { kind: "uniform", label: "Uniform: this many instructions at random (the units-per-stratum field)" },
    ],
  },
  configSchema: C3eBenchConfig as unknown as z.ZodType<C3eBenchConfig>,
  validate: (items) => validateC3eDataset(items),
  plan({ runId, items, models, judges, config }: PlanInput<C3eBenchConfig>): JobSpec[] {
    const jobs: JobSpec[] = [];
    for (const item of items)
      for (const m of models) {
        const s: C3State = {
          runId,
          itemId: item.id,
          model: m.name,
          taskType: taskTypeOf(item.taskType) ?? "End2End",
          instruction: item.query,
          grounding: c3eGrounding(taskTypeOf(item.taskType) ?? "End2End", item.metadata?.input, item.passage),
          reference: item.reference ?? "",
          judges: judges.map((j) => ({ judgeId: j.judgeId, providerId: j.providerId })),
        };
        const content = s.grounding ? `${item.query}\n\n${s.grounding}` : item.query;
        jobs.push({
          key: `${key(s)}:gen`,
          payload: {
            step: "generate",
            providerId: m.providerId,
            request: { kind: "chat", messages: [{ role: "user", content }], params: config.targetSampling },
            state: s,
          },
        });
      }
    return jobs;
  },
  onReply(payload: JobPayload, text: string, cfg: C3eBenchConfig): Outcome {
    const s = payload.state as C3State;
    if (payload.step === "generate") {
      return {
        responses: [
          {
            itemId: s.itemId,
            model: s.model,
            turn: 1,
            text,
            sourceKey: c3eResponseKey(s.runId, s.model),
            metadata: { protocol: "c3ebench", taskType: s.taskType },
          },
        ],
        verdicts: [],
        next: s.judges.map((j) => judgeJob(s, text, j, 0, cfg)),
      };
    }
    const p = parseScoreJson(text);
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
          responseSourceKey: c3eResponseKey(s.runId, s.model),
          checklistItemId: null,
          value: p.score === null ? null : String(p.score),
          score: p.score,
          rawOutput: text,
          parseStatus: p.status,
        },
      ],
      next: [],
    };
  },
};

export type C3eObservation = { model: string; taskType: string; score: number | null; failed?: boolean };
/** Mean judge score per model × task type (and overall), with unparsed counts. */
export function c3eScores(obs: C3eObservation[]) {
  const models = [...new Set(obs.map((o) => o.model))].sort();
  return models.map((model) => {
    const all = obs.filter((o) => o.model === model);
    const rows = all.filter((o) => !o.failed);
    const byTask: Record<string, { mean: number; n: number }> = {};
    for (const t of TASK_TYPES) {
      const xs = rows.filter((o) => o.taskType === t && o.score !== null).map((o) => o.score!);
      if (xs.length) byTask[t] = { mean: orderFreeMean(xs), n: xs.length };
    }
    const scored = rows.filter((o) => o.score !== null).map((o) => o.score!);
    return {
      model,
      byTask,
      overall: orderFreeMean(scored),
      n: scored.length,
      unparsed: rows.length - scored.length,
      failed: all.length - rows.length,
    };
  });
}

/** Mean judge score per model and task type over one judge's verdicts; failed jobs counted. */
export function c3eBenchResults(x: ResultsInput) {
  const obs: C3eObservation[] = [];
  for (const r of x.responses) {
    const v = x.byResponse.get(r.id)?.[0];
    const st = x.outcome(r, null, v !== undefined);
    if (st === "pending") continue;
    obs.push({
      model: r.model,
      taskType: taskTypeOf(String(r.metadata.taskType ?? "")) ?? "End2End",
      score: v?.score ?? null,
      failed: st === "failed",
    });
  }
  const types = new Map(x.items(x.itemIds).map((it) => [it.id, taskTypeOf(it.taskType) ?? "End2End"]));
  for (const g of x.genJobs.values())
    if (g.status === "failed") obs.push({ model: g.model, taskType: types.get(g.itemId) ?? "End2End", score: null, failed: true });
  return { metrics: c3eScores(obs) };
}
