/**
 * The OpenAPI document (GET /api/v1/openapi.json, app/api/openapi.server.ts): it validates against the
 * OpenAPI 3.1 specification's own JSON Schema (@seriousme/openapi-schema-validator) and every schema in it is a
 * valid JSON Schema draft 2020-12 (OpenAPI 3.1's dialect); it lists exactly the routes under /api/v1/ (every
 * route file but the catch-all has a path, every path a route file); every operation has an id, a summary and
 * the standard answers; the server serves without a token exactly what the generator builds; the generator
 * turns zod's JSON Schema into parameters, bodies, named components and the standard answers; and the spec
 * checker of tests/support/api-spec.ts refuses bodies that do not match (so its passes mean something).
 */
import fs from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";

type SpecData = Parameters<Validator["validate"]>[0];
import Ajv2020 from "ajv/dist/2020";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument, type JsonSchema } from "../../app/api/openapi.server";
import type { ApiOperation } from "../../app/api/operations";
import { apiDocument, expectMatchesSpec, expectRequestMatchesSpec, specOperation } from "../support/api-spec";
import { AppClient, ROOT, startApp, type RunningApp } from "../support/app-server";

const ROUTES = path.join(ROOT, "app/routes");
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The API path a Remix flat-route file answers (remix.config.js: flat routes): "." is "/", "[.]" a dot, "$x" "{x}". */
function pathOfRouteFile(file: string): string {
  const segments = file
    .replace(/\.tsx?$/, "")
    .split(/\.(?![^[]*\])/) // a dot, unless inside brackets
    .map((s) => s.replace(/\[(.*?)\]/g, "$1"))
    .filter((s) => s !== "_index" && !s.startsWith("_")) // index routes and pathless layouts add no segment
    .map((s) => s.replace(/_$/, "")) // "x_" only opts out of nesting
    .map((s) => (s.startsWith("$") ? `{${s.slice(1)}}` : s));
  return `/${segments.join("/")}`;
}

const apiRouteFiles = () =>
  fs
    .readdirSync(ROUTES)
    .filter((f) => /^api\.v1\..+\.tsx?$/.test(f) && f !== "api.v1.$.tsx")
    .sort();

/** Every schema object the document holds: components/schemas, parameters', bodies' and answers' schemas. */
function schemasOf(doc: ReturnType<typeof buildOpenApiDocument>): [string, JsonSchema][] {
  const found: [string, JsonSchema][] = Object.entries(doc.components.schemas).map(([n, s]) => [`components/schemas/${n}`, s]);
  for (const [n, p] of Object.entries(doc.components.parameters)) found.push([`components/parameters/${n}`, p.schema as JsonSchema]);
  for (const [p, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${p}`;
      for (const param of (op.parameters ?? []) as JsonSchema[])
        if (param.schema) found.push([`${where} ${param.name}`, param.schema as JsonSchema]);
      const body = op.requestBody as { content: Record<string, JsonSchema> } | undefined;
      for (const [type, media] of Object.entries(body?.content ?? {}))
        if (media.schema) found.push([`${where} body ${type}`, media.schema as JsonSchema]);
      for (const [status, r] of Object.entries(op.responses as Record<string, JsonSchema>))
        for (const [type, media] of Object.entries((r.content ?? {}) as Record<string, JsonSchema>))
          if (media.schema) found.push([`${where} ${status} ${type}`, media.schema as JsonSchema]);
    }
  return found;
}

describe("the document", () => {
  const doc = buildOpenApiDocument();

  it("validates against the OpenAPI 3.1 schema, and every schema in it is valid JSON Schema 2020-12", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as SpecData);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).toEqual([]);
    expect([result.valid, validator.version]).toEqual([true, "3.1"]);

    const ajv = new Ajv2020({ strict: false });
    const invalid = schemasOf(doc)
      .filter(([, s]) => !ajv.validateSchema(s))
      .map(([where]) => `${where}: ${ajv.errorsText(ajv.errors)}`);
    expect(invalid).toEqual([]);
    // Every $ref leads somewhere.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/(schemas|responses|parameters)\/([^"]+)"/g)];
    expect(refs.length).toBeGreaterThan(0);
    const dangling = refs.filter(([, kind, name]) => !(name in doc.components[kind as "schemas"])).map(([r]) => r);
    expect(dangling).toEqual([]);
  });

  it("names Concord and its version, the server root, bearer authentication, and the shared schemas", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "Concord", version: pkg.version });
    expect(doc.servers).toEqual([{ url: "/" }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    // RFC 9457 §3.1 members, with the errors extension (§3.2).
    expect(doc.components.schemas.Problem).toMatchObject({
      type: "object",
      required: ["type", "title", "status"],
      properties: { errors: { type: "array", items: { $ref: "#/components/schemas/ProblemError" } } },
    });
    expect(doc.components.schemas.Page).toMatchObject({ required: ["data", "next"] });
    expect(doc.components.responses.TooManyRequests).toMatchObject({ headers: { "Retry-After": { required: true } } });
  });

  it("has a path for every API route file and a route file for every path", () => {
    const files = apiRouteFiles();
    expect(files).toContain("api.v1.projects.$slug.tsx");
    const fromFiles = new Map(files.map((f) => [pathOfRouteFile(f), f]));
    const documented = new Set(Object.keys(doc.paths));
    const undocumented = [...fromFiles].filter(([p]) => !documented.has(p)).map(([p, f]) => `${f} (${p})`);
    const withoutRoute = [...documented].filter((p) => !fromFiles.has(p));
    expect({ undocumented, withoutRoute }).toEqual({ undocumented: [], withoutRoute: [] });
    expect(pathOfRouteFile("api.v1.openapi[.]json.tsx")).toBe("/api/v1/openapi.json");
  });

  it("gives every operation a unique id, a summary, a tag it lists, its security and the standard answers", () => {
    const ids = new Set<string>();
    const tags = new Set(doc.tags.map((t) => t.name));
    const missing: string[] = [];
    for (const [p, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${p}`;
        expect(METHODS, where).toContain(method);
        expect(typeof op.operationId === "string" && op.operationId.length > 0, `${where}: operationId`).toBe(true);
        expect(ids.has(op.operationId as string), `${where}: operationId ${op.operationId} used twice`).toBe(false);
        ids.add(op.operationId as string);
        expect(typeof op.summary === "string" && op.summary.length > 0, `${where}: summary`).toBe(true);
        for (const tag of op.tags as string[]) expect(tags, `${where}: tag ${tag}`).toContain(tag);
        const responses = op.responses as Record<string, unknown>;
        const open = op["x-concord-scope"] === "none";
        expect(op.security, where).toEqual(open ? [] : [{ bearerAuth: [] }]);
        const needed = open ? [] : ["401", "429"];
        if (!open && p.includes("{")) needed.push("404");
        if (!open && (method !== "get" || op["x-concord-scope"] === "write")) needed.push("403");
        if (op.parameters && (op.parameters as JsonSchema[]).some((x) => x.$ref === "#/components/parameters/IdempotencyKey"))
          needed.push("409");
        for (const status of [...needed, "default"]) if (!(status in responses)) missing.push(`${where}: ${status}`);
        if (!Object.keys(responses).some((s) => /^2\d\d$/.test(s))) missing.push(`${where}: a 2xx answer`);
      }
    expect(missing).toEqual([]);
  });
});

describe("the generator", () => {
  const Thing = z.object({ id: z.number().int(), label: z.string() }).meta({ id: "TestThing" });
  type Tree = { name: string; children: Tree[] };
  const TreeSchema: z.ZodType<Tree> = z.object({ name: z.string(), children: z.array(z.lazy(() => TreeSchema)) });
  const base = { tag: "tests", auth: "write" as const, responses: { 200: { description: "ok", schema: Thing } } };
  const ops: ApiOperation[] = [
    {
      ...base,
      method: "post",
      path: "/api/v1/things/{slug}/items",
      operationId: "makeThing",
      summary: "Make a thing",
      minRole: "researcher",
      params: z.object({ slug: z.string().describe("the slug") }),
      query: z.object({
        level: z.enum(["a", "b"]).describe("which level"),
        dry_run: z.enum(["0", "1"]).default("0"),
        note: z.string().optional(),
      }),
      body: [
        { contentType: "application/json", schema: Thing },
        { contentType: "text/csv", description: "The file, one row a thing." },
      ],
      idempotent: true,
      responses: {
        201: { description: "made", schema: Thing, headers: { Location: "where" } },
        422: { description: "refused: errors names each row" },
      },
    },
    {
      ...base,
      method: "get",
      path: "/api/v1/things",
      operationId: "listThings",
      summary: "Things",
      auth: "read",
      paged: true,
      responses: { 200: { description: "pages, or a file", schema: Thing, alternatives: [{ contentType: "text/csv" }] } },
    },
    {
      ...base,
      method: "get",
      path: "/api/v1/trees",
      operationId: "tree",
      summary: "A tree",
      responses: { 200: { description: "t", schema: TreeSchema } },
    },
    {
      ...base,
      method: "get",
      path: "/api/v1/trees2",
      operationId: "tree2",
      summary: "A tree",
      responses: { 200: { description: "t", schema: TreeSchema } },
    },
  ];

  it("writes path and query parameters from zod (required unless optional or defaulted), bodies, paging, Idempotency-Key and the standard answers", () => {
    const doc = buildOpenApiDocument(ops);
    const make = doc.paths["/api/v1/things/{slug}/items"].post;
    expect(make.parameters).toEqual([
      { name: "slug", in: "path", required: true, description: "the slug", schema: { type: "string", description: "the slug" } },
      {
        name: "level",
        in: "query",
        required: true,
        description: "which level",
        schema: { type: "string", enum: ["a", "b"], description: "which level" },
      },
      { name: "dry_run", in: "query", required: false, schema: { type: "string", enum: ["0", "1"], default: "0" } },
      { name: "note", in: "query", required: false, schema: { type: "string" } },
      { $ref: "#/components/parameters/IdempotencyKey" },
    ]);
    // A named schema is written once; as input it is not closed (additionalProperties false is output only), hence TestThingInput.
    expect(make.requestBody).toEqual({
      required: true,
      description: "text/csv: The file, one row a thing.",
      content: { "application/json": { schema: { $ref: "#/components/schemas/TestThingInput" } }, "text/csv": {} },
    });
    expect(doc.components.schemas.TestThing).toMatchObject({ additionalProperties: false, required: ["id", "label"] });
    expect(doc.components.schemas.TestThingInput).not.toHaveProperty("additionalProperties");
    expect(Object.keys(make.responses as object)).toEqual(["201", "400", "401", "403", "404", "409", "422", "429", "default"]);
    // An error of its own without a schema is problem details.
    expect((make.responses as Record<string, JsonSchema>)["422"]).toEqual({
      description: "refused: errors names each row",
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    });
    expect((make.responses as Record<string, JsonSchema>)["201"]).toMatchObject({
      headers: { Location: { description: "where" } },
      content: { "application/json": { schema: { $ref: "#/components/schemas/TestThing" } } },
    });
    expect(make).toMatchObject({ security: [{ bearerAuth: [] }], "x-concord-scope": "write", "x-concord-min-role": "researcher" });
    expect(make.description).toBe("Needs a write token and the researcher or admin role.");

    const list = doc.paths["/api/v1/things"].get;
    expect(list.parameters).toEqual([{ $ref: "#/components/parameters/Cursor" }, { $ref: "#/components/parameters/Limit" }]);
    expect((list.responses as Record<string, JsonSchema>)["200"].content).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/TestThing" } },
      "text/csv": {},
    });
    // A read GET outside a project: no 403, no 404, but 400 for a bad cursor or limit.
    expect(Object.keys(list.responses as object)).toEqual(["200", "400", "401", "429", "default"]);
  });

  it("keeps recursive schemas of two operations apart, and refuses inconsistent descriptions", async () => {
    const doc = buildOpenApiDocument(ops);
    const treeRefs = [doc.paths["/api/v1/trees"].get, doc.paths["/api/v1/trees2"].get].map(
      (op) => JSON.stringify((op.responses as Record<string, JsonSchema>)["200"]).match(/#\/components\/schemas\/([^"]+)/)?.[1],
    );
    expect(treeRefs[0]).toBeDefined();
    // "#" in the document would be the document itself: a self-referring schema is a component.
    expect(JSON.stringify(doc)).not.toContain('"$ref":"#"');
    expect(treeRefs[0]).not.toBe(treeRefs[1]);
    expect((await new Validator().validate(doc as unknown as SpecData)).valid).toBe(true);

    const one = ops[1];
    expect(() => buildOpenApiDocument([one, { ...one, path: "/api/v1/other" }])).toThrow(/operationId listThings is used twice/);
    expect(() => buildOpenApiDocument([one, { ...one, operationId: "again" }])).toThrow(/GET \/api\/v1\/things is described twice/);
    expect(() => buildOpenApiDocument([{ ...ops[0], params: z.object({ id: z.string() }) }])).toThrow(
      /has \{slug\} but params declares id/,
    );
    const Other = z.object({ other: z.boolean() }).meta({ id: "TestThing" });
    expect(() =>
      buildOpenApiDocument([one, { ...one, path: "/api/v1/x", operationId: "x", responses: { 200: { description: "x", schema: Other } } }]),
    ).toThrow(/two different schemas are named "TestThing"/);
  });
});

describe("tests/support/api-spec.ts", () => {
  it("refuses a body that does not match, naming each place; an undocumented status or media type; an unknown path", () => {
    const good = { data: [{ id: 1, slug: "law", name: "Law", description: "", role: "researcher" }], next: null };
    expect(
      expectMatchesSpec({ method: "GET", path: "/api/v1/projects?limit=5", status: 200, contentType: "application/json", body: good }),
    ).toBe("/api/v1/projects");
    const bad = { data: [{ id: "1", slug: "law", name: "Law", role: "owner", extra: true }], next: 5 };
    let message = "";
    try {
      expectMatchesSpec({ method: "GET", path: "/api/v1/projects", status: 200, body: bad });
    } catch (e) {
      message = String(e);
    }
    for (const expected of [
      "/data/0/id must be integer",
      "/data/0 must have required property 'description'",
      '/data/0 must NOT have additional properties ("extra")',
      "/data/0/role must be equal to one of the allowed values",
      "/next must be string,null",
    ])
      expect(message).toContain(expected);

    // An error status falls back to the standard problem answers; its body must still be a problem.
    const problem = { type: "about:blank", title: "Method Not Allowed", status: 405, detail: "GET only" };
    expectMatchesSpec({ method: "GET", path: "/api/v1/projects/law", status: 405, contentType: "application/problem+json", body: problem });
    expect(() =>
      expectMatchesSpec({
        method: "GET",
        path: "/api/v1/projects/law",
        status: 404,
        contentType: "application/problem+json",
        body: { status: 404 },
      }),
    ).toThrow(/must have required property 'type'/);
    expect(() => expectMatchesSpec({ method: "GET", path: "/api/v1/projects", status: 201, body: good })).toThrow(/201 is not documented/);
    expect(() => expectMatchesSpec({ method: "GET", path: "/api/v1/projects", status: 200, contentType: "text/csv", body: "" })).toThrow(
      /media type text\/csv is not documented/,
    );
    expect(() =>
      expectMatchesSpec({
        method: "GET",
        path: "/api/v1/projects",
        status: 429,
        contentType: "application/problem+json",
        body: problem,
        headers: {},
      }),
    ).toThrow(/Retry-After header is missing/);
    expect(() => specOperation("GET", "/api/v1/nothing")).toThrow(/no path of the OpenAPI document matches/);
    expect(() => specOperation("DELETE", "/api/v1/projects")).toThrow(/DELETE \/api\/v1\/projects is not in the document/);
    expect(() => expectRequestMatchesSpec("GET", "/api/v1/projects", {})).toThrow(/takes no request body/);
  });
});

/** A copy with every `enum` array sorted. */
function enumsAsSets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(enumsAsSets);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === "enum" && Array.isArray(v) ? [...v].map(String).sort() : enumsAsSets(v)]),
  );
}

describe("served", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("GET /api/v1/openapi.json without a token: the generator's document, cacheable, with an ETag that answers 304", async () => {
    const client = new AppClient(app.url);
    const r = await client.request("GET", "/api/v1/openapi.json", {});
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(r.headers["cache-control"]).toBe("public, max-age=300");
    expect(r.headers["set-cookie"]).toBeUndefined();
    const served = JSON.parse(r.text);
    // The same document, but for the order of an enumeration built from a module namespace object
    // (app/task-kinds/registry.ts Object.values(KINDS)): a namespace lists its exports sorted by name (ECMA-262
    // §10.4.6, module namespace exotic objects: [[Exports]] is sorted), as the server's esbuild bundle does,
    // while vitest's module transform keeps the source order. Each enumeration's values are compared as a
    // set, everything else exactly.
    expect(enumsAsSets(served)).toEqual(enumsAsSets(JSON.parse(JSON.stringify(apiDocument()))));
    expectMatchesSpec({ method: "GET", path: "/api/v1/openapi.json", status: 200, contentType: r.headers["content-type"], body: served });

    const etag = r.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await client.request("GET", "/api/v1/openapi.json", { "If-None-Match": etag });
    expect([again.status, again.text, again.headers.etag]).toEqual([304, "", etag]);
    expect((await client.request("GET", "/api/v1/openapi.json", { "If-None-Match": '"other"' })).status).toBe(200);
    // A bearer token changes nothing (even an invalid one: the document is public).
    expect((await client.request("GET", "/api/v1/openapi.json", { Authorization: "Bearer nonsense" })).text).toBe(r.text);
  });
});
