/**
 * Every refusal of the domain is a DomainError (app/errors.ts) that the route answers with
 * its status and field: one error of each class, through the real action of the page that
 * shows it (temp SQLite database, a signed-in researcher, a real form post), in the shape
 * that page reads (`{ error, field?, form? }` or `{ fieldErrors }`).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { action as newTaskAction } from "../../app/routes/p.$slug.tasks.new";
import { action as curateAction } from "../../app/routes/p.$slug.curation.$datasetId._index";
import { action as runsAction } from "../../app/routes/p.$slug.runs._index";
import { action as runAction } from "../../app/routes/p.$slug.runs.$runId._index";
import { action as providersAction } from "../../app/routes/p.$slug.providers";
import { DomainError } from "../../app/errors";
import { domainFieldErrorsResponse } from "../../app/errors.server";
import { TaskError } from "../../app/annotation/tasks.server";
import { AssignmentError, planAssignments } from "../../app/annotation/assignment";
import { SamplingError } from "../../app/annotation/sampling";
import { CurationError } from "../../app/curation/versions.server";
import { CalibrationError } from "../../app/runs/calibration.server";
import { createRun, RunInputError } from "../../app/runs/runner.server";
import { RunFormError } from "../../app/runs/run-form.server";
import { ProviderInputError } from "../../app/runs/providers/store.server";
import { useTempDatabase } from "../support/db";
import { addMember, makeDataset, makeUser } from "../support/factory";
import { args, post, run, signInCookie } from "../support/http";
import { makeRunsFixture } from "../unit/runs/fixtures";

const { db } = useTempDatabase();
let fx: ReturnType<typeof makeRunsFixture>;
let cookie = "";
let researcherId = 0;
let annotatorId = 0;

beforeAll(async () => {
  // No LLM is called: every request below is refused before a job runs.
  fx = makeRunsFixture(db(), { baseUrl: "http://127.0.0.1:9/v1", items: 2, checklist: 1 });
  const researcher = await makeUser();
  const annotator = await makeUser();
  await addMember(fx.project.id, researcher.id, "researcher");
  await addMember(fx.project.id, annotator.id, "annotator");
  researcherId = researcher.id;
  annotatorId = annotator.id;
  cookie = await signInCookie(researcher.email, researcher.password);
});

const slug = () => fx.project.slug;

describe("a route answers a DomainError with its status and field", () => {
  it("TaskError: the new-task form shows it beside its field", async () => {
    const res = await run(
      newTaskAction,
      args(
        post(
          `/p/${slug()}/tasks/new`,
          { name: "Task", datasetId: "999999", kind: "writing-quality", overlap: "1", pool: String(annotatorId) },
          cookie,
        ),
        { slug: slug() },
      ),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ fieldErrors: { datasetId: "No such dataset in this project." } });
  });

  it("SamplingError and AssignmentError: the new-task form shows them for the whole form", async () => {
    // Both are refused earlier by the form's schema (a kind's plans, overlap ≤ pool), so the
    // route's answer is shown through the same helper it uses.
    const sampling = new SamplingError('unknown plan "x" for response satisfaction');
    expect(sampling).toBeInstanceOf(DomainError);
    const res = domainFieldErrorsResponse(sampling);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ fieldErrors: { form: 'unknown plan "x" for response satisfaction' } });

    let assignment: unknown;
    try {
      planAssignments([1, 2], [researcherId], 2, 1);
    } catch (err) {
      assignment = err;
    }
    expect(assignment).toBeInstanceOf(AssignmentError);
    expect(assignment).toBeInstanceOf(DomainError);
    expect((assignment as DomainError).status).toBe(400);
    expect((assignment as DomainError).field).toBeUndefined();
  });

  it("CurationError: a second freeze is refused for the whole form", async () => {
    const { dataset } = makeDataset(fx.project.id);
    const freeze = () =>
      run(
        curateAction,
        args(post(`/p/${slug()}/curation/${dataset.id}`, { intent: "freeze", reason: "release" }, cookie), {
          slug: slug(),
          datasetId: String(dataset.id),
        }),
      );
    expect((await freeze()).status).toBe(200);
    const again = await freeze();
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ error: "Version 1 is already frozen." });
  });

  it("CalibrationError: the calibrate form shows it beside the pool", async () => {
    const r = await createRun(
      db(),
      fx.project.id,
      { name: "cal", protocol: "refinebench", datasetId: fx.dataset.id, models: [{ provider: "target" }], judges: [{ provider: "judge" }] },
      researcherId,
    );
    const res = await run(
      runAction,
      args(post(`/p/${slug()}/runs/${r.id}`, { intent: "calibrate", pool: "999999" }, cookie), { slug: slug(), runId: String(r.id) }),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ form: "calibrate", fieldErrors: { pool: "User 999999 is not a member of this project." } });
  });

  it("RunInputError: a run control that does not apply is refused for the page", async () => {
    const r = await createRun(
      db(),
      fx.project.id,
      { name: "ctl", protocol: "refinebench", datasetId: fx.dataset.id, models: [{ provider: "target" }], judges: [{ provider: "judge" }] },
      researcherId,
    );
    const res = await run(
      runAction,
      args(post(`/p/${slug()}/runs/${r.id}`, { intent: "resume" }, cookie), { slug: slug(), runId: String(r.id) }),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "cannot resume a queued run" });
  });

  it("RunFormError: a settings field that is not a number is named", async () => {
    const res = await run(
      runsAction,
      args(
        post(
          `/p/${slug()}/runs`,
          {
            intent: "create",
            name: "form",
            protocol: "refinebench",
            datasetId: String(fx.dataset.id),
            models: "target",
            judges: "judge",
            "s.refinebench.maxTurns": "many",
          },
          cookie,
        ),
        { slug: slug() },
      ),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "Max Turns must be a number.", field: "s.refinebench.maxTurns" });
  });

  it("ProviderInputError: a second provider of the same name is refused beside the name", async () => {
    const res = await run(
      providersAction,
      args(
        post(
          `/p/${slug()}/providers`,
          { intent: "create", name: "target", kind: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" },
          cookie,
        ),
        { slug: slug() },
      ),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ fieldErrors: { name: 'A provider named "target" exists.' } });
  });

  it("every class is a DomainError with status 400", () => {
    for (const err of [
      new TaskError("x"),
      new CurationError("x"),
      new CalibrationError("x"),
      new RunInputError("x"),
      new RunFormError("f", "x"),
      new ProviderInputError("x"),
      new SamplingError("x"),
      new AssignmentError("x"),
    ]) {
      expect(err).toBeInstanceOf(DomainError);
      expect(err.status).toBe(400);
    }
  });
});
