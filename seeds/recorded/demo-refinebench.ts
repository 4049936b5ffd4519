/**
 * The recorded outputs behind the demo's RefineBench run, written by hand for
 * Concord (original text, CC0 like the rest of the demo). Two fictional target
 * models answer three Concord Demo Bench problems over two self-refinement
 * turns, and a fictional judge answers each checklist. Nothing here came from
 * a live model: the demo has no network, so the replay provider serves these.
 *
 * `npx tsx seeds/recorded/demo-refinebench.ts` rewrites demo-refinebench.json:
 * each entry's key is the hash of the exact request the RefineBench protocol
 * sends (app/runs/providers/replay.server.ts requestKey), built here with the
 * protocol's own prompt functions, so a run over these items with the same
 * settings (self-refinement, 2 turns) replays without a miss.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { c3eJudgePrompt, taskTypeOf } from "../../app/runs/protocols/c3ebench";
import { judgePrompt, SELF_REFINE_PROMPT, userQuery } from "../../app/runs/protocols/refinebench";
import { requestKey, type ReplayFile } from "../../app/runs/providers/replay.server";
import type { LlmRequest } from "../../app/runs/providers/types";

export const DEMO_RUN_ITEMS = ["cdb-006", "cdb-010", "cdb-011"] as const;
export const DEMO_RUN_MODELS = ["Quillon-8B", "Orrery-70B"] as const;
export const DEMO_RUN_JUDGE_MODEL = "Sentinel-34B";
export const DEMO_RUN_TURNS = 2;
export const DEMO_REPLAY_FILE = "seeds/recorded/demo-refinebench.json";

type Turn = { text: string; judge?: boolean[] };
type Script = Record<(typeof DEMO_RUN_ITEMS)[number], Record<(typeof DEMO_RUN_MODELS)[number], [Turn, Turn]>>;

const T = "[TERMINATE]";

/** Model replies (turn 1, then the reply to the self-refinement prompt) and the judge's Yes/No per checklist item. */
export const SCRIPT: Script = {
  "cdb-006": {
    "Quillon-8B": [
      {
        text: "The test catches 95% of people who have the condition, so a positive result is usually right. Allowing for the 10% of results the test gets wrong, the chance is about 0.95 × 0.90 = 0.855.\n\nFinal answer: 85.5%.",
        judge: [false, false, false, false, false, false],
      },
      {
        text: "I should use Bayes' theorem instead. The false-positive rate is 1 − 0.90 = 0.10. True positives make up 0.95 × 0.02 = 0.019 of the population and false positives 0.10 × 0.98 = 0.098, so a positive result happens with probability 0.019 + 0.098 = 0.117. Then P(condition | positive) = 0.019 / 0.117 ≈ 0.162.\n\nFinal answer: 16.2%.",
        judge: [true, true, true, true, true, false],
      },
    ],
    "Orrery-70B": [
      {
        text: "Write D for having the condition. P(+ | D) = 0.95 and, since specificity is 90%, P(+ | not D) = 0.10.\n\n- True positives: 0.95 × 0.02 = 0.019\n- False positives: 0.10 × 0.98 = 0.098\n- All positives: 0.019 + 0.098 = 0.117\n\nBayes' theorem gives P(D | +) = 0.019 / 0.117 ≈ 0.162. The condition is rare, so the healthy majority produces about five false positives for every true one: most positive results are wrong even though the test itself is fairly accurate.\n\nFinal answer: 16.2%.",
        judge: [true, true, true, true, true, true],
      },
      { text: T },
    ],
  },
  "cdb-010": {
    "Quillon-8B": [
      {
        text: "Follow the cheapest edge out of each vertex: A–C (2), then C–B (1), then B–D (5), then D–F (6). The total is 2 + 1 + 5 + 6 = 14.\n\nFinal answer: 14, along A–C–B–D–F.",
        judge: [false, false, false, false, false],
      },
      {
        text: "Running Dijkstra's algorithm properly from A: start with A = 0. Finalise A: B = 4, C = 2. Finalise C (2): B drops from 4 to 3 through C, D = 10, E = 12. Finalise B (3): D drops to 8. Finalise D (8): E drops to 10 and F = 14. Finalise E (10): F drops from 14 to 13. Finalise F (13).\n\nThe vertices were finalised in the order A, C, B, D, E, F, and tracing predecessors back from F gives A–C–B–D–E–F.\n\nFinal answer: 13.",
        judge: [true, true, true, true, true],
      },
    ],
    "Orrery-70B": [
      {
        text: "Dijkstra from A, finalising the closest unvisited vertex each time: A (0), C (2), B (3, improved from 4 by going through C), D (8), E (10), F (13).\n\nThe shortest path is A–C–B–D–E–F with length 2 + 1 + 5 + 2 + 3 = 13.\n\nFinal answer: 13.",
        judge: [true, true, true, false, true],
      },
      {
        text: "One step deserves spelling out. When D is finalised at 8, F first gets the tentative distance 8 + 6 = 14 through D; when E is finalised at 10, the edge E–F (3) lowers it to 13, which is the value F keeps. The order of finalisation is A, C, B, D, E, F, and the shortest path is A–C–B–D–E–F.\n\nFinal answer: 13.",
        judge: [true, true, true, true, true],
      },
    ],
  },
  "cdb-011": {
    "Quillon-8B": [
      {
        text: "The Thirty Years' War ended with the Peace of Westphalia in 1648. It was a single treaty signed in Vienna that returned the borders of the Holy Roman Empire to where they had been in 1618.\n\nFinal answer: the Peace of Westphalia, 1648.",
        judge: [true, true, false, false, false],
      },
      {
        text: "Correcting my answer: the Peace of Westphalia was not one treaty signed in Vienna. It was a set of agreements negotiated in the Westphalian towns of Osnabrück and Münster, where the Emperor and the imperial estates settled with Sweden and with France. It extended the religious terms of the Peace of Augsburg to Calvinists, and Sweden gained territory on the Baltic coast while France gained lands in Alsace.\n\nFinal answer: the Peace of Westphalia, 1648.",
        judge: [true, true, true, true, true],
      },
    ],
    "Orrery-70B": [
      {
        text: "The war was ended by the Peace of Westphalia, concluded in 1648. Rather than one document, it consisted of treaties negotiated at Osnabrück (the Emperor and the imperial estates with Sweden) and at Münster (the Emperor with France). The settlement reaffirmed the Peace of Augsburg and extended its protection to Calvinists alongside Catholics and Lutherans. Sweden gained Baltic territories such as Western Pomerania, France secured lands in Alsace, and the independence of the Swiss Confederation was recognised.\n\nFinal answer: the Peace of Westphalia, 1648.",
        judge: [true, true, true, true, true],
      },
      { text: T },
    ],
  },
};

type BenchItem = { sourceId: string; query: string; passage?: string | null; checklist: { text: string }[] };

const chat = (messages: LlmRequest["messages"]): LlmRequest => ({ kind: "chat", messages });

type WritingItem = { sourceId: string; taskType: string; query: string; passage?: string | null; reference: string; responses: { model: string; text: string; quality: number | string }[] };

/**
 * C3EBench on the demo writing set: each recorded model's writing is the
 * demo's own response of that model, and the recorded judge's 1–10 score is
 * twice the demo's 1–5 quality of that writing (a fictional judge that agrees
 * with the demo's annotators), keyed by the protocol's own prompts.
 */
export function buildC3eEntries(items: WritingItem[]): ReplayFile["entries"] {
  const entries: ReplayFile["entries"] = [];
  for (const item of items) {
    const taskType = taskTypeOf(item.taskType);
    if (!taskType) throw new Error(`demo-refinebench: writing item ${item.sourceId} has task type ${item.taskType}`);
    const content = item.passage ? `${item.query}\n\n${item.passage}` : item.query;
    for (const model of DEMO_RUN_MODELS) {
      const response = item.responses.find((r) => r.model === model);
      if (!response) continue;
      entries.push({ key: requestKey(chat([{ role: "user", content }])), model, text: response.text, note: `${item.sourceId} ${model} (C3EBench)` });
      const score = Math.min(10, 2 * Number(response.quality));
      const prompt = c3eJudgePrompt({ taskType, instruction: item.query, grounding: item.passage ?? null, reference: item.reference, candidate: response.text });
      const reply = JSON.stringify({ score, verdict: score >= 8 ? "As good as the reference or better." : score >= 6 ? "Passes, below the reference." : "Falls short of the reference." });
      entries.push({ key: requestKey(chat([{ role: "user", content: prompt }])), model: DEMO_RUN_JUDGE_MODEL, text: reply, note: `${item.sourceId} ${model} (C3EBench), judged` });
    }
  }
  return entries;
}

/** Builds the replay file from SCRIPT and the demo benchmark's items (and, given them, the demo writing set's for C3EBench). */
export function buildReplayFile(items: BenchItem[], writing: WritingItem[] = []): ReplayFile {
  const entries: ReplayFile["entries"] = [];
  for (const sourceId of DEMO_RUN_ITEMS) {
    const item = items.find((i) => i.sourceId === sourceId);
    if (!item) throw new Error(`demo-refinebench: item ${sourceId} is not in the demo benchmark`);
    const query = userQuery({ query: item.query, passage: item.passage ?? null });
    const checklist = item.checklist.map((c) => c.text);
    for (const model of DEMO_RUN_MODELS) {
      const turns = SCRIPT[sourceId][model];
      let messages: LlmRequest["messages"] = [{ role: "user", content: query }];
      turns.forEach((turn, t) => {
        entries.push({ key: requestKey(chat(messages)), model, text: turn.text, note: `${sourceId} ${model} turn ${t + 1}` });
        if (turn.judge) {
          if (turn.judge.length !== checklist.length) throw new Error(`demo-refinebench: ${sourceId} ${model} turn ${t + 1} judges ${turn.judge.length} of ${checklist.length} items`);
          const prompt = judgePrompt(query, turn.text, checklist);
          const reply = turn.judge.map((ok, i) => `Q${i + 1}: ${ok ? "Yes" : "No"}`).join("\n");
          entries.push({ key: requestKey(chat([{ role: "user", content: prompt }])), model: DEMO_RUN_JUDGE_MODEL, text: reply, note: `${sourceId} ${model} turn ${t + 1}, judged` });
        }
        messages = [...messages, { role: "assistant", content: turn.text }, { role: "user", content: SELF_REFINE_PROMPT }];
      });
    }
  }
  entries.push(...buildC3eEntries(writing));
  return {
    recorded: true,
    description:
      "Recorded outputs for Concord's demo (no network): hand-written replies of the fictional models Quillon-8B and Orrery-70B to three Concord Demo Bench problems over two self-refinement turns, and the fictional judge Sentinel-34B's checklist answers; for C3EBench on the demo writing set, the demo's own writings of those models and Sentinel-34B's 1–10 scores. Original text, CC0 1.0.",
    entries,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const bench = JSON.parse(fs.readFileSync(path.join(root, "seeds/demo-benchmark.json"), "utf8")) as { items: BenchItem[] };
  const writing = JSON.parse(fs.readFileSync(path.join(root, "seeds/demo-writing.json"), "utf8")) as { items: WritingItem[] };
  const file = buildReplayFile(bench.items, writing.items);
  fs.writeFileSync(path.join(root, DEMO_REPLAY_FILE), JSON.stringify(file, null, 2) + "\n");
  console.log(`wrote ${DEMO_REPLAY_FILE}: ${file.entries.length} recorded outputs`);
}
