/**
 * Checks an HTTP API answer (or a request body) against the OpenAPI document the server serves
 * (app/api/openapi.server.ts buildOpenApiDocument, the same generator): the operation is found by matching the
 * actual path against the document's path templates, the response by its status (an error status the
 * operation does not list falls back to the standard problem answers), and the body is validated with ajv's
 * JSON Schema draft 2020-12 validator — the dialect of OpenAPI 3.1 Schema Objects — against the document's
 * schema, with its `$ref`s to components/schemas resolved. A mismatch throws an error listing each violation.
 *
 *   const r = await call("GET", "/api/v1/projects/demo", token);
 *   expectMatchesSpec({ method: "GET", path: "/api/v1/projects/demo", status: r.status,
 *                       contentType: r.headers["content-type"], body: JSON.parse(r.text) });
 *   expectRequestMatchesSpec("POST", "/api/v1/projects/demo/tasks", { name: "…" });
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { buildOpenApiDocument, type JsonSchema, type OpenApiDocument } from "../../app/api/openapi.server";

const DOC_ID = "urn:concord:openapi";
const SCHEMA_REF = "#/components/schemas/";

let state: { document: OpenApiDocument; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

/** The document (generated once per test file, as the server generates it once per process). */
export function apiDocument(): OpenApiDocument {
  return setup().document;
}

function setup() {
  if (state) return state;
  const document = buildOpenApiDocument();
  // Formats as zod writes them; OpenAPI's own keywords (x-…) and zod's regexes (JavaScript, not Unicode mode) allowed.
  const ajv = new Ajv2020({ allErrors: true, strict: false, unicodeRegExp: false, logger: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, $defs: pointAt(document.components.schemas, `${DOC_ID}#/$defs/`) });
  state = { document, ajv, validators: new Map() };
  return state;
}

/** A copy of a schema whose `$ref`s to components/schemas point at `prefix` + name. */
function pointAt<T>(value: T, prefix: string): T {
  if (Array.isArray(value)) return value.map((v) => pointAt(v, prefix)) as T;
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === "$ref" && typeof v === "string" && v.startsWith(SCHEMA_REF) ? prefix + v.slice(SCHEMA_REF.length) : pointAt(v, prefix);
  }
  return out as T;
}

/** An object of the document that may be a `$ref` to one in components (responses, parameters). */
function deref(document: OpenApiDocument, value: JsonSchema): JsonSchema {
  const r = value.$ref;
  if (typeof r !== "string") return value;
  const m = /^#\/components\/(responses|parameters)\/(.+)$/.exec(r);
  const found = m ? (document.components[m[1] as "responses" | "parameters"][m[2]] as JsonSchema | undefined) : undefined;
  if (!found) throw new Error(`api-spec: the document's $ref ${r} leads nowhere.`);
  return found;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The document's path template an actual path (query and origin ignored) falls under, and its operation. */
export function specOperation(method: string, path: string): { template: string; operation: JsonSchema } {
  const { document } = setup();
  const pathname = new URL(path, "http://x").pathname;
  const matches = Object.keys(document.paths)
    .filter((template) => new RegExp(`^${escapeRegExp(template).replace(/\\\{[^}]+\\\}/g, "[^/]+")}$`).test(pathname))
    // The most specific template: the fewest parameters.
    .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  if (!matches.length) throw new Error(`api-spec: no path of the OpenAPI document matches ${pathname}.`);
  const template = matches[0];
  const operation = document.paths[template][method.toLowerCase()];
  if (!operation) {
    const methods = Object.keys(document.paths[template]).map((m) => m.toUpperCase());
    throw new Error(`api-spec: ${method.toUpperCase()} ${template} is not in the document (it has ${methods.join(", ")}).`);
  }
  return { template, operation };
}

const mediaTypeOf = (contentType: string) => contentType.split(";")[0].trim().toLowerCase();

function validatorFor(key: string, schema: JsonSchema): ValidateFunction {
  const { ajv, validators } = setup();
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(pointAt(schema, `${DOC_ID}#/$defs/`));
    validators.set(key, validate);
  }
  return validate;
}

/** The value at a JSON pointer of an ajv error, shortened, to show what was there. */
function excerptAt(body: unknown, pointer: string): string {
  let v: unknown = body;
  for (const part of pointer.split("/").slice(1)) {
    const k = part.replace(/~1/g, "/").replace(/~0/g, "~");
    v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  }
  const text = JSON.stringify(v) ?? "undefined";
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function describeErrors(errors: ErrorObject[], body: unknown): string {
  const lines = errors.slice(0, 25).map((e) => {
    const extra =
      e.keyword === "additionalProperties"
        ? ` ("${(e.params as { additionalProperty: string }).additionalProperty}")`
        : e.keyword === "enum"
          ? ` (${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)})`
          : "";
    return `  - ${e.instancePath || "(the body)"} ${e.message}${extra}; got ${excerptAt(body, e.instancePath)} [schema ${e.schemaPath}]`;
  });
  if (errors.length > 25) lines.push(`  … and ${errors.length - 25} more`);
  return lines.join("\n");
}

function check(key: string, schema: JsonSchema, body: unknown, what: string) {
  const validate = validatorFor(key, schema);
  if (!validate(body))
    throw new Error(`api-spec: ${what} does not match the OpenAPI document:\n${describeErrors(validate.errors ?? [], body)}`);
}

export type SpecResponse = {
  method: string;
  /** The path requested (/api/v1/projects/demo), or a whole URL; its query is ignored. */
  path: string;
  status: number;
  /** The answer's Content-Type; when absent, the response's only documented media type. */
  contentType?: string;
  /** The parsed JSON body (undefined for none). */
  body: unknown;
  /** The answer's headers (lower-case names), to check the ones the document marks required. */
  headers?: Record<string, string | string[] | undefined>;
};

/**
 * Throws unless the answer is one the document describes: its status documented for the operation (an error
 * status may fall back to the standard problem answers), its media type documented there, and its body valid
 * against that media type's schema. Returns the matched path template.
 */
export function expectMatchesSpec(r: SpecResponse): string {
  const { document } = setup();
  const { template, operation } = specOperation(r.method, r.path);
  const where = `${r.method.toUpperCase()} ${template} → ${r.status}`;
  const responses = operation.responses as Record<string, JsonSchema>;
  let response = responses[String(r.status)] ?? responses[`${String(r.status)[0]}XX`];
  if (!response && r.status >= 400) response = responses.default ?? document.components.responses.Error;
  if (!response) throw new Error(`api-spec: ${where} is not documented (documented: ${Object.keys(responses).join(", ")}).`);
  response = deref(document, response);

  const headers = (response.headers ?? {}) as Record<string, JsonSchema>;
  if (r.headers)
    for (const [name, h] of Object.entries(headers))
      if (h.required && r.headers[name.toLowerCase()] === undefined) throw new Error(`api-spec: ${where}: the ${name} header is missing.`);

  const content = response.content as Record<string, JsonSchema> | undefined;
  if (!content) {
    if (r.body !== undefined && r.body !== null && r.body !== "")
      throw new Error(`api-spec: ${where} is documented without a body, but one came.`);
    return template;
  }
  const types = Object.keys(content);
  const mediaType = r.contentType ? mediaTypeOf(r.contentType) : types.length === 1 ? types[0] : undefined;
  if (!mediaType || !content[mediaType])
    throw new Error(
      `api-spec: ${where}: the media type ${r.contentType ?? "(none given)"} is not documented (documented: ${types.join(", ")}).`,
    );
  const schema = content[mediaType].schema as JsonSchema | undefined;
  if (schema) check(`${r.method} ${template} ${r.status} ${mediaType}`, schema, r.body, `the body of ${where} (${mediaType})`);
  return template;
}

/** Throws unless `body` is a valid request body of the operation for `contentType` (JSON unless told). */
export function expectRequestMatchesSpec(method: string, path: string, body: unknown, contentType = "application/json"): string {
  const { template, operation } = specOperation(method, path);
  const where = `${method.toUpperCase()} ${template}`;
  const requestBody = operation.requestBody as { content: Record<string, JsonSchema> } | undefined;
  if (!requestBody) throw new Error(`api-spec: ${where} takes no request body in the document.`);
  const mediaType = mediaTypeOf(contentType);
  const media = requestBody.content[mediaType];
  if (!media) throw new Error(`api-spec: ${where} does not take ${mediaType} (it takes ${Object.keys(requestBody.content).join(", ")}).`);
  if (media.schema) check(`request ${method} ${template} ${mediaType}`, media.schema as JsonSchema, body, `the request body of ${where}`);
  return template;
}
