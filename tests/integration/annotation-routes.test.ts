/** The annotate route through its loader and action: blinding, 404s, idempotency, validation. */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { myQueue } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset, SYNTHETIC_MODELS } from "../../app/annotation/synthetic.server";
import { createTask } from "../../app/annotation/tasks.server";
import * as annotate from "../../app/routes/p.$slug.tasks.$taskId.annotate";
import { schema } from "../../db/client";
import { useTempDatabase } from "../support/db";
import { addMember, makeProject, makeUser } from "../support/factory";
import { args, get, post, run, signInCookie } from "../support/http";

const { db } = useTempDatabase();
let slug: string;
let taskId: number;
let wqTaskId: number;
const people: { id: number; cookie: string }[] = [];

beforeAll(async () => {
  const project = makeProject("annot-routes");
  slug = project.slug;
  const { datasetId } = await makeSyntheticDataset(project.id, { items: 6 });
  for (let i = 0; i < 2; i++) {
    const u = await makeUser();
    await addMember(project.id, u.id, "annotator");
    people.push({ id: u.id, cookie: await signInCookie(u.email, u.password) });
  }
  const r = await makeUser();
  await addMember(project.id, r.id, "researcher");
  taskId = (
    await createTask(project.id, r.id, {
      name: "bon",
      datasetId,
      kind: "best-of-n",
      overlap: 2,
      pool: people.map((p) => p.id),
      includeReference: true,
      n: 4,
    })
  ).taskId;
  wqTaskId = (
    await createTask(project.id, r.id, {
      name: "wq",
      datasetId,
      kind: "writing-quality",
      overlap: 1,
      pool: people.map((p) => p.id),
    })
  ).taskId;
});

const params = (t = taskId) => ({ slug, taskId: String(t) });
const path = (t = taskId, q = "") => `/p/${slug}/tasks/${t}/annotate${q}`;

describe("annotate route", () => {
  it("the loader's JSON names no model, no response id, no other label", async () => {
    const [me, other] = people;
    const unitId = (await myQueue(taskId, me.id))[0].unitId;
    // The other annotator labels the same unit first, with a note naming a model.
    await run(
      annotate.action,
      args(
        post(
          path(),
          { intent: "submit", unitId: String(unitId), best: "A", "note.A": "OTHER-ANNOTATOR-NOTE", clientToken: "o-1" },
          other.cookie,
        ),
        params(),
      ),
    );
    const res = await run(annotate.loader, args(get(path(taskId, `?unit=${unitId}`), me.cookie), params()));
    expect(res.status).toBe(200);
    const body = await res.text();
    for (const m of SYNTHETIC_MODELS) expect(body).not.toContain(m);
    expect(body).not.toContain("OTHER-ANNOTATOR-NOTE");
    expect(body).not.toMatch(/"reference"[,\]]|:"reference"/);
    const responseIds = db()
      .select({ id: schema.responses.id })
      .from(schema.responses)
      .all()
      .map((r) => r.id);
    const data = JSON.parse(body);
    expect(JSON.stringify(data.page.unit.responses)).not.toMatch(/"id"/);
    expect(data.page.unit.responses.map((r: { letter: string }) => r.letter)).toEqual(["A", "B", "C", "D"]);
    expect(responseIds.length).toBeGreaterThan(0);
  });

  it("another annotator's unit, or an unknown unit, is 404 for GET and POST", async () => {
    const [me, other] = people;
    const mine = new Set((await myQueue(wqTaskId, me.id)).map((q) => q.unitId));
    const theirs = (await myQueue(wqTaskId, other.id)).find((q) => !mine.has(q.unitId))!.unitId;
    expect((await run(annotate.loader, args(get(path(wqTaskId, `?unit=${theirs}`), me.cookie), params(wqTaskId)))).status).toBe(404);
    expect((await run(annotate.loader, args(get(path(wqTaskId, `?unit=99999`), me.cookie), params(wqTaskId)))).status).toBe(404);
    const res = await run(
      annotate.action,
      args(post(path(wqTaskId), { intent: "submit", unitId: String(theirs), "score.A": "3" }, me.cookie), params(wqTaskId)),
    );
    expect(res.status).toBe(404);
  });

  it("a double submit stores one annotation; a bad label stores nothing and names the field", async () => {
    const [me] = people;
    const q = await myQueue(wqTaskId, me.id);
    const unitId = q[0].unitId;
    const count = () => db().select().from(schema.annotations).all().length;
    const before = count();
    const n = (await run(annotate.loader, args(get(path(wqTaskId, `?unit=${unitId}`), me.cookie), params(wqTaskId))).then((r) => r.json()))
      .page.unit.responses.length;
    const scores: Record<string, string> = {};
    for (let i = 0; i < n; i++) scores[`score.${String.fromCharCode(65 + i)}`] = "4";
    const bad = await run(
      annotate.action,
      args(
        post(path(wqTaskId), { intent: "submit", unitId: String(unitId), ...scores, "score.A": "7", clientToken: "x-0" }, me.cookie),
        params(wqTaskId),
      ),
    );
    expect(bad.status).toBe(400);
    expect((await bad.json()).fieldErrors["score.A"]).toMatch(/1 to 5/);
    const missing = await run(
      annotate.action,
      args(
        post(path(wqTaskId), { intent: "submit", unitId: String(unitId), ...scores, "score.B": "2", clientToken: "x-0" }, me.cookie),
        params(wqTaskId),
      ),
    );
    expect((await missing.json()).fieldErrors["reason.B"]).toMatch(/penalty reason/);
    expect(count()).toBe(before);
    const form = { intent: "submit", unitId: String(unitId), ...scores, clientToken: "x-1", durationMs: "4321" };
    const [a, b] = await Promise.all([
      run(annotate.action, args(post(path(wqTaskId), form, me.cookie), params(wqTaskId))),
      run(annotate.action, args(post(path(wqTaskId), form, me.cookie), params(wqTaskId))),
    ]);
    expect([a.status, b.status]).toEqual([302, 302]);
    expect(count()).toBe(before + 1);
    expect(a.headers.get("Location")).toBe(path(wqTaskId, `?unit=${q[1].unitId}`));
  });

  it("two annotators submitting the same unit at the same moment both succeed", async () => {
    const [me, other] = people;
    const mineQ = await myQueue(taskId, me.id);
    const otherQ = await myQueue(taskId, other.id);
    const shared = mineQ.map((q) => q.unitId).find((u) => otherQ.some((q) => q.unitId === u) && u !== mineQ[0].unitId)!;
    const [a, b] = await Promise.all(
      [me, other].map((p, i) =>
        run(
          annotate.action,
          args(post(path(), { intent: "submit", unitId: String(shared), best: "B", clientToken: `same-${i}` }, p.cookie), params()),
        ),
      ),
    );
    expect([a.status, b.status]).toEqual([302, 302]);
    const rows = db()
      .select({ annotatorId: schema.assignments.annotatorId, status: schema.assignments.status })
      .from(schema.assignments)
      .where(eq(schema.assignments.unitId, shared))
      .all();
    expect(rows.every((r) => r.status === "submitted")).toBe(true);
  });
});
