/**
 * Webhooks end to end in this process (issue 37): a real local receiver (node:http on 127.0.0.1, which the
 * test processes' CONCORD_EGRESS_ALLOW lets through: tests/support/setup.ts) gets one signed POST when a run
 * finishes (the fake OpenAI-compatible server and the real worker), when a task's last label is submitted
 * (through the annotate route's action) and when an import ends (runImport, as the Import page's job and
 * `npm run import` call it); each signature is checked here with our own HMAC-SHA256 computation. A receiver
 * answering 500 then 200 gets the delivery twice, and the log shows both attempts; the lease keeps two
 * senders from sending one delivery twice; private addresses are refused at registration and at delivery.
 */
import { createHmac } from "node:crypto";
import http from "node:http";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { myQueue } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask } from "../../app/annotation/tasks.server";
import { getDal } from "../../app/dal.server";
import { runImport } from "../../app/formats/import.server";
import * as annotate from "../../app/routes/p.$slug.tasks.$taskId.annotate";
import { controlRun, createRun, Worker } from "../../app/runs/runner.server";
import { sendDueDeliveries } from "../../app/webhooks/sender.server";
import { createWebhook, listDeliveries, redeliver, sendTestEvent, setWebhookDisabled } from "../../app/webhooks/webhooks.server";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { args, post, run, signInCookie } from "../support/http";
import { makeRunsFixture, refineScript } from "../unit/runs/fixtures";

// Three seconds before the second attempt, one before the third, three attempts in all (read once, when the sender
// first asks the environment). Times are whole seconds: a wait is "due" from the next second on, so each wait below
// exceeds its backoff by a second.
process.env.CONCORD_WEBHOOK_BACKOFF_SECONDS = "3,1";

const { db } = useTempDatabase();

type Received = { headers: http.IncomingHttpHeaders; body: string };
type Receiver = { url: string; received: Received[]; answer: (n: number) => number; close: () => Promise<void> };

/** A webhook receiver: records every request; answers `answer(n)` to the n-th (0-based), 204 by default. */
function startReceiver(): Promise<Receiver> {
  const r = { received: [] as Received[], answer: (_n: number) => 204 } as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = r.received.length;
      r.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.statusCode = r.answer(n);
      res.end(res.statusCode >= 500 ? "receiver broke: internal detail 7f3a" : "");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      r.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
      r.close = () => new Promise((done) => server.close(() => done()));
      resolve(r);
    }),
  );
}

/** What a receiver does: recompute HMAC-SHA256 over "<timestamp>.<body>" with the secret and compare. */
function expectSigned(got: Received, secret: string) {
  const ts = String(got.headers["concord-timestamp"]);
  expect(ts).toMatch(/^\d{10}$/);
  expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
  const mine = createHmac("sha256", secret).update(`${ts}.${got.body}`).digest("hex");
  expect(got.headers["concord-signature"]).toBe(`sha256=${mine}`);
  expect(got.headers["content-type"]).toBe("application/json");
  expect(got.headers["concord-delivery"]).toMatch(/^\d+$/);
  return JSON.parse(got.body) as {
    id: string;
    event: string;
    created_at: string;
    project: { id: number; slug: string };
    data: Record<string, unknown>;
  };
}

let receiver: Receiver;
let fake: FakeLlm;
beforeAll(async () => {
  receiver = await startReceiver();
  fake = await startFakeLlm(refineScript());
});
afterAll(async () => {
  await receiver?.close();
  await fake?.close();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.answer = () => 204;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("events", () => {
  it("a run that finishes: one signed run.finished POST with its name, protocol, status and job counts", async () => {
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 2, checklist: 1 });
    const { secret } = await createWebhook(fx.project.id, null, { url: receiver.url, events: ["run.finished"] });
    const other = await createWebhook(fx.project.id, null, { url: receiver.url, events: ["import.finished"] });
    const r = await createRun(db(), fx.project.id, {
      name: "nightly rb",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "self-refinement", maxTurns: 2 },
    });
    await new Worker(db(), { concurrency: 2, pollMs: 10, untilIdle: true, runId: r.id }).start().done;
    expect(await sendDueDeliveries(getDal())).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    expect(got.headers["concord-event"]).toBe("run.finished");
    const body = expectSigned(got, secret);
    const done = db()
      .select()
      .from(schema.jobs)
      .where(eq(schema.jobs.runId, r.id))
      .all()
      .filter((j) => j.status === "done").length;
    expect(done).toBeGreaterThan(0);
    expect(body).toMatchObject({
      event: "run.finished",
      project: { id: fx.project.id, slug: fx.project.slug },
      data: { id: r.id, name: "nightly rb", protocol: "refinebench", status: "completed", counts: { jobs_done: done, jobs_failed: 0 } },
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // No model output travels in an event.
    expect(got.body).not.toMatch(/Reference|Problem \d/);
    // The webhook listening to imports only heard nothing.
    expect(await listDeliveries(fx.project.id, other.webhook.id, { limit: 10 })).toEqual([]);
    const [logged] = await listDeliveries(fx.project.id, (await listHooks(fx.project.id))[0], { limit: 10 });
    expect(logged).toMatchObject({ status: "delivered", attempts: 1, lastStatus: 204, lastError: null, event: "run.finished" });
    expect(String(logged.id)).toBe(got.headers["concord-delivery"]);
  });

  it("a run cancelled: run.finished with status cancelled", async () => {
    const fx = makeRunsFixture(db(), { baseUrl: fake.baseUrl, items: 2, checklist: 1 });
    const { secret } = await createWebhook(fx.project.id, null, { url: receiver.url, events: ["run.finished"] });
    const r = await createRun(db(), fx.project.id, {
      name: "to cancel",
      protocol: "refinebench",
      datasetId: fx.dataset.id,
      models: [{ provider: "target" }],
      judges: [{ provider: "judge" }],
      settings: { setting: "self-refinement", maxTurns: 2 },
    });
    expect(await controlRun(db(), r.id, "cancel")).toBe("cancelled");
    expect(await sendDueDeliveries(getDal())).toBe(1);
    expect(expectSigned(receiver.received[0], secret).data).toMatchObject({ id: r.id, status: "cancelled" });
  });

  it("a task whose last label is submitted through the annotate route: one task.completed, not before", async () => {
    const project = makeProject("wh-task");
    const { datasetId } = await makeSyntheticDataset(project.id, { items: 3 });
    const annotator = await makeUser();
    await addMember(project.id, annotator.id, "annotator");
    const cookie = await signInCookie(annotator.email, annotator.password);
    const researcher = await makeUser();
    await addMember(project.id, researcher.id, "researcher");
    const { taskId } = await createTask(project.id, researcher.id, {
      name: "best of three",
      datasetId,
      kind: "best-of-n",
      overlap: 1,
      pool: [annotator.id],
      n: 2,
    });
    const { secret } = await createWebhook(project.id, null, { url: receiver.url, events: ["task.completed"] });
    const queue = await myQueue(taskId, annotator.id);
    expect(queue.length).toBe(3);
    const submit = (unitId: number, i: number, best = "A") =>
      run(
        annotate.action,
        args(
          post(
            `/p/${project.slug}/tasks/${taskId}/annotate`,
            { intent: "submit", unitId: String(unitId), best, clientToken: `t-${i}-${best}` },
            cookie,
          ),
          {
            slug: project.slug,
            taskId: String(taskId),
          },
        ),
      );
    for (const [i, u] of queue.slice(0, 2).entries()) expect((await submit(u.unitId, i)).status).toBeLessThan(400);
    expect(await sendDueDeliveries(getDal())).toBe(0);
    expect((await submit(queue[2].unitId, 2)).status).toBeLessThan(400);
    // Revising a label of a complete task completes nothing again.
    expect((await submit(queue[0].unitId, 0, "B")).status).toBeLessThan(400);
    expect(await sendDueDeliveries(getDal())).toBe(1);
    const body = expectSigned(receiver.received[0], secret);
    expect(receiver.received[0].headers["concord-event"]).toBe("task.completed");
    expect(body).toMatchObject({
      event: "task.completed",
      project: { id: project.id, slug: project.slug },
      data: { id: taskId, name: "best of three", kind: "best-of-n", units: 3, counts: { assignments: 3, submitted: 3, skipped: 0 } },
    });
    // Names and counts only: no label, no model.
    expect(Object.keys(body.data).sort()).toEqual(["counts", "id", "kind", "name", "units"]);
  });

  it("an import that ends (not a dry run): one import.finished with the preset, the dataset and the counts", async () => {
    const project = makeProject("wh-import");
    const { secret } = await createWebhook(project.id, null, { url: receiver.url, events: ["import.finished"] });
    const file = path.resolve(__dirname, "../fixtures/import/refinebench-mini.json");
    const dry = await runImport({ databaseFile: getDal().location, projectSlug: project.slug, preset: "refinebench", file, dryRun: true });
    expect(dry.errorCount).toBe(0);
    expect(await sendDueDeliveries(getDal())).toBe(0);
    const s = await runImport({ databaseFile: getDal().location, projectSlug: project.slug, preset: "refinebench", file });
    expect(s.committed).toBe(true);
    expect(await sendDueDeliveries(getDal())).toBe(1);
    const body = expectSigned(receiver.received[0], secret);
    expect(body).toMatchObject({
      event: "import.finished",
      project: { slug: project.slug },
      data: {
        preset: "refinebench",
        dry_run: false,
        committed: true,
        dataset: { id: s.dataset!.id, name: s.dataset!.name, version: s.dataset!.version },
        counts: { items: s.items, checklist_items: s.checklistItems, references: s.references, errors: 0 },
      },
    });
    expect(s.items).toBeGreaterThan(0);
  });
});

async function listHooks(projectId: number): Promise<number[]> {
  return db()
    .select({ id: schema.webhooks.id })
    .from(schema.webhooks)
    .where(eq(schema.webhooks.projectId, projectId))
    .all()
    .map((r) => r.id);
}

describe("delivery", () => {
  it("a receiver answering 500 then 200: sent again after the backoff, then delivered; the log shows both attempts", async () => {
    const project = makeProject("wh-retry");
    const { webhook, secret } = await createWebhook(project.id, null, { url: receiver.url, events: ["run.finished"] });
    receiver.answer = (n) => (n === 0 ? 500 : 200);
    await sendTestEvent(project.id, webhook.id);
    expect(await sendDueDeliveries(getDal())).toBe(1);
    let [d] = await listDeliveries(project.id, webhook.id, { limit: 10 });
    expect(d).toMatchObject({ status: "pending", attempts: 1, lastStatus: 500, lastError: "HTTP 500", event: "ping" });
    // What the receiver said is never kept.
    expect(JSON.stringify(d)).not.toMatch(/internal detail/);
    expect(d.nextAttemptAt).toBeGreaterThan(Math.floor(Date.now() / 1000) - 1);
    // Not due yet: nothing is sent before the backoff has passed.
    expect(await sendDueDeliveries(getDal())).toBe(0);
    await sleep(4100);
    expect(await sendDueDeliveries(getDal())).toBe(1);
    [d] = await listDeliveries(project.id, webhook.id, { limit: 10 });
    expect(d).toMatchObject({ status: "delivered", attempts: 2, lastStatus: 200, lastError: "HTTP 500" });
    expect(d.deliveredAt).not.toBeNull();
    expect(receiver.received).toHaveLength(2);
    // The same delivery, the same body, each attempt signed anew.
    expect(receiver.received[0].headers["concord-delivery"]).toBe(receiver.received[1].headers["concord-delivery"]);
    expect(receiver.received[0].body).toBe(receiver.received[1].body);
    for (const got of receiver.received) expect(expectSigned(got, secret).event).toBe("ping");
  });

  it("gives up after the last backoff: failed, with the attempts and the last status", async () => {
    const project = makeProject("wh-giveup");
    const { webhook } = await createWebhook(project.id, null, { url: receiver.url, events: ["run.finished"] });
    receiver.answer = () => 503;
    await sendTestEvent(project.id, webhook.id);
    for (let i = 0; i < 3; i++) {
      expect(await sendDueDeliveries(getDal())).toBe(1);
      if (i < 2) await sleep(i === 0 ? 4100 : 2100);
    }
    const [d] = await listDeliveries(project.id, webhook.id, { limit: 10 });
    expect(d).toMatchObject({ status: "failed", attempts: 3, lastStatus: 503, nextAttemptAt: null });
    await sleep(1100);
    expect(await sendDueDeliveries(getDal())).toBe(0);
    expect(receiver.received).toHaveLength(3);
    // Redeliver: the same body as a new delivery.
    receiver.answer = () => 200;
    const again = await redeliver(project.id, d.id);
    expect(await sendDueDeliveries(getDal())).toBe(1);
    expect(receiver.received[3].body).toBe(receiver.received[0].body);
    expect(receiver.received[3].headers["concord-delivery"]).toBe(String(again));
  });

  it("two senders at once never send one delivery twice (the lease)", async () => {
    const project = makeProject("wh-lease");
    const { webhook } = await createWebhook(project.id, null, { url: receiver.url, events: ["run.finished"] });
    for (let i = 0; i < 6; i++) await sendTestEvent(project.id, webhook.id);
    const [a, b] = await Promise.all([sendDueDeliveries(getDal(), { limit: 4 }), sendDueDeliveries(getDal(), { limit: 4 })]);
    expect(a + b).toBe(6);
    const ids = receiver.received.map((r) => r.headers["concord-delivery"]);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
  });

  it("a disabled webhook gets no new events and sends none; enabled again, its pending ones go out", async () => {
    const project = makeProject("wh-disabled");
    const { webhook } = await createWebhook(project.id, null, { url: receiver.url, events: ["import.finished"] });
    await sendTestEvent(project.id, webhook.id);
    await setWebhookDisabled(project.id, webhook.id, true);
    expect(await sendDueDeliveries(getDal())).toBe(0);
    await expect(sendTestEvent(project.id, webhook.id)).rejects.toThrow(/disabled/);
    await setWebhookDisabled(project.id, webhook.id, false);
    expect(await sendDueDeliveries(getDal())).toBe(1);
  });
});

describe("egress", () => {
  it.each([
    ["http://10.1.2.3/hook", /10\.1\.2\.3 is a private address.*CONCORD_EGRESS_ALLOW/],
    ["http://169.254.169.254/latest/meta-data", /link-local \(cloud metadata\) address/],
    ["http://[::ffff:192.168.0.1]:8080/x", /private address/],
    ["http://127.0.0.2:9/x", /loopback address/],
    ["ftp://example.org/x", /only http and https/],
    ["https://user:pw@example.org/x", /user name or password/],
    ["not a url", /an http\(s\) URL is required/],
  ])("registering %s is refused, naming the field and why", async (url, why) => {
    const project = makeProject();
    const err = await createWebhook(project.id, null, { url, events: ["run.finished"] }).then(
      () => null,
      (e: Error & { field?: string; status?: number }) => e,
    );
    expect(err?.message).toMatch(why);
    expect(err?.field).toBe("url");
    expect(err?.status).toBe(400);
    expect(await listHooks(project.id)).toEqual([]);
  });

  it("an address the allow-list no longer allows is refused at delivery, before any connection", async () => {
    const project = makeProject("wh-narrowed");
    const { webhook } = await createWebhook(project.id, null, { url: receiver.url, events: ["run.finished"] });
    // As if the operator had registered it under a wider CONCORD_EGRESS_ALLOW: 127.0.0.3 is not in this process's.
    db()
      .update(schema.webhooks)
      .set({ url: receiver.url.replace("127.0.0.1", "127.0.0.3") })
      .where(eq(schema.webhooks.id, webhook.id))
      .run();
    await sendTestEvent(project.id, webhook.id);
    expect(await sendDueDeliveries(getDal())).toBe(1);
    const [d] = await listDeliveries(project.id, webhook.id, { limit: 10 });
    expect(d).toMatchObject({ status: "pending", attempts: 1, lastStatus: null });
    expect(d.lastError).toMatch(/refused: loopback address, not allowed by CONCORD_EGRESS_ALLOW/);
    expect(receiver.received).toHaveLength(0);
  });

  it("the secret is stored encrypted, never as given", async () => {
    const project = makeProject();
    const { webhook, secret } = await createWebhook(project.id, null, { url: receiver.url, events: ["run.finished"] });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const row = db().select().from(schema.webhooks).where(eq(schema.webhooks.id, webhook.id)).get()!;
    expect(row.secret).not.toContain(secret.slice(6));
    expect(row.secret).toMatch(/^enc:v1:/);
    expect(JSON.stringify(webhook)).not.toContain(secret);
  });
});
