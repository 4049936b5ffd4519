/**
 * The exports endpoint of the HTTP API, as the OpenAPI document describes it (./types.ts): every export of the
 * Export page and `npm run export` (app/formats/export.server.ts), with its options, as JSON cursor pages or a
 * streamed JSONL or CSV file. The route (app/routes/api.v1.projects.$slug.exports.$what.tsx) validates its
 * path and query with these very schemas.
 */
import { z } from "zod";
import { ALL_EXPORT_KINDS, COLUMNS, type ExportKind } from "../../formats/export.server";
import type { ApiOperation } from "./types";

/** A positive whole number in a query string (an id). */
const IdParam = z.string().regex(/^[1-9]\d{0,14}$/, "a positive whole number");

export const ExportParamsSchema = z.object({
  slug: z.string().min(1).describe("The project's slug, as in its page's address (/p/SLUG)."),
  what: z
    .enum(ALL_EXPORT_KINDS)
    .describe("Which export: the Export page's files, and run-results (every table of a run's results page, with run=ID)."),
});

export const EXPORT_API_FORMATS = ["json", "jsonl", "csv"] as const;

/** The options of `npm run export` and of the judge page (app/reports/judgeAgreementLabels.ts parses the same words). */
export const ExportQuerySchema = z.object({
  format: z
    .enum(EXPORT_API_FORMATS)
    .default("json")
    .describe("json: cursor pages {data, next}; jsonl and csv: the whole file, streamed (as the Export page's download)."),
  reference: z
    .enum(["majority", "each", "adjudicated"])
    .optional()
    .describe("Judge exports: the human reference (default majority), as on the judge page."),
  unparsed: z
    .string()
    .regex(/^(count-as-wrong|exclude|as:.+)$/, "count-as-wrong, exclude or as:LABEL")
    .optional()
    .describe("Judge exports: what an unparsed verdict counts as (default count-as-wrong)."),
  missing: z
    .enum(["missing", "unparsed"])
    .optional()
    .describe("Judge exports: a verdict imported without a value is missing (default) or unparsed."),
  task: IdParam.optional().describe("annotations, agreement and the judge exports: only this task's rows."),
  run: IdParam.optional().describe("run-results: the run (required there)."),
  cursor: z.string().optional().describe("format=json: the cursor of the previous page's next link."),
  limit: z
    .string()
    .regex(/^\d{1,6}$/)
    .optional()
    .describe("format=json: rows per page, 1 to 10,000 (default 1,000)."),
});

/** Rows per JSON page when `limit` is absent. */
export const EXPORT_PAGE_LIMIT = 1000;

const cell = z.union([z.string(), z.number(), z.null()]);

/** One export's row: its columns (app/formats/export.server.ts documents each), each text, a number or null. */
function rowSchema(what: ExportKind) {
  return z
    .object(Object.fromEntries(COLUMNS[what].map((c) => [c, cell])))
    .meta({ id: `Export_${what.replace(/-/g, "_")}_row`, description: `A row of the ${what} export.` });
}

/** A JSON page of an export: its rows and the link to the next page. */
export const ExportPageSchema = z
  .object({
    data: z.array(z.union(ALL_EXPORT_KINDS.map(rowSchema))).describe("This page's rows, with the columns of the file."),
    next: z.string().nullable().describe("The URL of the next page (the same as the Link rel=next header), or null on the last page."),
  })
  .meta({ id: "ExportPage" });

export const OPERATIONS: ApiOperation[] = [
  {
    method: "get",
    path: "/api/v1/projects/{slug}/exports/{what}",
    operationId: "getExport",
    summary: "An export: annotations, agreement, judge-agreement, judge-confusion, runs or run-results",
    description:
      "The same rows and values as the Export page's file and `npm run export`. format=json (default) answers cursor pages " +
      "`{data, next}` (limit up to 10,000, default 1,000; a keyset cursor: annotations by task and unit, runs by dataset, item " +
      "and response), format=jsonl and format=csv the whole file streamed (CSV with formula cells escaped, as the page's). " +
      "A heavy read: beyond the user's CONCORD_HEAVY_READS_PER_USER exports or reports in progress, 429 with Retry-After.",
    tag: "exports",
    auth: "read",
    minRole: "researcher",
    params: ExportParamsSchema,
    query: ExportQuerySchema,
    responses: {
      200: {
        description: "A page of rows (format=json), or the file (format=jsonl: application/x-ndjson; format=csv: text/csv).",
        schema: ExportPageSchema,
        alternatives: [{ contentType: "application/x-ndjson" }, { contentType: "text/csv" }],
        headers: {
          Link: 'format=json: the next page, rel="next", when there is one.',
          "Content-Disposition": 'format=jsonl and csv: attachment; filename="SLUG-WHAT.FORMAT" (run-results: SLUG-run-N-results.FORMAT).',
        },
      },
      400: { description: "An option that does not parse, a cursor of another export, or run-results without run." },
      404: { description: "No such project for this token, or no such run or task in it." },
    },
  },
];
