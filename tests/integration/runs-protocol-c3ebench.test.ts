/**
 * C3EBench end to end on data in RAVEL's released format (english_dataset/TASK/*.jsonl
 * field names): imported with the `c3ebench` preset, run against the local fake
 * endpoint, every mean recomputed here from the file itself. The fixture has
 * the released `input` objects of each task type — cloze {prefix, suffix},
 * edit {content, critique}, condition (= Expand) {genre, brief, condition,
 * audience, word}, end2end {genre, brief, audience, word} — and each real
 * English file (../shared/data, when present) is imported and run the same way.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { createRun } from "../../app/runs/runner.server";
import { runResultsAll } from "../../app/runs/results.server";
import { useTempDatabase } from "../support/db";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import {
  addProviders,
  codeSum,
  FIXTURES,
  hasShared,
  importThrough,
  mean,
  messagesOf,
  projectIdOf,
  runToEnd,
  SHARED,
} from "./runs-protocol-support";

const { db, file: dbFile } = useTempDatabase();
let fake: FakeLlm;

type Rec = { infer_id: string; task_type: string; instruction: string; input: Record<string, string>; reference: string };

/**
 * What the model and the judge are given as grounding for each task type,
 * written here from the released fields: the blank between prefix and suffix,
 * draft and critique, and for Expand/End2End every requirement field with the
 * outline (`condition`) first.
 */
function expectedGrounding(r: Rec): string {
  const i = r.input;
  if (r.task_type === "cloze") return `[Context]\n${i.prefix}[fill in the blank]${i.suffix}`;
  if (r.task_type === "edit") return `[Draft and Critique]\nDraft:\n${i.content}\n\nCritique:\n${i.critique}`;
  const lines = [
    i.condition === undefined ? null : `Outline: ${i.condition}`,
    `Genre: ${i.genre}`,
    `Brief: ${i.brief}`,
    `Audience: ${i.audience}`,
    `Word count: ${i.word}`,
  ]
    .filter(Boolean)
    .join("\n");
  return `${r.task_type === "condition" ? "[Outline]" : "[Context]"}\n${lines}`;
}

/**
 * The model gets the instruction and the grounding; the judge its task's
 * prompt, then instruction, grounding, reference and the model's writing.
 * (Matched as booleans: a mismatch names the item, never prints the file's text.)
 */
function expectPrompts(rec: Rec, gens: { body: Record<string, unknown> }[], judged: { body: Record<string, unknown> }[]) {
  const grounding = expectedGrounding(rec);
  const genContent = `${rec.instruction}\n\n${grounding.slice(grounding.indexOf("\n") + 1)}`;
  const gen = gens.find((g) => messagesOf(g.body)[0].content === genContent);
  expect(gen !== undefined, `${rec.infer_id}: the model's prompt is the instruction and every grounding field`).toBe(true);
  const tail = `\n\n[Instruction]\n${rec.instruction}\n\n${grounding}\n\n[Reference Answer]\n${rec.reference}\n\n[Candidate Answer]\n${draft(genContent)}`;
  const j = judged.find((r) => messagesOf(r.body)[0].content.endsWith(tail));
  expect(j !== undefined, `${rec.infer_id}: the judge sees instruction, grounding, reference and the writing`).toBe(true);
  const marker = `# Role\n${FAMILY.find((f) => f.task === TASK_OF[rec.task_type])!.marker}`;
  expect(messagesOf(j!.body)[0].content.startsWith(marker), `${rec.infer_id}: judged with the ${TASK_OF[rec.task_type]} prompt`).toBe(true);
}

/** What each prompt of Appendix E opens with, and the score the fake judge gives under it (plus 1 when the candidate's code-point sum is odd). */
const FAMILY = [
  { task: "Expand", marker: "You are a chief judge proficient in multi-genre literary creation", base: 7 },
  { task: "Cloze", marker: "You are an expert professor specializing in textual logic", base: 6 },
  { task: "Edit", marker: "Senior literary editor specializing in evaluating a writer", base: 8 },
  { task: "End2End", marker: "You are a versatile literary editor and critic", base: 5 },
];
/** RAVEL's English task_type values (SPEC §4): condition is Expand. */
const TASK_OF: Record<string, string> = { cloze: "Cloze", condition: "Expand", edit: "Edit", end2end: "End2End" };
const draft = (instruction: string) => `A draft answering: ${instruction.slice(0, 40)}`;
const scoreOf = (task: string, candidate: string) => FAMILY.find((f) => f.task === task)!.base + (codeSum(candidate) % 2);

function script(req: { body: Record<string, unknown> }) {
  const msgs = messagesOf(req.body);
  const content = msgs[msgs.length - 1]?.content ?? "";
  if (req.body.model === "target-model") {
    if (content.includes("bees and orchards")) return { status: 500 };
    return draft(content);
  }
  const fam = FAMILY.find((f) => content.startsWith(`# Role\n${f.marker}`));
  if (!fam) return "no family";
  if (content.includes("He was angry and left.")) return "I would rather not give a number.";
  const candidate = content.split("[Candidate Answer]\n")[1];
  return JSON.stringify({ score: fam.base + (codeSum(candidate) % 2), analysis: { note: "fake" }, verdict: "ok" });
}

beforeAll(async () => {
  fake = await startFakeLlm(script);
});
afterAll(() => fake.close());

describe("C3EBench on RAVEL's released format", () => {
  it("each task type gets its own prompt (condition = Expand), generation at temperature 0.7, per-task means, failed and unparsed counted", async () => {
    const file = path.join(FIXTURES, "c3ebench-run.jsonl");
    const recs = fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
    const datasetId = await importThrough(dbFile, "c3e", "c3ebench", file);
    const projectId = projectIdOf(db(), "c3e");
    addProviders(db(), projectId, fake.baseUrl);
    fake.requests.length = 0;
    const run = await createRun(db(), projectId, {
      name: "c3e",
      protocol: "c3ebench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { parseRetries: 0 },
    });
    expect(run.config.settings).toMatchObject({ targetSampling: { temperature: 0.7 }, judgeSampling: { temperature: 0 } });
    const done = await runToEnd(db(), run.id);
    const gens = fake.requests.filter((r) => r.body.model === "target-model");
    expect(gens).toHaveLength(recs.length);
    expect(gens.every((g) => g.body.temperature === 0.7)).toBe(true);
    // Each item's judge prompt is its task's (E.1–E.4): the two condition items get Expand's.
    const judged = fake.requests.filter((r) => r.body.model === "judge-model");
    // Every released input field reaches the model and the judge ($$ and $' verbatim).
    for (const rec of recs.filter((r) => !r.instruction.includes("bees and orchards"))) expectPrompts(rec, gens, judged);
    const m = ((await runResultsAll(db(), done))[0] as any).metrics[0];
    // Expected: every item except the failed generation and the unparseable verdict.
    const scored = recs.filter((r) => !r.instruction.includes("bees and orchards") && r.infer_id !== "edit_en_r2");
    const byTask: Record<string, number[]> = {};
    for (const r of scored) {
      const gen = gens.find((g) => messagesOf(g.body)[0].content.startsWith(r.instruction))!;
      (byTask[TASK_OF[r.task_type]] ??= []).push(scoreOf(TASK_OF[r.task_type], draft(messagesOf(gen.body)[0].content)));
    }
    expect(Object.keys(m.byTask).sort()).toEqual(Object.keys(byTask).sort());
    for (const [t, xs] of Object.entries(byTask)) expect(m.byTask[t]).toEqual({ mean: mean(xs), n: xs.length });
    expect(m.overall).toBeCloseTo(mean(Object.values(byTask).flat()), 12);
    expect(m).toMatchObject({ n: scored.length, failed: 1, unparsed: 1 });
  });

  it("refuses items whose task type is none of the four", async () => {
    const projectId = projectIdOf(db(), "c3e");
    const ds = db().insert(schema.datasets).values({ projectId, name: "odd", source: "test" }).returning().get();
    db().insert(schema.items).values({ datasetId: ds.id, sourceId: "odd-1", query: "Write.", taskType: "haiku" }).run();
    await expect(
      createRun(db(), projectId, {
        name: "odd",
        protocol: "c3ebench",
        datasetId: ds.id,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
      }),
    ).rejects.toThrow(/item odd-1: task type "haiku" is not cloze, edit, condition\/expand or end2end/);
  });

  const REAL = [
    { task: "cloze", file: "cloze/step_4_cloze_benchmark.jsonl" },
    { task: "condition", file: "condition/step_4_condition_benchmark.jsonl" },
    { task: "edit", file: "edit/step_7_edit_revised_instruction.jsonl" },
    { task: "end2end", file: "end2end/step_4_end2end_benchmark.jsonl" },
  ];
  for (const { task, file: rel } of REAL)
    it.skipIf(!hasShared(`RAVEL-Reasoning-Agents-Text-Eval/english_dataset/${rel}`))(
      `on RAVEL's real ${task} file: nothing refused, judged with the ${TASK_OF[task]} prompt on every released field`,
      async () => {
        const file = path.join(SHARED, "RAVEL-Reasoning-Agents-Text-Eval/english_dataset", rel);
        const recs = fs
          .readFileSync(file, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Rec);
        expect(new Set(recs.map((r) => r.task_type))).toEqual(new Set([task]));
        const slug = `c3e-${task}`;
        const datasetId = await importThrough(dbFile, slug, "c3ebench", file);
        const projectId = projectIdOf(db(), slug);
        addProviders(db(), projectId, fake.baseUrl);
        fake.requests.length = 0;
        const run = await createRun(db(), projectId, {
          name: "real",
          protocol: "c3ebench",
          datasetId,
          limit: 3,
          models: [{ provider: "target" }],
          judges: [{ provider: "judge" }],
        });
        const done = await runToEnd(db(), run.id);
        expect(done.status).toBe("completed");
        const jobs = db()
          .select()
          .from(schema.jobs)
          .all()
          .filter((j) => j.runId === run.id);
        expect(jobs.filter((j) => j.status !== "done").map((j) => j.error)).toEqual([]);
        const gens = fake.requests.filter((r) => r.body.model === "target-model");
        const judged = fake.requests.filter((r) => r.body.model === "judge-model");
        expect(gens).toHaveLength(3);
        expect(judged).toHaveLength(3);
        // The run takes the first three items in file order.
        for (const rec of recs.slice(0, 3)) expectPrompts(rec, gens, judged);
        const xs = gens.map((g) => scoreOf(TASK_OF[task], draft(messagesOf(g.body)[0].content)));
        const m = ((await runResultsAll(db(), done))[0] as any).metrics[0];
        expect(m.byTask).toEqual({ [TASK_OF[task]]: { mean: mean(xs), n: 3 } });
        expect(m).toMatchObject({ failed: 0, unparsed: 0 });
      },
    );

  it("the demo works offline: the recorded models and judge serve C3EBench on the demo writing set without a miss", async () => {
    const { seedDemo, loadDemoFiles, DEMO_PROJECT } = await import("../../seeds/demo");
    await seedDemo(db());
    const projectId = projectIdOf(db(), DEMO_PROJECT.slug);
    const { writing } = loadDemoFiles();
    const ds = db()
      .select()
      .from(schema.datasets)
      .all()
      .find((d) => d.projectId === projectId && d.name === writing.dataset.name)!;
    const run = await createRun(db(), projectId, {
      name: "demo writing",
      protocol: "c3ebench",
      datasetId: ds.id,
      models: [{ provider: "Quillon-8B (recorded)" }, { provider: "Orrery-70B (recorded)" }],
      judges: [{ provider: "Sentinel-34B (recorded)" }],
    });
    const done = await runToEnd(db(), run.id);
    const failed = db()
      .select()
      .from(schema.jobs)
      .all()
      .filter((j) => j.runId === run.id && j.status !== "done");
    expect(failed.map((j) => j.error)).toEqual([]);
    const ms = ((await runResultsAll(db(), done))[0] as any).metrics;
    // Expected: the recorded judge scores 2 × the demo's 1–5 quality of each writing.
    for (const model of ["Orrery-70B", "Quillon-8B"]) {
      const m = ms.find((x: any) => x.model === model);
      const byTask: Record<string, number[]> = {};
      for (const it of writing.items)
        (byTask[TASK_OF[String(it.taskType).toLowerCase()] ?? it.taskType] ??= []).push(
          Math.min(10, 2 * Number(it.responses.find((r: any) => r.model === model)!.quality)),
        );
      for (const [t, xs] of Object.entries(byTask)) expect(m.byTask[t], `${model} ${t}`).toEqual({ mean: mean(xs), n: xs.length });
      expect(m).toMatchObject({ n: writing.items.length, failed: 0, unparsed: 0 });
    }
  });
});
