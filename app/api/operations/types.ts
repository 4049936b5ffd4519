/**
 * How each `/api/v1/` endpoint is described, once, beside the zod schemas its handler validates with. The
 * OpenAPI document (GET /api/v1/openapi.json, app/api/openapi.server.ts) is generated from these
 * descriptions, so the document and the handlers cannot drift apart: a handler parses its query and body
 * with the very schemas named here.
 *
 * Each group of endpoints lists its operations in a file of its own in this folder (projects.ts,
 * imports.ts, …); index.ts gathers them.
 */
import type { z } from "zod";
import type { Role } from "../../../db/schema";

export type ApiMethod = "get" | "post" | "put" | "patch" | "delete";

/** A request body of one media type; no schema: the body is a file (CSV, JSONL), described in `description`. */
export type ApiBody = { contentType: string; schema?: z.ZodType; description?: string };

/**
 * One answer: JSON unless `contentType` says otherwise (text/csv, application/x-ndjson, …). An error status
 * (400 or more) is application/problem+json, with the Problem schema when it gives none.
 */
export type ApiResponseDoc = {
  description: string;
  contentType?: string;
  schema?: z.ZodType;
  /** Other media types the same status may answer in (a CSV or JSONL file beside JSON pages), each with its schema if any. */
  alternatives?: { contentType: string; schema?: z.ZodType }[];
  /** Response headers worth documenting (Location, Link, Retry-After): name → description. */
  headers?: Record<string, string>;
};

export type ApiOperation = {
  method: ApiMethod;
  /** OpenAPI path template: "/api/v1/projects/{slug}/tasks/{id}". */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** The group it is listed under ("projects", "imports", …). */
  tag: string;
  /** "none": served without a token (the OpenAPI document itself). */
  auth: "none" | "read" | "write";
  /** The least role in the project the endpoint needs (endpoints under /projects/{slug}). */
  minRole?: Role;
  /** Path parameters. */
  params?: z.ZodObject;
  /** Query parameters (beyond `cursor` and `limit` of a paged list, which `paged` adds). */
  query?: z.ZodObject;
  /** Request bodies, one per accepted media type. */
  body?: ApiBody[];
  /** A POST that honours Idempotency-Key (app/api/idempotency.server.ts). */
  idempotent?: boolean;
  /** A list answered in cursor pages: adds `cursor` and `limit` (app/api/pagination.server.ts). */
  paged?: boolean;
  /** The answers of success (and any error specific to it); 401/403/404/429 and problem details are added for all. */
  responses: Record<number, ApiResponseDoc>;
};
