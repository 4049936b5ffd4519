/**
 * The demo's recorded run: seedDemo leaves one completed RefineBench run made
 * by the real runner from seeds/recorded/demo-refinebench.json, its replay
 * providers are labelled recorded on the providers page, its results page has
 * data, and the runs page offers its definition again — starting that run
 * replays every call with no miss.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { DEMO_ACCOUNTS, DEMO_RUN_DATASET, DEMO_RUN_NAME, loadDemoFiles, seedDemo } from "../../seeds/demo";
import { buildReplayFile, DEMO_REPLAY_FILE } from "../../seeds/recorded/demo-refinebench";
import { Worker } from "../../app/runs/runner.server";
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
  it("the committed recorded file is what the generator builds from the demo benchmark", () => {
    const committed = JSON.parse(fs.readFileSync(DEMO_REPLAY_FILE, "utf8"));
    expect(committed).toEqual(buildReplayFile(loadDemoFiles().bench.items, loadDemoFiles().writing.items));
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
    expect(recorded.map((p: { name: string }) => p.name).sort()).toEqual(["Orrery-70B (recorded)", "Quillon-8B (recorded)", "Sentinel-34B (recorded)"]);
    expect(JSON.stringify(data)).not.toMatch(/apiKey"?:\s*"sk-/);
  });

  it("the results page has per-turn scores for both models", async () => {
    const data = await (await run(resultsLoader, args(get(`/p/demo/runs/${runId}/results`, cookie), { slug: "demo", runId: String(runId) }))).json();
    const text = JSON.stringify(data);
    expect(text).toContain("Quillon-8B");
    expect(text).toContain("Orrery-70B");
  });

  it("the runs page offers the demo definition again, and starting it replays every call", async () => {
    const page = await (await run(runsLoader, args(get("/p/demo/runs", cookie), { slug: "demo" }))).json();
    expect(page.previous).toMatchObject({ protocol: "refinebench", models: [{ provider: "Quillon-8B (recorded)" }, { provider: "Orrery-70B (recorded)" }] });
    const definition = JSON.stringify({ ...page.previous, name: "again" });
    const res = await run(runsAction, args(post("/p/demo/runs", { intent: "create-json", definition }, cookie), { slug: "demo" }));
    expect(res.status).toBe(302);
    const again = db().select().from(schema.runs).where(eq(schema.runs.name, "again")).get()!;
    await new Worker(db(), { concurrency: 4, pollMs: 5, untilIdle: true, runId: again.id }).start().done;
    const status = db().select({ status: schema.runs.status }).from(schema.runs).where(eq(schema.runs.id, again.id)).get()!.status;
    expect(status).toBe("completed");
    const jobs = db().select().from(schema.jobs).where(eq(schema.jobs.runId, again.id)).all();
    expect(jobs.filter((j) => j.status !== "done").map((j) => j.error)).toEqual([]);
    const first = db().select({ text: schema.responses.text }).from(schema.responses).where(eq(schema.responses.runId, runId)).all().map((r) => r.text).sort();
    const second = db().select({ text: schema.responses.text }).from(schema.responses).where(eq(schema.responses.runId, again.id)).all().map((r) => r.text).sort();
    expect(second).toEqual(first);
  });
});
