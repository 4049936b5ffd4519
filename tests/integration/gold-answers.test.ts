/**
 * Gold answers of every task kind are recorded on the task page with form controls
 * (no JSON): Yes/No, a 1–5 score per response, the best response (or a tie); bad
 * input is refused with the field and changes nothing; annotators are scored against them.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask } from "../../app/annotation/tasks.server";
import { matchesGold } from "../../app/annotation/labels";
import * as taskPage from "../../app/routes/p.$slug.tasks.$taskId._index";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { args, get, post, run, signInCookie } from "../support/http";

const { db } = useTempDatabase();
let slug: string;
let cookie: string;
const tasks: Record<string, number> = {};

type GoldRow = {
  id: number;
  known: boolean;
  values: Record<string, string>;
  responses: { letter: string; reference: boolean; model: string | null }[];
};

async function page(kind: string): Promise<GoldRow[]> {
  const res = await run(taskPage.loader, args(get(`/p/${slug}/tasks/${tasks[kind]}`, cookie), { slug, taskId: String(tasks[kind]) }));
  expect(res.status).toBe(200);
  return (await res.json()).gold;
}
async function save(kind: string, form: Record<string, string>) {
  const res = await run(
    taskPage.action,
    args(post(`/p/${slug}/tasks/${tasks[kind]}`, { intent: "gold", ...form }, cookie), { slug, taskId: String(tasks[kind]) }),
  );
  return {
    status: res.status,
    body: (await res.json()) as { ok?: string; error?: string; fieldErrors?: Record<string, string>; form?: string },
  };
}
const stored = (unitId: number) =>
  db().select({ g: schema.units.goldLabel, r: schema.units.responseIds }).from(schema.units).where(eq(schema.units.id, unitId)).get()!;

beforeAll(async () => {
  const project = makeProject("gold-answers");
  slug = project.slug;
  const { datasetId } = await makeSyntheticDataset(project.id, { items: 20 });
  const researcher = await makeUser();
  await addMember(project.id, researcher.id, "researcher");
  cookie = await signInCookie(researcher.email, researcher.password);
  const pool: number[] = [];
  for (let i = 0; i < 2; i++) {
    const u = await makeUser();
    await addMember(project.id, u.id, "annotator");
    pool.push(u.id);
  }
  const common = { datasetId, overlap: 1, pool, goldRate: 0.2, seed: 7 };
  tasks["response-satisfaction"] = (
    await createTask(project.id, researcher.id, { ...common, name: "sat", kind: "response-satisfaction" })
  ).taskId;
  tasks["writing-quality"] = (await createTask(project.id, researcher.id, { ...common, name: "wq", kind: "writing-quality" })).taskId;
  tasks["best-of-n"] = (
    await createTask(project.id, researcher.id, {
      ...common,
      name: "bon",
      kind: "best-of-n",
      includeReference: true,
      n: 3,
      allowTies: false,
    })
  ).taskId;
});

describe("gold answers on the task page", () => {
  it("Yes/No: a select, stored as the label", async () => {
    const [g] = await page("response-satisfaction");
    expect(g.known).toBe(false);
    expect((await save("response-satisfaction", { unitId: String(g.id), answer: "No" })).body.ok).toMatch(/saved/);
    expect(stored(g.id).g).toBe(JSON.stringify("No"));
    expect((await page("response-satisfaction"))[0]).toMatchObject({ known: true, values: { answer: "No" } });
  });

  it("writing quality: one 1–5 score per response (the reference is not scored), all required", async () => {
    const [g] = await page("writing-quality");
    const scored = g.responses.filter((r) => !r.reference);
    expect(scored.length).toBeGreaterThan(1);
    expect(scored.every((r) => r.model)).toBe(true); // the researcher is not blind: models are named
    const form: Record<string, string> = { unitId: String(g.id) };
    scored.forEach((r, i) => (form[`score.${r.letter}`] = String(5 - i)));
    // Missing one score: refused, naming the field; nothing stored.
    const partial = { ...form };
    delete partial[`score.${scored[1].letter}`];
    const bad = await save("writing-quality", partial);
    expect(bad.status).toBe(400);
    expect(bad.body.fieldErrors).toEqual({ [`score.${scored[1].letter}`]: `Give Response ${scored[1].letter} a known score from 1 to 5.` });
    expect(bad.body.form).toBe(`gold-${g.id}`);
    expect(stored(g.id).g).toBeNull();
    expect((await save("writing-quality", { ...form, [`score.${scored[0].letter}`]: "7" })).status).toBe(400);
    expect(stored(g.id).g).toBeNull();
    expect((await save("writing-quality", form)).status).toBe(200);
    const { g: gold, r: ids } = stored(g.id);
    const expected = Object.fromEntries(ids!.filter((k) => k !== "reference").map((k, i) => [String(k), 5 - i]));
    expect(JSON.parse(gold!)).toEqual({ scores: expected });
    // The form shows the saved scores again.
    expect((await page("writing-quality"))[0].values).toMatchObject(
      Object.fromEntries(scored.map((r, i) => [`score.${r.letter}`, String(5 - i)])),
    );
  });

  it("best-of-N: the best response by letter, the reference included; a tie only where the task allows it", async () => {
    const [g] = await page("best-of-n");
    expect(g.responses.some((r) => r.reference)).toBe(true);
    const tie = await save("best-of-n", { unitId: String(g.id), best: "tie" });
    expect(tie).toMatchObject({ status: 400, body: { fieldErrors: { best: "This task does not allow ties." } } });
    expect((await save("best-of-n", { unitId: String(g.id), best: "Z" })).status).toBe(400);
    expect(stored(g.id).g).toBeNull();
    const pick = g.responses.find((r) => !r.reference)!;
    expect((await save("best-of-n", { unitId: String(g.id), best: pick.letter })).status).toBe(200);
    const { g: gold, r: ids } = stored(g.id);
    const index = g.responses.indexOf(pick);
    expect(JSON.parse(gold!)).toEqual({ best: ids![index] });
    expect((await page("best-of-n"))[0].values).toMatchObject({ best: pick.letter });
    // An annotator who picks that response matches the gold answer; another pick does not.
    expect(matchesGold("best-of-n", { best: ids![index] }, gold!)).toBe(true);
    expect(matchesGold("best-of-n", { best: "reference" }, gold!)).toBe(false);
  });

  it("refuses a unit that is not a gold unit of this task", async () => {
    const other = db()
      .select({ id: schema.units.id })
      .from(schema.units)
      .where(and(eq(schema.units.taskId, tasks["response-satisfaction"]), eq(schema.units.isGold, false)))
      .get()!;
    const res = await save("response-satisfaction", { unitId: String(other.id), answer: "Yes" });
    expect(res).toMatchObject({ status: 400, body: { error: "No such gold unit in this task.", field: "unitId" } });
    expect(stored(other.id).g).toBeNull();
  });
});
