/**
 * The datasets, tasks and report endpoints of the HTTP API (issue 37) against the real server, on the seeded demo
 * project plus a dataset imported through the real items-jsonl, responses and verdicts presets. Each answer is
 * compared with what the page shows (the page's own loader data, `?_data=`, read over HTTP by a signed-in browser
 * client): the overview's datasets, the item page, the Tasks page (a researcher's and an annotator's), the task
 * page, the report and judges pages. A task created over the API equals the same values sent through the New task
 * form (the same task row, units and pool); a bad body is refused naming each field in the form's words and writes
 * nothing; Idempotency-Key replays; close and reopen; annotators get 403 where the pages answer 403 and never a
 * model name; another user's project is 404; a read token cannot POST; item pages return each item once. Every
 * 2xx body is checked against the OpenAPI document (tests/support/api-spec.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, setMembership } from "../../app/auth/accounts.server";
import { createApiToken, type NewToken } from "../../app/auth/tokens.server";
import { archiveTask } from "../../app/annotation/tasks.server";
import { freezeDataset, startNextVersion } from "../../app/curation/versions.server";
import { runImport } from "../../app/formats/import.server";
import { openDatabase, schema, type Db } from "../../db/client";
import { DEMO_ACCOUNTS } from "../../seeds/demo-names";
import { expectMatchesSpec, expectRequestMatchesSpec } from "../support/api-spec";
import { AppClient, startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { withAppDb, bearerRequest } from "../support/api";
import { tempDir } from "../support/db";
import { copyDemoDatabase } from "../support/demo";

const PAGED_ITEMS = 250;
const account = (role: string, name?: string) => DEMO_ACCOUNTS.find((a) => a.role === role && (!name || a.name.startsWith(name)))!;
const RHEA = account("researcher");
const ANA = account("annotator", "Ana");

let app: RunningApp;
const ids: Record<string, number> = {};
const tokens: Record<string, string> = {};
let researcherPage: AppClient;
let annotatorPage: AppClient;

const withDb = <T>(fn: (db: Db) => Promise<T> | T) => withAppDb(app, fn);
const newToken = async (userId: number, input: Partial<NewToken> = {}) =>
  (await withDb((db) => createApiToken(userId, { name: "test", scope: "write", projects: "all", ...input }, db))).token;

const call = (method: string, p: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  bearerRequest(app, method, p, token, body, headers);
const parse = (r: AppResponse) => JSON.parse(r.text);

/** A 2xx answer, checked against the OpenAPI document; its parsed body. */
function ok(r: AppResponse, method: string, p: string, status = 200) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  const body = parse(r);
  expectMatchesSpec({ method, path: p, status: r.status, contentType: r.headers["content-type"], body, headers: r.headers });
  return body;
}
function expectProblem(r: AppResponse, status: number) {
  expect(r.status, r.text.slice(0, 500)).toBe(status);
  expect(r.headers["content-type"]).toBe("application/problem+json");
  return parse(r) as { detail: string; errors?: { field?: string; message: string }[] };
}

/** The loader data of a page, as the browser client signed in as its user receives it. */
async function pageData(client: AppClient, p: string, routeId: string) {
  const r = await client.get(`${p}${p.includes("?") ? "&" : "?"}_data=${encodeURIComponent(routeId)}`);
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  return JSON.parse(r.text);
}

/** Every page of a list, following `next`; checks each page against the document. */
async function allPages(p: string, token: string) {
  const rows: Record<string, unknown>[] = [];
  let next: string | null = p;
  let pages = 0;
  while (next) {
    const url = new URL(next, app.url);
    const path = url.pathname + url.search;
    const body = ok(await call("GET", path, token), "GET", path);
    rows.push(...body.data);
    next = body.next;
    pages++;
  }
  return { rows, pages };
}

function writeImportFiles(dir: string) {
  const items: string[] = [];
  for (let i = 1; i <= PAGED_ITEMS; i++)
    items.push(
      JSON.stringify({
        id: `p${String(i).padStart(3, "0")}`,
        prompt: `Question ${i}: what is ${i} + ${i}?`,
        reference: String(2 * i),
        domain: i % 2 ? "Odd" : "Even",
        checklist: [`Does the response say ${2 * i}?`, "Is the response one sentence?"],
      }),
    );
  fs.writeFileSync(path.join(dir, "paged.jsonl"), items.join("\n") + "\n");
  const responses = ["item,model,turn,text"];
  for (let i = 1; i <= 20; i++)
    for (const m of ["zephyr-x", "orca-y"]) responses.push(`p${String(i).padStart(3, "0")},${m},1,It is ${2 * i}.`);
  fs.writeFileSync(path.join(dir, "responses.csv"), responses.join("\n") + "\n");
  const verdicts = ["judge,item,response,checklist_item,value"];
  for (let i = 1; i <= 20; i++) verdicts.push(`strict-judge,p${String(i).padStart(3, "0")},zephyr-x#1,1,${i % 3 ? "Yes" : "No"}`);
  fs.writeFileSync(path.join(dir, "verdicts.csv"), verdicts.join("\n") + "\n");
}

beforeAll(async () => {
  const dir = tempDir("concord-dt-");
  writeImportFiles(dir);
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    for (const [preset, name] of [
      ["items-jsonl", "paged.jsonl"],
      ["responses", "responses.csv"],
      ["verdicts", "verdicts.csv"],
    ]) {
      const s = await runImport({ databaseFile: file, projectSlug: "demo", preset, file: path.join(dir, name), datasetName: "paged" });
      expect(s.errors).toEqual([]);
    }
    const db = openDatabase(file);
    ids.olga = (await createUser({ email: "olga@lab.test", name: "Olga", password: "correct horse battery" }, db)).id;
    ids.other = db.insert(schema.projects).values({ slug: "other", name: "Other" }).returning({ id: schema.projects.id }).get().id;
    await setMembership(ids.other, ids.olga, "researcher", db);
    const user = (email: string) => db.select().from(schema.users).where(eq(schema.users.email, email)).get()!.id;
    ids.rhea = user(RHEA.email);
    ids.ana = user(ANA.email);
    ids.ben = user(account("annotator", "Ben").email);
    ids.demo = db.select().from(schema.projects).where(eq(schema.projects.slug, "demo")).get()!.id;
    const dataset = (name: string) =>
      db
        .select()
        .from(schema.datasets)
        .where(and(eq(schema.datasets.projectId, ids.demo), eq(schema.datasets.name, name)))
        .get()!.id;
    ids.bench = dataset("Concord Demo Bench");
    ids.paged = dataset("paged");
    ids.otherDataset = db
      .insert(schema.datasets)
      .values({ projectId: ids.other, name: "secret" })
      .returning({ id: schema.datasets.id })
      .get().id;
    db.$client.close();
  });
  tokens.rhea = await newToken(ids.rhea);
  tokens.rheaRead = await newToken(ids.rhea, { scope: "read" });
  tokens.ana = await newToken(ids.ana);
  tokens.olga = await newToken(ids.olga);
  researcherPage = new AppClient(app.url);
  await researcherPage.signIn(RHEA.email, RHEA.password);
  annotatorPage = new AppClient(app.url);
  await annotatorPage.signIn(ANA.email, ANA.password);
}, 240_000);
afterAll(async () => {
  await app?.stop();
});

const demoModels = async () =>
  withDb((db) =>
    db
      .selectDistinct({ model: schema.responses.model })
      .from(schema.responses)
      .all()
      .map((r) => r.model),
  );

const newTask = (extra: Record<string, unknown> = {}) => ({
  name: "Satisfaction, API",
  datasetId: ids.bench,
  kind: "response-satisfaction",
  plan: "paper",
  overlap: 2,
  seed: 11,
  guidelines: "Judge the response against the checklist item.",
  pool: [ids.ana, ids.ben],
  itemLimit: 6,
  goldRate: 0.2,
  ...extra,
});
const taskCount = () => withDb((db) => db.select().from(schema.tasks).all().length);
const taskRows = (taskId: number) =>
  withDb((db) => {
    const task = db.select().from(schema.tasks).where(eq(schema.tasks.id, taskId)).get()!;
    const units = db.select().from(schema.units).where(eq(schema.units.taskId, taskId)).orderBy(asc(schema.units.position)).all();
    const position = new Map(units.map((u) => [u.id, u.position]));
    const assignments = db
      .select()
      .from(schema.assignments)
      .all()
      .filter((a) => position.has(a.unitId))
      .map((a) => ({ position: position.get(a.unitId), annotatorId: a.annotatorId, status: a.status, shownOrder: a.shownOrder }))
      .sort((a, b) => a.position! - b.position! || a.annotatorId - b.annotatorId);
    const { id: _i, createdAt: _c, name: _n, ...taskRest } = task;
    return {
      task: taskRest,
      units: units.map(({ id: _u, taskId: _t, createdAt: _uc, ...u }) => u),
      assignments,
    };
  });

describe("datasets", () => {
  it("the list equals the overview page's datasets, with their counts, over several pages", async () => {
    const overview = await pageData(researcherPage, "/p/demo", "routes/p.$slug._index");
    const { rows, pages } = await allPages("/api/v1/projects/demo/datasets?limit=2", tokens.rhea);
    expect(pages).toBeGreaterThan(1);
    const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
    expect([...rows].sort(byId as never)).toEqual([...overview.datasets].sort(byId));
    const paged = rows.find((d) => d.id === ids.paged)!;
    expect(paged).toMatchObject({ items: PAGED_ITEMS, checklistItems: 2 * PAGED_ITEMS, responses: 40, verdicts: 20 });
  });

  it("one dataset: its counts and every version of it, oldest first", async () => {
    const actor = { userId: ids.rhea, reason: "API test" };
    await withDb((db) => freezeDataset(ids.paged, actor, db));
    const next = await withDb((db) => startNextVersion(ids.paged, actor, db));
    const p = `/api/v1/projects/demo/datasets/${ids.paged}`;
    const body = ok(await call("GET", p, tokens.rhea), "GET", p);
    const overview = await pageData(researcherPage, "/p/demo", "routes/p.$slug._index");
    const summary = (id: number) => overview.datasets.find((d: { id: number }) => d.id === id);
    const { versions, ...self } = body;
    expect(self).toEqual(summary(ids.paged));
    expect(self.frozenAt).toEqual(expect.any(Number));
    expect(versions).toEqual([summary(ids.paged), summary(next.id)]);
    expect(versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    // The newer version lists the same versions.
    const q = `/api/v1/projects/demo/datasets/${next.id}`;
    expect(ok(await call("GET", q, tokens.rhea), "GET", q).versions).toEqual(versions);
    // Another project's dataset, and an id that is not a number: 404.
    expectProblem(await call("GET", `/api/v1/projects/demo/datasets/${ids.otherDataset}`, tokens.rhea), 404);
    expectProblem(await call("GET", "/api/v1/projects/demo/datasets/abc", tokens.rhea), 404);
  });

  it("items: keyset pages return every item exactly once, in id order, each as its item page shows it", async () => {
    const { rows, pages } = await allPages(`/api/v1/projects/demo/datasets/${ids.paged}/items?limit=37`, tokens.rhea);
    expect(pages).toBe(Math.ceil(PAGED_ITEMS / 37));
    const itemIds = rows.map((r) => r.id as number);
    expect(new Set(itemIds).size).toBe(PAGED_ITEMS);
    expect(itemIds).toEqual([...itemIds].sort((a, b) => a - b));
    expect(rows.map((r) => r.sourceId)).toEqual(Array.from({ length: PAGED_ITEMS }, (_, i) => `p${String(i + 1).padStart(3, "0")}`));
    // The item page's loader data, for items with and without responses and verdicts, and a demo item.
    const demoItems = await allPages(`/api/v1/projects/demo/datasets/${ids.bench}/items?limit=10000`, tokens.rhea);
    const judged = demoItems.rows.find((r) => Object.keys(r.verdicts as object).length > 0)!;
    expect(judged).toBeDefined();
    for (const [datasetId, item] of [
      [ids.paged, rows[0]],
      [ids.paged, rows[2]],
      [ids.paged, rows[PAGED_ITEMS - 1]],
      [ids.bench, judged],
    ] as const) {
      const page = await pageData(
        researcherPage,
        `/p/demo/datasets/${datasetId}/items/${item.id}`,
        "routes/p.$slug.datasets.$datasetId.items.$itemId",
      );
      const { checklist, references, responses, judges, verdicts, ...row } = item;
      expect(row).toEqual(page.item);
      expect({ checklist, references, responses, judges, verdicts }).toEqual({
        checklist: page.checklist,
        references: page.references,
        responses: page.responses,
        judges: page.judges,
        verdicts: page.verdicts,
      });
    }
    expect(rows[0]).toMatchObject({ judges: ["strict-judge"], responses: [{ model: "orca-y" }, { model: "zephyr-x" }] });
    // A cursor this list did not give is refused, not read as "from the start".
    const bad = expectProblem(await call("GET", `/api/v1/projects/demo/datasets/${ids.paged}/items?cursor=bm9wZQ`, tokens.rhea), 400);
    expect(bad.errors?.[0].field).toBe("cursor");
  });

  it("an annotator's token gets 403 on every dataset endpoint, as the dataset pages answer, and no model name", async () => {
    expect((await annotatorPage.get(`/p/demo/datasets/${ids.bench}`)).status).toBe(403);
    const models = await demoModels();
    for (const p of [
      "/api/v1/projects/demo/datasets",
      `/api/v1/projects/demo/datasets/${ids.bench}`,
      `/api/v1/projects/demo/datasets/${ids.bench}/items`,
    ]) {
      const r = await call("GET", p, tokens.ana);
      expectProblem(r, 403);
      for (const m of models) expect(r.text).not.toContain(m);
    }
  });
});

describe("tasks", () => {
  it("the list: a researcher's equals the Tasks page; an annotator's holds only their own tasks, as their page", async () => {
    const page = await pageData(researcherPage, "/p/demo/tasks", "routes/p.$slug.tasks._index");
    const { rows, pages } = await allPages("/api/v1/projects/demo/tasks?limit=2", tokens.rhea);
    expect(pages).toBeGreaterThan(1);
    // The page shows the kind by its title; the API gives the kind's id and its title.
    expect(rows.map((t) => ({ ...t, kind: t.kindTitle }))).toEqual(page.tasks);

    const mine = await pageData(annotatorPage, "/p/demo/tasks", "routes/p.$slug.tasks._index");
    const anas = (await allPages("/api/v1/projects/demo/tasks", tokens.ana)).rows;
    expect(anas.map((t) => ({ ...t, kind: t.kindTitle }))).toEqual(mine.tasks);
    expect(anas.length).toBeGreaterThan(0);
    const own = await withDb((db) =>
      db
        .selectDistinct({ taskId: schema.units.taskId })
        .from(schema.assignments)
        .innerJoin(schema.units, eq(schema.units.id, schema.assignments.unitId))
        .where(eq(schema.assignments.annotatorId, ids.ana))
        .all()
        .map((r) => r.taskId),
    );
    for (const t of anas) {
      expect(own).toContain(t.id);
      expect((t.mine as { total: number }).total).toBeGreaterThan(0);
      // Counts only: no labels, no names of annotators or models.
      expect(Object.keys(t).sort()).toEqual([
        "annotatable",
        "createdAt",
        "id",
        "kind",
        "kindTitle",
        "mine",
        "name",
        "overall",
        "overlap",
        "status",
      ]);
    }
  });

  it("one task equals its page: settings, progress per annotator, pool and adjudicators; 403 for an annotator", async () => {
    const taskId = (await allPages("/api/v1/projects/demo/tasks", tokens.rhea)).rows[0].id as number;
    const p = `/api/v1/projects/demo/tasks/${taskId}`;
    const body = ok(await call("GET", p, tokens.rhea), "GET", p);
    const page = await pageData(researcherPage, `/p/demo/tasks/${taskId}`, "routes/p.$slug.tasks.$taskId._index");
    for (const k of ["task", "progress", "work", "stale", "pool", "adjudicators"]) expect(body[k]).toEqual(page[k]);
    expect(body.progress.annotators.length).toBeGreaterThan(1);
    expectProblem(await call("GET", p, tokens.ana), 403);
    expectProblem(await call("GET", "/api/v1/projects/demo/tasks/999999", tokens.rhea), 404);
  });

  it("creating a task over the API equals the New task form: the same task row, units and pool", async () => {
    const body = newTask();
    expectRequestMatchesSpec("POST", "/api/v1/projects/demo/tasks", body);
    const r = await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, body);
    const created = ok(r, "POST", "/api/v1/projects/demo/tasks", 201);
    expect(r.headers.location).toBe(`/api/v1/projects/demo/tasks/${created.task.id}`);
    expect(created.task).toMatchObject({ name: body.name, kind: "response-satisfaction", status: "open", overlap: 2, seed: 11 });
    expect(created.pool).toEqual([ids.ana, ids.ben]);
    const fetched = ok(await call("GET", r.headers.location!, tokens.rhea), "GET", r.headers.location!);
    expect(fetched).toEqual(created);

    const csrf = await researcherPage.csrfToken("/p/demo/tasks/new");
    const params = new URLSearchParams({
      _csrf: csrf,
      name: "Satisfaction, form",
      datasetId: String(ids.bench),
      kind: "response-satisfaction",
      plan: "paper",
      overlap: "2",
      seed: "11",
      guidelines: body.guidelines,
      itemLimit: "6",
      goldRate: "0.2",
      confirmNames: "no",
    });
    params.append("pool", String(ids.ana));
    params.append("pool", String(ids.ben));
    const posted = await researcherPage.request(
      "POST",
      "/p/demo/tasks/new",
      { "Content-Type": "application/x-www-form-urlencoded", Origin: app.url },
      params.toString(),
    );
    expect(posted.status, posted.text.slice(0, 300)).toBe(302);
    const formTaskId = Number(/\/tasks\/(\d+)$/.exec(posted.headers.location!)![1]);
    const [api, viaForm] = [await taskRows(created.task.id), await taskRows(formTaskId)];
    expect(api.units.length).toBeGreaterThan(0);
    expect(api.units.some((u) => u.isGold)).toBe(true);
    expect(api).toEqual(viaForm);
  });

  it("a bad body is refused naming each field in the form's words, and nothing is written", async () => {
    const before = await taskCount();
    const bad = { name: " ", datasetId: ids.bench, kind: "response-satisfaction", pool: [], overlap: 0, seed: -1 };
    const r = expectProblem(await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, bad), 400);
    const apiErrors = Object.fromEntries(r.errors!.map((e) => [e.field, e.message]));
    expect(Object.keys(apiErrors).sort()).toEqual(["name", "overlap", "pool", "seed"]);
    // The New task form's answer to the same values (its action's data).
    const csrf = await researcherPage.csrfToken("/p/demo/tasks/new");
    const params = new URLSearchParams({
      _csrf: csrf,
      name: " ",
      datasetId: String(ids.bench),
      kind: "response-satisfaction",
      overlap: "0",
      seed: "-1",
      confirmNames: "no",
    });
    const form = await researcherPage.request(
      "POST",
      `/p/demo/tasks/new?_data=${encodeURIComponent("routes/p.$slug.tasks.new")}`,
      { "Content-Type": "application/x-www-form-urlencoded", Origin: app.url },
      params.toString(),
    );
    expect(form.status).toBe(400);
    expect(apiErrors).toEqual(JSON.parse(form.text).fieldErrors);

    // Wrong types, unknown fields, not JSON, not application/json; a dataset of another project (a domain refusal).
    const typed = expectProblem(
      await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, { ...newTask(), overlap: "two", colour: "red" }),
      400,
    );
    expect(typed.errors).toEqual(
      expect.arrayContaining([
        { field: "overlap", message: "Overlap k must be a number." },
        { field: "colour", message: '"colour" is not a field of a new task.' },
      ]),
    );
    expectProblem(await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, "{not json"), 400);
    expectProblem(await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, "name=x", { "Content-Type": "text/plain" }), 415);
    const foreign = expectProblem(
      await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ datasetId: ids.otherDataset })),
      400,
    );
    expect(foreign.errors).toEqual([{ field: "datasetId", message: "No such dataset in this project." }]);
    expect(await taskCount()).toBe(before);
  });

  it("a name that would unblind annotators is held (422) until confirmNames", async () => {
    const [model] = await demoModels();
    const before = await taskCount();
    const held = expectProblem(await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ name: `Rate ${model}` })), 422);
    expect(held.errors?.map((e) => e.field)).toEqual(["name"]);
    expect(held.detail).toMatch(/confirmNames/);
    expect(await taskCount()).toBe(before);
    ok(
      await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ name: `Rate ${model}`, confirmNames: true })),
      "POST",
      "/api/v1/projects/demo/tasks",
      201,
    );
    expect(await taskCount()).toBe(before + 1);
  });

  it("Idempotency-Key: a replay creates one task and answers the same; the same key with another body is 409", async () => {
    const before = await taskCount();
    const key = { "Idempotency-Key": "create-task-0001" };
    const first = await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ name: "Once" }), key);
    const again = await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ name: "Once" }), key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.text).toBe(first.text);
    expect(again.headers.location).toBe(first.headers.location);
    expect(await taskCount()).toBe(before + 1);
    expectProblem(await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ name: "Twice" }), key), 409);
    expect(await taskCount()).toBe(before + 1);
  });

  it("close then reopen change the status the task page shows; an archived task is refused (409)", async () => {
    const created = parse(await call("POST", "/api/v1/projects/demo/tasks", tokens.rhea, newTask({ name: "To close" })));
    const id = created.task.id as number;
    const status = async () => (await pageData(researcherPage, `/p/demo/tasks/${id}`, "routes/p.$slug.tasks.$taskId._index")).task.status;
    const close = `/api/v1/projects/demo/tasks/${id}/close`;
    expect(ok(await call("POST", close, tokens.rhea), "POST", close).task.status).toBe("closed");
    expect(await status()).toBe("closed");
    const reopen = `/api/v1/projects/demo/tasks/${id}/reopen`;
    expect(ok(await call("POST", reopen, tokens.rhea, undefined, { "Idempotency-Key": "reopen-1" }), "POST", reopen).task.status).toBe(
      "open",
    );
    expect(await status()).toBe("open");
    expectProblem(await call("GET", close, tokens.rhea), 405);
    await withDb((db) => archiveTask(ids.demo, id, true, db));
    expectProblem(await call("POST", close, tokens.rhea), 409);
    expect(await status()).toBe("archived");
  });
});

describe("report", () => {
  const judgedTask = async () => {
    const rows = (await allPages("/api/v1/projects/demo/tasks", tokens.rhea)).rows;
    return rows.find((t) => t.kind === "response-satisfaction" && (t.overall as { done: number }).done > 0)!.id as number;
  };

  it("the agreement figures and their intervals equal the report page's; judge agreement follows reference and unparsed as the judges page", async () => {
    const id = await judgedTask();
    const p = `/api/v1/projects/demo/tasks/${id}/report`;
    const body = ok(await call("GET", p, tokens.rhea), "GET", p);
    const page = await pageData(researcherPage, `/p/demo/reports/${id}`, "routes/p.$slug.reports.$taskId._index");
    // The first table of the page holds each statistic with its interval and method (a NaN is null in JSON, on both).
    expect(body.agreement).toEqual(page.report.tables.iaa.rows);
    expect(body.tables).toEqual(page.report.tables);
    const kappa = body.agreement.find((s: { statistic: string }) => /kappa/i.test(s.statistic));
    expect(kappa.value).toEqual(expect.any(Number));
    expect(kappa.ci[0]).toBeLessThan(kappa.ci[1]);

    for (const q of ["", "?reference=each&unparsed=exclude", "?reference=majority&unparsed=as:No", "?reference=adjudicated"]) {
      const api = ok(await call("GET", p + q, tokens.rhea), "GET", p + q);
      const judges = await pageData(researcherPage, `/p/demo/reports/${id}/judges${q}`, "routes/p.$slug.reports.$taskId.judges");
      const { judgeIds, ...result } = judges.agreement.result;
      expect(api.judgeAgreement.judges).toEqual(result.judges.map((j: { judge: string }) => ({ ...j, judgeId: judgeIds[j.judge] })));
      expect(api.judgeAgreement.humans).toEqual(result.humans);
      expect(api.judgeAgreement.tables).toEqual(judges.agreement.tables);
      expect(api.judges.tables).toEqual(judges.report.tables);
      expect(api.judgeAgreement.reference).toBe(judges.reference);
    }
    // The options take effect: leaving unparsed verdicts out changes a judge's n where it has any.
    const counted = ok(await call("GET", p, tokens.rhea), "GET", p).judgeAgreement.judges;
    const excluded = parse(await call("GET", `${p}?unparsed=exclude`, tokens.rhea)).judgeAgreement.judges;
    const withUnparsed = counted.find((j: { unparsedCompared: number }) => j.unparsedCompared > 0);
    expect(withUnparsed).toBeDefined();
    expect(excluded.find((j: { judge: string }) => j.judge === withUnparsed.judge).n).toBe(withUnparsed.n - withUnparsed.unparsedCompared);

    const bad = expectProblem(await call("GET", `${p}?unparsed=bogus&reference=all`, tokens.rhea), 400);
    expect(bad.errors?.map((e) => e.field).sort()).toEqual(["reference", "unparsed"]);
    expectProblem(await call("GET", p, tokens.ana), 403);
  });
});

describe("access", () => {
  it("another user's project is 404 on every endpoint, and a read token cannot POST (403)", async () => {
    const taskId = (await allPages("/api/v1/projects/demo/tasks", tokens.rhea)).rows[0].id as number;
    for (const [method, p] of [
      ["GET", "/api/v1/projects/other/datasets"],
      ["GET", `/api/v1/projects/other/datasets/${ids.otherDataset}`],
      ["GET", `/api/v1/projects/other/datasets/${ids.otherDataset}/items`],
      ["GET", "/api/v1/projects/other/tasks"],
      ["POST", "/api/v1/projects/other/tasks"],
      ["GET", "/api/v1/projects/other/tasks/1"],
      ["POST", "/api/v1/projects/other/tasks/1/close"],
      ["GET", "/api/v1/projects/other/tasks/1/report"],
    ] as const) {
      const r = await call(method, p, tokens.rhea, method === "POST" ? newTask() : undefined);
      expect(expectProblem(r, 404).detail).toBe("No such project, or this token cannot reach it.");
    }
    const before = await taskCount();
    for (const p of [
      "/api/v1/projects/demo/tasks",
      `/api/v1/projects/demo/tasks/${taskId}/close`,
      `/api/v1/projects/demo/tasks/${taskId}/reopen`,
    ])
      expectProblem(await call("POST", p, tokens.rheaRead, newTask()), 403);
    expect(await taskCount()).toBe(before);
  });
});
