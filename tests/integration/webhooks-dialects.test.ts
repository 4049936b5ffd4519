/**
 * Webhooks through the data-access layer on SQLite and on PostgreSQL: registering, the test event, the sender's
 * claim (one statement under a lease) and the delivery log; and task.completed exactly once when two annotators
 * submit a task's last two labels at the same moment — on PostgreSQL the saves run at READ COMMITTED, where
 * without the per-task advisory lock each would see the other's label still open and neither would emit. Every
 * task below ends that way, and each must yield one event, no more, no fewer.
 */
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../db/client";
import { closeDal, getDal, initDal } from "../../app/dal.server";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createProject } from "../../app/projects/projects.server";
import { myQueue, saveAnnotation } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask, findTask } from "../../app/annotation/tasks.server";
import { sendDueDeliveries } from "../../app/webhooks/sender.server";
import { createWebhook, listDeliveries, sendTestEvent } from "../../app/webhooks/webhooks.server";
import { tempDir } from "../support/db";
import { pgSkipReason, startTestPg, testDialects, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const PASSWORD = "correct horse battery";
/** Tasks each finished by two simultaneous last submits. */
const TASKS = 6;

let testPg: TestPg | undefined;
const received: string[] = [];
let receiverUrl = "";
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received.push(Buffer.concat(chunks).toString("utf8"));
    res.statusCode = 200;
    res.end();
  });
});
beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`;
});
afterAll(async () => {
  await closeDal();
  closeDb();
  testPg?.stop();
  await new Promise((r) => receiver.close(r));
});

for (const dialect of testDialects()) {
  describe.skipIf(dialect === "postgres" && NO_PG)(`webhooks on ${dialect}`, () => {
    let projectId: number;
    let researcher: number;
    const annotators: number[] = [];

    beforeAll(async () => {
      await closeDal();
      closeDb();
      if (dialect === "sqlite") process.env.DATABASE_URL = path.join(tempDir(), "webhooks.db");
      else {
        testPg ??= await startTestPg();
        process.env.DATABASE_URL = await testPg.createDatabase("webhooks_dialects");
      }
      await initDal();
      projectId = (await createProject({ name: "Lab", slug: "lab", description: "" })).id;
      researcher = (await createUser({ email: "rae@lab.test", name: "Rae", password: PASSWORD })).id;
      await setMembership(projectId, researcher, "researcher");
      for (const name of ["ann", "ben"]) {
        const u = await createUser({ email: `${name}@lab.test`, name, password: PASSWORD });
        await setMembership(projectId, u.id, "annotator");
        annotators.push(u.id);
      }
      received.length = 0;
    });

    it("registers, queues a test event, claims and sends it, and logs it delivered", async () => {
      const { webhook } = await createWebhook(projectId, researcher, { url: receiverUrl, events: ["run.finished"] });
      expect(webhook).toMatchObject({ status: "active", events: ["run.finished"], createdBy: "Rae" });
      await sendTestEvent(projectId, webhook.id);
      expect(await sendDueDeliveries(getDal())).toBe(1);
      expect(await sendDueDeliveries(getDal())).toBe(0);
      const [d] = await listDeliveries(projectId, webhook.id, { limit: 5 });
      expect(d).toMatchObject({ event: "ping", status: "delivered", attempts: 1, lastStatus: 200, lastError: null });
      expect(received).toHaveLength(1);
    });

    it(`task.completed exactly once for each of ${TASKS} tasks whose last two labels are submitted at the same moment`, async () => {
      const { webhook } = await createWebhook(projectId, researcher, { url: receiverUrl, events: ["task.completed"] });
      const { datasetId } = await makeSyntheticDataset(projectId, { items: 2 });
      const taskIds: number[] = [];
      for (let t = 0; t < TASKS; t++)
        taskIds.push(
          (
            await createTask(projectId, researcher, {
              name: `pairs ${t}`,
              datasetId,
              kind: "best-of-n",
              overlap: 2,
              pool: annotators,
              n: 2,
            })
          ).taskId,
        );
      const submit = async (taskId: number, userId: number, unitId: number) => {
        const r = await saveAnnotation({
          task: (await findTask(projectId, taskId))!,
          userId,
          unitId,
          intent: "submit",
          form: new URLSearchParams({ best: "A", clientToken: `${taskId}-${userId}-${unitId}` }),
        });
        expect(r.ok).toBe(true);
      };
      // Each annotator labels the first unit; then both submit their last one together, every task at once.
      const queues = await Promise.all(
        taskIds.map(async (t) => Promise.all(annotators.map(async (a) => (await myQueue(t, a)).map((q) => q.unitId)))),
      );
      for (const [i, t] of taskIds.entries()) for (const [j, a] of annotators.entries()) await submit(t, a, queues[i][j][0]);
      await Promise.all(taskIds.flatMap((t, i) => annotators.map((a, j) => submit(t, a, queues[i][j][1]))));
      const log = await listDeliveries(projectId, webhook.id, { limit: 100 });
      const completed = log.map((d) => d.event);
      expect(completed).toEqual(new Array<string>(TASKS).fill("task.completed"));
      received.length = 0;
      while ((await sendDueDeliveries(getDal())) > 0);
      const tasksHeard = received.map((b) => (JSON.parse(b) as { data: { id: number } }).data.id).sort((x, y) => x - y);
      expect(tasksHeard).toEqual([...taskIds].sort((x, y) => x - y));
    });
  });
}
