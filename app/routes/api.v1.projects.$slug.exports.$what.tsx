/**
 * GET /api/v1/projects/{slug}/exports/{what}?format=json|jsonl|csv&reference=&unparsed=&missing=&task=&run=
 *
 * Every export of the Export page and `npm run export` (app/formats/export.server.ts), for researchers (as the
 * Export page). format=json: cursor pages `{data, next}` of the file's rows (exportPage: a keyset in SQL for
 * the annotations and the runs); jsonl and csv: the file, streamed a window at a time (exportChunks, the page's
 * download). Either way a heavy read (app/request-limits.server.ts): 429 beyond the user's limit.
 */
import { z } from "zod";
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { encodeCursor, pageHeaders, pageRequest, type Page } from "~/api/pagination.server";
import { apiJson, problem, PROBLEM_TYPES, zodProblemErrors } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { EXPORT_PAGE_LIMIT, ExportParamsSchema, ExportQuerySchema } from "~/api/operations/exports";
import { getDal } from "~/dal.server";
import {
  checkExport,
  exportChunks,
  exportFileName,
  exportKeyLength,
  exportOptionsFrom,
  exportPage,
  type ExportKind,
} from "~/formats/export.server";
import { heavyRead, heavyReadStream } from "~/request-limits.server";

const invalid = (errors: { field?: string; message: string }[]) =>
  problem(400, "The request is not valid.", { type: PROBLEM_TYPES.invalidRequest, errors });

export const loader = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const path = ExportParamsSchema.safeParse(params);
  if (!path.success) {
    return problem(404, `No such export. Choose one of ${ExportParamsSchema.shape.what.options.join(", ")}.`);
  }
  const url = new URL(request.url);
  const query = ExportQuerySchema.safeParse(Object.fromEntries(url.searchParams));
  if (!query.success) return invalid(zodProblemErrors(query.error));
  const { opts, errors } = exportOptionsFrom(query.data);
  if (errors.length) return invalid(errors);
  const what: ExportKind = path.data.what;
  const d = getDal();
  await checkExport(d, project.id, what, opts);
  const format = query.data.format;
  if (format === "json") {
    // The default page is 1,000 rows (pageRequest's own default is 100: set it unless the client chose).
    const paged = new Request(url.searchParams.has("limit") ? url : withLimit(url, EXPORT_PAGE_LIMIT), { headers: request.headers });
    const n = exportKeyLength(what);
    const { limit, after } = pageRequest(paged, z.array(z.number().int().min(0)).length(n));
    const { rows, next } = await heavyRead(user.id, () => exportPage(d, project.id, what, opts, after, limit));
    const page: Page<unknown> = { data: rows, next: next ? nextLink(url, next, limit) : null };
    return apiJson(page, { headers: pageHeaders(page) });
  }
  return new Response(heavyReadStream(user.id, exportChunks(d, project.id, what, format, opts)), {
    status: 200,
    headers: {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="${exportFileName(project.slug, what, format, opts)}"`,
      "Cache-Control": "no-store",
    },
  });
});

function withLimit(url: URL, limit: number): URL {
  const u = new URL(url);
  u.searchParams.set("limit", String(limit));
  return u;
}

/** This request's URL with the cursor of `key` (app/api/pagination.server.ts's cursor encoding). */
function nextLink(url: URL, key: number[], limit: number): string {
  const u = new URL(url);
  u.searchParams.set("cursor", encodeCursor(key));
  u.searchParams.set("limit", String(limit));
  return u.href;
}

export const action = apiMethodNotAllowed(["GET"]);
