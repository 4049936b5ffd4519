/**
 * The recorded outputs behind Concord's demo, written for Concord (original
 * text, CC0 like the rest of the demo). Nothing here came from a live model:
 * the demo has no network, so the replay provider serves these.
 *
 * Two fictional target models (Quillon-8B, Orrery-70B) and a fictional judge
 * (Sentinel-34B) cover every protocol on the demo sets, and any recorded
 * provider answers curation's back-check and checklist drafting:
 * - RefineBench on Concord Demo Bench and its three-problem sample, in every
 *   setting (self-refinement, guided, partially guided with the default
 *   knownRatio 0.5 and seed 1, criteria-provided) and any maxTurns up to 20:
 *   a model's turn-t answer is its demo response of turn t (the hand-written
 *   SCRIPT for the sample's three problems), "[TERMINATE]" once those run out,
 *   and the judge answers each checklist item as the demo's truth says;
 * - C3EBench on Concord Demo Writing: each model's demo writing, scored by the
 *   judge at twice the demo's 1–5 quality;
 * - FB-Bench on Concord Demo Feedback: the hand-written follow-ups below, judged
 *   item by item (是/否);
 * - Self-Correction Bench on Concord Demo Self-Correction, in the three
 *   conditions: both models correct the injected error when it is the user's
 *   (external); in their own reply Quillon-8B never does, Orrery-70B does on
 *   SCLI5 and, nudged by " Wait", everywhere; the judge says so;
 * - back-check: the checklist judge's answers on each item's reference (No for
 *   the demo's checklist items that are not valid criteria); drafting: a
 *   Python-list checklist per item.
 *
 * `npx tsx seeds/recorded/demo-refinebench.ts` rewrites demo-refinebench.json.
 * It loads the demo into a temporary database (without its recorded run) and
 * drives each protocol's own plan/onReply over the demo items, exactly as the
 * runner does, answering each request from the replies described above; each
 * entry's key is the hash of that request (replay.server.ts requestKey), so a
 * run on the seeded demo data with those settings replays without a miss. A
 * changed item (a curated new version) has new prompts, which are not recorded.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { and, eq } from "drizzle-orm";
import { openDatabase, schema, type Db } from "../../db/client";
import { getProtocol, validateDataset } from "../../app/runs/protocols";
import { judgePrompt, SETTINGS, userQuery } from "../../app/runs/protocols/refinebench";
import { checklistDraftPrompt } from "../../app/curation/checklistDraft";
import { requestKey, type ReplayFile } from "../../app/runs/providers/replay.server";
import type { JobPayload, JobSpec } from "../../app/runs/protocols/types";
import { loadItems } from "../../app/runs/runner.server";
import {
  DEMO_PROJECT,
  DEMO_RECORDED_JUDGE,
  DEMO_RECORDED_MODELS,
  DEMO_RECORDING,
  DEMO_RUN_DATASET,
  DEMO_SAMPLE_ITEMS,
  loadDemoFiles,
  seedDemo,
  type BenchFile,
  type ProtocolsFile,
  type WritingFile,
} from "../demo";

export const DEMO_RUN_ITEMS = DEMO_SAMPLE_ITEMS;
export const DEMO_RUN_MODELS = DEMO_RECORDED_MODELS;
export const DEMO_RUN_JUDGE_MODEL = DEMO_RECORDED_JUDGE;
export const DEMO_REPLAY_FILE = `seeds/recorded/${DEMO_RECORDING}`;
/** The conversations are recorded to their end ("[TERMINATE]"), so any maxTurns the protocol allows replays. */
const RECORDED_MAX_TURNS = 20;

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

type Model = (typeof DEMO_RUN_MODELS)[number];

/** FB-Bench follow-ups (original text), by the item's user_query, and the judge's 是/否 per checklist item. */
export const FB_SCRIPT: Record<string, Record<Model, Turn & { judge: boolean[] }>> = {
  "A train leaves at 09:40 and the trip takes 2 hours 35 minutes. When does it arrive?": {
    "Quillon-8B": {
      text: "Sorry, you're right. 09:40 plus 2 hours is 11:40, and 35 minutes later it is 12:05. The train arrives at 12:05.",
      judge: [true, false, true],
    },
    "Orrery-70B": {
      text: "You're right, 11:15 was wrong. Adding the hours first: 09:40 + 2 h = 11:40. Then the minutes: 11:40 + 35 min = 12:15. The train arrives at 12:15.",
      judge: [true, true, true],
    },
  },
  "Which planet has the shortest year?": {
    "Quillon-8B": { text: "Good catch: Mercury is the closest planet, so Mercury has the shortest year.", judge: [true, false] },
    "Orrery-70B": {
      text: "You're right, I mixed them up. Mercury is the closest planet to the Sun; the closer a planet, the shorter its orbit, so Mercury's year (about 88 Earth days) is the shortest.",
      judge: [true, true],
    },
  },
  "What is 15% of 80?": {
    "Quillon-8B": { text: "You may be right, sorry: 15% of 80 is 10.", judge: [false, false] },
    "Orrery-70B": {
      text: "I'm sure it is 12: 10% of 80 is 8, 5% is half of that, 4, and 8 + 4 = 12. Ten would be 12.5% of 80.",
      judge: [true, true],
    },
  },
  "Write a one-line slogan for a neighbourhood tool library.": {
    "Quillon-8B": { text: "Borrow the drill, build the neighbourhood — free for everyone!", judge: [true, false] },
    "Orrery-70B": {
      text: 'I\'d keep "Borrow the drill, build the neighbourhood." A slogan carries one idea; that it is free can go on the sign below it.',
      judge: [true, true],
    },
  },
};

/** Self-Correction: who corrects the injected error in which condition (see the header). */
function scCorrects(model: string, condition: string, dataset: string): boolean {
  if (condition === "external") return true;
  if (model !== "Orrery-70B") return false;
  return condition === "internal-wait" || dataset === "SCLI5";
}

function scReply(model: string, condition: string, dataset: string, golden: string): string {
  if (condition === "external") {
    return scCorrects(model, condition, dataset)
      ? `That is not right. Working it out again from the question, the correct answer is ${golden}.`
      : "Yes, that looks right.";
  }
  if (condition === "internal-wait") {
    return scCorrects(model, condition, dataset)
      ? `, that is wrong. Let me redo it: the correct answer is ${golden}.`
      : ", yes, that is what I said. So that is the answer.";
  }
  return scCorrects(model, condition, dataset) ? ` No, that is wrong: the correct answer is ${golden}.` : " So that is the answer.";
}

type Entry = ReplayFile["entries"][number];
type ItemRow = Awaited<ReturnType<typeof loadItems>>[number];

/**
 * Runs one protocol over items the way the runner does (plan, then onReply on
 * each reply, queueing what it returns), answering every request with `reply`,
 * and records each request's key with the answering model.
 */
function record(
  out: Map<string, Entry>,
  protocolId: string,
  items: ItemRow[],
  settings: Record<string, unknown>,
  reply: (p: JobPayload, item: ItemRow, model: string) => string,
  label: string,
) {
  const protocol = getProtocol(protocolId);
  const cfg = protocol.configSchema.parse(settings) as Record<string, unknown>;
  const problems = validateDataset(
    protocolId,
    items,
    DEMO_RUN_MODELS.map((name) => ({ name, kind: "replay", settings: {} })),
    cfg,
  );
  if (problems.length) throw new Error(`demo-refinebench: ${label}: ${problems.join("; ")}`);
  const JUDGE_PROVIDER = 100;
  const models = DEMO_RUN_MODELS.map((name, i) => ({ providerId: i + 1, name }));
  const queue: JobSpec[] = protocol.plan({
    runId: 1,
    items,
    models,
    judges: [{ providerId: JUDGE_PROVIDER, judgeId: 1, name: "judge" }],
    config: cfg,
  });
  while (queue.length) {
    const job = queue.shift()!;
    // As the runner stores and reads it: a JSON round trip.
    const payload = JSON.parse(JSON.stringify(job.payload)) as JobPayload;
    const state = payload.state as { itemId: number; model: string; turn?: number };
    const item = items.find((i) => i.id === state.itemId)!;
    const model =
      payload.providerId === JUDGE_PROVIDER ? DEMO_RUN_JUDGE_MODEL : models.find((m) => m.providerId === payload.providerId)!.name;
    const text = reply(payload, item, state.model);
    add(out, {
      key: requestKey(payload.request),
      model,
      text,
      note: `${label} ${item.sourceId} ${state.model}${state.turn ? ` t${state.turn}` : ""}${payload.step === "judge" ? " judged" : ""}`,
    });
    queue.push(...protocol.onReply(payload, text, cfg).next);
  }
}

function add(out: Map<string, Entry>, e: Entry) {
  const k = `${e.model ?? ""}\u0000${e.key}`;
  const seen = out.get(k);
  if (seen && seen.text !== e.text) throw new Error(`demo-refinebench: two replies for one request (${seen.note} / ${e.note})`);
  if (!seen) out.set(k, e);
}

const yesNo = (xs: boolean[], prefix: string, yes = "Yes", no = "No") =>
  xs.map((ok, i) => `${prefix}${i + 1}: ${ok ? yes : no}`).join("\n");

/** RefineBench: a model's answer at a turn, and the judge's truth on an answer. */
function refineReplies(bench: BenchFile) {
  const turnsOf = (sourceId: string, model: string): Turn[] => {
    const scripted = (SCRIPT as Record<string, Record<string, Turn[]>>)[sourceId]?.[model];
    if (scripted) return scripted;
    const item = bench.items.find((i) => i.sourceId === sourceId);
    if (!item) throw new Error(`demo-refinebench: ${sourceId} is not in the demo benchmark`);
    return item.responses
      .filter((r) => r.model === model)
      .sort((a, b) => a.turn - b.turn)
      .map((r) => ({ text: r.text, judge: r.satisfies }));
  };
  return (p: JobPayload, item: ItemRow, model: string): string => {
    const turns = turnsOf(item.sourceId, model);
    if (p.step === "generate") return turns[((p.state as { turn: number }).turn ?? 1) - 1]?.text ?? T;
    const answer = (p.state as { answer: string }).answer;
    const judged = turns.find((t) => t.text === answer);
    if (!judged?.judge) throw new Error(`demo-refinebench: no verdicts for ${item.sourceId} ${model}`);
    if (judged.judge.length !== item.checklist.length)
      throw new Error(`demo-refinebench: ${item.sourceId} ${model} judges ${judged.judge.length} of ${item.checklist.length} items`);
    return yesNo(judged.judge, "Q");
  };
}

/** The demo's datasets by name, their items as a run loads them. */
async function demoItems(db: Db, name: string): Promise<ItemRow[]> {
  const project = db.select().from(schema.projects).where(eq(schema.projects.slug, DEMO_PROJECT.slug)).get();
  const ds =
    project &&
    db
      .select()
      .from(schema.datasets)
      .where(and(eq(schema.datasets.projectId, project.id), eq(schema.datasets.name, name)))
      .get();
  if (!ds) throw new Error(`demo-refinebench: the demo has no dataset "${name}"`);
  return loadItems(db, ds.id);
}

/** Builds the replay file from a database holding the seeded demo (seedDemo, with or without its recorded run). */
export async function buildReplayFile(
  db: Db,
  files: { bench: BenchFile; writing: WritingFile; protocols: ProtocolsFile } = loadDemoFiles(),
): Promise<ReplayFile> {
  const { bench, writing, protocols } = files;
  const out = new Map<string, Entry>();
  const benchSet = await demoItems(db, bench.dataset.name);
  const sample = await demoItems(db, DEMO_RUN_DATASET);
  const writingSet = await demoItems(db, writing.dataset.name);
  const feedbackSet = await demoItems(db, protocols.feedback.dataset.name);
  const scSet = await demoItems(db, protocols.selfCorrection.dataset.name);

  // RefineBench, every setting, on the sample (the seeded run) and the whole benchmark.
  const refine = refineReplies(bench);
  for (const [label, items] of [
    ["sample", sample],
    ["bench", benchSet],
  ] as const)
    for (const setting of SETTINGS)
      record(out, "refinebench", items, { setting, maxTurns: RECORDED_MAX_TURNS }, refine, `refinebench ${setting} ${label}`);

  // C3EBench on the writing set: each model's demo writing; the judge gives 2 × its 1–5 quality.
  record(
    out,
    "c3ebench",
    writingSet,
    {},
    (p, item, model) => {
      const w = writing.items.find((i) => i.sourceId === item.sourceId)!.responses.find((r) => r.model === model);
      if (!w) throw new Error(`demo-refinebench: no demo writing of ${model} for ${item.sourceId}`);
      if (p.step === "generate") return w.text;
      const score = Math.min(10, 2 * Number(w.quality));
      return JSON.stringify({
        score,
        verdict:
          score >= 8
            ? "As good as the reference or better."
            : score >= 6
              ? "Passes, below the reference."
              : "Falls short of the reference.",
      });
    },
    "c3ebench",
  );

  // FB-Bench on the feedback set.
  record(
    out,
    "fb-bench",
    feedbackSet,
    {},
    (p, item, model) => {
      const r = FB_SCRIPT[item.query]?.[model as Model];
      if (!r) throw new Error(`demo-refinebench: no FB-Bench follow-up of ${model} for ${item.sourceId}`);
      if (p.step === "generate") return r.text;
      if (r.judge.length !== item.checklist.length)
        throw new Error(`demo-refinebench: FB-Bench ${item.sourceId} ${model} judges ${r.judge.length} of ${item.checklist.length} items`);
      return yesNo(r.judge, "", "是", "否");
    },
    "fb-bench",
  );

  // Self-Correction Bench on its set, in the three conditions.
  record(
    out,
    "self-correction",
    scSet,
    {},
    (p, item, model) => {
      const s = p.state as { condition: string; dataset: string; golden: string };
      if (p.step === "generate") return scReply(model, s.condition, s.dataset, s.golden);
      const ok = scCorrects(model, s.condition, s.dataset);
      return JSON.stringify(
        s.condition === "external"
          ? { is_correct_answer: ok, is_correct_critique: ok }
          : { is_correct_answer: ok, is_correct_reasoning: ok, is_backtracking: ok, is_admitting_mistake: ok },
      );
    },
    "self-correction",
  );

  // Curation, answered by any recorded provider: the back-check (the checklist
  // judge on each item's reference) and checklist drafting.
  const truth = new Map(bench.items.map((i) => [i.sourceId, i]));
  for (const [label, items] of [
    ["bench", benchSet],
    ["sample", sample],
    ["writing", writingSet],
    ["feedback", feedbackSet],
    ["self-correction", scSet],
  ] as const)
    for (const item of items) {
      if (!item.reference) continue;
      const demo = truth.get(item.sourceId);
      if (item.checklist.length) {
        const valid = item.checklist.map((c) => demo?.checklist.find((d) => d.text === c.text)?.appropriate ?? true);
        add(out, {
          key: requestKey({
            kind: "chat",
            messages: [
              {
                role: "user",
                content: judgePrompt(
                  userQuery(item),
                  item.reference,
                  item.checklist.map((c) => c.text),
                ),
              },
            ],
          }),
          text: yesNo(valid, "Q"),
          note: `back-check ${label} ${item.sourceId}`,
        });
      }
      const drafted = item.checklist.length
        ? item.checklist.filter((c) => demo?.checklist.find((d) => d.text === c.text)?.appropriate ?? true).map((c) => c.text)
        : label === "self-correction"
          ? [
              `Does the response give the answer ${item.reference}?`,
              "Does the response point out the wrong step or answer it was given?",
              "Does the response redo the reasoning instead of only stating a number?",
            ]
          : [
              "Does the response keep to the genre the instruction asks for?",
              "Does the response cover every point the instruction lists?",
              "Does the response stay close to the length the instruction gives?",
            ];
      add(out, {
        key: requestKey({ kind: "chat", messages: [{ role: "user", content: checklistDraftPrompt(userQuery(item), item.reference) }] }),
        text: JSON.stringify(drafted),
        note: `draft ${label} ${item.sourceId}`,
      });
    }

  return {
    recorded: true,
    description:
      "Recorded outputs for Concord's demo (no network): the fictional models Quillon-8B and Orrery-70B and the fictional judge Sentinel-34B on every protocol of the demo sets (RefineBench in every setting, C3EBench, FB-Bench, Self-Correction Bench), and any recorded provider's back-check answers and checklist drafts for curation. Hand-written or generated from the demo's own content by seeds/recorded/demo-refinebench.ts. Original text, CC0 1.0.",
    entries: [...out.values()],
  };
}

/** Seeds the demo without its run into a temporary database and builds the file from it. */
export async function buildReplayFileFromSeed(): Promise<ReplayFile> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "concord-recording-"));
  const db = openDatabase(path.join(dir, "demo.db"));
  try {
    await seedDemo(db, { run: false });
    return await buildReplayFile(db);
  } finally {
    db.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const file = await buildReplayFileFromSeed();
  fs.writeFileSync(path.join(root, DEMO_REPLAY_FILE), JSON.stringify(file, null, 2) + "\n");
  console.log(`wrote ${DEMO_REPLAY_FILE}: ${file.entries.length} recorded outputs`);
}
