/**
 * The projects endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts), and the
 * description of the document itself (GET /api/v1/openapi.json).
 */
import { z } from "zod";
import { ROLES } from "../../../db/schema";
import { pageSchema } from "./shared";
import type { ApiOperation } from "./types";

const Id = z.number().int().min(1);
const Count = z.number().int().min(0);

export const RoleSchema = z.enum(ROLES).describe("The token's user's role in the project (site admins: admin).");

/** GET /api/v1/projects/{slug}, and every path below it: the project's slug. */
export const ProjectParamsSchema = z.object({
  slug: z.string().min(1).describe("The project's slug, as in its page's address (/p/SLUG)."),
});

/** A project as the list gives it (app/projects/projects.server.ts listProjectsFor). */
export const ProjectSummarySchema = z
  .object({
    id: Id,
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    role: RoleSchema,
  })
  .meta({ id: "ProjectSummary" });

export const ProjectsPageSchema = pageSchema(ProjectSummarySchema);

/** A dataset version with the counts the overview shows (app/projects/projects.server.ts datasetSummaries). */
export const DatasetSummarySchema = z
  .object({
    id: Id,
    name: z.string(),
    version: z.number().int().min(1),
    source: z.string(),
    licenseNote: z.string(),
    frozenAt: z.number().int().nullable().describe("When the version was frozen as a release (Unix seconds), or null."),
    items: Count,
    checklistItems: Count.describe("Checklist items in use (retired ones are not counted)."),
    responses: Count,
    verdicts: Count,
    domains: Count.describe("Distinct item domains."),
  })
  .meta({ id: "DatasetSummary" });

/** The project's counts (app/projects/projects.server.ts projectCounts). */
export const ProjectCountsSchema = z.object({
  members: z.partialRecord(z.enum(ROLES), Count).describe("Members per role (a role without members is absent)."),
  judges: Count,
  tasks: Count,
  labelled: Count.describe("Units labelled: submitted assignments, a revision counting once."),
});

/** GET /api/v1/projects/{slug}. */
export const ProjectSchema = z
  .object({
    id: Id,
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    role: RoleSchema,
    datasets: z
      .array(DatasetSummarySchema)
      .nullable()
      .describe("The datasets with their counts, for researchers and admins; null for an annotator (as on the overview page)."),
    counts: ProjectCountsSchema.nullable().describe("The project's counts, for researchers and admins; null for an annotator."),
  })
  .meta({ id: "Project" });

/** The OpenAPI document: an object (its own schema is the OpenAPI 3.1 specification's). */
export const OpenApiDocumentSchema = z.record(z.string(), z.unknown()).describe("An OpenAPI 3.1.0 document.");

export const OPERATIONS: ApiOperation[] = [
  {
    method: "get",
    path: "/api/v1/openapi.json",
    operationId: "getOpenApiDocument",
    summary: "This API's OpenAPI 3.1 document",
    description:
      "Generated from the same zod schemas the endpoints validate their input with; cacheable for a few minutes (ETag, If-None-Match).",
    tag: "meta",
    auth: "none",
    responses: {
      200: { description: "The document.", schema: OpenApiDocumentSchema, headers: { ETag: "The document's version." } },
      304: { description: "Not modified (If-None-Match matched the ETag)." },
    },
  },
  {
    method: "get",
    path: "/api/v1/projects",
    operationId: "listProjects",
    summary: "The projects the token reaches",
    description:
      "The token's user's projects (for a site admin, every project) that the token covers, sorted by name, with the user's role in each.",
    tag: "projects",
    auth: "read",
    paged: true,
    responses: { 200: { description: "A page of projects.", schema: ProjectsPageSchema } },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}",
    operationId: "getProject",
    summary: "One project, with its datasets and counts",
    description:
      "The project and the token's user's role there. Researchers and admins also get its datasets (with their counts) and the project's counts, as its overview page shows them; annotators get null for both.",
    tag: "projects",
    auth: "read",
    minRole: "annotator",
    params: ProjectParamsSchema,
    responses: { 200: { description: "The project.", schema: ProjectSchema } },
  },
];
