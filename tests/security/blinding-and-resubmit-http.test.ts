/**
 * Issue 18, "Also", over HTTP against the real production server (the
 * domain-level versions are in blinding-and-resubmit.test.ts):
 *
 * (a) A resubmit with the same form token (`clientToken`) and a changed
 *     answer — the back button, another answer, the same form — used to be
 *     taken for a double click: 302, and the change dropped. It must be stored
 *     as a new revision (or refused with a message), never silently dropped.
 * (b) An adjudicator who is also an annotator on the task must get the other
 *     annotators' labels only on units they have already submitted or are not
 *     assigned: fetched as that user, neither the adjudication page (HTML or
 *     its data) nor the annotate page may carry them before their own submit.
 *     The app's rule is stricter for an annotator named adjudicator (never on
 *     a unit assigned to them, submitted or not: nobody adjudicates their own
 *     dispute); a researcher in the pool sees a unit's labels once their own
 *     is submitted. Each label carries a distinctive comment, so a leak
 *     anywhere in a response body shows.
 */
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { makeSyntheticDataset } from "../../app/annotation/synthetic.server";
import { createTask, findTask, setAdjudicators } from "../../app/annotation/tasks.server";
import { openDatabase, schema } from "../../db/client";
import { AppClient, startApp, type RunningApp } from "../support/app-server";

const PASSWORD = "blinding-http-2026";
const SLUG = "blind-http";
const ANNOTATE = "routes/p.$slug.tasks.$taskId.annotate";
const ADJUDICATE = "routes/p.$slug.tasks.$taskId.adjudicate";
const email = (who: string) => `${who}@blind.test`;

let app: RunningApp;
let resubmitTask = 0;
let blindTask = 0;
let pooledTask = 0;
/** Units of the blinding task assigned to the annotator-adjudicator, and units not assigned to them. */
let assigned: number[] = [];
let free: number[] = [];
/** Units of the pooled-researcher task (all assigned to the researcher). */
let pooledUnits: number[] = [];
/** unit → the distinctive comments the other annotators left on it. */
const marks = new Map<number, string[]>();

beforeAll(async () => {
  app = await startApp(async (file) => {
    const db = openDatabase(file);
    const project = db.insert(schema.projects).values({ slug: SLUG, name: "Blinding over HTTP" }).returning().get();
    const ids: Record<string, number> = {};
    for (const [who, role] of [
      ["researcher", "researcher"],
      ["ada", "annotator"],
      ["bo", "annotator"],
      ["cy", "annotator"],
      ["di", "annotator"],
      ["eve", "annotator"],
    ] as const) {
      ids[who] = (await createUser({ email: email(who), name: who, password: PASSWORD }, db)).id;
      await setMembership(project.id, ids[who], role, db);
    }
    const { datasetId } = await makeSyntheticDataset(project.id, { items: 6 }, db);
    resubmitTask = (
      await createTask(
        project.id,
        ids.researcher,
        { name: "resubmit over http", datasetId, kind: "response-satisfaction", overlap: 1, pool: [ids.eve], seed: 5 },
        db,
      )
    ).taskId;

    /** On every unit, two annotators other than `watcher` disagree, each with a comment naming who wrote it where. */
    const seedDisputes = async (taskId: number, watcher: number) => {
      const task = (await findTask(project.id, taskId, db))!;
      const units = db
        .select({ id: schema.units.id })
        .from(schema.units)
        .where(eq(schema.units.taskId, taskId))
        .orderBy(asc(schema.units.id))
        .all();
      const out = { assigned: [] as number[], free: [] as number[] };
      for (const { id: unitId } of units) {
        const assignees = db
          .select({ annotatorId: schema.assignments.annotatorId })
          .from(schema.assignments)
          .where(eq(schema.assignments.unitId, unitId))
          .all()
          .map((r) => r.annotatorId);
        (assignees.includes(watcher) ? out.assigned : out.free).push(unitId);
        const left: string[] = [];
        for (const [i, annotator] of assignees
          .filter((a) => a !== watcher)
          .slice(0, 2)
          .entries()) {
          const comment = `leak-check-unit${unitId}-by${annotator}`;
          const saved = await saveAnnotation(
            { task, userId: annotator, unitId, intent: "submit", form: new URLSearchParams({ answer: i === 0 ? "Yes" : "No", comment }) },
            db,
          );
          if (!saved.ok) throw new Error(`seeding a label failed: ${JSON.stringify(saved)}`);
          left.push(comment);
        }
        marks.set(unitId, left);
      }
      return out;
    };
    // Four annotators, three labels per unit: Ada is in the pool and also adjudicates.
    blindTask = (
      await createTask(
        project.id,
        ids.researcher,
        {
          name: "blinding over http",
          datasetId,
          kind: "response-satisfaction",
          overlap: 3,
          pool: [ids.ada, ids.bo, ids.cy, ids.di],
          seed: 7,
        },
        db,
      )
    ).taskId;
    await setAdjudicators(project.id, blindTask, [ids.ada], db);
    ({ assigned, free } = await seedDisputes(blindTask, ids.ada));
    // The researcher in the pool of another task, with every unit assigned to her.
    pooledTask = (
      await createTask(
        project.id,
        ids.researcher,
        {
          name: "pooled researcher over http",
          datasetId,
          kind: "response-satisfaction",
          overlap: 3,
          pool: [ids.researcher, ids.bo, ids.cy],
          seed: 8,
        },
        db,
      )
    ).taskId;
    pooledUnits = (await seedDisputes(pooledTask, ids.researcher)).assigned;
    db.$client.close();
  });
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

function rows<T>(run: (db: ReturnType<typeof openDatabase>) => T): T {
  const db = openDatabase(app.databaseFile);
  try {
    return run(db);
  } finally {
    db.$client.close();
  }
}

async function signedIn(who: string): Promise<AppClient> {
  const c = new AppClient(app.url);
  await c.signIn(email(who), PASSWORD);
  return c;
}

const leaksOf = (body: string, units: number[]) => units.flatMap((u) => marks.get(u)!).filter((m) => body.includes(m));

describe("a resubmit with the same form token and another answer (HTTP)", () => {
  it("is stored as a new revision, not answered 302 and dropped", async () => {
    const eve = await signedIn("eve");
    const page = `/p/${SLUG}/tasks/${resubmitTask}/annotate`;
    const data = JSON.parse((await eve.get(`${page}?_data=${encodeURIComponent(ANNOTATE)}`)).text) as {
      page: { unit: { unitId: number } };
      clientToken: string;
    };
    const unitId = String(data.page.unit.unitId);
    const token = await eve.csrfToken(page);
    const form = { intent: "submit", unitId, clientToken: data.clientToken, durationMs: "2000" };

    expect((await eve.postForm(page, { ...form, answer: "Yes" }, { token })).status).toBe(302);
    // The same form twice (a double click) is one label.
    expect((await eve.postForm(page, { ...form, answer: "Yes" }, { token })).status).toBe(302);
    // Back, another answer, the same form: the change is kept.
    const changed = await eve.postForm(page, { ...form, answer: "No", comment: "changed my mind" }, { token });
    expect([302, 400, 409]).toContain(changed.status);

    const stored = rows((db) => {
      const assignment = db
        .select({ id: schema.assignments.id, status: schema.assignments.status })
        .from(schema.assignments)
        .where(
          and(
            eq(schema.assignments.unitId, Number(unitId)),
            eq(
              schema.assignments.annotatorId,
              db
                .select({ id: schema.users.id })
                .from(schema.users)
                .where(eq(schema.users.email, email("eve")))
                .get()!.id,
            ),
          ),
        )
        .get()!;
      const revisions = db
        .select({ revision: schema.annotations.revision, label: schema.annotations.label, notes: schema.annotations.notes })
        .from(schema.annotations)
        .where(eq(schema.annotations.assignmentId, assignment.id))
        .orderBy(asc(schema.annotations.revision))
        .all();
      return { status: assignment.status, revisions };
    });
    if (changed.status === 302) {
      // Acknowledged: then it is on disk as the current answer.
      expect(stored.revisions).toEqual([
        { revision: 1, label: "Yes", notes: null },
        { revision: 2, label: "No", notes: "changed my mind" },
      ]);
      expect(stored.status).toBe("submitted");
      const reopened = await eve.get(`${page}?unit=${unitId}`);
      expect(reopened.text).toContain("changed my mind");
    } else {
      // Refused: with a message, and the first answer left as it was.
      expect(changed.text).toMatch(/[A-Za-z]{4,}/);
      expect(stored.revisions).toEqual([{ revision: 1, label: "Yes", notes: null }]);
    }
  });
});

describe("an adjudicator who also annotates the task (HTTP)", () => {
  it("an annotator-adjudicator gets other annotators' labels only on units not assigned to them, before and after submitting their own", async () => {
    expect(assigned.length).toBeGreaterThan(0);
    expect(free.length).toBeGreaterThan(0);
    const ada = await signedIn("ada");
    const base = `/p/${SLUG}/tasks/${blindTask}`;

    // The disputes list and the default unit, as page data and as HTML: units not assigned to Ada only.
    const data = await ada.get(`${base}/adjudicate?_data=${encodeURIComponent(ADJUDICATE)}`);
    expect(data.status).toBe(200);
    const parsed = JSON.parse(data.text) as { list: { unitId: number }[]; unitId: number | null };
    expect(parsed.list.map((d) => d.unitId)).toEqual(free);
    expect(leaksOf(data.text, assigned)).toEqual([]);
    const html = await ada.get(`${base}/adjudicate`);
    expect(html.status).toBe(200);
    expect(leaksOf(html.text, assigned)).toEqual([]);

    // Asking for an assigned unit directly: not found, and nothing of it in the answer.
    for (const unit of assigned) {
      for (const suffix of [`?unit=${unit}`, `?unit=${unit}&_data=${encodeURIComponent(ADJUDICATE)}`]) {
        const res = await ada.get(`${base}/adjudicate${suffix}`);
        expect(res.status, suffix).toBe(404);
        expect(leaksOf(res.text, assigned), suffix).toEqual([]);
      }
      // Nor on the annotate page of that unit.
      for (const suffix of [`?unit=${unit}`, `?unit=${unit}&_data=${encodeURIComponent(ANNOTATE)}`]) {
        const res = await ada.get(`${base}/annotate${suffix}`);
        expect(res.status, suffix).toBe(200);
        expect(leaksOf(res.text, assigned), suffix).toEqual([]);
      }
    }
    // The control: a unit not assigned to Ada shows both labels.
    const open = await ada.get(`${base}/adjudicate?unit=${free[0]}`);
    expect(open.status).toBe(200);
    expect(leaksOf(open.text, [free[0]])).toEqual(marks.get(free[0]));

    // A draft is not a submit: still hidden.
    const [mine, ...rest] = assigned;
    const annotatePage = `${base}/annotate`;
    const token = await ada.csrfToken(`${annotatePage}?unit=${mine}`);
    const unitData = JSON.parse((await ada.get(`${annotatePage}?unit=${mine}&_data=${encodeURIComponent(ANNOTATE)}`)).text) as {
      clientToken: string;
    };
    const draft = await ada.postForm(
      `${annotatePage}?unit=${mine}`,
      { intent: "draft", unitId: String(mine), clientToken: unitData.clientToken, answer: "Yes" },
      { token },
    );
    expect(draft.status).toBeLessThan(400);
    const afterDraft = await ada.get(`${base}/adjudicate?unit=${mine}`);
    expect(afterDraft.status).toBe(404);
    expect(leaksOf(afterDraft.text, [mine])).toEqual([]);

    // Ada submits her own label on that unit. As an annotator she never adjudicates her own dispute, so it stays
    // out of her list; her other assigned units stay hidden too.
    const submitted = await ada.postForm(
      annotatePage,
      { intent: "submit", unitId: String(mine), clientToken: unitData.clientToken, answer: "Yes", durationMs: "3000" },
      { token },
    );
    expect(submitted.status).toBe(302);
    expect((await ada.get(`${base}/adjudicate?unit=${mine}`)).status).toBe(404);
    const list = JSON.parse((await ada.get(`${base}/adjudicate?_data=${encodeURIComponent(ADJUDICATE)}`)).text) as {
      list: { unitId: number }[];
    };
    expect(list.list.map((d) => d.unitId)).toEqual(free);
    for (const unit of rest) expect((await ada.get(`${base}/adjudicate?unit=${unit}`)).status).toBe(404);
    expect(leaksOf((await ada.get(`${base}/adjudicate`)).text, assigned)).toEqual([]);
  });

  it("a researcher in the pool gets a unit's labels only after submitting her own (a draft is not enough)", async () => {
    expect(pooledUnits.length).toBeGreaterThan(1);
    const rae = await signedIn("researcher");
    const base = `/p/${SLUG}/tasks/${pooledTask}`;
    const listOf = async () =>
      (
        JSON.parse((await rae.get(`${base}/adjudicate?_data=${encodeURIComponent(ADJUDICATE)}`)).text) as { list: { unitId: number }[] }
      ).list.map((d) => d.unitId);

    // Every unit is hers and unlabelled by her: no dispute listed, none reachable, no label anywhere.
    expect(await listOf()).toEqual([]);
    expect(leaksOf((await rae.get(`${base}/adjudicate`)).text, pooledUnits)).toEqual([]);
    const [mine, ...rest] = pooledUnits;
    for (const unit of pooledUnits) {
      const res = await rae.get(`${base}/adjudicate?unit=${unit}`);
      expect(res.status).toBe(404);
      expect(leaksOf(res.text, pooledUnits)).toEqual([]);
      expect(leaksOf((await rae.get(`${base}/annotate?unit=${unit}`)).text, pooledUnits)).toEqual([]);
    }
    // A draft is not a submit.
    const annotatePage = `${base}/annotate`;
    const token = await rae.csrfToken(`${annotatePage}?unit=${mine}`);
    const unitData = JSON.parse((await rae.get(`${annotatePage}?unit=${mine}&_data=${encodeURIComponent(ANNOTATE)}`)).text) as {
      clientToken: string;
    };
    const draft = await rae.postForm(
      `${annotatePage}?unit=${mine}`,
      { intent: "draft", unitId: String(mine), clientToken: unitData.clientToken, answer: "No" },
      { token },
    );
    expect(draft.status).toBeLessThan(400);
    expect((await rae.get(`${base}/adjudicate?unit=${mine}`)).status).toBe(404);

    const submitted = await rae.postForm(
      annotatePage,
      { intent: "submit", unitId: String(mine), clientToken: unitData.clientToken, answer: "No", durationMs: "3000" },
      { token },
    );
    expect(submitted.status).toBe(302);
    const after = await rae.get(`${base}/adjudicate?unit=${mine}`);
    expect(after.status).toBe(200);
    expect(leaksOf(after.text, [mine])).toEqual(marks.get(mine));
    expect(leaksOf(after.text, rest)).toEqual([]);
    expect(await listOf()).toEqual([mine]);
    for (const unit of rest) expect((await rae.get(`${base}/adjudicate?unit=${unit}`)).status).toBe(404);
  });
});
