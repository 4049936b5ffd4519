/**
 * Every documented GET of the OpenAPI document, called on the real server with the seeded demo project
 * (tests/support/demo.ts): the answer — whatever its status — is one the document describes, body included
 * (tests/support/api-spec.ts), for a researcher's token and for an annotator's. The endpoints are taken from
 * the document itself, so a GET added later is called too: its path parameters are the demo project's slug,
 * every value of an enumerated parameter (each export kind), and ids found in the demo database (runs, tasks,
 * datasets) or in the list one level up (imports, webhooks). A GET that cannot be called without setting
 * something up first (there is no import or webhook in the demo) must be named in NEEDS_SETUP, and every
 * other one must answer 2xx to the researcher.
 */
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../../app/auth/tokens.server";
import { openDatabase, schema } from "../../db/client";
import { DEMO_ACCOUNTS, DEMO_PROJECT } from "../../seeds/demo-names";
import { apiDocument, expectMatchesSpec } from "../support/api-spec";
import { AppClient, startApp, type AppResponse, type RunningApp } from "../support/app-server";
import { copyDemoDatabase } from "../support/demo";
import type { JsonSchema } from "../../app/api/openapi.server";

/** GETs whose path names something the demo does not have until a test creates it (covered by their groups' tests). */
const NEEDS_SETUP: Record<string, string> = {
  "/api/v1/projects/{slug}/imports/{id}": "no import was made through the API in the demo",
  "/api/v1/projects/{slug}/webhooks/{id}": "the demo registers no webhook",
  "/api/v1/projects/{slug}/webhooks/{id}/deliveries": "the demo registers no webhook",
};

let app: RunningApp;
const tokens: Record<"researcher" | "annotator" | "writer", string> = { researcher: "", annotator: "", writer: "" };
/** Ids of the demo project's things, by the collection segment that precedes `{id}` in a path. */
const demoIds: Record<string, number> = {};

beforeAll(async () => {
  app = await startApp(async (file) => {
    await copyDemoDatabase(file);
    const db = openDatabase(file);
    const userId = (email: string) => db.select().from(schema.users).where(eq(schema.users.email, email)).get()!.id;
    const email = (role: string) => DEMO_ACCOUNTS.find((a) => a.role === role)!.email;
    for (const role of ["researcher", "annotator"] as const)
      tokens[role] = (await createApiToken(userId(email(role)), { name: "conformance", scope: "read", projects: "all" }, db)).token;
    tokens.writer = (await createApiToken(userId(email("researcher")), { name: "methods", scope: "write", projects: "all" }, db)).token;
    const project = db.select().from(schema.projects).where(eq(schema.projects.slug, DEMO_PROJECT.slug)).get()!;
    const firstId = (table: typeof schema.runs | typeof schema.tasks | typeof schema.datasets) =>
      db.select({ id: table.id }).from(table).where(eq(table.projectId, project.id)).orderBy(asc(table.id)).get()?.id;
    demoIds.runs = firstId(schema.runs)!;
    demoIds.tasks = firstId(schema.tasks)!;
    demoIds.datasets = firstId(schema.datasets)!;
    // The completed run, if the demo has one (its results have figures).
    const completed = db
      .select({ id: schema.runs.id })
      .from(schema.runs)
      .where(and(eq(schema.runs.projectId, project.id), eq(schema.runs.status, "completed")))
      .get();
    if (completed) demoIds.runs = completed.id;
    db.$client.close();
  });
});
afterAll(async () => {
  await app?.stop();
});

const client = () => new AppClient(app.url);
const get = (path: string, token: string): Promise<AppResponse> => client().request("GET", path, { Authorization: `Bearer ${token}` });

function bodyOf(r: AppResponse): unknown {
  if (!r.text) return undefined;
  const type = String(r.headers["content-type"] ?? "");
  return /json/.test(type) && !/ndjson|jsonl/.test(type) ? JSON.parse(r.text) : r.text;
}

/** Throws unless the answer is documented; returns its status. */
function check(path: string, r: AppResponse): number {
  expectMatchesSpec({ method: "GET", path, status: r.status, contentType: r.headers["content-type"], body: bodyOf(r), headers: r.headers });
  return r.status;
}

type Parameter = { name: string; in: string; required?: boolean; schema?: JsonSchema };

/** The path and query parameters of an operation ($refs to components resolved). */
function parametersOf(operation: JsonSchema): Parameter[] {
  const doc = apiDocument();
  return ((operation.parameters ?? []) as JsonSchema[]).map((p) =>
    typeof p.$ref === "string" ? (doc.components.parameters[p.$ref.split("/").pop()!] as Parameter) : (p as Parameter),
  );
}

/** The values a path parameter takes: the demo's slug, each value of an enumeration, or an id. */
async function valuesOf(template: string, filled: string, parameter: Parameter): Promise<string[]> {
  if (parameter.name === "slug") return [DEMO_PROJECT.slug];
  const enumeration = parameter.schema?.enum;
  if (Array.isArray(enumeration)) return enumeration.map(String);
  const collection = filled.split("/").pop()!; // the segment before {id}: "runs", "tasks", …
  if (demoIds[collection]) return [String(demoIds[collection])];
  // Else the first row of the list one level up, if the document has that list.
  if (apiDocument().paths[template.slice(0, template.lastIndexOf("/"))]?.get) {
    const list = await get(filled, tokens.researcher);
    check(filled, list);
    const first = (bodyOf(list) as { data?: { id?: unknown }[] } | undefined)?.data?.[0]?.id;
    if (first !== undefined) return [String(first)];
  }
  return [];
}

/** Every concrete path of a template (one per combination of parameter values). */
async function pathsOf(template: string, operation: JsonSchema): Promise<string[]> {
  const params = parametersOf(operation).filter((p) => p.in === "path");
  let paths = [""];
  for (const segment of template.split("/").slice(1)) {
    const m = /^\{(.+)\}$/.exec(segment);
    if (!m) {
      paths = paths.map((p) => `${p}/${segment}`);
      continue;
    }
    const parameter = params.find((p) => p.name === m[1]) ?? { name: m[1], in: "path" };
    const next: string[] = [];
    for (const p of paths) for (const v of await valuesOf(template, p, parameter)) next.push(`${p}/${encodeURIComponent(v)}`);
    paths = next;
  }
  return paths;
}

/**
 * Calls `path`; a 400 that names a query parameter the demo can fill (a run, a task, a dataset) is called again
 * with it. Returns every call made, with its status.
 */
async function callWithOptions(path: string, token: string): Promise<[string, number][]> {
  const calls: [string, number][] = [];
  let url = path;
  for (let attempt = 0; attempt < 3; attempt++) {
    const r = await get(url, token);
    calls.push([url, check(url, r)]);
    if (r.status !== 400) break;
    const fields = ((bodyOf(r) as { errors?: { field?: string }[] }).errors ?? []).map((e) => e.field);
    const fillable = fields.find((f) => f && demoIds[`${f}s`] && !new URL(url, "http://x").searchParams.has(f));
    if (!fillable) break;
    url += `${url.includes("?") ? "&" : "?"}${fillable}=${demoIds[`${fillable}s`]}`;
  }
  return calls;
}

describe("every documented GET on the demo project", () => {
  it("answers the researcher 2xx with a body the document describes (each format and page too), unless it needs setup", async () => {
    const doc = apiDocument();
    const outcomes: string[] = [];
    const without2xx: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      const operation = item.get;
      if (!operation) continue;
      const paths = await pathsOf(template, operation);
      if (!paths.length) {
        without2xx.push(template);
        continue;
      }
      const formats = parametersOf(operation).find((p) => p.in === "query" && p.name === "format")?.schema?.enum as string[] | undefined;
      for (const path of paths) {
        const variants = formats ? formats.map((f) => `${path}?format=${f}`) : [path];
        for (const variant of variants) {
          const calls = await callWithOptions(variant, tokens.researcher);
          outcomes.push(...calls.map(([u, s]) => `${s} ${u}`));
          const [lastUrl, status] = calls[calls.length - 1];
          if (status < 200 || status > 299) {
            without2xx.push(`${template} (${lastUrl} → ${status})`);
            continue;
          }
          // A paged list: its second page, through the first page's next link, is documented too.
          if (parametersOf(operation).some((p) => p.name === "cursor") && !/format=(csv|jsonl)/.test(lastUrl)) {
            const first = await get(`${lastUrl}${lastUrl.includes("?") ? "&" : "?"}limit=1`, tokens.researcher);
            check(lastUrl, first);
            const next = (bodyOf(first) as { next?: string | null }).next;
            if (next) {
              const second = next.replace(app.url, "");
              outcomes.push(`${check(second, await get(second, tokens.researcher))} ${second} (page 2)`);
            }
          }
        }
      }
    }
    expect(outcomes.length).toBeGreaterThan(5);
    console.info(`${outcomes.length} GETs checked against the OpenAPI document:\n${outcomes.join("\n")}`);
    expect(without2xx.sort()).toEqual(Object.keys(NEEDS_SETUP).sort());
  });

  it("answers an annotator (a role below most endpoints') only as documented: 403 or 404 problem details, or the data of their role", async () => {
    const doc = apiDocument();
    const statuses = new Map<string, number>();
    for (const [template, item] of Object.entries(doc.paths)) {
      if (!item.get || template in NEEDS_SETUP) continue;
      for (const path of await pathsOf(template, item.get)) statuses.set(path, check(path, await get(path, tokens.annotator)));
    }
    // The annotator reads the project itself, without its datasets and counts; a researcher's endpoint is 403.
    expect(statuses.get(`/api/v1/projects/${DEMO_PROJECT.slug}`)).toBe(200);
    expect(statuses.get(`/api/v1/projects/${DEMO_PROJECT.slug}/runs`)).toBe(403);
    expect([...statuses.values()].every((s) => s === 200 || s === 403 || s === 404)).toBe(true);
  });

  it("answers 405 with Allow to exactly the methods the document does not list for a path, and never to one it lists", async () => {
    const doc = apiDocument();
    const wrong: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      // Ids that name nothing, so that no request here changes anything (the answers are 404 or 400, never a write).
      const path = template
        .replace("{slug}", DEMO_PROJECT.slug)
        .replace(/\{what\}/, "annotations")
        .replace(/\{[^}]+\}/g, "999999");
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const r = await client().request(
          method,
          path,
          { Authorization: `Bearer ${tokens.writer}`, "Content-Type": "application/json" },
          "{}",
        );
        expectMatchesSpec({
          method: documented.includes(method) ? method : documented[0],
          path,
          status: r.status,
          contentType: r.headers["content-type"],
          body: bodyOf(r),
        });
        if ((r.status === 405) === documented.includes(method)) wrong.push(`${method} ${template}: ${r.status}`);
        if (r.status === 405) {
          const allow = String(r.headers.allow ?? "").split(/,\s*/);
          for (const m of documented) if (!allow.includes(m)) wrong.push(`${method} ${template}: Allow "${r.headers.allow}" lacks ${m}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
