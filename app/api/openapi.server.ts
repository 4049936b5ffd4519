/**
 * The OpenAPI 3.1.0 document of the HTTP API (GET /api/v1/openapi.json), generated from the endpoints'
 * descriptions (app/api/operations/, one file per group), which name the very zod schemas the handlers parse
 * their input with: the document cannot say one thing while a handler checks another.
 *
 * Why zod's own output (`z.toJSONSchema`, zod 4) and no zod-to-OpenAPI library: since OpenAPI 3.1 a Schema
 * Object IS a JSON Schema draft 2020-12 schema (OpenAPI 3.1.0 §4.8.24, whose default dialect is 2020-12 plus
 * OpenAPI's own vocabulary), so the JSON Schema zod writes with `target: "draft-2020-12"` goes into the
 * document as it is. A request schema is written as its input (`io: "input"`: what a client may send, before
 * defaults and transforms), a response schema as its output (`io: "output"`: what the handler answers).
 *
 * Named schemas: a zod schema given an id (`.meta({ id: "Problem" })`) is written once under
 * `components/schemas` and referred to with `$ref` wherever it is used. If the same named schema reads
 * differently as input and as output (an object is closed as output), the input form is `NAMEInput`.
 *
 * Every operation also gets what every endpoint answers (the guards of app/auth/api-guards.server.ts): 401
 * without a valid token, 403 for a read token on a write or a role below the endpoint's, 404 for a path
 * naming something the token cannot reach, 429 with Retry-After, 400 for a malformed query, body, cursor or
 * Idempotency-Key, 409 for an Idempotency-Key reused (app/api/idempotency.server.ts), and any other error
 * as problem details (RFC 9457).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { version as packageVersion } from "../../package.json";
import { API_OPERATIONS, type ApiOperation } from "./operations";
import { PageSchema, ProblemSchema } from "./operations/shared";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from "./pagination.server";
import { IDEMPOTENCY_HEADER } from "./idempotency.server";
import { PROBLEM_CONTENT_TYPE } from "./problem.server";

export type JsonSchema = { [key: string]: unknown };
export type OpenApiDocument = {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
};

const SCHEMA_REF = "#/components/schemas/";

const TAGS: Record<string, string> = {
  meta: "This document.",
  projects: "The projects a token reaches.",
  imports: "Files pushed into a project: the Import page's presets, checks and atomicity.",
  datasets: "Datasets, their versions and items.",
  tasks: "Annotation tasks, their progress and reports.",
  exports: "Every export of the Export page, as JSON pages, JSONL or CSV.",
  runs: "Model and judge runs: create, follow, pause, resume, cancel, results.",
  webhooks: "Signed POSTs to your URLs when a run finishes, a task is complete or an import ends.",
};

const INFO_DESCRIPTION = [
  "Concord's HTTP API: push benchmark files, model outputs and judge verdicts, open annotation tasks, follow runs, and pull labels and agreement figures.",
  "",
  "Authenticate with `Authorization: Bearer TOKEN` (a personal access token from Settings → API tokens). Errors are `application/problem+json` (RFC 9457). Lists come in cursor pages (`?cursor=&limit=`, `next`). POSTs that create something honour `Idempotency-Key`.",
].join("\n");

/** What the standard answers say, shared by every operation (components/responses). */
const problemContent = { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: `${SCHEMA_REF}Problem` } } };
const STANDARD_RESPONSES: Record<string, JsonSchema> = {
  BadRequest: {
    description: "The request is not valid (a query parameter, the body, the cursor or the Idempotency-Key): `errors` names each field.",
    content: problemContent,
  },
  Unauthorized: {
    description:
      "No token, or a token that is unknown, expired or revoked, or whose user is disabled. The sign-in cookie is never accepted.",
    headers: { "WWW-Authenticate": { description: 'Bearer realm="Concord API" (RFC 6750 §3).', schema: { type: "string" } } },
    content: problemContent,
  },
  Forbidden: {
    description: "A read token on a write (insufficient_scope), or the token's user has a role below the one this needs.",
    content: problemContent,
  },
  NotFound: {
    description: "No such project (or thing in it), or the token cannot reach it: the same answer for both, never revealing it exists.",
    content: problemContent,
  },
  IdempotencyConflict: {
    description:
      "The Idempotency-Key was used for another request, or the request that first used it is still being answered (with Retry-After).",
    headers: { "Retry-After": { description: "Seconds to wait (only while the first request is answered).", schema: { type: "integer" } } },
    content: problemContent,
  },
  TooManyRequests: {
    description: "The token's rate limit, or the limit of heavy reads running at once, was reached.",
    headers: { "Retry-After": { description: "Seconds to wait before trying again.", required: true, schema: { type: "integer" } } },
    content: problemContent,
  },
  Error: { description: "Any other error, as problem details.", content: problemContent },
};

const STANDARD_PARAMETERS: Record<string, JsonSchema> = {
  Cursor: {
    name: "cursor",
    in: "query",
    required: false,
    description: "Where the page starts: the cursor of the previous page's `next` link (absent: the first page).",
    schema: { type: "string" },
  },
  Limit: {
    name: "limit",
    in: "query",
    required: false,
    description: `Rows per page, 1 to ${MAX_PAGE_LIMIT} (${DEFAULT_PAGE_LIMIT} when absent).`,
    schema: { type: "integer", minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
  },
  IdempotencyKey: {
    name: IDEMPOTENCY_HEADER,
    in: "header",
    required: false,
    description:
      "1–255 visible ASCII characters (a UUID). The same key with the same request within 24 hours answers the first answer again (Idempotent-Replayed: true) without a second write; with another request, 409.",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
  },
};

const ref = (kind: "responses" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` });

function isObject(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A copy of `value` with every `$ref` "#/$defs/NAME" pointing at components/schemas under `names`' name, and
 * "#" (a schema that contains itself, written by zod as a reference to its root) at `names.get("#")`.
 */
function rewriteRefs(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, names));
  if (!isObject(value)) return value;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/$defs/")) {
      const name = v.slice("#/$defs/".length);
      out[k] = SCHEMA_REF + (names.get(name) ?? name);
    } else if (k === "$ref" && v === "#") out[k] = SCHEMA_REF + names.get("#");
    else out[k] = rewriteRefs(v, names);
  }
  return out;
}

/** Builds the document's schemas: each zod schema through zod's JSON Schema, named ones into components. */
class SchemaWriter {
  readonly components: Record<string, JsonSchema> = {};

  /** The JSON Schema of `schema` as `io` (`where` names it in errors and in the names of unnamed recursive parts). */
  write(schema: z.ZodType, io: "input" | "output", where: string): JsonSchema {
    const written = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchema;
    const { $schema: _dialect, $defs, ...root } = written;
    void _dialect;
    const defs = (isObject($defs) ? $defs : {}) as Record<string, JsonSchema>;
    // Unnamed parts that zod had to name (recursive ones) are named after where they are used.
    const local = where.replace(/[^A-Za-z0-9_.-]/g, "_");
    const selfReferring = JSON.stringify(root).includes('"$ref":"#"');
    for (const suffix of io === "input" ? ["", "Input"] : [""]) {
      const names = new Map<string, string>([["#", local]]);
      for (const name of Object.keys(defs)) names.set(name, /^__schema\d+$/.test(name) ? `${local}_${name}` : name + suffix);
      const rewritten = Object.entries(defs).map(([name, def]) => [names.get(name)!, rewriteRefs(def, names)] as [string, unknown]);
      const top = rewriteRefs(root, names) as JsonSchema;
      // A schema that refers to itself as a whole goes into components too, since "#" in the document is the document.
      if (selfReferring) rewritten.push([local, top]);
      const clash = rewritten.find(([name, def]) => name in this.components && !sameJson(this.components[name], def));
      if (clash && suffix === "" && io === "input") continue; // the input form of a named output schema: NAMEInput
      if (clash) throw new Error(`OpenAPI: two different schemas are named "${clash[0]}" (seen at ${where}); give one another id.`);
      for (const [name, def] of rewritten) this.components[name] = def as JsonSchema;
      return selfReferring ? { $ref: SCHEMA_REF + local } : top;
    }
    throw new Error("unreachable");
  }

  /** The schema a $ref names, or the schema itself. */
  resolve(schema: JsonSchema): JsonSchema {
    const r = schema.$ref;
    return typeof r === "string" && r.startsWith(SCHEMA_REF) && Object.keys(schema).length === 1
      ? (this.components[r.slice(SCHEMA_REF.length)] ?? schema)
      : schema;
  }
}

/** The parameters of a zod object: one per property, required when the input must carry it. */
function parametersOf(writer: SchemaWriter, shape: z.ZodObject, location: "path" | "query", where: string): JsonSchema[] {
  const object = writer.resolve(writer.write(shape, "input", where));
  const properties = (isObject(object.properties) ? object.properties : {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(object.required) ? (object.required as string[]) : []);
  return Object.entries(properties).map(([name, schema]) => {
    const parameter: JsonSchema = { name, in: location, required: location === "path" || required.has(name) };
    const description = writer.resolve(schema).description;
    if (typeof description === "string") parameter.description = description;
    parameter.schema = schema;
    return parameter;
  });
}

const ROLE_WORDS = { annotator: "any role in the project", researcher: "the researcher or admin role", admin: "the admin role" } as const;

/** The OpenAPI Operation Object of one description. */
function operationObject(writer: SchemaWriter, op: ApiOperation): JsonSchema {
  const where = op.operationId;
  const templateParams = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const declared = op.params ? Object.keys(op.params.shape) : [];
  if (!sameJson([...templateParams].sort(), [...declared].sort()))
    throw new Error(
      `OpenAPI: ${op.operationId}: the path ${op.path} has {${templateParams.join("}, {")}} but params declares ${declared.join(", ") || "none"}.`,
    );

  const parameters: JsonSchema[] = [];
  if (op.params) parameters.push(...parametersOf(writer, op.params, "path", `${where}.params`));
  const queryParams = op.query ? parametersOf(writer, op.query, "query", `${where}.query`) : [];
  parameters.push(...queryParams);
  if (op.paged) {
    for (const [name, component] of [
      ["cursor", "Cursor"],
      ["limit", "Limit"],
    ] as const)
      if (!queryParams.some((p) => p.name === name)) parameters.push(ref("parameters", component));
  }
  if (op.idempotent) parameters.push(ref("parameters", "IdempotencyKey"));

  const authenticated = op.auth !== "none";
  const access = authenticated
    ? `Needs a ${op.auth} token${op.minRole ? ` and ${ROLE_WORDS[op.minRole]}` : ""}.`
    : "Served without a token.";
  const operation: JsonSchema = {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description ? `${op.description}\n\n${access}` : access,
    tags: [op.tag],
    security: authenticated ? [{ bearerAuth: [] }] : [],
    "x-concord-scope": op.auth,
  };
  if (op.minRole) operation["x-concord-min-role"] = op.minRole;
  if (parameters.length) operation.parameters = parameters;

  if (op.body?.length) {
    const content: JsonSchema = {};
    for (const b of op.body) content[b.contentType] = b.schema ? { schema: writer.write(b.schema, "input", `${where}.body`) } : {};
    const notes = op.body.filter((b) => b.description).map((b) => `${b.contentType}: ${b.description}`);
    operation.requestBody = { required: true, ...(notes.length ? { description: notes.join("\n\n") } : {}), content };
  }

  const responses: JsonSchema = {};
  for (const [status, doc] of Object.entries(op.responses)) {
    const response: JsonSchema = { description: doc.description };
    if (doc.headers)
      response.headers = Object.fromEntries(
        Object.entries(doc.headers).map(([name, description]) => [name, { description, schema: { type: "string" } }]),
      );
    const content: JsonSchema = {};
    const isError = Number(status) >= 400;
    // Every error of the API is problem details: an error's schema (problem details with more members) is too.
    const contentType = doc.contentType ?? (doc.schema ? (isError ? PROBLEM_CONTENT_TYPE : "application/json") : undefined);
    if (contentType) content[contentType] = doc.schema ? { schema: writer.write(doc.schema, "output", `${where}.${status}`) } : {};
    else if (isError) Object.assign(content, problemContent); // an error specific to the endpoint: problem details
    for (const [i, alt] of (doc.alternatives ?? []).entries())
      content[alt.contentType] = alt.schema ? { schema: writer.write(alt.schema, "output", `${where}.${status}.${i + 1}`) } : {};
    if (Object.keys(content).length) response.content = content;
    responses[status] = response;
  }
  const standard: [string, string, boolean][] = [
    ["400", "BadRequest", authenticated && Boolean(op.query || op.body?.length || op.paged || op.idempotent)],
    ["401", "Unauthorized", authenticated],
    [
      "403",
      "Forbidden",
      authenticated && (op.auth === "write" || op.method !== "get" || (op.minRole !== undefined && op.minRole !== "annotator")),
    ],
    ["404", "NotFound", authenticated && templateParams.length > 0],
    ["409", "IdempotencyConflict", Boolean(op.idempotent)],
    ["429", "TooManyRequests", authenticated],
    ["default", "Error", true],
  ];
  for (const [status, name, applies] of standard) if (applies && !(status in responses)) responses[status] = ref("responses", name);
  operation.responses = responses;
  return operation;
}

/** The OpenAPI document of `operations` (all of the API's unless told). */
export function buildOpenApiDocument(operations: readonly ApiOperation[] = API_OPERATIONS): OpenApiDocument {
  const writer = new SchemaWriter();
  // The shared schemas first, so they keep their plain names.
  writer.write(ProblemSchema, "output", "Problem");
  writer.write(PageSchema, "output", "Page");
  // Then every answer, so that a named schema's output form keeps the plain name whichever operation uses it
  // first as input (writing the same schema again gives the same result).
  for (const op of operations)
    for (const [status, doc] of Object.entries(op.responses)) {
      if (doc.schema) writer.write(doc.schema, "output", `${op.operationId}.${status}`);
      for (const [i, alt] of (doc.alternatives ?? []).entries())
        if (alt.schema) writer.write(alt.schema, "output", `${op.operationId}.${status}.${i + 1}`);
    }

  const paths: OpenApiDocument["paths"] = {};
  const operationIds = new Set<string>();
  for (const op of operations) {
    if (operationIds.has(op.operationId)) throw new Error(`OpenAPI: the operationId ${op.operationId} is used twice.`);
    operationIds.add(op.operationId);
    const item = (paths[op.path] ??= {});
    if (item[op.method]) throw new Error(`OpenAPI: ${op.method.toUpperCase()} ${op.path} is described twice.`);
    item[op.method] = operationObject(writer, op);
  }
  const usedTags = [...new Set(operations.map((o) => o.tag))];
  return {
    openapi: "3.1.0",
    info: { title: "Concord", version: packageVersion, description: INFO_DESCRIPTION },
    servers: [{ url: "/" }],
    tags: usedTags.map((name) => (TAGS[name] ? { name, description: TAGS[name] } : { name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(writer.components).sort(([a], [b]) => a.localeCompare(b))),
      responses: STANDARD_RESPONSES,
      parameters: STANDARD_PARAMETERS,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "A personal access token (ccd_…) from Settings → API tokens or `npm run tokens -- create`.",
        },
      },
    },
  };
}

let cached: { document: OpenApiDocument; json: string; etag: string } | undefined;

/** The API's document, generated once per server process (the descriptions do not change while it runs). */
export function openApiDocument(): { document: OpenApiDocument; json: string; etag: string } {
  if (!cached) {
    const document = buildOpenApiDocument();
    const json = JSON.stringify(document);
    cached = { document, json, etag: `"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"` };
  }
  return cached;
}

/** How long a client or a shared cache may keep the document (seconds). */
export const OPENAPI_MAX_AGE = 300;

/** The answer to GET /api/v1/openapi.json: the document, or 304 when If-None-Match names its ETag (RFC 9110 §13.1.2). */
export function openApiResponse(request: Request): Response {
  const { json, etag } = openApiDocument();
  const headers = { "Cache-Control": `public, max-age=${OPENAPI_MAX_AGE}`, ETag: etag };
  const match = request.headers.get("If-None-Match");
  if (match && match.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) return new Response(null, { status: 304, headers });
  return new Response(json, { status: 200, headers: { ...headers, "Content-Type": "application/json; charset=utf-8" } });
}
