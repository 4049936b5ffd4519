/**
 * The back-check and checklist drafting against a real local HTTP server that
 * imitates an OpenAI-compatible endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, asc, eq, isNull } from "drizzle-orm";
import { useTempDatabase } from "../support/db";
import { lastUserText, startFakeLlm, type FakeLlm } from "../support/fake-llm";
import { args, get, post, run, signInCookie } from "../support/http";
import { DEMO_ACCOUNTS, seedDemo } from "../../seeds/demo";
import { schema } from "../../db/client";
import { runBackCheck } from "../../app/curation/assist.server";
import { loader as curateLoader, action as curateAction } from "../../app/routes/p.$slug.curation.$datasetId._index";
import { loader as itemLoader, action as itemAction } from "../../app/routes/p.$slug.curation.$datasetId.items.$itemId";

const { db } = useTempDatabase();
let fake: FakeLlm;
let providerId: number;
let projectId: number;
let benchId: number;
let cookie: string;

beforeAll(async () => {
  await seedDemo(db());
  fake = await startFakeLlm();
  projectId = db().select().from(schema.projects).get()!.id;
  benchId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
  providerId = db()
    .insert(schema.providers)
    .values({
      projectId,
      name: "local-judge",
      kind: "openai-compatible",
      baseUrl: fake.baseUrl,
      apiKey: "sk-secret-test-key",
      model: "judge-x",
      settings: { maxRetries: 1, backoffBaseMs: 5, backoffMaxMs: 10, timeoutMs: 5000 },
    })
    .returning()
    .get().id;
  const r = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
  cookie = await signInCookie(r.email, r.password);
});
afterAll(() => fake?.close());

const checklistOf = (sourceId: string) => {
  const item = db()
    .select()
    .from(schema.items)
    .where(and(eq(schema.items.datasetId, benchId), eq(schema.items.sourceId, sourceId)))
    .get()!;
  const list = db()
    .select()
    .from(schema.checklistItems)
    .where(and(eq(schema.checklistItems.itemId, item.id), isNull(schema.checklistItems.retiredAt)))
    .orderBy(asc(schema.checklistItems.position))
    .all();
  return { item, list };
};

describe("back-check", () => {
  it("runs the judge on each reference and flags the items it answers No or leaves unparsed", async () => {
    // The judge says No to Q2 of every item, and garbles Q3 of cdb-011.
    fake.setScript((req) => {
      const prompt = lastUserText(req.body);
      const ids = [...prompt.split("### Checklist (Evaluation Items)")[1].matchAll(/^Q(\d+):/gm)].map((m) => Number(m[1]));
      const garble = prompt.includes("Thirty Years");
      return ids.map((i) => (i === 2 ? `Q${i}: No` : garble && i === 3 ? `Q${i}: maybe?` : `Q${i}: Yes`)).join("\n");
    });
    const summary = await runBackCheck({ projectId, datasetId: benchId, providerId, userId: null });
    expect(summary).toMatchObject({ items: 12, checked: 12, flagged: 12, unparsed: 1, failedCalls: [] });

    // The prompt is RefineBench G.2 with the reference as the answer, at temperature 0 and top_p 1.
    const req = fake.requests.find((r) => lastUserText(r.body).includes("Thirty Years"))!;
    expect(req.body.temperature).toBe(0);
    expect(req.body.top_p).toBe(1);
    expect(req.authorization).toBe("Bearer sk-secret-test-key");
    const { item, list } = checklistOf("cdb-011");
    const ref = db().select().from(schema.references).where(eq(schema.references.itemId, item.id)).get()!;
    expect(lastUserText(req.body)).toContain(`### Model’s Answer:\n${ref.text}`);

    const page = await (
      await run(curateLoader, args(get(`/p/demo/curation/${benchId}`, cookie), { slug: "demo", datasetId: String(benchId) }))
    ).json();
    const flagged = page.flags.filter((f: { kind: string; itemId: number }) => f.kind === "back-check" && f.itemId === item.id);
    expect(flagged.map((f: { checklistItemId: number; answer: string }) => [f.checklistItemId, f.answer])).toEqual([
      [list[1].id, "No"],
      [list[2].id, "unparsed"],
    ]);
    // Every call is logged, without the key.
    const calls = db().select().from(schema.providerCalls).where(eq(schema.providerCalls.providerId, providerId)).all();
    expect(calls).toHaveLength(12);
    expect(JSON.stringify(calls)).not.toContain("sk-secret-test-key");
  });

  it("keeps to the provider's concurrency like run calls do, each call logged as sent before it goes out", async () => {
    db().update(schema.providers).set({ concurrency: 2 }).where(eq(schema.providers.id, providerId)).run();
    const before = db().select().from(schema.providerCalls).where(eq(schema.providerCalls.providerId, providerId)).all().length;
    let inFlight = 0;
    let peak = 0;
    let sentRowsSeen = 0;
    fake.setScript(async (req) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      // While this request is at the endpoint its row is already there, marked sent.
      sentRowsSeen = Math.max(
        sentRowsSeen,
        db()
          .$client.prepare(`SELECT COUNT(*) FROM provider_calls WHERE provider_id = ? AND state = 'sent'`)
          .pluck()
          .get(providerId) as number,
      );
      await new Promise((r) => setTimeout(r, 40));
      inFlight--;
      const prompt = lastUserText(req.body);
      const ids = [...prompt.split("### Checklist (Evaluation Items)")[1].matchAll(/^Q(\d+):/gm)].map((m) => Number(m[1]));
      return ids.map((i) => `Q${i}: Yes`).join("\n");
    });
    try {
      const summary = await runBackCheck({ projectId, datasetId: benchId, providerId, userId: null });
      expect(summary).toMatchObject({ items: 12, checked: 12, failedCalls: [] });
      expect(peak).toBe(2);
      expect(sentRowsSeen).toBeGreaterThanOrEqual(1);
      const calls = db().select().from(schema.providerCalls).where(eq(schema.providerCalls.providerId, providerId)).all().slice(before);
      expect(calls).toHaveLength(12);
      expect(calls.every((c) => c.state === "done" && c.status === 200 && c.owner?.startsWith("curation-"))).toBe(true);
    } finally {
      db().update(schema.providers).set({ concurrency: 4 }).where(eq(schema.providers.id, providerId)).run();
    }
  });

  it("a failing endpoint is reported per item and records nothing for it", async () => {
    fake.setScript(() => ({ status: 500, text: "boom" }));
    const before = db().select().from(schema.curationEvents).all().length;
    const res = await run(
      curateAction,
      args(post("/x", { intent: "back-check", providerId: String(providerId) }, cookie), { slug: "demo", datasetId: String(benchId) }),
    );
    const body = await res.json();
    expect(body.ok).toMatch(
      /^Back-check ran on 0 of 12 items: 0 checklist item\(s\) answered No on the reference, 0 unparsed\. 12 call\(s\) failed/,
    );
    expect(db().select().from(schema.curationEvents).all().length).toBe(before);
  });
});

describe("checklist drafting", () => {
  it("drafts from the question and reference, parses the Python list, and adds only what the maintainer confirms", async () => {
    fake.setScript(
      () =>
        "Here you go:\n```python\n['Does the response name the treaty?', \"Does the response give 1648?\", 'Mentions Westphalia',]\n```",
    );
    const { item, list } = checklistOf("cdb-011");
    const params = { slug: "demo", datasetId: String(benchId), itemId: String(item.id) };
    const res = await run(itemAction, args(post("/x", { intent: "draft", providerId: String(providerId) }, cookie), params));
    const { draft } = await res.json();
    expect(draft.items).toEqual(["Does the response name the treaty?", "Does the response give 1648?", "Mentions Westphalia"]);
    expect(draft.warnings).toEqual(['Not phrased "Does the response …?": "Mentions Westphalia"']);
    const prompt = lastUserText(fake.requests.at(-1)!.body);
    expect(prompt).toContain("Your task is to create a checklist for grading numerous responses");
    expect(prompt).toContain(item.query);
    // Nothing was added by drafting.
    expect(checklistOf("cdb-011").list).toHaveLength(list.length);

    // The maintainer drops one line and rewords another.
    const edited = "Does the response name the treaty?\nDoes the response mention Westphalia?";
    const added = await run(
      itemAction,
      args(post("/x", { intent: "add-draft", items: edited, reason: "Drafted, edited" }, cookie), params),
    );
    expect((await added.json()).ok).toBe("Added 2 drafted checklist item(s).");
    const after = checklistOf("cdb-011").list.map((c) => c.text);
    expect(after.slice(-2)).toEqual(["Does the response name the treaty?", "Does the response mention Westphalia?"]);
    const page = await (await run(itemLoader, args(get("/x", cookie), params))).json();
    expect(page.history.filter((h: { action: string }) => h.action === "add")).toHaveLength(2);
  });

  it("an unreadable reply is an error with nothing added", async () => {
    fake.setScript(() => "I would rather not.");
    const { item, list } = checklistOf("cdb-012");
    const res = await run(
      itemAction,
      args(post("/x", { intent: "draft", providerId: String(providerId) }, cookie), {
        slug: "demo",
        datasetId: String(benchId),
        itemId: String(item.id),
      }),
    );
    expect(res.status).toBe(422);
    expect((await res.json()).error).toBe(
      "The model's reply could not be read: No checklist found: the reply holds neither a Python list nor bulleted lines.",
    );
    expect(checklistOf("cdb-012").list).toHaveLength(list.length);
  });
});
