/**
 * Report freshness under concurrent submits on PostgreSQL (issue 17). Every submitted label moves its task's data
 * version (the key of the memoised reports). bench:annotate on PostgreSQL rolled back 2,252 transactions for 1,440
 * submits. A submitted label now adds a row to task_data_bumps (migration 0004) instead of updating its task's
 * counter row, so submits to one task share no row; readers add those rows to the counter, folding them in now
 * and then.
 *
 * The submit itself runs at READ COMMITTED on PostgreSQL, with row locks on the user's assignment and the task
 * (TxOptions.lockedReadCommitted in app/dal.server.ts): under SERIALIZABLE, predicate locks taken per index page
 * made 50 submits to one task fail each other by the hundreds without any common row (measured here: 225 retries
 * for 50 submits with the bump rows, 245 with the counter row): that, more than the counter, was the 2,252.
 *
 * Here 50 annotators submit to one task at the same moment through the app's saveAnnotation, on a pool of 10
 * connections: every label is stored once, none was retried, and the version read by findTask moved by exactly
 * 50; a fold (at FOLD_BUMPS_AT bumps, or called directly) leaves the version where it was. What the locks must
 * keep: ten double clicks of one form store one label; one form token sent for two units stores one and refuses the
 * other (409); closing the task while labels are submitted stores each before the close or refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openPgDatabase, type PgDb } from "../../db/client-pg";
import { pgDal, txRetries, type Dal } from "../../app/dal.server";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { seedAnnotationScenario } from "../../app/annotation/synthetic.server";
import { findTask as findAnnotationTask } from "../../app/annotation/tasks.server";
import { findTask, foldTaskBumps, FOLD_BUMPS_AT } from "../../app/reports/load.server";
import { pgSkipReason, startTestPg, type TestPg } from "../support/pg";

const NO_PG = pgSkipReason();
const ANNOTATORS = 50;
let testPg: TestPg | undefined;
let pg: PgDb | undefined;
let d: Dal;
let scenario: Awaited<ReturnType<typeof seedAnnotationScenario>>;

afterAll(async () => {
  await pg?.$client.end();
  testPg?.stop();
});

/** Each annotator's first assignment in the task: (annotator, unit), one per annotator. */
async function oneUnitEach(taskId: number) {
  const rows = await d.rows<{ annotator_id: number | string; unit_id: number | string }>(
    sql`SELECT a.annotator_id, MIN(a.unit_id) AS unit_id FROM assignments a JOIN units u ON u.id = a.unit_id
        WHERE u.task_id = ${taskId} GROUP BY a.annotator_id ORDER BY a.annotator_id`,
  );
  return rows.map((r) => ({ userId: Number(r.annotator_id), unitId: Number(r.unit_id) }));
}

/** All annotators submit "Yes" to their unit of the task at once; returns the retries the layer made meanwhile. */
async function submitAll(taskId: number) {
  const task = (await findAnnotationTask(scenario.projectId, taskId, d))!;
  const before = txRetries(d);
  const results = await Promise.all(
    (await oneUnitEach(taskId)).map(({ userId, unitId }, i) =>
      saveAnnotation(
        {
          task,
          userId,
          unitId,
          intent: "submit",
          form: new URLSearchParams({ answer: "Yes", clientToken: `tok-${taskId}-${i}`, durationMs: "1500" }),
        },
        d,
      ),
    ),
  );
  expect(results.filter((r) => !r.ok)).toEqual([]);
  return txRetries(d) - before;
}

const submitted = async (taskId: number) =>
  Number(
    (
      await d.rows<{ n: number | string }>(
        sql`SELECT COUNT(*) AS n FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id
            WHERE u.task_id = ${taskId} AND an.status = 'submitted'`,
      )
    )[0].n,
  );
const dataVersion = async (taskId: number) => Number((await findTask(scenario.projectId, taskId, d))!.version.split(":")[0]);
const bumpRows = async (taskId: number) =>
  Number((await d.rows<{ n: number | string }>(sql`SELECT COUNT(*) AS n FROM task_data_bumps WHERE task_id = ${taskId}`))[0].n);

describe.skipIf(NO_PG)("task data versions under concurrent submits on PostgreSQL", () => {
  beforeAll(async () => {
    testPg = await startTestPg();
    pg = await openPgDatabase(await testPg.createDatabase("bumps"), { max: 10 });
    d = pgDal(pg);
    scenario = await seedAnnotationScenario(d, {
      annotators: ANNOTATORS,
      items: ANNOTATORS,
      overlap: 1,
      password: "correct horse battery",
      kinds: ["checklist-appropriateness", "response-satisfaction"],
    });
  }, 180_000);

  it("50 annotators submitting to one task at once: every label stored once, the version moved by exactly 50", async () => {
    const taskId = scenario.tasks["checklist-appropriateness"];
    const v0 = await dataVersion(taskId);
    // Read committed with row locks (TxOptions.lockedReadCommitted): no submit made another fail and run again.
    expect(await submitAll(taskId)).toBe(0);
    expect(await submitted(taskId)).toBe(ANNOTATORS);
    expect(await dataVersion(taskId)).toBe(v0 + ANNOTATORS);
    expect(await bumpRows(taskId)).toBe(ANNOTATORS);
  });

  it("a fold moves the bumps into the counter and leaves the version where it was; reading folds at FOLD_BUMPS_AT", async () => {
    const taskId = scenario.tasks["checklist-appropriateness"];
    const v = await dataVersion(taskId);
    await foldTaskBumps(d, taskId);
    expect(await bumpRows(taskId)).toBe(0);
    expect(await dataVersion(taskId)).toBe(v);
    // Bumps as any writer adds them (a hand-run SQL fix goes through the same trigger function).
    await d.tx((q) => d.rows(sql`INSERT INTO task_data_bumps (task_id) SELECT ${taskId} FROM generate_series(1, ${FOLD_BUMPS_AT})`, q));
    expect(await dataVersion(taskId)).toBe(v + FOLD_BUMPS_AT); // this read folded them
    expect(await bumpRows(taskId)).toBe(0);
    expect(await dataVersion(taskId)).toBe(v + FOLD_BUMPS_AT);
  });

  it("the same form sent ten times at once (double clicks) is stored once; one form token sent for two units stores one", async () => {
    const taskId = scenario.tasks["response-satisfaction"];
    const task = (await findAnnotationTask(scenario.projectId, taskId, d))!;
    const [first, second] = await oneUnitEach(taskId);
    const send = (who: { userId: number; unitId: number }, token: string) =>
      saveAnnotation(
        { task, userId: who.userId, unitId: who.unitId, intent: "submit", form: new URLSearchParams({ answer: "No", clientToken: token }) },
        d,
      );
    const before = txRetries(d);
    const clicks = await Promise.all(Array.from({ length: 10 }, () => send(first, "double-click")));
    expect(clicks.every((r) => r.ok)).toBe(true);
    expect(clicks.filter((r) => r.ok && !r.duplicate)).toHaveLength(1);
    const stored = await d.rows<{ revision: number | string }>(
      sql`SELECT an.revision FROM annotations an JOIN assignments a ON a.id = an.assignment_id
          WHERE a.unit_id = ${first.unitId} AND a.annotator_id = ${first.userId}`,
    );
    expect(stored.map((r) => Number(r.revision))).toEqual([1]);
    // A token is one page's: sent for another unit at the same moment, one is stored and the other refused.
    const [a, b] = await Promise.all([send(second, "one-page"), send({ ...second, ...(await oneUnitEach(taskId))[2] }, "one-page")]);
    expect([a.ok, b.ok].sort()).toEqual([false, true]);
    expect([a, b].find((r) => !r.ok)).toMatchObject({ httpStatus: 409 });
    // The double clicks waited on the assignment's row lock; only the token race was run again (a unique key lost).
    expect(txRetries(d) - before).toBeLessThanOrEqual(1);
  });

  it("closing the task while labels are being submitted: each is stored before the close or refused", async () => {
    const taskId = scenario.tasks["response-satisfaction"];
    const task = (await findAnnotationTask(scenario.projectId, taskId, d))!;
    const units = (await oneUnitEach(taskId)).slice(3);
    const before = await submitted(taskId);
    const [results] = await Promise.all([
      Promise.all(
        units.map((u, i) =>
          saveAnnotation(
            {
              task,
              userId: u.userId,
              unitId: u.unitId,
              intent: "submit",
              form: new URLSearchParams({ answer: "Yes", clientToken: `close-${i}` }),
            },
            d,
          ),
        ),
      ),
      d.tx((q) => d.rows(sql`UPDATE tasks SET status = 'closed' WHERE id = ${taskId} RETURNING id`, q)),
    ]);
    const stored = results.filter((r) => r.ok).length;
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.httpStatus === 409)).toBe(true);
    expect(await submitted(taskId)).toBe(before + stored);
    // Nothing is stored once the task is closed.
    const late = await saveAnnotation(
      {
        task,
        userId: units[0].userId,
        unitId: units[0].unitId,
        intent: "submit",
        form: new URLSearchParams({ answer: "No", clientToken: "late" }),
      },
      d,
    );
    expect(late).toMatchObject({ ok: false, httpStatus: 409 });
    expect(await submitted(taskId)).toBe(before + stored);
  });
});
