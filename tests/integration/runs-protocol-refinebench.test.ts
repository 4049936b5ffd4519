/**
 * RefineBench end to end on data in the released format (refinebench_samples.json
 * field names): imported with the `refinebench` preset, guided refinement run
 * against the local fake endpoint with two judges, Acc_t / Pass_t per turn
 * recomputed here from the file, with a failed generation and a failed judge
 * call counted — never imputed.
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

type Rec = { index: string; question: string; checklist: string[]; materials?: unknown[]; reference_answer: string[]; comment: string[] };

/** Judge 1 finds checklist item q satisfied at turn t when (code-point sum of q) mod 3 < t: everything is satisfied by turn 3. */
const sat = (q: string, t: number) => codeSum(q) % 3 < t;

function script(req: { body: Record<string, unknown> }) {
  const msgs = messagesOf(req.body);
  const last = msgs[msgs.length - 1]?.content ?? "";
  if (req.body.model === "target-model") {
    const turn = msgs.filter((m) => m.role === "user").length;
    if (turn === 2 && msgs[0].content.includes("rectangle 3 by 5")) return { status: 500 };
    return `Answer v${turn}`;
  }
  const section = last.split("### Checklist (Evaluation Items)\n")[1].split("\n\n### Output Format")[0];
  const turn = Number(/### Model’s Answer:\nAnswer v(\d+)/.exec(last)![1]);
  if (req.body.model === "judge-model-2") {
    if (turn === 1 && last.includes("elements of negligence")) return { status: 500 };
    return section
      .split("\n")
      .map((l) => `${l.split(":")[0]}: Yes`)
      .join("\n");
  }
  return section
    .split("\n")
    .map((l) => /^(Q\d+): (.*)$/.exec(l)!)
    .map((m) => `${m[1]}: ${sat(m[2], turn) ? "Yes" : "No"}`)
    .join("\n");
}

/**
 * Guided refinement (§3.2) simulated from the records: turn t's verdicts are the judge's on answer t; the
 * conversation stops once everything is satisfied (the last answer stands); a failed job makes that turn — and
 * every turn it made impossible — a failure, never a score.
 */
function expectedTurns(
  recs: Rec[],
  maxTurns: number,
  o: { judge: (q: string, t: number) => boolean; genFails?: (r: Rec) => number | null; judgeFails?: (r: Rec) => number | null },
) {
  const out = Array.from({ length: maxTurns }, () => ({ acc: [] as number[], pass: [] as number[], failed: 0 }));
  for (const r of recs) {
    let last = maxTurns;
    for (let t = 1; t <= maxTurns; t++)
      if (r.checklist.every((q) => sat(q, t))) {
        last = t;
        break;
      }
    const genFail = o.genFails?.(r) ?? null;
    const judgeFail = o.judgeFails?.(r) ?? null;
    for (let t = 1; t <= maxTurns; t++) {
      const answered = Math.min(t, last);
      if ((genFail !== null && answered >= genFail) || (genFail !== null && t >= genFail) || judgeFail === answered) {
        out[t - 1].failed++;
        continue;
      }
      const yes = r.checklist.filter((q) => o.judge(q, answered)).length;
      out[t - 1].acc.push((100 * yes) / r.checklist.length);
      out[t - 1].pass.push(yes === r.checklist.length ? 100 : 0);
    }
  }
  return out.map((x) => ({
    n: x.acc.length,
    acc: x.acc.length ? mean(x.acc) : NaN,
    pass: x.pass.length ? mean(x.pass) : NaN,
    failed: x.failed,
  }));
}

function expectTurns(actual: any[], exp: ReturnType<typeof expectedTurns>) {
  expect(actual).toHaveLength(exp.length);
  exp.forEach((e, i) => {
    expect(actual[i].n, `turn ${i + 1} n`).toBe(e.n);
    expect(actual[i].failed, `turn ${i + 1} failed`).toBe(e.failed);
    expect(actual[i].unparsed).toBe(0);
    expect(actual[i].acc, `turn ${i + 1} acc`).toBeCloseTo(e.acc, 9);
    expect(actual[i].pass, `turn ${i + 1} pass`).toBeCloseTo(e.pass, 9);
  });
}

const records = (doc: Record<string, Rec[]>) => Object.values(doc).flat();

beforeAll(async () => {
  fake = await startFakeLlm(script);
});
afterAll(() => fake.close());

describe("RefineBench on the released format", () => {
  it("guided refinement: Acc_t and Pass_t per turn for every judge, a failed generation and a failed judge call counted, prompts carrying $ text verbatim", async () => {
    const file = path.join(FIXTURES, "refinebench-run.json");
    const recs = records(JSON.parse(fs.readFileSync(file, "utf8")));
    const datasetId = await importThrough(dbFile, "rb", "refinebench", file);
    // reference_answer is a list upstream: every answer of the list is kept as the item's references.
    const items = db()
      .select()
      .from(schema.items)
      .all()
      .filter((i) => i.datasetId === datasetId);
    const refs = db().select().from(schema.references).all();
    for (const r of recs) {
      const item = items.find((i) => i.sourceId === r.index)!;
      expect(
        refs
          .filter((x) => x.itemId === item.id)
          .map((x) => x.text)
          .sort(),
        r.index,
      ).toEqual([...r.reference_answer].sort());
    }
    const projectId = projectIdOf(db(), "rb");
    addProviders(db(), projectId, fake.baseUrl);
    // The fixture exercises the failure paths: the rectangle problem needs a second turn (whose generation fails).
    const rect = recs.find((r) => r.question.includes("rectangle 3 by 5"))!;
    expect(rect.checklist.every((q) => sat(q, 1))).toBe(false);
    fake.requests.length = 0;
    const run = await createRun(db(), projectId, {
      name: "rb guided",
      protocol: "refinebench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }, { provider: "judge2" }],
      settings: { setting: "guided", maxTurns: 3 },
    });
    expect(run.config.settings).toMatchObject({
      targetSampling: { temperature: 1, top_p: 0.9, max_tokens: 10_000 },
      judgeSampling: { temperature: 0, top_p: 1, max_tokens: 10_000 },
    });
    const done = await runToEnd(db(), run.id);

    // $$ … $$, $' and $& reach the model and the judge untouched.
    const dollar = recs.find((r) => r.question.includes("$$"))!;
    const judged = fake.requests.filter((r) => r.body.model === "judge-model" && messagesOf(r.body)[0].content.includes(dollar.question));
    expect(judged.length).toBeGreaterThan(0);
    expect(messagesOf(judged[0].body)[0].content).toContain(
      `### Query:\n${dollar.question}\n\n### Model’s Answer:\nAnswer v1\n\n### Checklist (Evaluation Items)\nQ1: ${dollar.checklist[0]}\n`,
    );
    // Guided feedback: turn 2's user message lists exactly the items judge 1 failed at turn 1.
    const law = recs.find((r) => r.index === "l-1")!;
    const t2 = fake.requests.find(
      (r) => r.body.model === "target-model" && messagesOf(r.body).length === 3 && messagesOf(r.body)[0].content.includes(law.question),
    )!;
    const failed1 = law.checklist.filter((q) => !sat(q, 1));
    expect(messagesOf(t2.body)[2].content).toBe(
      `Please refine your previous response by considering the following feedbacks: ${failed1.map((q) => `\n- The response should ${q.replace(/^Does the response /, "").replace(/\?$/, "")}.`).join("")}`,
    );
    expect(t2.body).toMatchObject({ temperature: 1, top_p: 0.9, max_tokens: 10_000 });

    const results = (await runResultsAll(db(), done)) as any[];
    expect(results.map((r) => r.judge)).toHaveLength(2);
    const genFails = (r: Rec) => (r === rect ? 2 : null);
    expectTurns(results[0].metrics[0].turns, expectedTurns(recs, 3, { judge: sat, genFails }));
    expectTurns(
      results[1].metrics[0].turns,
      expectedTurns(recs, 3, {
        judge: () => true,
        genFails,
        judgeFails: (r) => (r.question.includes("elements of negligence") ? 1 : null),
      }),
    );
  });

  it.skipIf(!hasShared("refinebench-page"))("on the real refinebench_samples.json (including problems with $$ display math)", async () => {
    const file = path.join(SHARED, "refinebench-page/static/data/refinebench_samples.json");
    const recs = records(JSON.parse(fs.readFileSync(file, "utf8")));
    const datasetId = await importThrough(dbFile, "rbreal", "refinebench", file);
    const projectId = projectIdOf(db(), "rbreal");
    addProviders(db(), projectId, fake.baseUrl);
    const usable = recs.filter(
      (r) =>
        r.checklist.every((q) => !q.includes("\n")) &&
        !r.question.includes("rectangle 3 by 5") &&
        !r.question.includes("elements of negligence"),
    );
    const chosen = [
      ...usable.filter((r) => r.question.includes("$$")).slice(0, 3),
      ...usable.filter((r) => !r.question.includes("$$")).slice(0, 3),
    ];
    expect(chosen.filter((r) => r.question.includes("$$")).length).toBeGreaterThan(0);
    const items = db()
      .select()
      .from(schema.items)
      .all()
      .filter((i) => i.datasetId === datasetId);
    const itemIds = chosen.map((r) => items.find((i) => i.sourceId === r.index)!.id);
    fake.requests.length = 0;
    const run = await createRun(db(), projectId, {
      name: "rb real",
      protocol: "refinebench",
      datasetId,
      itemIds,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "guided", maxTurns: 2 },
    });
    const done = await runToEnd(db(), run.id);
    for (const r of chosen) {
      const j = fake.requests.find((x) => x.body.model === "judge-model" && messagesOf(x.body)[0].content.includes(r.checklist[0]))!;
      expect(messagesOf(j.body)[0].content, r.index).toContain(`${r.question}\n\n### Model’s Answer:\n`);
    }
    expectTurns(((await runResultsAll(db(), done))[0] as any).metrics[0].turns, expectedTurns(chosen, 2, { judge: sat }));
  });
});
