/**
 * The imports endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts), and the zod schemas
 * their handlers (app/routes/api.v1.projects.$slug.imports*.tsx, app/api/imports.server.ts) validate with.
 *
 *   POST /api/v1/projects/{slug}/imports?preset=NAME&…   the body is the file (CSV, JSONL or a JSON array)
 *   GET  /api/v1/projects/{slug}/imports                  the project's API imports, newest first, in cursor pages
 *   GET  /api/v1/projects/{slug}/imports/{id}             one import: status, progress, summary, problems
 *
 * The query parameters are the flags of `npm run import` without their dashes (scripts/import.ts): preset, dataset,
 * map (repeated), level, annotators, categories, variant_of (repeated), dry_run; plus `async` and `filename`. Never a
 * path: the file is the body, and `filename` is only a name (it names the dataset as the file's name does for the
 * command and the page).
 */
import { z } from "zod";
import { LABEL_LEVELS } from "~/formats/labels";
import { PRESETS } from "~/formats/presets/index.server";
import type { ApiOperation } from "./types";

/** A yes/no query parameter: 1 or true, 0 or false. */
const Flag = z.enum(["1", "true", "0", "false"]);

/** The media types of a body, and the file format each one means. */
export const IMPORT_CONTENT_TYPES = {
  "text/csv": "csv",
  "application/x-ndjson": "jsonl",
  "application/jsonl": "jsonl",
  "application/json": "json",
} as const;

const PRESET_NAMES = Object.keys(PRESETS) as [string, ...string[]];

/** A file's name, for naming only: printable, no backslash, no absolute or `..` segments (LLMBar's judge is read from its folders). */
const FILE_NAME = /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[^\\]{1,500}$/;
const CONTROL = /\p{Cc}/u;

/** The query parameters of POST …/imports. Parameters not named here are refused (400, naming them). */
export const ImportQuery = z.strictObject({
  preset: z.enum(PRESET_NAMES).describe("The import preset (as `npm run import --preset`): it says what the file holds."),
  dataset: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("The dataset to create (benchmarks, labels) or to find the items in (responses, verdicts); default: from `filename`."),
  filename: z
    .string()
    .regex(FILE_NAME, "a file name: up to 500 printable characters, no backslash, not absolute, no .. segment")
    .refine((s) => !CONTROL.test(s), "a file name: up to 500 printable characters, no backslash, not absolute, no .. segment")
    .optional()
    .describe(
      "The file's name, as the command and the page know it (never opened: the file is the body). It names the dataset when `dataset` is not given, and the llmbar preset reads the subset and the judge from its folders (LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json). Default: api-import.",
    ),
  map: z
    .array(z.string().regex(/^[^=]+=.+$/, "field=column"))
    .max(100)
    .optional()
    .describe("field=column, once per field (repeat the parameter): which column or key of the file holds each field."),
  level: z.enum(LABEL_LEVELS).optional().describe("Labels presets: the measurement level (default: inferred from the labels)."),
  annotators: z
    .string()
    .min(1)
    .max(10_000)
    .optional()
    .describe("labels-wide: the columns that hold annotators' labels, separated by commas, or `all`."),
  categories: z.string().min(1).max(10_000).optional().describe("Labels presets: the scale, its categories in order, separated by commas."),
  variant_of: z
    .array(z.string().regex(/^[^=]+=.+$/, "JUDGE=BASE"))
    .max(100)
    .optional()
    .describe("Verdicts presets: JUDGE=BASE marks a judge as a variant (ablation) of a base judge (repeat the parameter)."),
  dry_run: Flag.optional().describe("1: check the file and answer what it would import; nothing is written."),
  async: Flag.optional().describe(
    "1: answer 202 at once and run the import in the background (bodies over 1 MB always do); poll the Location.",
  ),
});
export type ImportQueryInput = z.infer<typeof ImportQuery>;

/** Query parameters that may be repeated (collected into arrays); any other given twice is refused. */
export const IMPORT_REPEATED_PARAMS = ["map", "variant_of"] as const;

export const ImportPathParams = z.object({ slug: z.string().describe("The project's slug.") });
export const ImportIdPathParams = z.object({
  slug: z.string().describe("The project's slug."),
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, "an import's id (a positive whole number)")
    .describe("The import's id."),
});

/** One problem of a file: its row (line, record; absent for the whole file), its field, and why. */
const FileProblem = z.object({
  row: z.number().int().optional(),
  field: z.string().optional(),
  message: z.string(),
});
/** As `npm run import --format json` lists them (row 0: the whole file). */
const SummaryProblem = z.object({ row: z.number().int(), field: z.string().optional(), message: z.string() });

/** The summary of an import: exactly what `npm run import -- --format json` prints for the same file. */
export const ImportSummaryDoc = z.object({
  items: z.number().int(),
  checklistItems: z.number().int(),
  references: z.number().int(),
  responses: z.number().int(),
  verdicts: z.number().int(),
  annotations: z.number().int(),
  warnings: z.array(SummaryProblem),
  errors: z.array(SummaryProblem),
  warningCount: z.number().int(),
  errorCount: z.number().int(),
  dryRun: z.boolean(),
  unchanged: z.boolean().describe("The same content was already imported: nothing was (or would be) written."),
  conflictCount: z.number().int().describe("Rows whose key is already imported with other content (the file is then refused)."),
  alreadyPresent: z.number().int(),
  newRows: z.number().int(),
  committed: z.boolean(),
  dataset: z.object({ id: z.number().int().nullable(), name: z.string(), version: z.number().int().nullable() }).nullable(),
  level: z.object({ level: z.enum(LABEL_LEVELS), source: z.enum(["given", "inferred"]), reason: z.string() }).nullable(),
});

/** One API import, as GET …/imports/{id} answers it (and the POST, once it knows its outcome or has queued it). */
export const ImportResourceDoc = z.object({
  id: z.number().int(),
  status: z.enum(["queued", "running", "succeeded", "failed"]),
  preset: z.string(),
  options: z.record(z.string(), z.unknown()).describe("The query parameters as given (but `async`)."),
  format: z.enum(["csv", "jsonl", "json"]),
  size: z.number().int().describe("The body's size in bytes."),
  dry_run: z.boolean(),
  progress: z
    .object({ phase: z.enum(["waiting", "checking", "writing"]), bytes: z.number().int(), totalBytes: z.number().int() })
    .nullable()
    .describe("While queued or running: how far the check has read the file."),
  summary: ImportSummaryDoc.nullable().describe("Once finished (a refused file too: errorCount > 0)."),
  problems: z.array(FileProblem).nullable().describe("A refused file's problems (the first 200)."),
  error: z.string().nullable().describe("Why the import failed, in a sentence."),
  created_at: z.string().describe("ISO 8601, UTC."),
  finished_at: z.string().nullable(),
});

const ImportPage = z.object({ data: z.array(ImportResourceDoc), next: z.string().nullable() });

const FILE_BODY =
  "The file itself, as `npm run import` reads it: UTF-8, up to 200 MB (413 beyond), streamed to disk as it arrives. " +
  "Its problems are answered by row (the spreadsheet row with the header as row 1, the line, the record) and field.";

const IMPORTS_PATH = "/api/v1/projects/{slug}/imports";

export const OPERATIONS: ApiOperation[] = [
  {
    method: "post",
    path: IMPORTS_PATH,
    operationId: "createImport",
    summary: "Import a file (the body) with a preset",
    description:
      "The same presets, checks, messages and atomicity as the Import page and `npm run import`: the whole file is imported or nothing is, " +
      "and rows that conflict with what is already imported are refused. A body of up to 1 MB is answered when the import has ended " +
      "(201 with the import, 200 for a dry run, 422 for a refused file); a larger one, or `async=1`, is answered 202 at once with the " +
      "import to poll (its Location).",
    tag: "imports",
    auth: "write",
    minRole: "researcher",
    params: ImportPathParams,
    query: ImportQuery,
    body: [
      { contentType: "text/csv", description: `A CSV file. ${FILE_BODY}` },
      { contentType: "application/x-ndjson", description: `A JSONL file (one JSON object a line; application/jsonl too). ${FILE_BODY}` },
      { contentType: "application/json", description: `A JSON array of records (or the layout the preset reads). ${FILE_BODY}` },
    ],
    idempotent: true,
    responses: {
      200: { description: "A dry run of a valid file: what it would import (nothing was written).", schema: ImportResourceDoc },
      201: {
        description: "Imported (or already imported with the same content: summary.unchanged).",
        schema: ImportResourceDoc,
        headers: { Location: "The import: GET it again at any time." },
      },
      202: {
        description: "Accepted: the import runs in the background; poll the Location until status is succeeded or failed.",
        schema: ImportResourceDoc,
        headers: { Location: "The import to poll." },
      },
      409: { description: "The Idempotency-Key was used for another request, or that request is still being answered." },
      413: { description: "The body is larger than 200 MB." },
      415: {
        description:
          "The Content-Type is not text/csv, application/x-ndjson (application/jsonl) or application/json, or not one the preset reads.",
      },
      422: { description: "The file is refused: `errors` lists its problems by row and field, and nothing was written." },
    },
  },
  {
    method: "get",
    path: IMPORTS_PATH,
    operationId: "listImports",
    summary: "The project's API imports, newest first",
    tag: "imports",
    auth: "read",
    minRole: "researcher",
    params: ImportPathParams,
    paged: true,
    responses: { 200: { description: "A page of imports.", schema: ImportPage, headers: { Link: 'The next page (rel="next").' } } },
  },
  {
    method: "get",
    path: `${IMPORTS_PATH}/{id}`,
    operationId: "getImport",
    summary: "One import: status, progress, summary, problems",
    tag: "imports",
    auth: "read",
    minRole: "researcher",
    params: ImportIdPathParams,
    responses: { 200: { description: "The import.", schema: ImportResourceDoc } },
  },
];
