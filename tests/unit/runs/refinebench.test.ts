import { describe, expect, it } from "vitest";
import { parseChecklistLines } from "../../../app/runs/protocols/checklist-parse";
import {
  criteriaPrompt,
  guidedPrompt,
  judgePrompt,
  knownItemIds,
  refineBench,
  RefineBenchConfig,
  refineBenchMetrics,
  SELF_REFINE_PROMPT,
  toFeedback,
  type RbObservation,
} from "../../../app/runs/protocols/refinebench";
import type { ItemData } from "../../../app/runs/protocols/types";

describe("RefineBench prompts (G.1, G.2) — snapshots", () => {
  it("judge prompt", () => {
    expect(judgePrompt("What is 2+2?", "It is 4.", ["Does the response state 4?", "Does the response show the sum?"]))
      .toMatchInlineSnapshot(`
      "You will be provided with a model’s answer to the given query and an evaluation checklist that contains multiple questions. Your task is to evaluate the quality of the model’s answer based on the given evaluation checklist that contains multiple questions, by answering “Yes” or “No” to each question.

      ### Query:
      What is 2+2?

      ### Model’s Answer:
      It is 4.

      ### Checklist (Evaluation Items)
      Q1: Does the response state 4?
      Q2: Does the response show the sum?

      ### Output Format:
      - Provide the final answer in the format of “<Q>: <Yes or No>”.
      - Do not provide any decision except “Yes” or “No”.
      - Do not include any additional explanations or descriptions.

      Answer:"
    `);
  });
  it("self-refinement, guided and criteria prompts", () => {
    expect(SELF_REFINE_PROMPT).toMatchInlineSnapshot(
      `"If you think there is absolutely nothing left to refine, respond with “[TERMINATE]”. Otherwise, if there is still room for improvement, continue refining your previous response."`,
    );
    expect(guidedPrompt(["Does the response state 4?", "Does the response cite the theorem?"])).toMatchInlineSnapshot(`
      "Please refine your previous response by considering the following feedbacks: 
      - The response should state 4.
      - The response should cite the theorem."
    `);
    expect(criteriaPrompt(["Does the response state 4?", "Does the response cite it?"])).toMatchInlineSnapshot(`
      "You are provided with evaluation criteria to determine if a given answer satisfies the requirements of the question.

      ### Evaluation Criteria:
      - Does the response state 4?
      - Does the response cite it?

      Considering the provided criteria, if you think there is absolutely nothing left to refine, respond with “[TERMINATE]”. Otherwise, if there is still room for improvement, continue refining your previous response. Do not format your response as answers to individual questions within the evaluation criteria."
    `);
  });
  it("feedback rewriting", () => {
    expect(toFeedback("Does the response accurately compute the integral?")).toBe("The response should accurately compute the integral.");
    expect(toFeedback("Is it short?")).toBe("The response should satisfy: Is it short?");
  });
});

describe("RefineBench judge parser: missing or garbled is a failure, never a silent No", () => {
  it("clean lines", () => {
    expect(parseChecklistLines("Q1: Yes\nQ2: No\nQ3: yes", 3).map((p) => [p.value, p.status])).toEqual([
      ["Yes", "ok"],
      ["No", "ok"],
      ["Yes", "ok"],
    ]);
  });
  it("a missing line is failed, the others kept", () => {
    const p = parseChecklistLines("Q1: Yes\nQ3: No", 3);
    expect(p.map((x) => x.value)).toEqual(["Yes", null, "No"]);
    expect(p[1].status).toBe("failed");
  });
  it("garbled answers are failed", () => {
    const p = parseChecklistLines("Q1: Maybe\nQ2: N/A\nQ3: Yeah", 3);
    expect(p.every((x) => x.status === "failed" && x.value === null)).toBe(true);
  });
  it("contradictory duplicate lines are failed", () => {
    expect(parseChecklistLines("Q1: Yes\nQ1: No", 1)[0]).toMatchObject({ value: null, status: "failed" });
  });
  it("markdown, angle brackets, numbering variants and punctuation are accepted", () => {
    const p = parseChecklistLines("**Q1**: **Yes**\n- Q2: <No>\nQ3. Yes.\n4) No\nQ 5 : YES", 5);
    expect(p.map((x) => x.value)).toEqual(["Yes", "No", "Yes", "No", "Yes"]);
    expect(p.every((x) => x.status === "ok")).toBe(true);
  });
  it("an answer with extra words, or after a restated question, is partial", () => {
    const p = parseChecklistLines("Q1: Yes, because it states 4.\nQ2: Does the response show the sum? No", 2);
    expect(p.map((x) => [x.value, x.status])).toEqual([
      ["Yes", "partial"],
      ["No", "partial"],
    ]);
  });
  it("does not read 'Not' or 'Nothing' as No", () => {
    expect(parseChecklistLines("Q1: Not really", 1)[0].status).toBe("failed");
    expect(parseChecklistLines("Q1: Nothing to say", 1)[0].status).toBe("failed");
  });
  it("bare Yes/No lines in order are partial when the count matches, else failed", () => {
    expect(parseChecklistLines("Yes\nNo", 2).map((x) => [x.value, x.status])).toEqual([
      ["Yes", "partial"],
      ["No", "partial"],
    ]);
    expect(parseChecklistLines("Yes", 2).every((x) => x.status === "failed")).toBe(true);
  });
  it("an empty reply fails every item; ids beyond the checklist are ignored", () => {
    expect(parseChecklistLines("", 2).every((x) => x.status === "failed")).toBe(true);
    expect(parseChecklistLines("Q1: Yes\nQ9: No", 1)).toEqual([{ value: "Yes", status: "ok", line: "Q1: Yes" }]);
  });
});

const item: ItemData = {
  id: 7,
  sourceId: "x",
  query: "Q?",
  passage: null,
  domain: "Math",
  subject: null,
  taskType: "free-form",
  metadata: {},
  checklist: [
    { id: 101, text: "Does the response say A?", weight: null, position: 0 },
    { id: 102, text: "Does the response say B?", weight: null, position: 1 },
  ],
  reference: "A and B",
};
const judges = [{ judgeId: 1, providerId: 9, name: "j" }];

describe("RefineBench jobs", () => {
  it("self-refinement: turn t spawns its judge and turn t+1; [TERMINATE] ends the instance unjudged", () => {
    const cfg = RefineBenchConfig.parse({ setting: "self-refinement", maxTurns: 3 });
    const [gen1] = refineBench.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    expect(gen1.key).toBe("rb:i7:m:t1:gen");
    expect(gen1.payload.request).toMatchObject({
      kind: "chat",
      messages: [{ role: "user", content: "Q?" }],
      params: { temperature: 1, top_p: 0.9 },
    });
    const o1 = refineBench.onReply(gen1.payload, "A", cfg);
    expect(o1.responses[0]).toMatchObject({ turn: 1, sourceKey: "run1/m/t1" });
    expect(o1.next.map((j) => j.key)).toEqual(["rb:i7:m:t1:judge1", "rb:i7:m:t2:gen"]);
    expect(o1.next[0].payload.request).toMatchObject({ params: { temperature: 0, top_p: 1 } });
    const gen2 = o1.next[1];
    expect(gen2.payload.request.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const o2 = refineBench.onReply(gen2.payload, "[TERMINATE]", cfg);
    expect(o2.responses[0].metadata.terminated).toBe(true);
    expect(o2.next).toEqual([]);
  });

  it("guided: the judge's No items become feedback for the next turn", () => {
    const cfg = RefineBenchConfig.parse({ setting: "guided", maxTurns: 3 });
    const [gen1] = refineBench.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    const o1 = refineBench.onReply(gen1.payload, "A", cfg);
    expect(o1.next.map((j) => j.key)).toEqual(["rb:i7:m:t1:judge1"]);
    const j1 = refineBench.onReply(o1.next[0].payload, "Q1: Yes\nQ2: No", cfg);
    expect(j1.verdicts.map((v) => [v.checklistItemId, v.value])).toEqual([
      [101, "Yes"],
      [102, "No"],
    ]);
    const gen2 = j1.next[0];
    expect(gen2.key).toBe("rb:i7:m:t2:gen");
    expect(gen2.payload.request.messages[2].content).toContain("The response should say B.");
    expect(gen2.payload.request.messages[2].content).not.toContain("say A");
  });

  it("a judge that leaves out a line is asked again, then the gap is stored as a failed verdict", () => {
    const cfg = RefineBenchConfig.parse({ setting: "guided", parseRetries: 1 });
    const [gen1] = refineBench.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    const judge = refineBench.onReply(gen1.payload, "A", cfg).next[0];
    const retry = refineBench.onReply(judge.payload, "Q1: Yes", cfg);
    expect(retry.verdicts).toEqual([]);
    expect(retry.next[0].key).toBe("rb:i7:m:t1:judge1:retry1");
    const final = refineBench.onReply(retry.next[0].payload, "Q1: Yes", cfg);
    expect(final.verdicts.map((v) => [v.value, v.parseStatus])).toEqual([
      ["Yes", "ok"],
      [null, "failed"],
    ]);
    // No known "No": nothing to feed back, and the unknown item is not treated as "No".
    expect(final.next).toEqual([]);
  });

  it("partially guided: only known items are ever fed back", () => {
    const known = knownItemIds(item.checklist, 0.5, 1, item.id);
    expect(known).toHaveLength(1);
    expect(knownItemIds(item.checklist, 0.5, 1, item.id)).toEqual(known);
    const cfg = RefineBenchConfig.parse({ setting: "partially-guided", knownRatio: 0.5 });
    const [gen1] = refineBench.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    const j = refineBench.onReply(refineBench.onReply(gen1.payload, "A", cfg).next[0].payload, "Q1: No\nQ2: No", cfg);
    const fb = j.next[0].payload.request.messages[2].content;
    const knownText = item.checklist
      .find((c) => c.id === known[0])!
      .text.replace("Does the response ", "")
      .replace("?", "");
    expect(fb).toContain(knownText);
    expect(fb.match(/The response should/g)).toHaveLength(1);
  });

  it("partially guided continues while ANY item fails: with only unknown items failing, the next turn gives no feedback", () => {
    const known = knownItemIds(item.checklist, 0.5, 1, item.id)[0];
    const unknownPos = item.checklist.findIndex((c) => c.id !== known);
    const cfg = RefineBenchConfig.parse({ setting: "partially-guided", knownRatio: 0.5, maxTurns: 3 });
    const [gen1] = refineBench.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    const lines = item.checklist.map((c, i) => `Q${i + 1}: ${i === unknownPos ? "No" : "Yes"}`).join("\n");
    const j = refineBench.onReply(refineBench.onReply(gen1.payload, "A", cfg).next[0].payload, lines, cfg);
    expect(j.next.map((x) => x.key)).toEqual(["rb:i7:m:t2:gen"]);
    expect(j.next[0].payload.request.messages[2].content).toBe(SELF_REFINE_PROMPT);
    // Everything satisfied: the conversation stops.
    const done = refineBench.onReply(refineBench.onReply(gen1.payload, "A", cfg).next[0].payload, "Q1: Yes\nQ2: Yes", cfg);
    expect(done.next).toEqual([]);
  });

  it("sampling defaults are the paper's (Appendix C) and each field can be overridden", () => {
    const cfg = RefineBenchConfig.parse({});
    expect(cfg.targetSampling).toEqual({ temperature: 1, top_p: 0.9, max_tokens: 10_000 });
    expect(cfg.judgeSampling).toEqual({ temperature: 0, top_p: 1, max_tokens: 10_000 });
    expect(RefineBenchConfig.parse({ targetSampling: { max_tokens: 2048 } }).targetSampling).toEqual({
      temperature: 1,
      top_p: 0.9,
      max_tokens: 2048,
    });
    expect(() => RefineBenchConfig.parse({ targetSampling: { maxTokens: 5 } })).toThrow();
  });
});

describe("RefineBench metrics", () => {
  const v = (...vals: ("Yes" | "No" | null)[]) => vals.map((value, i) => ({ checklistItemId: i + 1, value }));
  it("Acc_t, Pass_t, Δ, termination turn and transitions, carrying answers forward", () => {
    const obs: RbObservation[] = [
      // item 1: fails then passes, then terminates at turn 3
      { model: "m", itemId: 1, turn: 1, terminated: false, verdicts: v("Yes", "No") },
      { model: "m", itemId: 1, turn: 2, terminated: false, verdicts: v("Yes", "Yes") },
      { model: "m", itemId: 1, turn: 3, terminated: true, verdicts: [] },
      // item 2: passes, then regresses at turn 2, stays
      { model: "m", itemId: 2, turn: 1, terminated: false, verdicts: v("Yes", "Yes") },
      { model: "m", itemId: 2, turn: 2, terminated: false, verdicts: v("No", "No") },
      { model: "m", itemId: 2, turn: 3, terminated: false, verdicts: v("No", null) },
    ];
    const [m] = refineBenchMetrics(obs, { maxTurns: 3 });
    expect(m.turns[0]).toMatchObject({ acc: 75, pass: 50, n: 2, unparsed: 0 });
    expect(m.turns[1]).toMatchObject({ acc: 50, pass: 50, n: 2 });
    // turn 3: item 1 carries its turn-2 pass; item 2 has a parse failure and is left out
    expect(m.turns[2]).toMatchObject({ acc: 100, pass: 100, n: 1, unparsed: 1 });
    expect(m.delta).toBe(50);
    expect(m.termination).toEqual({ byTurn: { 3: 1 }, mean: 3, never: 1 });
    expect(m.transitions).toEqual({ correctToCorrect: 1, correctToIncorrect: 1, incorrectToCorrect: 1, incorrectToIncorrect: 0 });
  });

  it("Acc_t does not depend on the order the observations arrive in (workers store in any order)", () => {
    // Yes-counts out of 3 items for 30 instances in two orders whose left-to-right sums differ in the last digit
    // (the same pair as tests/unit/stats/orderFreeSum.test.ts); exact Acc_1 = 100 · 60/90.
    const a = [1, 3, 2, 1, 2, 1, 3, 2, 1, 2, 1, 2, 1, 3, 3, 1, 2, 3, 3, 2, 3, 1, 1, 3, 2, 3, 3, 2, 1, 2];
    const b = [3, 1, 2, 1, 2, 2, 1, 2, 3, 3, 1, 1, 2, 2, 3, 3, 3, 1, 1, 2, 1, 3, 2, 3, 2, 3, 3, 2, 1, 1];
    const ids = (ks: number[]) => {
      const next = new Map<number, number[]>();
      for (const [i, k] of a.entries()) next.set(k, [...(next.get(k) ?? []), i + 1]);
      return ks.map((k) => next.get(k)!.shift()!);
    };
    const obs = (ks: number[]): RbObservation[] =>
      ids(ks).map((itemId, i) => ({
        model: "m",
        itemId,
        turn: 1,
        terminated: false,
        verdicts: v(...[0, 1, 2].map((j): "Yes" | "No" => (j < ks[i] ? "Yes" : "No"))),
      }));
    const [ma] = refineBenchMetrics(obs(a), { maxTurns: 1 });
    const [mb] = refineBenchMetrics(obs(b), { maxTurns: 1 });
    expect(mb).toEqual(ma);
    expect(ma.turns[0].acc).toBeCloseTo((100 * 60) / 90, 12);
  });

  it("a failed job is counted at its turn (and later turns it made impossible), never carried forward or dropped", () => {
    const obs: RbObservation[] = [
      // item 1: turn 1 passes, turn 2's generation failed: turns 2 and 3 are failures, not a carried pass
      { model: "m", itemId: 1, turn: 1, terminated: false, verdicts: v("Yes", "Yes") },
      { model: "m", itemId: 1, turn: 2, terminated: false, verdicts: [], failed: "generate" },
      // item 2: turn 1's judge call failed (self-refinement goes on); turn 2 judged; turn 3 terminates and carries turn 2
      { model: "m", itemId: 2, turn: 1, terminated: false, verdicts: [], failed: "judge" },
      { model: "m", itemId: 2, turn: 2, terminated: false, verdicts: v("No", "Yes") },
      { model: "m", itemId: 2, turn: 3, terminated: true, verdicts: [] },
      // item 3: turn 2's judge failed, turn 3 terminates: it cannot carry a failure into a score
      { model: "m", itemId: 3, turn: 1, terminated: false, verdicts: v("No", "No") },
      { model: "m", itemId: 3, turn: 2, terminated: false, verdicts: [], failed: "judge" },
      { model: "m", itemId: 3, turn: 3, terminated: true, verdicts: [] },
      // item 4: guided, the driving judge failed at turn 1: no later turn could be asked
      { model: "m", itemId: 4, turn: 1, terminated: false, verdicts: [], failed: "judge", breaksChain: true },
    ];
    const [m] = refineBenchMetrics(obs, { maxTurns: 3 });
    // turn 1: items 1 (pass) and 3 (0/2) scored; items 2 and 4 failed
    expect(m.turns[0]).toMatchObject({ n: 2, failed: 2, unparsed: 0, pending: 0, acc: 50, pass: 50 });
    // turn 2: item 2 (1/2) and item... 3 failed, 1 failed, 4 failed
    expect(m.turns[1]).toMatchObject({ n: 1, failed: 3, acc: 50, pass: 0 });
    // turn 3: item 2 carries its turn-2 answer ([TERMINATE]); 1, 3 and 4 failed
    expect(m.turns[2]).toMatchObject({ n: 1, failed: 3, acc: 50, pass: 0 });
  });
});
