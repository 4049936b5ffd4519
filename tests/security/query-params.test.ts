/** Issue 18, "Also": bad query parameters answer 400 with a short reason, not 500. Against the real server. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { findTask } from "../../app/annotation/tasks.server";
import { openDatabase } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";

const PASSWORD = "correct horse battery";
let app: RunningApp;
let taskId = 0;
let datasetId = 0;

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const s = await seedAnnotationScenario(db, {
      annotators: 1,
      items: 3,
      overlap: 1,
      password: PASSWORD,
      kinds: ["response-satisfaction"],
    });
    taskId = s.tasks["response-satisfaction"];
    datasetId = (await findTask(s.projectId, taskId, db))!.datasetId;
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("query parameters", () => {
  it("judge=abc, a 10,000-character q and an overlong address are 400 with the parameter named", async () => {
    const c = new AppClient(app.url);
    await c.signIn("researcher@lab.test", PASSWORD);
    const disagreements = `/p/lab/reports/${taskId}/disagreements`;
    const browser = `/p/lab/datasets/${datasetId}`;

    expect((await c.get(`${disagreements}?judge=`)).status).toBe(200); // the control

    const badJudge = await c.get(`${disagreements}?judge=abc`);
    expect(badJudge.status).toBe(400);
    expect(badJudge.text).toMatch(/judge:/);

    const data = await c.get(`${disagreements}?judge=abc&_data=${encodeURIComponent("routes/p.$slug.reports.$taskId.disagreements")}`);
    expect(data.status).toBe(400);

    const csv = await c.get(`/p/lab/reports/${taskId}/csv?table=disagreements&judge=-1`);
    expect(csv.status).toBe(400);

    expect((await c.get(`${browser}?q=cats`)).status).toBe(200); // the control
    const longQ = "q".repeat(10_000);
    const badQ = await c.get(`${browser}?q=${longQ}`);
    expect(badQ.status).toBe(400);
    expect(badQ.text).not.toContain(longQ.slice(0, 300)); // not echoed

    const shortQButLongAddress = await c.get(`${browser}?q=a&pad=${"x".repeat(5000)}`);
    expect(shortQButLongAddress.status).toBe(400);
  });
});
