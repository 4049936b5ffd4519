/**
 * Claim order: a run keeps every provider it uses busy from the start. The
 * follow-ups of a stored reply (its judge call and the next turn) are claimed
 * before untouched items, so the judge does not wait for every first-turn
 * generation of the dataset.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRun, Worker } from "../../app/runs/runner.server";
import { useTempDatabase } from "../support/db";
import { lastUserText, startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

const { db } = useTempDatabase();
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(refineScript(), { latencyMs: 5 });
});
afterAll(() => fake.close());

it("the judge's first call comes right after the first replies, not after every item's first turn", async () => {
  const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 40, checklist: 1, concurrency: 4 });
  const run = await createRun(db(), fx.project.id, {
    name: "order",
    protocol: "refinebench",
    datasetId: fx.dataset.id,
    models: [{ provider: "target" }],
    judges: [{ provider: "judge" }],
    settings: { setting: "self-refinement", maxTurns: 2 },
  });
  fake.requests.length = 0;
  await new Worker(db(), { concurrency: 4, prefetch: 1, pollMs: 10, untilIdle: true, runId: run.id }).start().done;
  const kinds = fake.requests.map((r) =>
    r.body.model === "judge-model" ? "judge" : lastUserText(r.body).startsWith("Problem") ? "first turn" : "second turn",
  );
  expect(kinds).toHaveLength(40 * 2 * 2);
  const firstJudge = kinds.indexOf("judge");
  const lastFirstTurn = kinds.lastIndexOf("first turn");
  // The first judge call is among the first few requests (the worker holds 4 + 1 jobs), long before the 40th first turn.
  expect(firstJudge).toBeGreaterThan(0);
  expect(firstJudge).toBeLessThan(12);
  expect(lastFirstTurn).toBeGreaterThan(40);
});
