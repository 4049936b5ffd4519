/**
 * The demo content loads into a fresh database, and the project overview and
 * dataset browser loaders show it: counts, text search, domain filter, the item page.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { useTempDatabase } from "../support/db";
import { args, get, run, signInCookie } from "../support/http";
import { DEMO_ACCOUNTS, loadDemoFiles, seedDemo, type SeedSummary } from "../../seeds/demo";
import { schema } from "../../db/client";
import { loader as overviewLoader } from "../../app/routes/p.$slug._index";
import { loader as browseLoader } from "../../app/routes/p.$slug.datasets.$datasetId._index";
import { loader as itemLoader } from "../../app/routes/p.$slug.datasets.$datasetId.items.$itemId";

const { db } = useTempDatabase();
let summary: SeedSummary;
let cookie: string;
let benchId: number;

beforeAll(async () => {
  summary = await seedDemo(db());
  const researcher = DEMO_ACCOUNTS.find((a) => a.role === "researcher")!;
  cookie = await signInCookie(researcher.email, researcher.password);
  benchId = db().select().from(schema.datasets).where(eq(schema.datasets.name, "Concord Demo Bench")).get()!.id;
});

describe("demo content", () => {
  it("has a dozen problems in at least four domains, with 5–12 checklist items each and three models over several turns", () => {
    const { bench, writing } = loadDemoFiles();
    expect(bench.items.length).toBeGreaterThanOrEqual(10);
    expect(new Set(bench.items.map((i) => i.domain)).size).toBeGreaterThanOrEqual(4);
    for (const item of bench.items) {
      expect(item.checklist.length).toBeGreaterThanOrEqual(5);
      expect(item.checklist.length).toBeLessThanOrEqual(12);
      expect(item.reference.length).toBeGreaterThan(0);
      expect(new Set(item.responses.map((r) => r.model)).size).toBe(3);
      expect(new Set(item.responses.map((r) => r.turn)).size).toBeGreaterThan(1);
      for (const c of item.checklist) expect(c.text).toMatch(/^Does the response .+\?$/);
    }
    expect(writing.items.length).toBeGreaterThan(0);
  });

  it("loads accounts, verdicts from two judges and labels from three annotators", () => {
    const { bench } = loadDemoFiles();
    const checklistTotal = bench.items.reduce((n, i) => n + i.checklist.length, 0);
    expect(summary.users).toBe(5);
    expect(summary.checklistItems).toBe(checklistTotal);
    expect(db().select({ n: count() }).from(schema.judges).get()!.n).toBe(2);
    const annotators = db()
      .selectDistinct({ id: schema.assignments.annotatorId })
      .from(schema.assignments)
      .innerJoin(schema.annotations, eq(schema.annotations.assignmentId, schema.assignments.id))
      .all();
    expect(annotators).toHaveLength(3);
    expect(summary.annotations).toBeGreaterThan(300);
  });

  it("is reproducible: the same seed gives the same verdicts", async () => {
    const values = db()
      .select({ v: schema.verdicts.value })
      .from(schema.verdicts)
      .all()
      .map((r) => r.v)
      .join("");
    const { openDatabase } = await import("../../db/client");
    const other = openDatabase(":memory:");
    await seedDemo(other);
    const again = other
      .select({ v: schema.verdicts.value })
      .from(schema.verdicts)
      .all()
      .map((r) => r.v)
      .join("");
    expect(again).toBe(values);
  });
});

describe("project overview and dataset browser loaders", () => {
  it("the overview lists both datasets with their counts", async () => {
    const res = await run(overviewLoader, args(get("/p/demo", cookie), { slug: "demo" }));
    const data = await res.json();
    const bench = data.datasets.find((d: { name: string }) => d.name === "Concord Demo Bench");
    const files = loadDemoFiles().bench;
    // Two judges answer every checklist item of every response.
    const expectedVerdicts = 2 * files.items.reduce((n, i) => n + i.responses.length * i.checklist.length, 0);
    expect(bench).toMatchObject({
      items: 12,
      domains: 5,
      checklistItems: summary.checklistItems,
      responses: 108,
      verdicts: expectedVerdicts,
    });
    expect(data.counts.judges).toBe(2);
    expect(data.counts.tasks).toBe(4);
  });

  it("searches prompt text, filters by domain, and pages", async () => {
    const all = await (
      await run(browseLoader, args(get(`/p/demo/datasets/${benchId}`, cookie), { slug: "demo", datasetId: String(benchId) }))
    ).json();
    expect(all.total).toBe(12);
    expect(all.domains.map((d: { domain: string }) => d.domain)).toEqual(["Chemistry", "Computer Science", "History", "Law", "Statistics"]);

    const law = await (
      await run(browseLoader, args(get(`/p/demo/datasets/${benchId}?domain=Law`, cookie), { slug: "demo", datasetId: String(benchId) }))
    ).json();
    expect(law.total).toBe(3);
    expect(law.rows.every((r: { domain: string }) => r.domain === "Law")).toBe(true);

    const search = await (
      await run(browseLoader, args(get(`/p/demo/datasets/${benchId}?q=Bretton`, cookie), { slug: "demo", datasetId: String(benchId) }))
    ).json();
    expect(search.rows.map((r: { sourceId: string }) => r.sourceId)).toEqual(["cdb-012"]);

    // LIKE wildcards are literal text: "%" alone matches only items containing "%".
    const pct = await (
      await run(
        browseLoader,
        args(get(`/p/demo/datasets/${benchId}?q=${encodeURIComponent("%%%")}`, cookie), { slug: "demo", datasetId: String(benchId) }),
      )
    ).json();
    expect(pct.total).toBe(0);

    const none = await (
      await run(
        browseLoader,
        args(get(`/p/demo/datasets/${benchId}?q=Bretton&domain=Law`, cookie), { slug: "demo", datasetId: String(benchId) }),
      )
    ).json();
    expect(none.total).toBe(0);
  });

  it("the item page shows checklist, reference, responses by model and turn, and both judges' verdicts", async () => {
    const item = db().select().from(schema.items).where(eq(schema.items.sourceId, "cdb-001")).get()!;
    const res = await run(
      itemLoader,
      args(get(`/p/demo/datasets/${benchId}/items/${item.id}`, cookie), {
        slug: "demo",
        datasetId: String(benchId),
        itemId: String(item.id),
      }),
    );
    const data = await res.json();
    const { bench } = loadDemoFiles();
    const src = bench.items.find((i) => i.sourceId === "cdb-001")!;
    expect(data.checklist.map((c: { text: string }) => c.text)).toEqual(src.checklist.map((c) => c.text));
    expect(data.references[0].text).toBe(src.reference);
    expect(data.responses).toHaveLength(src.responses.length);
    expect(data.judges).toEqual(["judge-lenient", "judge-strict"]);
    const firstResponse = data.responses[0].id;
    expect(Object.keys(data.verdicts[firstResponse]["judge-strict"])).toHaveLength(src.checklist.length);
  });

  it("a dataset id from another project is not found", async () => {
    const res = await run(browseLoader, args(get(`/p/demo/datasets/99999`, cookie), { slug: "demo", datasetId: "99999" }));
    expect(res.status).toBe(404);
  });
});
