/**
 * The datasets endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts), with the schemas
 * their handlers (app/routes/api.v1.projects.$slug.datasets*.tsx) parse with.
 *
 *   GET /api/v1/projects/{slug}/datasets               every dataset version with its counts (the overview's table)
 *   GET /api/v1/projects/{slug}/datasets/{id}          one version with its counts, and every version of its name
 *   GET /api/v1/projects/{slug}/datasets/{id}/items    its items as the item page shows them, in pages by id
 *
 * Researchers and admins only, as the dataset pages: items name the models of their responses and carry the
 * judges' verdicts, which annotators never see (a 403 for an annotator's token, as the pages answer).
 */
import { z } from "zod";
import { DatasetSummarySchema, ProjectParamsSchema } from "./projects";
import { pageSchema } from "./shared";
import type { ApiOperation } from "./types";

const Id = z.number().int().min(1);
const UnixSeconds = z.number().int().describe("Unix time, seconds.");

/** Path parameters of one dataset: the project's slug and the dataset's id. */
export const DatasetParamsSchema = ProjectParamsSchema.extend({
  id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe("The dataset's id (one version of a dataset)."),
});

/** The key of the items list's cursor: the last item's id. */
export const ItemCursorSchema = z.tuple([z.number().int().min(0)]);

export const DatasetsPageSchema = pageSchema(DatasetSummarySchema);

/** GET …/datasets/{id}: the version asked for, and every version of the dataset (same name), oldest first. */
export const DatasetSchema = DatasetSummarySchema.extend({
  versions: z
    .array(DatasetSummarySchema)
    .min(1)
    .describe("Every version of this dataset (the datasets of the project with its name), oldest first, this one included."),
}).meta({ id: "Dataset" });

const ChecklistItemSchema = z.object({
  id: Id,
  text: z.string(),
  weight: z.number().nullable().describe("Its weight (weights of an item sum to 1), or null for an unweighted checklist."),
  position: z.number().int(),
  version: z.number().int().min(1),
});

const ReferenceSchema = z.object({
  id: Id,
  text: z.string(),
  version: z.number().int().min(1),
  isCurrent: z.boolean(),
  provenance: z.string().describe('Where it came from: "import", "seed", "promoted" or "edited".'),
  reason: z.string().nullable().describe("Why it was changed in curation, or null."),
  createdAt: UnixSeconds,
});

const ResponseSchema = z.object({
  id: Id,
  model: z.string().describe("The model that wrote it."),
  turn: z.number().int().min(1),
  text: z.string(),
  origin: z.enum(["import", "run", "seed"]),
});

/** One item as the item page shows it (app/benchmark/datasets.server.ts itemDetails), its row's columns flattened. */
export const DatasetItemSchema = z
  .object({
    id: Id,
    datasetId: Id,
    sourceId: z.string().describe("The item's id in its source file; stable across re-imports."),
    query: z.string().describe("The prompt."),
    passage: z.string().nullable().describe("The passage or grounding, if any."),
    domain: z.string().nullable(),
    subject: z.string().nullable(),
    taskType: z.string().nullable(),
    language: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    version: z.number().int().min(1).describe("The item's version (curation edits raise it)."),
    createdAt: UnixSeconds,
    checklist: z.array(ChecklistItemSchema).describe("The checklist in use, by position (retired versions left out)."),
    references: z.array(ReferenceSchema).describe("Every version of the reference answer, newest first."),
    responses: z.array(ResponseSchema).describe("The responses, by model and turn."),
    judges: z.array(z.string()).describe("The judges with a verdict on a response of this item, by name."),
    verdicts: z
      .record(z.string(), z.record(z.string(), z.record(z.string(), z.string().nullable())))
      .describe(
        'verdicts[responseId][judge][checklistItemId, or "whole" for a verdict on the whole response] = the verdict ("unparsed" when the judge\'s reply could not be parsed).',
      ),
  })
  .meta({ id: "DatasetItem" });

export const DatasetItemsPageSchema = pageSchema(DatasetItemSchema);

export const OPERATIONS: ApiOperation[] = [
  {
    method: "get",
    path: "/api/v1/projects/{slug}/datasets",
    operationId: "listDatasets",
    summary: "The project's datasets with their counts",
    description:
      "Every dataset version of the project with the counts its overview page shows (items, domains, checklist items in use, responses, verdicts), sorted by name, then version.",
    tag: "datasets",
    auth: "read",
    minRole: "researcher",
    params: ProjectParamsSchema,
    paged: true,
    responses: { 200: { description: "A page of datasets.", schema: DatasetsPageSchema } },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}/datasets/{id}",
    operationId: "getDataset",
    summary: "One dataset version, with every version of it",
    description: "The dataset version with its counts, and every version of the dataset (the same name) with theirs.",
    tag: "datasets",
    auth: "read",
    minRole: "researcher",
    params: DatasetParamsSchema,
    responses: { 200: { description: "The dataset.", schema: DatasetSchema } },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}/datasets/{id}/items",
    operationId: "listDatasetItems",
    summary: "A dataset's items with their checklists, references, responses and verdicts",
    description:
      "The items of the dataset version by id, each as its item page shows it: the checklist in use, every reference version, the responses (with their models) and the judges' verdicts. Researchers only: annotators are blind to models and verdicts.",
    tag: "datasets",
    auth: "read",
    minRole: "researcher",
    params: DatasetParamsSchema,
    paged: true,
    responses: { 200: { description: "A page of items.", schema: DatasetItemsPageSchema } },
  },
];
