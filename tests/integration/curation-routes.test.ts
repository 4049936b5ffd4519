/**
 * The curation pages through their real loaders and actions: a reference
 * optimisation task is created, annotators prefer a model output, the
 * maintainer promotes it, and the flags name invalid and near-duplicate items.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { useTempDatabase } from "../support/db";
import { args, get, post, run, signInCookie } from "../support/http";
import { DEMO_ACCOUNTS, seedDemo } from "../../seeds/demo";
import { schema } from "../../db/client";
import { saveAnnotation } from "../../app/annotation/annotate.server";
import { letter } from "../../app/annotation/random";
import { adjudicate } from "../../app/annotation/adjudication.server";
import { loader as curateLoader, action as curateAction } from "../../app/routes/p.$slug.curation.$datasetId._index";
import { loader as itemLoader, action as itemAction } from "../../app/routes/p.$slug.curation.$datasetId.items.$itemId";
import { loader as releaseLoader } from "../../app/routes/p.$slug.curation.$datasetId.release";

const { db } = useTempDatabase();
let cookie: string;
let writingId: number;
let benchId: number;
const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;

beforeAll(async () => {
  await seedDemo(db());
  cookie = await signInCookie(researcher.email, researcher.password);
  writingId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Writing")).get()!.id;
  benchId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
});

const p = (datasetId: number, extra: Record<string, string> = {}) => ({ slug: "demo", datasetId: String(datasetId), ...extra });

describe("flags", () => {
  it("lists the checklist items the annotators judged invalid, each linked to its fix", async () => {
    const data = await (await run(curateLoader, args(get(`/p/demo/curation/${benchId}`, cookie), p(benchId)))).json();
    const invalid = data.flags.filter((f: { kind: string }) => f.kind === "inappropriate");
    // The demo marks 7 checklist items inappropriate; the simulated annotators (error rates 3–10%) find most of them by majority.
    expect(invalid.length).toBeGreaterThanOrEqual(5);
    expect(invalid.length).toBeLessThanOrEqual(10);
    for (const f of invalid) expect(f.noVotes).toBeGreaterThan(f.yesVotes);
  });

  it("flags near-duplicates at the chosen threshold", async () => {
    const item = db()
      .select()
      .from(schema.items)
      .where(and(eq(schema.items.datasetId, benchId), eq(schema.items.sourceId, "cdb-010")))
      .get()!;
    const first = db()
      .select()
      .from(schema.checklistItems)
      .where(eq(schema.checklistItems.itemId, item.id))
      .orderBy(schema.checklistItems.position)
      .get()!;
    const res = await run(
      itemAction,
      args(
        post("/x", { intent: "add-checklist", text: first.text.replace(/\?$/, " clearly?"), reason: "test duplicate" }, cookie),
        p(benchId, { itemId: String(item.id) }),
      ),
    );
    expect(res.status).toBe(200);
    const data = await (await run(curateLoader, args(get(`/p/demo/curation/${benchId}?threshold=0.8`, cookie), p(benchId)))).json();
    const dup = data.flags.find((f: { kind: string; itemId: number }) => f.kind === "duplicate" && f.itemId === item.id);
    expect(dup.otherText).toBe(first.text);
    expect(dup.f).toBeGreaterThan(0.8);
  });

  it("rejects bad input with the field named, and changes nothing", async () => {
    const item = db().select().from(schema.items).where(eq(schema.items.datasetId, benchId)).get()!;
    const before = db().select().from(schema.checklistItems).all().length;
    const res = await run(
      itemAction,
      args(post("/x", { intent: "add-checklist", text: "  ", reason: "x" }, cookie), p(benchId, { itemId: String(item.id) })),
    );
    expect(res.status).toBe(400);
    // The message is shown beside the field it names (`field`), for the form that sent it (`form`).
    expect(await res.json()).toEqual({ error: "A checklist item needs text.", field: "text", form: "add-checklist" });
    const noReason = await run(
      itemAction,
      args(
        post("/x", { intent: "add-checklist", text: "Does the response x?", reason: "" }, cookie),
        p(benchId, { itemId: String(item.id) }),
      ),
    );
    expect(await noReason.json()).toEqual({ error: "Say why; it goes into the changelog.", field: "reason", form: "add-checklist" });
    expect(db().select().from(schema.checklistItems).all().length).toBe(before);
    // A checklist item of another item is refused.
    const other = db()
      .select()
      .from(schema.checklistItems)
      .where(eq(schema.checklistItems.itemId, item.id + 1))
      .get()!;
    const wrong = await run(
      itemAction,
      args(
        post("/x", { intent: "retire", checklistItemId: String(other.id), reason: "x" }, cookie),
        p(benchId, { itemId: String(item.id) }),
      ),
    );
    expect(wrong.status).toBe(400);
  });
});

describe("reference optimisation", () => {
  it("creates a blind pairwise task, finds the outputs annotators preferred, and promotes one with its justification", async () => {
    const annotators = db()
      .select()
      .from(schema.users)
      .where(eq(schema.users.isSiteAdmin, false))
      .all()
      .filter((u) => u.email !== researcher.email);
    const form = new URLSearchParams({ intent: "reference-task", name: "Ref opt", n: "2", overlap: "2", seed: "5" });
    for (const m of ["Orrery-70B"]) form.append("models", m);
    for (const a of annotators) form.append("pool", String(a.id));
    const req = new Request("http://concord.test/p/demo/curation/" + writingId, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: "http://concord.test", Host: "concord.test" },
      body: form,
    });
    const created = await (await run(curateAction, args(req, p(writingId)))).json();
    expect(created.ok).toMatch(/^Created task \d+ with 8 blind comparisons\.$/);
    const task = db().select().from(schema.tasks).where(eq(schema.tasks.id, created.taskId)).get()!;

    // Every annotator prefers the model output over the reference on the first item only.
    const units = db().select().from(schema.units).where(eq(schema.units.taskId, task.id)).orderBy(schema.units.position).all();
    const firstUnit = units[0];
    const assignments = db().select().from(schema.assignments).where(eq(schema.assignments.unitId, firstUnit.id)).all();
    expect(assignments).toHaveLength(2);
    for (const a of assignments) {
      const order = a.shownOrder!;
      const modelLetter = letter(order.findIndex((k) => k !== "reference"));
      const res = await saveAnnotation({
        task,
        userId: a.annotatorId,
        unitId: firstUnit.id,
        intent: "submit",
        form: new Map([
          ["best", modelLetter],
          ["clientToken", `t-${a.id}`],
        ]) as never,
      });
      expect(res.ok).toBe(true);
    }
    // On the second item they keep the reference.
    for (const a of db().select().from(schema.assignments).where(eq(schema.assignments.unitId, units[1].id)).all()) {
      const refLetter = letter(a.shownOrder!.indexOf("reference"));
      expect(
        (
          await saveAnnotation({
            task,
            userId: a.annotatorId,
            unitId: units[1].id,
            intent: "submit",
            form: new Map([["best", refLetter]]) as never,
          })
        ).ok,
      ).toBe(true);
    }

    // On the third they split, one to one: no majority, until a researcher adjudicates for the model output.
    const split = db().select().from(schema.assignments).where(eq(schema.assignments.unitId, units[2].id)).all();
    for (const [i, a] of split.entries()) {
      const pickModel = i === 0;
      const l = letter(a.shownOrder!.findIndex((k) => (pickModel ? k !== "reference" : k === "reference")));
      expect(
        (
          await saveAnnotation({
            task,
            userId: a.annotatorId,
            unitId: units[2].id,
            intent: "submit",
            form: new Map([["best", l]]) as never,
          })
        ).ok,
      ).toBe(true);
    }
    const before = await (await run(curateLoader, args(get(`/p/demo/curation/${writingId}`, cookie), p(writingId)))).json();
    expect(
      before.candidates.filter((x: { taskId: number; unitId: number }) => x.taskId === task.id && x.unitId === units[2].id),
    ).toHaveLength(0);
    const researcherId = db().select().from(schema.users).where(eq(schema.users.email, researcher.email)).get()!.id;
    const modelLetter = letter(units[2].responseIds!.findIndex((k) => k !== "reference"));
    const adj = await adjudicate({
      projectId: task.projectId,
      taskId: task.id,
      unitId: units[2].id,
      userId: researcherId,
      role: "researcher",
      form: new Map([
        ["best", modelLetter],
        ["reason", "The model draft keeps the voice"],
      ]) as never,
    });
    expect(adj).toEqual({ ok: true });

    const page = await (await run(curateLoader, args(get(`/p/demo/curation/${writingId}`, cookie), p(writingId)))).json();
    const adjudicated = page.candidates.find((x: { taskId: number; unitId: number }) => x.taskId === task.id && x.unitId === units[2].id);
    expect(adjudicated).toMatchObject({ rule: "adjudication", votes: { response: 1, reference: 1 } });
    const ours = page.candidates.filter((x: { taskId: number; rule: string }) => x.taskId === task.id && x.rule === "majority");
    expect(ours).toHaveLength(1);
    const c = ours[0];
    const modelResponse = firstUnit.responseIds!.find((k) => k !== "reference") as number;
    expect(c).toMatchObject({
      itemId: firstUnit.itemId,
      responseId: modelResponse,
      votes: { response: 2, reference: 0, others: 0, ties: 0 },
      promoted: false,
    });
    expect(c.annotationIds).toHaveLength(2);
    expect(c.model).toBe("Orrery-70B");

    const promoted = await run(
      curateAction,
      args(
        post(
          "/x",
          {
            intent: "promote",
            responseId: String(c.responseId),
            annotationIds: c.annotationIds.join(","),
            reason: "Both annotators preferred it",
          },
          cookie,
        ),
        p(writingId),
      ),
    );
    expect((await promoted.json()).ok).toMatch(/^Promoted to reference version 2;/);

    const item = await (await run(itemLoader, args(get("/x", cookie), p(writingId, { itemId: String(firstUnit.itemId) })))).json();
    const [current, old] = item.references;
    expect(current).toMatchObject({
      version: 2,
      isCurrent: true,
      provenance: "promoted",
      promotedFromResponseId: modelResponse,
      reason: "Both annotators preferred it",
      by: "Rhea Researcher",
      justification: c.annotationIds,
    });
    expect(old).toMatchObject({ version: 1, isCurrent: false });
    const after = await (await run(curateLoader, args(get(`/p/demo/curation/${writingId}`, cookie), p(writingId)))).json();
    expect(after.candidates.find((x: { taskId: number }) => x.taskId === task.id).promoted).toBe(true);

    // The release carries the promoted reference and the changelog says why.
    const jsonl = await (await run(releaseLoader, args(get(`/x?file=jsonl`, cookie), p(writingId)))).text();
    const line = jsonl
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((l) => l.reference_version === 2);
    expect(line.reference).toBe(db().select().from(schema.responses).where(eq(schema.responses.id, modelResponse)).get()!.text);
    const changelog = await run(releaseLoader, args(get(`/x?file=changelog`, cookie), p(writingId)));
    expect(changelog.headers.get("Content-Disposition")).toBe('attachment; filename="concord-demo-writing-v1-CHANGELOG.md"');
    expect(await changelog.text()).toContain("Rhea Researcher: Both annotators preferred it");
  });
});
