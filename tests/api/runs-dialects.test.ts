/**
 * The domain functions behind the runs endpoints and pages (app/runs/project-runs.server.ts, startRun of
 * app/runs/run-form.server.ts), the same scenario on SQLite and on PostgreSQL through the data-access layer: a run
 * started from a definition (and one refused, naming its fields, writing nothing), the project's runs newest first
 * in keyset pages, a run's status and progress before any worker ran it (every planned job remaining, no rate, so
 * no ETA), a failed job listed with its provider and retried, the controls and their refusals, and another
 * project's run not found. Expected values follow from the definition (2 items × 1 turn × (1 generation + 1 judge)
 * = 4 planned jobs, 2 of them generations queued at the start), not from a previous run.
 */
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, first, getDal, initDal } from "../../app/dal.server";
import { createUser } from "../../app/auth/accounts.server";
import { createProject } from "../../app/projects/projects.server";
import { controlProjectRun, projectRuns, runCalibrationTasks, runStatus, RunNotFoundError } from "../../app/runs/project-runs.server";
import { RunDefinitionError, startRun } from "../../app/runs/run-form.server";
import { RunInputError, RunStateError } from "../../app/runs/runner.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
let testPg: TestPg | undefined;
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
});

async function refusal<E extends Error>(fn: () => Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}`);
}

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`runs on ${dialect}`, () => {
    let law: number;
    let med: number;
    let ada: number;
    let datasetId: number;
    let medDatasetId: number;
    const definition = (changes: Record<string, unknown> = {}) => ({
      name: "dialect run",
      protocol: "refinebench",
      datasetId,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { maxTurns: 1 },
      ...changes,
    });

    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "runs.db");
      else {
        testPg = await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("runs_dialects");
      }
      await initDal();
      const d = getDal();
      const t = d.t;
      law = (await createProject({ name: "Law", slug: "law", description: "" })).id;
      med = (await createProject({ name: "Medicine", slug: "med", description: "" })).id;
      ada = (await createUser({ email: "ada@lab.test", name: "Ada", password: "correct horse battery" })).id;
      const dataset = async (projectId: number) => {
        const ds = first(await d.tx((q) => q.insert(t.datasets).values({ projectId, name: "RB", source: "test" }).returning()))!;
        for (let i = 0; i < 2; i++) {
          const item = first(
            await d.tx((q) =>
              q
                .insert(t.items)
                .values({ datasetId: ds.id, sourceId: `rb-${i}`, query: `Problem ${i}?`, taskType: "free-form" })
                .returning(),
            ),
          )!;
          await d.tx((q) => q.insert(t.checklistItems).values({ itemId: item.id, text: "Does it answer?", position: 0 }));
        }
        for (const [name, model] of [
          ["target", "tiny-model"],
          ["judge", "judge-model"],
        ])
          await d.tx((q) =>
            q
              .insert(t.providers)
              .values({ projectId, name, kind: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-x", model }),
          );
        return ds.id;
      };
      datasetId = await dataset(law);
      medDatasetId = await dataset(med);
    });

    it("starts a run from a definition; refuses a bad one naming each field, writing nothing", async () => {
      const d = getDal();
      const bad = await refusal(() => startRun(d, law, definition({ name: "", settings: { maxTurns: 0 } }), ada), RunDefinitionError);
      expect(bad.problems.map((p) => [p.path.join("."), p.message])).toEqual([["name", "The definition's name cannot be empty."]]);
      const turns = await refusal(() => startRun(d, law, definition({ settings: { maxTurns: 0 } }), ada), RunDefinitionError);
      expect(turns.problems.map((p) => [p.path.join("."), p.message])).toEqual([
        ["settings.maxTurns", "The definition's settings.maxTurns must be 1 or more."],
      ]);
      const other = await refusal(() => startRun(d, law, definition({ datasetId: medDatasetId }), ada), RunInputError);
      expect([other.at, other.status]).toEqual(["datasetId", 400]);
      expect(await projectRuns(d, law)).toEqual([]);

      const run = await startRun(d, law, definition(), ada);
      expect(run.jobs).toBe(2);
      const status = await runStatus(d, law, run.id);
      expect(status).toMatchObject({
        id: run.id,
        name: "dialect run",
        status: "queued",
        itemCount: 2,
        models: ["tiny-model"],
        failedJobs: [],
      });
      // Nothing ran: 2 × (1 generation + 1 judge) = 4 planned jobs remain; no rate, so no ETA.
      expect(status.progress).toMatchObject({
        done: 0,
        failed: 0,
        inFlight: 0,
        remaining: 4,
        total: 4,
        throughput: 0,
        etaSeconds: null,
        etaAt: null,
      });
      expect(status.judges).toHaveLength(1);
      expect(status.providers.map((p) => p.name)).toEqual(["target", "judge"]);
      expect(await runCalibrationTasks(d, law, run.id)).toEqual([]);
    });

    it("lists the project's runs newest first, in keyset pages", async () => {
      const d = getDal();
      for (const name of ["second", "third"]) await startRun(d, law, definition({ name }), ada);
      await startRun(d, med, definition({ name: "med's", datasetId: medDatasetId }), ada);
      const all = await projectRuns(d, law);
      expect(all.map((r) => r.name)).toEqual(["third", "second", "dialect run"]);
      const firstPage = await projectRuns(d, law, { limit: 2 });
      const rest = await projectRuns(d, law, { before: firstPage[1].id, limit: 2 });
      expect([...firstPage, ...rest]).toEqual(all);
    });

    it("a failed job is listed with its provider and retried; the controls move the status or are refused with the reason", async () => {
      const d = getDal();
      const [run] = await projectRuns(d, law);
      // What a worker leaves when a provider refuses a call: the job failed with the (masked) error.
      const job = first(await d.q.select().from(d.t.jobs).where(eq(d.t.jobs.runId, run.id)).orderBy(d.t.jobs.id))!;
      await d.tx((q) => q.update(d.t.jobs).set({ status: "failed", error: "HTTP 400: bad request" }).where(eq(d.t.jobs.id, job.id)));
      const failed = await runStatus(d, law, run.id);
      expect(failed.failedJobs).toEqual([
        { id: job.id, key: job.key, attempts: job.attempts, error: "HTTP 400: bad request", provider: "target" },
      ]);
      expect(failed.progress).toMatchObject({ failed: 1, remaining: 3, total: 4 });

      expect(await controlProjectRun(d, law, run.id, "pause")).toBe("paused");
      expect(await controlProjectRun(d, law, run.id, "retry-failed")).toBe("paused");
      expect((await runStatus(d, law, run.id)).progress.failed).toBe(0);
      expect((await refusal(() => controlProjectRun(d, law, run.id, "retry-failed"), RunStateError)).message).toBe(
        "no failed jobs to retry",
      );
      expect((await refusal(() => controlProjectRun(d, law, run.id, "pause"), RunStateError)).message).toBe("cannot pause a paused run");
      expect(await controlProjectRun(d, law, run.id, "resume")).toBe("queued");
      expect(await controlProjectRun(d, law, run.id, "cancel")).toBe("cancelled");
      const done = await runStatus(d, law, run.id);
      expect(done.status).toBe("cancelled");
      expect(done.finishedAt).not.toBeNull();
      expect((await refusal(() => controlProjectRun(d, law, run.id, "resume"), RunStateError)).status).toBe(400);
    });

    it("another project's run is not found, for the status and for the controls", async () => {
      const d = getDal();
      const [medRun] = await projectRuns(d, med);
      expect((await refusal(() => runStatus(d, law, medRun.id), RunNotFoundError)).status).toBe(404);
      await refusal(() => controlProjectRun(d, law, medRun.id, "cancel"), RunNotFoundError);
      expect((await runStatus(d, med, medRun.id)).status).toBe("queued");
    });
  });
}
