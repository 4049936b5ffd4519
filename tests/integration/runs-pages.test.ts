/**
 * The runs pages through their real loaders and actions (signed in as a
 * researcher): a run started from the form (protocol, dataset, models, judges,
 * per-protocol settings with the paper's defaults filled in), errors that
 * name the field, and a run page that lists failed jobs with the provider's
 * error (key masked), offers retry, enables only the actions that apply and
 * shows the settings used as a list.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema } from "../../db/client";
import { action as runsAction, loader as runsLoader } from "../../app/routes/p.$slug.runs._index";
import { action as runAction, applicableActions, loader as runLoader } from "../../app/routes/p.$slug.runs.$runId._index";
import { controlRun, Worker } from "../../app/runs/runner.server";
import { useTempDatabase } from "../support/db";
import { addMember, makeUser } from "../support/factory";
import { args, get, ORIGIN, post, run, signInCookie } from "../support/http";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

const { db } = useTempDatabase();
let fake: FakeLlm;
let cookie = "";
let fx: ReturnType<typeof makeRunsFixture>;

beforeAll(async () => {
  fake = await startFakeLlm(refineScript());
  fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 3, checklist: 2, providerSettings: { maxRetries: 0 } });
  const researcher = await makeUser();
  await addMember(fx.project.id, researcher.id, "researcher");
  cookie = await signInCookie(researcher.email, researcher.password);
});
afterAll(() => fake.close());

const base = () => `/p/${fx.project.slug}/runs`;

/** The form as a browser submits it: the chosen protocol's settings fields with their defaults, plus changes. */
async function formFor(protocol: string, changes: Record<string, string | string[]>) {
  const res = await run(runsLoader, args(get(base(), cookie), { slug: fx.project.slug }));
  const data = (await res.json()) as { forms: { id: string; fields: Field[] }[] };
  type Field = { kind: string; name: string; value?: unknown; fields?: Field[] };
  const body = new URLSearchParams();
  const add = (f: Field) => {
    if (f.kind === "group") return f.fields!.forEach(add);
    if (f.kind === "multi") return (f.value as string[]).forEach((v) => body.append(f.name, v));
    body.append(f.name, f.value == null ? "" : String(f.value));
  };
  data.forms.find((f) => f.id === protocol)!.fields.forEach(add);
  for (const [k, v] of Object.entries(changes)) {
    body.delete(k);
    for (const x of [v].flat()) body.append(k, x);
  }
  return body;
}

/** A POST with repeated fields (models, judges, checkboxes), as a browser sends the form. */
function postForm(path: string, body: URLSearchParams) {
  return new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: ORIGIN },
    body,
  });
}

describe("runs pages", () => {
  it("the form lists each protocol's settings with the paper's defaults and help", async () => {
    const res = await run(runsLoader, args(get(base(), cookie), { slug: fx.project.slug }));
    const data = (await res.json()) as {
      forms: {
        id: string;
        fields: { name: string; kind: string; value?: unknown; help?: string; fields?: { name: string; value: unknown }[] }[];
      }[];
    };
    const rb = data.forms.find((f) => f.id === "refinebench")!;
    const field = (n: string) => rb.fields.find((f) => f.name === `s.refinebench.${n}`)!;
    expect(field("setting")).toMatchObject({ kind: "select", value: "self-refinement" });
    expect(field("maxTurns")).toMatchObject({ kind: "number", value: 5 });
    expect(field("setting").help).toMatch(/guided/);
    // RefineBench Appendix C: target temperature 1.0, top-p 0.9, at most 10,000 tokens.
    expect(field("targetSampling").fields!.map((f) => [f.name.split(".").pop(), f.value])).toEqual([
      ["temperature", 1],
      ["top_p", 0.9],
      ["max_tokens", 10000],
    ]);
    expect(data.forms.map((f) => f.id).sort()).toEqual(["c3ebench", "fb-bench", "refinebench", "self-correction"]);
  });

  it("starts a run from the form; refuses missing models and bad settings, naming the field", async () => {
    const body = await formFor("refinebench", {
      intent: "create",
      name: "from the form",
      protocol: "refinebench",
      datasetId: String(fx.dataset.id),
      limit: "2",
      models: "target",
      judges: "judge",
      "s.refinebench.maxTurns": "2",
      "s.refinebench.targetSampling.temperature": "0.3",
    });
    const res = await run(runsAction, args(postForm(base(), body), { slug: fx.project.slug }));
    expect(res.status).toBe(302);
    const runId = Number(res.headers.get("Location")!.split("/").pop());
    const stored = db().select().from(schema.runs).where(eq(schema.runs.id, runId)).get()!;
    expect(stored.name).toBe("from the form");
    const cfg = stored.config as { settings: Record<string, unknown>; itemCount: number; models: { name: string }[] };
    expect(cfg.itemCount).toBe(2);
    expect(cfg.models.map((m) => m.name)).toEqual(["tiny-model"]);
    expect(cfg.settings).toMatchObject({
      setting: "self-refinement",
      maxTurns: 2,
      targetSampling: { temperature: 0.3, top_p: 0.9, max_tokens: 10000 },
    });

    const noModels = await formFor("refinebench", {
      intent: "create",
      name: "x",
      protocol: "refinebench",
      datasetId: String(fx.dataset.id),
      judges: "judge",
    });
    const r1 = await run(runsAction, args(postForm(base(), noModels), { slug: fx.project.slug }));
    expect(r1.status).toBe(400);
    expect(await r1.json()).toMatchObject({ error: "Choose at least one model to run.", field: "models" });

    const badTurns = await formFor("refinebench", {
      intent: "create",
      name: "x",
      protocol: "refinebench",
      datasetId: String(fx.dataset.id),
      models: "target",
      judges: "judge",
      "s.refinebench.maxTurns": "0",
    });
    const r2 = await run(runsAction, args(postForm(base(), badTurns), { slug: fx.project.slug }));
    expect(r2.status).toBe(400);
    const e2 = (await r2.json()) as { error: string; field: string };
    // In the form's words (its label "Max Turns", RefineBench's bound of 1 turn), not zod's "Too small: expected …".
    expect(e2.error).toBe("Max Turns must be 1 or more.");
    expect(e2.field).toBe("s.refinebench.maxTurns"); // shown beside that field, which takes focus

    const noName = await formFor("refinebench", {
      intent: "create",
      name: " ",
      protocol: "refinebench",
      datasetId: String(fx.dataset.id),
      models: "target",
      judges: "judge",
    });
    const r3 = await run(runsAction, args(postForm(base(), noName), { slug: fx.project.slug }));
    expect(await r3.json()).toMatchObject({ error: "Give the run a name.", field: "name" });

    // JSON stays available as the advanced option.
    const json = new URLSearchParams({
      intent: "create-json",
      definition: JSON.stringify({
        name: "json",
        protocol: "refinebench",
        datasetId: fx.dataset.id,
        limit: 1,
        models: [{ provider: "target" }],
        judges: [{ provider: "judge" }],
        settings: { maxTurns: 1 },
      }),
    });
    expect((await run(runsAction, args(postForm(base(), json), { slug: fx.project.slug }))).status).toBe(302);
    const notJson = new URLSearchParams({ intent: "create-json", definition: "{name: root:x:0:0}" });
    const r4 = await run(runsAction, args(postForm(base(), notJson), { slug: fx.project.slug }));
    expect(await r4.json()).toEqual({ error: "The definition is not valid JSON.", field: "definition" });
  });

  it("a run whose jobs failed ends completed-with-errors; its page lists each failed job with the provider's error, key masked, and retry works", async () => {
    // The target's first item always fails, and the endpoint quotes the key in its error.
    fake.setScript((req) => {
      const text = JSON.stringify(req.body.messages);
      if (text.includes("Problem 0?") && !text.includes("Checklist"))
        return { status: 400, raw: JSON.stringify({ error: { message: `Bad request for key ${req.authorization?.slice(7)}` } }) };
      return refineScript()(req);
    });
    const body = await formFor("refinebench", {
      intent: "create",
      name: "failing",
      protocol: "refinebench",
      datasetId: String(fx.dataset.id),
      models: "target",
      judges: "judge",
      "s.refinebench.maxTurns": "1",
    });
    const res = await run(runsAction, args(postForm(base(), body), { slug: fx.project.slug }));
    const runId = Number(res.headers.get("Location")!.split("/").pop());
    await new Worker(db(), { concurrency: 4, pollMs: 10, untilIdle: true, runId }).start().done;

    const page = await run(runLoader, args(get(`${base()}/${runId}`, cookie), { slug: fx.project.slug, runId: String(runId) }));
    const data = (await page.json()) as {
      progress: { status: string; failed: number; done: number };
      failedJobs: { key: string; error: string; provider: string }[];
      run: { settings: Record<string, unknown> };
      providerSampling: { name: string; sampling: Record<string, number> }[];
    };
    expect(data.progress).toMatchObject({ status: "completed-with-errors", failed: 1, done: 4 });
    expect(data.failedJobs).toHaveLength(1);
    expect(data.failedJobs[0].provider).toBe("target");
    expect(data.failedJobs[0].error).toMatch(/HTTP 400: 400 Bad request for key sk-…\[key masked\] \(after 1 attempt\)/);
    expect(JSON.stringify(data)).not.toContain("sk-target-SECRET");
    expect(data.run.settings).toMatchObject({ maxTurns: 1, targetSampling: { temperature: 1, top_p: 0.9, max_tokens: 10000 } });
    // Only the actions that apply: nothing to pause, resume or cancel; failed jobs can be retried.
    expect(applicableActions("completed-with-errors", 1)).toEqual({
      pause: "a completed-with-errors run cannot be paused",
      resume: "only a paused run can be resumed",
      cancel: "the run is already completed-with-errors",
      "retry-failed": null,
    });
    expect(applicableActions("completed", 0)["retry-failed"]).toBe("no failed jobs");
    expect(applicableActions("running", 0)).toMatchObject({ pause: null, cancel: null });
    const pause = await run(
      runAction,
      args(post(`${base()}/${runId}`, { intent: "pause" }, cookie), { slug: fx.project.slug, runId: String(runId) }),
    );
    expect(pause.status).toBe(400);
    expect(await pause.json()).toEqual({ error: "cannot pause a completed-with-errors run" });

    // Retry the failed job with the endpoint healthy: the run completes.
    fake.setScript(refineScript());
    const retry = await run(
      runAction,
      args(post(`${base()}/${runId}`, { intent: "retry-failed" }, cookie), { slug: fx.project.slug, runId: String(runId) }),
    );
    expect(retry.status).toBe(302);
    await new Worker(db(), { concurrency: 4, pollMs: 10, untilIdle: true, runId }).start().done;
    const after = (await (
      await run(runLoader, args(get(`${base()}/${runId}`, cookie), { slug: fx.project.slug, runId: String(runId) }))
    ).json()) as typeof data;
    expect(after.progress).toMatchObject({ status: "completed", failed: 0, done: 6 });
    expect(after.failedJobs).toEqual([]);
    await expect(controlRun(db(), runId, "retry-failed")).rejects.toThrow(/cannot retry-failed a completed run/);
  });
});
