/**
 * The demo works offline end to end. seedDemo leaves one completed RefineBench
 * run made by the real runner from seeds/recorded/demo-refinebench.json, its
 * replay providers are labelled recorded on the providers page, its results
 * page has data, and the runs page offers its definition again — starting that
 * run replays every call with no miss. Beyond it, every protocol runs to
 * completion on the demo sets from the recordings alone (RefineBench in each
 * setting on the whole demo benchmark, C3EBench, FB-Bench, Self-Correction),
 * and curation's back-check and checklist drafting are answered by a recorded
 * provider. Every call is checked to be a replay (no request leaves the process).
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { DEMO_ACCOUNTS, DEMO_PROJECT, DEMO_RUN_DATASET, DEMO_RUN_NAME, loadDemoFiles, seedDemo } from "../../seeds/demo";
import { buildReplayFile, DEMO_REPLAY_FILE, FB_SCRIPT, SCRIPT } from "../../seeds/recorded/demo-refinebench";
import { createRun, Worker } from "../../app/runs/runner.server";
import { runResultsAll } from "../../app/runs/results.server";
import { action as curateAction } from "../../app/routes/p.$slug.curation.$datasetId._index";
import { action as itemAction } from "../../app/routes/p.$slug.curation.$datasetId.items.$itemId";
import { loader as providersLoader } from "../../app/routes/p.$slug.providers";
import { action as runsAction, loader as runsLoader } from "../../app/routes/p.$slug.runs._index";
import { loader as resultsLoader } from "../../app/routes/p.$slug.runs.$runId.results";
import { useTempDatabase } from "../support/db";
import { args, get, post, run, signInCookie } from "../support/http";
import fs from "node:fs";

const { db } = useTempDatabase();
let cookie: string;
let runId: number;

beforeAll(async () => {
  await seedDemo(db());
  const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
  cookie = await signInCookie(researcher.email, researcher.password);
  runId = db().select().from(schema.runs).where(eq(schema.runs.name, DEMO_RUN_NAME)).get()!.id;
});

describe("demo run from recorded outputs", () => {
  it("the committed recorded file is what the recording script builds from the seeded demo", async () => {
    const committed = JSON.parse(fs.readFileSync(DEMO_REPLAY_FILE, "utf8"));
    expect(committed).toEqual(await buildReplayFile(db()));
    expect(committed.recorded).toBe(true);
  });

  it("is completed, every job done, every response marked recorded, on a sample of the demo benchmark", () => {
    const r = db().select().from(schema.runs).where(eq(schema.runs.id, runId)).get()!;
    expect(r.status).toBe("completed");
    const ds = db().select().from(schema.datasets).where(eq(schema.datasets.id, r.datasetId!)).get()!;
    expect(ds.name).toBe(DEMO_RUN_DATASET);
    const jobs = db().select().from(schema.jobs).where(eq(schema.jobs.runId, runId)).all();
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.every((j) => j.status === "done")).toBe(true);
    const responses = db().select().from(schema.responses).where(eq(schema.responses.runId, runId)).all();
    expect(responses).toHaveLength(3 * 2 * 2); // 3 items × 2 models × 2 turns
    expect(responses.every((x) => (x.metadata as Record<string, unknown>).recorded === true)).toBe(true);
    // Every call is logged, from the replay provider.
    const calls = db().select().from(schema.providerCalls).all();
    expect(calls.filter((c) => jobs.some((j) => j.id === c.jobId))).toHaveLength(jobs.length);
  });

  it("the providers page labels the replay providers as recorded outputs", async () => {
    const data = await (await run(providersLoader, args(get("/p/demo/providers", cookie), { slug: "demo" }))).json();
    const recorded = data.providers.filter((p: { kind: string }) => p.kind === "replay");
    expect(recorded.map((p: { name: string }) => p.name).sort()).toEqual([
      "Orrery-70B (recorded)",
      "Quillon-8B (recorded)",
      "Sentinel-34B (recorded)",
    ]);
    expect(JSON.stringify(data)).not.toMatch(/apiKey"?:\s*"sk-/);
  });

  it("the results page has per-turn scores for both models", async () => {
    const data = await (
      await run(resultsLoader, args(get(`/p/demo/runs/${runId}/results`, cookie), { slug: "demo", runId: String(runId) }))
    ).json();
    const text = JSON.stringify(data);
    expect(text).toContain("Quillon-8B");
    expect(text).toContain("Orrery-70B");
  });

  it("the runs page offers the demo definition again, and starting it replays every call", async () => {
    const page = await (await run(runsLoader, args(get("/p/demo/runs", cookie), { slug: "demo" }))).json();
    expect(page.previous).toMatchObject({
      protocol: "refinebench",
      models: [{ provider: "Quillon-8B (recorded)" }, { provider: "Orrery-70B (recorded)" }],
    });
    const definition = JSON.stringify({ ...page.previous, name: "again" });
    const res = await run(runsAction, args(post("/p/demo/runs", { intent: "create-json", definition }, cookie), { slug: "demo" }));
    expect(res.status).toBe(302);
    const again = db().select().from(schema.runs).where(eq(schema.runs.name, "again")).get()!;
    await new Worker(db(), { concurrency: 4, pollMs: 5, untilIdle: true, runId: again.id }).start().done;
    const status = db().select({ status: schema.runs.status }).from(schema.runs).where(eq(schema.runs.id, again.id)).get()!.status;
    expect(status).toBe("completed");
    const jobs = db().select().from(schema.jobs).where(eq(schema.jobs.runId, again.id)).all();
    expect(jobs.filter((j) => j.status !== "done").map((j) => j.error)).toEqual([]);
    const first = db()
      .select({ text: schema.responses.text })
      .from(schema.responses)
      .where(eq(schema.responses.runId, runId))
      .all()
      .map((r) => r.text)
      .sort();
    const second = db()
      .select({ text: schema.responses.text })
      .from(schema.responses)
      .where(eq(schema.responses.runId, again.id))
      .all()
      .map((r) => r.text)
      .sort();
    expect(second).toEqual(first);
  });
});

const files = loadDemoFiles();
const datasetId = (name: string) => db().select().from(schema.datasets).where(eq(schema.datasets.name, name)).get()!.id;
const projectId = () => db().select().from(schema.projects).where(eq(schema.projects.slug, DEMO_PROJECT.slug)).get()!.id;
const recorded = {
  models: [{ provider: "Quillon-8B (recorded)" }, { provider: "Orrery-70B (recorded)" }],
  judges: [{ provider: "Sentinel-34B (recorded)" }],
};

/** A model's recorded answers to a demo problem, as the truth of each checklist item (the sample's three are hand-scripted, "[TERMINATE]" ends them). */
function answersOf(sourceId: string, model: "Quillon-8B" | "Orrery-70B"): boolean[][] {
  const scripted = (SCRIPT as Record<string, Record<string, { text: string; judge?: boolean[] }[]>>)[sourceId]?.[model];
  if (scripted) return scripted.filter((t) => t.judge).map((t) => t.judge!);
  return files.bench.items
    .find((i) => i.sourceId === sourceId)!
    .responses.filter((r) => r.model === model)
    .sort((a, b) => a.turn - b.turn)
    .map((r) => r.satisfies);
}

/** Runs a definition to its end and checks what a user would: completed, every job done, every call a replay hit. */
async function runOffline(name: string, protocol: string, dataset: string, settings: Record<string, unknown> = {}) {
  const r = await createRun(db(), projectId(), { name, protocol, datasetId: datasetId(dataset), ...recorded, settings });
  await new Worker(db(), { concurrency: 4, pollMs: 5, untilIdle: true, runId: r.id }).start().done;
  const done = db().select().from(schema.runs).where(eq(schema.runs.id, r.id)).get()!;
  const jobs = db().select().from(schema.jobs).where(eq(schema.jobs.runId, r.id)).all();
  expect(
    jobs.filter((j) => j.status !== "done").map((j) => j.error),
    name,
  ).toEqual([]);
  expect(done.status, name).toBe("completed");
  const calls = db()
    .select()
    .from(schema.providerCalls)
    .all()
    .filter((c) => jobs.some((j) => j.id === c.jobId));
  expect(calls.length, name).toBeGreaterThanOrEqual(jobs.length);
  expect(
    calls.every((c) => c.status === 200 && (c.request as { replay?: boolean }).replay === true),
    name,
  ).toBe(true);
  const results = (await runResultsAll(db(), done)) as any[];
  expect(results).toHaveLength(1);
  expect(results[0].parse, name).toMatchObject({ failed: 0, unparsed: 0 });
  return { run: done, jobs, results: results[0] };
}

describe("every protocol on the demo data, offline", () => {
  for (const setting of ["self-refinement", "guided", "partially-guided", "criteria-provided"])
    it(`RefineBench ${setting} on the whole demo benchmark (default 5 turns)`, async () => {
      const { results } = await runOffline(`demo ${setting}`, "refinebench", files.bench.dataset.name, { setting });
      expect(results.setting).toBe(setting);
      // Expected Acc_t and Pass_t, from the demo's answers and truth: a model's turn-t reply is its
      // t-th recorded answer ("[TERMINATE]" after the last, which keeps the previous answer); the
      // guided settings stop once every checklist item passes, the others only at "[TERMINATE]".
      const guided = setting === "guided" || setting === "partially-guided";
      for (const model of ["Quillon-8B", "Orrery-70B"] as const) {
        const m = results.metrics.find((x: any) => x.model === model);
        expect(m.turns.map((t: any) => t.turn)).toEqual([1, 2, 3, 4, 5]);
        for (const t of m.turns) {
          const sat = files.bench.items.map((item) => {
            const answers = answersOf(item.sourceId, model);
            let k = 0;
            for (let turn = 2; turn <= t.turn; turn++) {
              if (guided && answers[k].every(Boolean)) break;
              if (k + 1 >= answers.length) break; // [TERMINATE]
              k++;
            }
            return answers[k];
          });
          const acc = (100 * sat.reduce((a, xs) => a + xs.filter(Boolean).length / xs.length, 0)) / sat.length;
          const pass = (100 * sat.filter((xs) => xs.every(Boolean)).length) / sat.length;
          expect(t, `${setting} ${model} turn ${t.turn}`).toMatchObject({
            n: files.bench.items.length,
            failed: 0,
            unparsed: 0,
            pending: 0,
          });
          expect(t.acc, `${setting} ${model} Acc_${t.turn}`).toBeCloseTo(acc, 9);
          expect(t.pass, `${setting} ${model} Pass_${t.turn}`).toBeCloseTo(pass, 9);
        }
      }
    });

  it("C3EBench on the demo writing set", async () => {
    const { results } = await runOffline("demo c3e", "c3ebench", files.writing.dataset.name);
    for (const m of results.metrics) expect(m).toMatchObject({ n: files.writing.items.length, failed: 0, unparsed: 0 });
  });

  it("FB-Bench on the demo feedback set: EC a weighted sum, RM the any rule", async () => {
    const { results } = await runOffline("demo fb", "fb-bench", files.protocols.feedback.dataset.name);
    // Expected, from the demo file and the recorded verdicts: an EC item scores the sum of the weights
    // of its items judged 是, an RM item 1 if any item is judged 是 (the released code's rule); the
    // scenario means and the overall mean over all items, in percent.
    const items = files.protocols.feedback.items;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    for (const model of ["Quillon-8B", "Orrery-70B"] as const) {
      const ec = items
        .filter((i) => i.bench_type === "Error Correction")
        .map(
          (i) =>
            100 *
            i.checklist.reduce((s: number, c, k) => s + (FB_SCRIPT[i.user_query][model].judge[k] ? (c as [string, number])[1] : 0), 0),
        );
      const rm = items
        .filter((i) => i.bench_type === "Response Maintenance")
        .map((i) => (FB_SCRIPT[i.user_query][model].judge.some(Boolean) ? 100 : 0));
      const m = results.metrics.find((x: any) => x.model === model);
      expect(m).toMatchObject({
        rule: "any",
        failed: 0,
        unparsed: 0,
        errorCorrection: { n: ec.length },
        responseMaintenance: { n: rm.length },
      });
      expect(m.errorCorrection.mean, model).toBeCloseTo(mean(ec), 9);
      expect(m.responseMaintenance.mean, model).toBeCloseTo(mean(rm), 9);
      expect(m.overall, model).toBeCloseTo(mean([...ec, ...rm]), 9);
      expect(Object.keys(m.byTask).sort()).toEqual([...new Set(items.map((i) => i.task_type))].sort());
    }
  });

  it("Self-Correction Bench on the demo set, in the three conditions", async () => {
    const { results } = await runOffline("demo sc", "self-correction", files.protocols.selfCorrection.dataset.name);
    // Expected (the recording's stated behaviour): both models correct a user's error (external);
    // in their own reply Quillon-8B never does, Orrery-70B on SCLI5, and with " Wait" everywhere.
    // Blind spot per dataset by Eq. 2: 1 − P(internal)/P(external) when P(external) > 0.
    const corrects: Record<string, (dataset: string) => Record<string, number>> = {
      "Quillon-8B": () => ({ internal: 0, external: 1, "internal-wait": 0 }),
      "Orrery-70B": (d) => ({ internal: d === "SCLI5" ? 1 : 0, external: 1, "internal-wait": 1 }),
    };
    const datasets = [...new Set(files.protocols.selfCorrection.items.map((i) => i.dataset))].sort();
    for (const model of ["Quillon-8B", "Orrery-70B"]) {
      const m = results.metrics.find((x: any) => x.model === model);
      expect(m.datasets.map((d: any) => d.dataset)).toEqual(datasets);
      for (const d of m.datasets) {
        const p = corrects[model](d.dataset);
        const n = files.protocols.selfCorrection.items.filter((i) => i.dataset === d.dataset).length;
        for (const c of ["internal", "external", "internal-wait"])
          expect(d.byCondition[c], `${model} ${d.dataset} ${c}`).toMatchObject({ mean: p[c], n, failed: 0, unparsed: 0 });
        expect(d.blindSpot.value, `${model} ${d.dataset}`).toBeCloseTo(p.external > 0 ? 1 - p.internal / p.external : 0, 12);
      }
    }
  });
});

describe("curation on the demo, offline", () => {
  it("the back-check runs on every item of the demo benchmark and flags exactly the demo's invalid checklist items", async () => {
    const provider = db().select().from(schema.providers).where(eq(schema.providers.name, "Quillon-8B (recorded)")).get()!;
    const res = await run(
      curateAction,
      args(post("/x", { intent: "back-check", providerId: String(provider.id) }, cookie), {
        slug: "demo",
        datasetId: String(datasetId(files.bench.dataset.name)),
      }),
    );
    // Expected: every problem checked, "No" on each checklist item the demo file marks not appropriate.
    const invalid = files.bench.items.reduce((n, i) => n + i.checklist.filter((c) => !c.appropriate).length, 0);
    expect((await res.json()).ok).toBe(
      `Back-check ran on ${files.bench.items.length} of ${files.bench.items.length} items: ${invalid} checklist item(s) answered No on the reference, 0 unparsed.`,
    );
  });

  it("the back-check also answers on the FB-Bench demo set", async () => {
    const provider = db().select().from(schema.providers).where(eq(schema.providers.name, "Orrery-70B (recorded)")).get()!;
    const res = await run(
      curateAction,
      args(post("/x", { intent: "back-check", providerId: String(provider.id) }, cookie), {
        slug: "demo",
        datasetId: String(datasetId(files.protocols.feedback.dataset.name)),
      }),
    );
    const n = files.protocols.feedback.items.length;
    expect((await res.json()).ok).toBe(
      `Back-check ran on ${n} of ${n} items: 0 checklist item(s) answered No on the reference, 0 unparsed.`,
    );
  });

  it("checklist drafting gives a draft for an item of every demo set", async () => {
    const provider = db().select().from(schema.providers).where(eq(schema.providers.name, "Sentinel-34B (recorded)")).get()!;
    for (const name of [
      files.bench.dataset.name,
      DEMO_RUN_DATASET,
      files.writing.dataset.name,
      files.protocols.feedback.dataset.name,
      files.protocols.selfCorrection.dataset.name,
    ]) {
      const ds = datasetId(name);
      const items = db().select().from(schema.items).where(eq(schema.items.datasetId, ds)).all();
      for (const item of items) {
        const res = await run(
          itemAction,
          args(post("/x", { intent: "draft", providerId: String(provider.id) }, cookie), {
            slug: "demo",
            datasetId: String(ds),
            itemId: String(item.id),
          }),
        );
        expect(res.status, `${name} ${item.sourceId}`).toBe(200);
        const { draft } = await res.json();
        expect(draft.items.length, `${name} ${item.sourceId}`).toBeGreaterThan(0);
        expect(draft.warnings, `${name} ${item.sourceId}`).toEqual([]);
        // On the benchmark, the draft is the demo's valid checklist items of that problem.
        const demo = files.bench.items.find((i) => i.sourceId === item.sourceId);
        if (demo) expect(draft.items).toEqual(demo.checklist.filter((c) => c.appropriate).map((c) => c.text));
      }
    }
  });
});
