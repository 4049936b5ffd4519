/**
 * The any-label-set judge table on Concord's own task kinds (issue 12): Likert 1–7,
 * writing quality (1–5) and best-of-N, each on data that went the real way — items and
 * responses through the import presets, a task created by createTask, labels submitted by
 * three annotators through saveAnnotation (the annotate page's save), the judge's verdicts
 * through the `verdicts` preset — and read back by the judge page's loader. Every expected
 * figure is computed in this file from the labels and verdicts written here: the strict
 * majority, accuracy, Cohen's (1960) kappa, quadratic-weighted kappa (Fleiss & Cohen 1973,
 * weights 1 − (i − j)²/(q − 1)² over the scale's categories), Gwet's (2008) AC1 with q the
 * scale's size, and macro F1 as scikit-learn's average="macro" (zero_division=0).
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, useTempDatabase } from "../support/db";
import { addMember, makeUser } from "../support/factory";
import { args, get, run, signInCookie } from "../support/http";
import { runImport } from "../../app/formats/import.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import { myAssignment, saveAnnotation } from "../../app/annotation/annotate.server";
import { letter } from "../../app/annotation/random";
import { loader as judgesLoader } from "../../app/routes/p.$slug.reports.$taskId.judges";
import type { JudgeAgreementRow } from "../../app/reports/judgeAgreement";

const { file: dbFile, db } = useTempDatabase();
const dir = tempDir();
const c = () => db().$client;
const ITEMS = ["w1", "w2", "w3", "w4", "w5", "w6"];
const MODELS = ["alpha", "beta"];

// ——— independent reference computations ———
function majority(ls: (string | number)[]): string | null {
  for (const l of ls) if (2 * ls.filter((x) => x === l).length > ls.length) return String(l);
  return null;
}
function kappa(y: string[], p: string[], cats: string[], weighted = false): number {
  const n = y.length;
  const q = cats.length;
  const w = (i: number, j: number) => (weighted ? 1 - (i - j) ** 2 / (q - 1) ** 2 : i === j ? 1 : 0);
  const row = cats.map((c) => y.filter((x) => x === c).length / n);
  const col = cats.map((c) => p.filter((x) => x === c).length / n);
  let po = 0;
  for (let k = 0; k < n; k++) po += w(cats.indexOf(y[k]), cats.indexOf(p[k]));
  po /= n;
  let pe = 0;
  for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) pe += w(i, j) * row[i] * col[j];
  return (po - pe) / (1 - pe);
}
function ac1(y: string[], p: string[], scale: string[]): number {
  const n = y.length;
  const q = scale.length;
  const pa = y.filter((x, i) => x === p[i]).length / n;
  const pi = scale.map((c) => (y.filter((x) => x === c).length + p.filter((x) => x === c).length) / (2 * n));
  const pe = pi.reduce((a, x) => a + x * (1 - x), 0) / (q - 1);
  return (pa - pe) / (1 - pe);
}
function macroF1(y: string[], p: string[]): number {
  const labels = [...new Set([...y, ...p])];
  let s = 0;
  for (const l of labels) {
    const tp = y.filter((x, i) => x === l && p[i] === l).length;
    const sup = y.filter((x) => x === l).length;
    const pred = p.filter((x) => x === l).length;
    s += sup + pred ? (2 * tp) / (sup + pred) : 0;
  }
  return s / labels.length;
}
function expectRow(row: JudgeAgreementRow, y: string[], p: string[], scale: string[], ordinal: boolean) {
  expect(row.n).toBe(y.length);
  // Data with some agreement and some disagreement (the figures are not at a bound).
  expect(row.accuracy).toBeGreaterThan(0);
  expect(row.accuracy).toBeLessThan(1);
  expect(row.accuracy).toBeCloseTo(y.filter((x, i) => x === p[i]).length / y.length, 12);
  expect(row.cohenKappa).toBeCloseTo(kappa(y, p, scale), 12);
  if (ordinal) expect(row.weightedKappa).toBeCloseTo(kappa(y, p, scale, true), 12);
  else expect(row.weightedKappa).toBeNull();
  expect(row.ac1).toBeCloseTo(ac1(y, p, scale), 12);
  expect(row.macroF1).toBeCloseTo(macroF1(y, p), 12);
  for (const k of ["accuracyCI", "cohenKappaCI", "ac1CI", "macroF1CI"] as const) expect(row[k], k).toHaveLength(2);
  if (ordinal) expect(row.weightedKappaCI).toHaveLength(2);
  // The confusion matrix holds every compared pair.
  expect(Object.values(row.confusion).reduce((a, r) => a + Object.values(r).reduce((b, x) => b + x, 0), 0)).toBe(y.length);
}

// ——— the real path: imports, task, labels, verdicts ———
let researcher: number;
let annotators: number[];
let cookie: string;

async function project(slug: string): Promise<{ projectId: number; datasetId: number }> {
  const items = path.join(dir, `${slug}-items.jsonl`);
  fs.writeFileSync(
    items,
    ITEMS.map((id, i) => JSON.stringify({ id, prompt: `Write a two-line poem about the number ${i + 2}.` })).join("\n") + "\n",
  );
  const responses = path.join(dir, `${slug}-responses.csv`);
  fs.writeFileSync(
    responses,
    "item,model,turn,text\n" +
      ITEMS.flatMap((id, i) => MODELS.map((m, k) => `${id},${m},1,"Poem ${i + 2} by ${k ? "the second" : "the first"} writer."`)).join(
        "\n",
      ) +
      "\n",
  );
  expect((await runImport({ databaseFile: dbFile, projectSlug: slug, preset: "items-jsonl", file: items })).errors).toEqual([]);
  expect((await runImport({ databaseFile: dbFile, projectSlug: slug, preset: "responses", file: responses })).errors).toEqual([]);
  const projectId = (c().prepare("select id from projects where slug = ?").get(slug) as { id: number }).id;
  const datasetId = (c().prepare("select id from datasets where project_id = ?").get(projectId) as { id: number }).id;
  await addMember(projectId, researcher, "researcher");
  for (const a of annotators) await addMember(projectId, a, "annotator");
  return { projectId, datasetId };
}
const unitsOf = (taskId: number) =>
  c()
    .prepare(
      "select u.id, i.source_id as item, r.model, u.response_ids as ids from units u join items i on i.id = u.item_id left join responses r on r.id = u.response_id where u.task_id = ? order by u.position",
    )
    .all(taskId) as { id: number; item: string; model: string | null; ids: string | null }[];
const modelOf = (responseId: number) =>
  (c().prepare("select model from responses where id = ?").get(responseId) as { model: string }).model;
async function submit(
  projectId: number,
  taskId: number,
  unitId: number,
  annotator: number,
  form: (order: (number | "reference")[]) => Record<string, string>,
) {
  const a = (await myAssignment(taskId, unitId, annotator))!;
  const r = await saveAnnotation({
    task: (await findTask(projectId, taskId))!,
    userId: annotator,
    unitId,
    intent: "submit",
    form: new URLSearchParams(form((a.shownOrder as (number | "reference")[] | null) ?? [])),
  });
  expect(r.ok, JSON.stringify(r)).toBe(true);
}
async function importVerdicts(slug: string, rows: string[]) {
  const file = path.join(dir, `${slug}-verdicts.csv`);
  fs.writeFileSync(file, "judge,item,response,value,raw\n" + rows.join("\n") + "\n");
  const s = await runImport({ databaseFile: dbFile, projectSlug: slug, preset: "verdicts", file });
  expect(s.errors).toEqual([]);
}
async function page(slug: string, taskId: number, q = "") {
  const res = await run(judgesLoader, args(get(`/p/${slug}/reports/${taskId}/judges${q}`, cookie), { slug, taskId: String(taskId) }));
  expect(res.status).toBe(200);
  return (await res.json()) as {
    agreement: {
      applicable: boolean;
      result: { labels: string[]; judges: JudgeAgreementRow[] };
      tables: Record<string, { rows: Record<string, unknown>[] }>;
    };
  };
}

beforeAll(async () => {
  const r = await makeUser();
  researcher = r.id;
  annotators = [];
  for (let i = 0; i < 3; i++) annotators.push((await makeUser()).id);
  cookie = await signInCookie(r.email, r.password);
});

describe("the judge page's any-label-set section on the native kinds", () => {
  it("Likert 1–7: one verdict per unit's response (a point 1–7); weighted kappa and AC1 on the 7-point scale", async () => {
    const { projectId, datasetId } = await project("likert");
    const { taskId } = await createTask(projectId, researcher, {
      name: "likert",
      datasetId,
      kind: "likert-7",
      overlap: 3,
      seed: 5,
      pool: annotators,
      settings: { question: "Is the poem vivid?", lowAnchor: "Not at all", highAnchor: "Very" },
    });
    const units = unitsOf(taskId);
    expect(units).toHaveLength(12);
    // Annotator a's point on unit u; the judge's verdict; one judge output outside the scale.
    const point = (u: number, a: number) => 2 + ((u * 3 + (a === 2 && u % 4 === 0 ? 1 : 0)) % 5);
    for (const [u, unit] of units.entries())
      for (const [a, ann] of annotators.entries())
        await submit(projectId, taskId, unit.id, ann, () => ({ score: String(point(u, a)), rationale: "Because." }));
    const verdict = (u: number) => (u === 7 ? "vivid-ish" : String(u % 3 === 0 ? point(u, 0) : Math.min(7, point(u, 0) + 1)));
    await importVerdicts(
      "likert",
      units.map((unit, u) => `likert-judge,${unit.item},${unit.model},${verdict(u)},raw`),
    );
    const body = await page("likert", taskId);
    expect(body.agreement.applicable).toBe(true);
    const r = body.agreement.result;
    expect(r.labels).toEqual(["1", "2", "3", "4", "5", "6", "7"]); // the scale, used or not
    const [row] = r.judges;
    expect([row.judge, row.unparsed, row.unparsedCompared]).toEqual(["likert-judge", 1, 1]);
    const y: string[] = [];
    const p: string[] = [];
    units.forEach((_, u) => {
      const m = majority(annotators.map((_, a) => point(u, a)));
      if (m === null) return;
      y.push(m);
      p.push(u === 7 ? "(unparsed)" : verdict(u));
    });
    // Kappa and macro F1 count the unparsed class; weighted kappa leaves it out; AC1 counts it in no category.
    const scale = r.labels;
    expect(row.n).toBe(y.length);
    expect(row.n).toBeGreaterThan(8);
    expect(row.accuracy! > 0 && row.accuracy! < 1).toBe(true);
    expect(row.accuracy).toBeCloseTo(y.filter((x, i) => x === p[i]).length / y.length, 12);
    expect(row.cohenKappa).toBeCloseTo(kappa(y, p, [...scale, "(unparsed)"]), 12);
    const parsed = p.map((x, i) => [y[i], x]).filter(([, x]) => x !== "(unparsed)");
    expect(row.weightedKappa).toBeCloseTo(
      kappa(
        parsed.map(([h]) => h),
        parsed.map(([, v]) => v),
        scale,
        true,
      ),
      12,
    );
    expect(row.ac1).toBeCloseTo(ac1(y, p, scale), 12);
    expect(row.macroF1).toBeCloseTo(macroF1(y, p), 12);
    expect(row.weightedKappaCI).toHaveLength(2);
    // The page's table has the weighted kappa column (an ordinal scale).
    expect(body.agreement.tables["agreement-judges"].rows[0]).toMatchObject({ judge: "likert-judge", weightedKappa: row.weightedKappa });
  });

  it("writing quality 1–5: one verdict per scored response; the scale's unused scores count in AC1's q", async () => {
    const { projectId, datasetId } = await project("writing");
    const { taskId } = await createTask(projectId, researcher, {
      name: "wq",
      datasetId,
      kind: "writing-quality",
      overlap: 3,
      seed: 2,
      pool: annotators,
    });
    const units = unitsOf(taskId);
    expect(units).toHaveLength(6);
    // Annotator a's score of model m on item i (3–5: no penalty reason needed).
    const score = (i: number, m: string, a: number) => 3 + ((i + (m === "beta" ? 1 : 0) + (a === 1 && i % 3 === 0 ? 1 : 0)) % 3);
    for (const unit of units) {
      const i = ITEMS.indexOf(unit.item);
      for (const [a, ann] of annotators.entries())
        await submit(projectId, taskId, unit.id, ann, (order) =>
          Object.fromEntries(order.map((rid, k) => [`score.${letter(k)}`, String(score(i, modelOf(rid as number), a))])),
        );
    }
    const verdict = (i: number, m: string) => String(m === "alpha" ? score(i, m, 0) : Math.max(3, score(i, m, 0) - 1));
    await importVerdicts(
      "writing",
      ITEMS.flatMap((item, i) => MODELS.map((m) => `wq-judge,${item},${m},${verdict(i, m)},raw`)),
    );
    const r = (await page("writing", taskId)).agreement.result;
    expect(r.labels).toEqual(["1", "2", "3", "4", "5"]);
    const y: string[] = [];
    const p: string[] = [];
    ITEMS.forEach((_, i) =>
      MODELS.forEach((m) => {
        const h = majority(annotators.map((_, a) => score(i, m, a)));
        if (h === null) return;
        y.push(h);
        p.push(verdict(i, m));
      }),
    );
    expect(y.length).toBeGreaterThan(8);
    expectRow(r.judges[0], y, p, r.labels, true);
    expect(r.judges[0]).toMatchObject({ judge: "wq-judge", unparsed: 0, missing: 0 });
  });

  it("best-of-N with ties: the judge's verdict names the picked response (model name or response key) or tie", async () => {
    const { projectId, datasetId } = await project("pick");
    const { taskId } = await createTask(projectId, researcher, {
      name: "pick",
      datasetId,
      kind: "best-of-n",
      overlap: 3,
      seed: 9,
      pool: annotators,
      n: 2,
      allowTies: true,
    });
    const units = unitsOf(taskId);
    expect(units).toHaveLength(6);
    // Annotator a's pick on item i: a model, or a tie.
    const pick = (i: number, a: number): string =>
      i === 4 ? ["alpha", "beta", "tie"][a] : i % 3 === 2 ? "tie" : a === 2 && i === 1 ? "beta" : MODELS[i % 2];
    for (const unit of units) {
      const i = ITEMS.indexOf(unit.item);
      for (const [a, ann] of annotators.entries())
        await submit(projectId, taskId, unit.id, ann, (order) => {
          const want = pick(i, a);
          return { best: want === "tie" ? "tie" : letter(order.findIndex((rid) => rid !== "reference" && modelOf(rid) === want)) };
        });
    }
    // The judge's picks, each stored on one of the unit's responses: by model name, by response key, a tie, one unreadable.
    const judged: [string, string, string][] = [
      ["w1", "alpha", "alpha"],
      ["w2", "alpha", "beta#1"],
      ["w3", "beta", "tie"],
      ["w4", "beta", "alpha"],
      ["w5", "alpha", "tie"],
      ["w6", "alpha", "both are fine"],
    ];
    await importVerdicts(
      "pick",
      judged.map(([item, on, value]) => `pick-judge,${item},${on},${value},raw`),
    );
    const body = await page("pick", taskId);
    expect(body.agreement.applicable).toBe(true);
    const r = body.agreement.result;
    // The human labels are coded by slot: A and B are the unit's first and second response (in its own order).
    const slotOf = (unitIds: string | null, model: string) => {
      const ids = (JSON.parse(unitIds!) as (number | "reference")[]).filter((x) => x !== "reference") as number[];
      return String.fromCharCode(65 + ids.findIndex((id) => modelOf(id) === model));
    };
    const y: string[] = [];
    const p: string[] = [];
    for (const unit of units) {
      const i = ITEMS.indexOf(unit.item);
      const h = majority(annotators.map((_, a) => pick(i, a)));
      if (h === null) continue;
      y.push(h === "tie" ? "tie" : slotOf(unit.ids, h));
      const v = judged[i][2];
      p.push(v === "tie" ? "tie" : v === "both are fine" ? "(unparsed)" : slotOf(unit.ids, v.replace("#1", "")));
    }
    expect(y).toHaveLength(5); // w5: alpha / beta / tie, no majority
    const [row] = r.judges;
    expect([row.judge, row.unparsed, row.unparsedCompared]).toEqual(["pick-judge", 1, 1]);
    const scale = r.labels;
    expect(scale).toEqual(["A", "B", "tie"]);
    expect(row.n).toBe(5);
    expect(row.accuracy! > 0 && row.accuracy! < 1).toBe(true);
    expect(row.accuracy).toBeCloseTo(y.filter((x, i) => x === p[i]).length / 5, 12);
    expect(row.cohenKappa).toBeCloseTo(kappa(y, p, [...scale, "(unparsed)"]), 12);
    expect(row.ac1).toBeCloseTo(ac1(y, p, scale), 12);
    expect(row.macroF1).toBeCloseTo(macroF1(y, p), 12);
    expect(row.weightedKappa).toBeNull(); // nominal
    // Reference "each": every annotator's pick against the judge's, with the unit bootstrap's intervals.
    const each = (await page("pick", taskId, "?reference=each")).agreement.result.judges[0];
    expect(each.n).toBe(18);
    expect(each.accuracyCI).toHaveLength(2);
  });
});
