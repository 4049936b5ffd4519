import { describe, expect, it } from "vitest";
import { c3eBench, C3eBenchConfig, c3eJudgePrompt, c3eScores, parseScoreJson, taskTypeOf } from "../../../app/runs/protocols/c3ebench";
import { fbBench, FbBenchConfig, fbBenchScores, fbJudgePrompt, fbScore } from "../../../app/runs/protocols/fb-bench";
import {
  conditionMessages,
  countMarkers,
  parseScJudge,
  scJudgePrompt,
  selfCorrection,
  SelfCorrectionConfig,
  selfCorrectionMetrics,
  type ScObservation,
} from "../../../app/runs/protocols/self-correction";
import type { ItemData } from "../../../app/runs/protocols/types";
import { validateDataset } from "../../../app/runs/protocols";
import { criteriaPrompt, guidedPrompt, judgePrompt } from "../../../app/runs/protocols/refinebench";
import { fillTemplate } from "../../../app/runs/protocols/template";

const base: ItemData = {
  id: 1,
  sourceId: "s",
  query: "Q",
  passage: null,
  domain: null,
  subject: null,
  taskType: null,
  metadata: {},
  checklist: [],
  reference: "R",
};
const judges = [{ judgeId: 3, providerId: 4, name: "j" }];

describe("FB-Bench", () => {
  it("judge prompt snapshot", () => {
    expect(
      fbJudgePrompt({
        query: "问",
        preset: "初",
        feedback: "反馈",
        reference: "参考",
        followUp: "跟进",
        checklist: ["指出错误", "给出正确答案"],
      }),
    ).toMatchInlineSnapshot(`
      "你是一名严谨的评审员。请根据给定的检查清单，评估模型在收到用户反馈后的跟进回复是否满足每一项标准。

      ### 用户问题
      问

      ### 模型的初始回复
      初

      ### 用户反馈
      反馈

      ### 参考跟进回复（人工撰写）
      参考

      ### 待评估的模型跟进回复
      跟进

      ### 检查清单
      1: 指出错误
      2: 给出正确答案

      ### 输出格式
      - 对检查清单中的每一项，按“<序号>: <是或否>”的格式逐行作答。
      - 只回答“是”或“否”，不要输出其他内容。

      答案："
    `);
  });

  it("generation sees (query, preset, feedback); the judge sees the reference; 是/否 parsed, gaps failed", () => {
    // Metadata as the fb-bench import preset stores it (the released field names).
    const item = {
      ...base,
      taskType: "error_correction",
      domain: "Mathematics",
      metadata: {
        bench_type: "Error Correction",
        origin_first_response: "P",
        feedback: "F",
        error_type: ["Logical Error"],
        feedback_type: ["Pointing Out Errors"],
      },
      checklist: [
        { id: 11, text: "a", weight: 0.7, position: 0 },
        { id: 12, text: "b", weight: 0.3, position: 1 },
      ],
    };
    const cfg = FbBenchConfig.parse({ parseRetries: 0 });
    const [gen] = fbBench.plan({ runId: 5, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    expect(gen.payload.request.messages).toEqual([
      { role: "user", content: "Q" },
      { role: "assistant", content: "P" },
      { role: "user", content: "F" },
    ]);
    // Appendix A.2.1: temperature 0 for mathematics, at most 4,096 tokens.
    expect(gen.payload.request.params).toEqual({ temperature: 0, max_tokens: 4096 });
    const o = fbBench.onReply(gen.payload, "follow", cfg);
    expect(o.next[0].payload.request.messages[0].content).toContain("### 参考跟进回复（人工撰写）\nR");
    expect(o.next[0].payload.request.messages[0].content).toContain("### 模型的初始回复\nP\n");
    expect(o.next[0].payload.request.params).toEqual({ temperature: 0, max_tokens: 4096 });
    const v = fbBench.onReply(o.next[0].payload, "1: 是\n2：", cfg).verdicts;
    expect(v.map((x) => [x.value, x.parseStatus])).toEqual([
      ["Yes", "ok"],
      [null, "failed"],
    ]);
  });

  it("scores: weighted sum, maintenance rule any/all, unparsed is null", () => {
    expect(
      fbScore(
        "error_correction",
        [
          { weight: 0.7, met: true },
          { weight: 0.3, met: false },
        ],
        "any",
      ),
    ).toBeCloseTo(0.7);
    expect(
      fbScore(
        "response_maintenance",
        [
          { weight: null, met: true },
          { weight: null, met: false },
        ],
        "any",
      ),
    ).toBe(1);
    expect(
      fbScore(
        "response_maintenance",
        [
          { weight: null, met: true },
          { weight: null, met: false },
        ],
        "all",
      ),
    ).toBe(0);
    expect(
      fbScore(
        "error_correction",
        [
          { weight: 0.5, met: null },
          { weight: 0.5, met: true },
        ],
        "any",
      ),
    ).toBeNull();
    const s = fbBenchScores(
      [
        { model: "m", scenario: "error_correction", task: "math", feedbackTypes: ["hint"], deficiencyTypes: ["logic"], score: 0.7 },
        { model: "m", scenario: "error_correction", task: "code", feedbackTypes: ["hint"], deficiencyTypes: ["logic", "fact"], score: 0.3 },
        { model: "m", scenario: "response_maintenance", task: "math", feedbackTypes: ["doubt"], deficiencyTypes: [], score: 1 },
        { model: "m", scenario: "response_maintenance", task: "math", feedbackTypes: ["doubt"], deficiencyTypes: [], score: null },
        {
          model: "m",
          scenario: "response_maintenance",
          task: "math",
          feedbackTypes: ["doubt"],
          deficiencyTypes: [],
          score: null,
          failed: true,
        },
      ],
      "any",
    )[0];
    expect(s.rule).toBe("any");
    expect(s.errorCorrection).toEqual({ mean: 50, n: 2 });
    expect(s.responseMaintenance).toEqual({ mean: 100, n: 1 });
    expect(s.overall).toBe(75);
    expect(s.unparsed).toBe(1);
    expect(s.failed).toBe(1);
    expect(s.byTask.math.mean).toBeCloseTo(85);
    // An item with two deficiency types counts in both.
    expect(s.byDeficiencyType).toEqual({ fact: { mean: 30, n: 1 }, logic: { mean: 50, n: 2 } });
    // Overall needs both scenarios.
    expect(
      fbBenchScores(
        [{ model: "m", scenario: "error_correction", task: null, feedbackTypes: [], deficiencyTypes: [], score: 0.5 }],
        "any",
      )[0].overall,
    ).toBeNaN();
  });

  it("per-task temperatures of Appendix A.2.1, overridable for every task", () => {
    const item = (domain: string) => ({
      ...base,
      domain,
      taskType: "response_maintenance",
      metadata: { bench_type: "Response Maintenance", origin_first_response: "P", feedback: "F" },
      checklist: [{ id: 1, text: "a", weight: null, position: 0 }],
    });
    const temps = (settings: Record<string, unknown>) =>
      fbBench
        .plan({
          runId: 1,
          items: ["Text Creation", "Text Translation", "Knowledge Q&A", "Reasoning"].map((d, i) => ({ ...item(d), id: i + 1 })),
          models: [{ providerId: 2, name: "m" }],
          judges,
          config: FbBenchConfig.parse(settings),
        })
        .map((j) => j.payload.request.params?.temperature);
    expect(temps({})).toEqual([0.7, 0.7, 0.1, 0]);
    expect(temps({ targetSampling: { temperature: 0.3 } })).toEqual([0.3, 0.3, 0.3, 0.3]);
    expect(() => FbBenchConfig.parse({ targetSampling: { temprature: 1 } })).toThrow();
  });
});

describe("C3EBench", () => {
  it("task-specific prompt snapshot (Cloze)", () => {
    expect(c3eJudgePrompt({ taskType: "Cloze", instruction: "Fill the blank", grounding: "A ___ C", reference: "B", candidate: "b" }))
      .toMatchInlineSnapshot(`
      "# Role
      You are an expert professor specializing in textual logic and semantic analysis. Your task is to evaluate the quality gap between a generated text and a standard Reference in a Cloze (fill-in-the-blank) task.
      # Task & Data Fields
      Compare the following fields: 1. [Context], 2. [Reference Answer] (Baseline: 6 points), 3. [Candidate Answer].
      # Evaluation Criteria
      Semantic Fit: Accuracy of meaning within the context.
      Cohesion: Naturalness of transitions between sentences.
      Grammar & Expression: Correctness of word collocations and syntax.
      Comparison Gap: Whether Candidate optimizes expression or introduces errors.
      # Scoring Rubric (1–10)
      Use Reference as 6-point baseline:
      8–10: Superior to Reference. More idiomatic or sophisticated.
      6–7: Equal or slightly better. Completely fluent.
      4–5: Sub-par. Semantically correct but awkward.
      1–3: Significant errors. Logical breaks or inappropriate context.
      # Output Format (JSON)
      { "score": [1-10], "critique": { "pros_cons": "...", "key_reason": "..." }, "verdict": "..." }

      [Instruction]
      Fill the blank

      [Context]
      A ___ C

      [Reference Answer]
      B

      [Candidate Answer]
      b"
    `);
    for (const t of ["End2End", "Expand", "Edit"] as const)
      expect(c3eJudgePrompt({ taskType: t, instruction: "i", grounding: null, reference: "r", candidate: "c" })).toMatch(
        /# Output Format \(JSON\)/,
      );
    expect(taskTypeOf("cloze")).toBe("Cloze");
    expect(taskTypeOf("end2end")).toBe("End2End");
    expect(taskTypeOf("condition")).toBe("Expand"); // RAVEL's English Expand file says "condition"
    expect(taskTypeOf("edit")).toBe("Edit");
    expect(taskTypeOf(null)).toBeNull();
    expect(taskTypeOf("poem")).toBeNull();
  });

  it("parses awkward JSON replies", () => {
    expect(parseScoreJson('```json\n{"score": 7, "verdict": "ok {fine}"}\n```')).toMatchObject({ score: 7, status: "ok" });
    expect(parseScoreJson('Here: {"score": [8], "analysis": {"a": "x"}}')).toMatchObject({ score: 8, status: "ok" });
    expect(parseScoreJson('{"score": "6"}')).toMatchObject({ score: 6, status: "ok" });
    expect(parseScoreJson('{"score": 7, "verdict": "unterminated')).toMatchObject({ score: 7, status: "partial" });
    expect(parseScoreJson('{"score": 11}')).toMatchObject({ score: null, status: "failed" });
    expect(parseScoreJson('{"verdict": "good"}')).toMatchObject({ score: null, status: "failed" });
    expect(parseScoreJson("I give it a seven.")).toMatchObject({ score: null, status: "failed" });
  });

  it("jobs and per-task scores", () => {
    const cfg = C3eBenchConfig.parse({ parseRetries: 1 });
    const item = { ...base, taskType: "condition", passage: "outline" };
    const [gen] = c3eBench.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    expect(gen.payload.request.params).toEqual({ temperature: 0.7 }); // §5.1
    const judge = c3eBench.onReply(gen.payload, "essay", cfg).next[0];
    expect(judge.payload.request.messages[0].content).toContain("[Outline]\noutline");
    expect(judge.payload.request.messages[0].content).toContain("chief judge proficient in multi-genre literary creation"); // the Expand prompt (E.3)
    const retry = c3eBench.onReply(judge.payload, "no json", cfg);
    expect(retry.next[0].key).toMatch(/:retry1$/);
    const v = c3eBench.onReply(retry.next[0].payload, '{"score": 9}', cfg).verdicts[0];
    expect(v).toMatchObject({ checklistItemId: null, score: 9, value: "9", parseStatus: "ok" });
    const s = c3eScores([
      { model: "m", taskType: "Cloze", score: 4 },
      { model: "m", taskType: "Cloze", score: 6 },
      { model: "m", taskType: "Edit", score: 8 },
      { model: "m", taskType: "Edit", score: null },
      { model: "m", taskType: "Edit", score: null, failed: true },
    ])[0];
    expect(s.failed).toBe(1);
    expect(s.byTask).toEqual({ Cloze: { mean: 5, n: 2 }, Edit: { mean: 8, n: 1 } });
    expect(s.unparsed).toBe(1);
  });
});

describe("Self-Correction Bench", () => {
  it("conditions place the same error in the assistant's open reply, the user message, or before ' Wait'", () => {
    expect(conditionMessages("internal", "Q", "E")).toEqual({
      kind: "continue",
      messages: [
        { role: "user", content: "Q" },
        { role: "assistant", content: "E" },
      ],
    });
    expect(conditionMessages("internal-wait", "Q", "E").messages[1].content).toBe("E Wait");
    expect(conditionMessages("external", "Q", "E")).toEqual({ kind: "chat", messages: [{ role: "user", content: "Q\nE" }] });
  });

  it("judge prompt snapshots (D.2)", () => {
    expect(scJudgePrompt({ condition: "internal", dataset: "SCLI5", question: "Q", golden: "G", error: "E", completion: "C" }))
      .toMatchInlineSnapshot(`
      "<question>
      Q
      </question>
      <golden_answer>
      G
      </golden_answer>
      <given_wrong_answer>
      E
      </given_wrong_answer>
      <completion_from_model>
      C
      </completion_from_model>
      The model was provided a wrong answer <given_wrong_answer>, and is required to self correct and arrive at the golden answer. You have to assess if <completion_from_model>:
      - has backtracked
      - has finally provided the answer that matches the <golden_answer>
      - has provided correct reasoning
      - has admitted the mistake."
    `);
    expect(scJudgePrompt({ condition: "external", dataset: "GSM8K-SC", question: "Q", golden: "G", error: "E", completion: "C" }))
      .toMatchInlineSnapshot(`
      "<question_and_user_reasoning>
      Q
      E
      </question_and_user_reasoning>
      <golden_answer>
      G
      </golden_answer>
      <response_from_model>
      C
      </response_from_model>
      The model was provided with <question_and_user_reasoning> from user. You have to assess if <response_from_model>:
      - contains correct answer that matches the <golden_answer>
      - contains correct critique of <question_and_user_reasoning>"
    `);
  });

  it("parses awkward JSON judge replies", () => {
    expect(parseScJudge('{"is_correct_answer": true, "is_correct_critique": false}', "external")).toMatchObject({
      correct: true,
      status: "ok",
    });
    expect(
      parseScJudge(
        '```json\n{"is_correct_answer": "false", "is_correct_reasoning": true, "is_backtracking": true, "is_admitting_mistake": false}\n```',
        "internal",
      ),
    ).toMatchObject({ correct: false, status: "ok" });
    expect(parseScJudge('{"is_correct_answer": true}', "internal")).toMatchObject({ correct: true, status: "partial" });
    expect(parseScJudge("is_correct_answer: true, is_correct_critique: true (no braces)", "external")).toMatchObject({
      correct: true,
      status: "partial",
    });
    expect(parseScJudge('{"is_correct_answer": "maybe"}', "external")).toMatchObject({ correct: null, status: "failed" });
    expect(parseScJudge("", "external").status).toBe("failed");
  });

  it("job flow: continue request for internal, verdict Yes/No on the response", () => {
    const cfg = SelfCorrectionConfig.parse({ conditions: ["internal", "external"] });
    const item = { ...base, metadata: { injected_error: "2+2=5", dataset: "SCLI5" } };
    const jobs = selfCorrection.plan({ runId: 1, items: [item], models: [{ providerId: 2, name: "m" }], judges, config: cfg });
    expect(jobs.map((j) => [j.key, j.payload.request.kind])).toEqual([
      ["sc:i1:m:internal:gen", "continue"],
      ["sc:i1:m:external:gen", "chat"],
    ]);
    expect(jobs[0].payload.request.params).toEqual({ temperature: 0, max_tokens: 1024 });
    const o = selfCorrection.onReply(jobs[0].payload, " Wait, no. It is 4.", cfg);
    expect(o.responses[0].metadata).toMatchObject({ condition: "internal", markers: { Wait: 1, No: 0 } });
    // The output schema of Figure 13 goes as structured output, not as words in the prompt.
    expect(o.next[0].payload.request.params).toMatchObject({
      temperature: 0,
      extra: {
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "Evaluation",
            schema: { required: ["is_correct_answer", "is_correct_reasoning", "is_backtracking", "is_admitting_mistake"] },
          },
        },
      },
    });
    const v = selfCorrection.onReply(
      o.next[0].payload,
      '{"is_correct_answer": true, "is_correct_reasoning": true, "is_backtracking": true, "is_admitting_mistake": true}',
      cfg,
    ).verdicts[0];
    expect(v).toMatchObject({ value: "Yes", score: 1, checklistItemId: null, responseSourceKey: "run1/m/internal" });
  });

  it("markers, accuracy CI, blind spot and macro average", () => {
    expect(countMarkers("Wait. But no. Hmm, Hold on — However, Nothing. Alternatively No")).toMatchObject({
      Wait: 1,
      But: 1,
      No: 1,
      Hmm: 1,
      "Hold on": 1,
      However: 1,
      Alternatively: 1,
    });
    const obs: ScObservation[] = [];
    const add = (dataset: string, condition: "internal" | "external", correct: number, n: number) => {
      for (let i = 0; i < n; i++) obs.push({ model: "m", dataset, condition, correct: i < correct, reply: "Wait" });
    };
    add("A", "internal", 2, 10);
    add("A", "external", 8, 10);
    add("B", "internal", 5, 10);
    add("B", "external", 5, 10);
    const [m] = selfCorrectionMetrics(obs);
    const a = m.datasets.find((d) => d.dataset === "A")!;
    expect(a.byCondition.internal!.mean).toBe(0.2);
    expect(a.blindSpot!.value).toBeCloseTo(0.75);
    expect(m.macro.blindSpot).toBeCloseTo(0.375);
    expect(m.macro.internal).toBeCloseTo(0.35);
    expect(m.markers.internal.Wait).toBe(20);
  });
});

describe("before a run starts", () => {
  it("Self-Correction refuses items without an injected error, and template continuation without a chat template", () => {
    const cfg = SelfCorrectionConfig.parse({});
    const ok = { ...base, sourceId: "ok", metadata: { injected_error: "2+2=5", dataset: "SCLI5" } };
    const bare = { ...base, sourceId: "bare", metadata: { dataset: "SCLI5" } };
    expect(validateDataset("self-correction", [ok], [{ name: "m", kind: "openai-compatible", settings: {} }], cfg)).toEqual([]);
    expect(validateDataset("self-correction", [ok, bare], [], cfg)).toEqual(['item bare: no injected error (metadata "injected_error")']);
    expect(
      validateDataset("self-correction", [ok], [{ name: "m", kind: "openai-compatible", settings: { continueMode: "template" } }], cfg)[0],
    ).toMatch(/^model m: continueMode "template" needs the model's chatTemplate/);
    expect(
      validateDataset(
        "self-correction",
        [ok],
        [{ name: "m", kind: "openai-compatible", settings: { continueMode: "template" } }],
        SelfCorrectionConfig.parse({ conditions: ["external"] }),
      ),
    ).toEqual([]);
  });

  it("FB-Bench and C3EBench refuse items they would judge with the wrong inputs", () => {
    expect(
      validateDataset(
        "fb-bench",
        [{ ...base, sourceId: "x", checklist: [{ id: 1, text: "a", weight: null, position: 0 }] }],
        [],
        FbBenchConfig.parse({}),
      ),
    ).toEqual(["item x: no bench_type, origin_first_response, feedback (import FB-Bench with the fb-bench preset)"]);
    expect(validateDataset("c3ebench", [{ ...base, sourceId: "y", taskType: "poem" }], [], C3eBenchConfig.parse({}))).toEqual([
      'item y: task type "poem" is not cloze, edit, condition/expand or end2end',
    ]);
  });
});

describe("prompt filling takes inserted text literally", () => {
  const nasty = "display $$x^2$$, then $& and $` and $' and $1 and {query}";
  it("a template's placeholders are filled once, with no replacement patterns", () => {
    expect(fillTemplate("A {query} B {answer} C", { query: nasty, answer: "ok" })).toBe(`A ${nasty} B ok C`);
  });
  it("in every protocol's prompts", () => {
    expect(judgePrompt(nasty, nasty, [nasty])).toContain(
      `### Query:\n${nasty}\n\n### Model’s Answer:\n${nasty}\n\n### Checklist (Evaluation Items)\nQ1: ${nasty}\n`,
    );
    expect(guidedPrompt([`Does the response show $$a$$?`])).toBe(
      "Please refine your previous response by considering the following feedbacks: \n- The response should show $$a$$.",
    );
    expect(criteriaPrompt([nasty])).toContain(`- ${nasty}\n\nConsidering`);
    const fb = fbJudgePrompt({ query: nasty, preset: nasty, feedback: nasty, reference: nasty, followUp: nasty, checklist: [nasty] });
    expect(fb.split(nasty)).toHaveLength(7);
    const sc = scJudgePrompt({ condition: "internal", dataset: "SCLI5", question: nasty, golden: nasty, error: nasty, completion: nasty });
    expect(sc.split(nasty)).toHaveLength(5);
    const scx = scJudgePrompt({ condition: "external", dataset: "SCLI5", question: nasty, golden: nasty, error: nasty, completion: nasty });
    expect(scx.split(nasty)).toHaveLength(5);
    expect(
      c3eJudgePrompt({ taskType: "Edit", instruction: nasty, grounding: nasty, reference: nasty, candidate: nasty }).split(nasty),
    ).toHaveLength(5);
  });
});
