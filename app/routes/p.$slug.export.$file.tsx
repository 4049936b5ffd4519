/**
 * Export downloads: /p/:slug/export/<what>.<csv|jsonl>[?task=ID&reference=&unparsed=&missing=] answers with the
 * file; /p/:slug/export/run-results.<csv|jsonl>?run=ID with a run's results (every table of its results page).
 * A resource route (no component), so the page route never has to render a raw file as if it were page data.
 * The file streams a window of rows at a time (exportChunks) in one of the user's heavy-read slots (429 beyond
 * them). The options are the judge page's words (exportOptionsFrom), as in `npm run export` and the API.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireProjectRole } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { DomainError } from "~/errors.server";
import {
  ALL_EXPORT_KINDS,
  checkExport,
  EXPORT_FORMATS,
  exportChunks,
  exportFileName,
  exportOptionsFrom,
  type ExportFormat,
  type ExportKind,
} from "~/formats/export.server";
import { heavyReadStream } from "~/request-limits.server";

function parseExportFile(file: string | undefined): { what: ExportKind; format: ExportFormat } | null {
  const m = /^([a-z-]+)\.([a-z]+)$/.exec(file ?? "");
  if (!m || !ALL_EXPORT_KINDS.includes(m[1] as ExportKind) || !EXPORT_FORMATS.includes(m[2] as ExportFormat)) return null;
  return { what: m[1] as ExportKind, format: m[2] as ExportFormat };
}

const text = (body: string, status: number) => new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8" } });

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const parsed = parseExportFile(params.file);
  if (!parsed) {
    throw text(`No such export. Choose one of ${ALL_EXPORT_KINDS.flatMap((k) => EXPORT_FORMATS.map((f) => `${k}.${f}`)).join(", ")}.`, 404);
  }
  const { what, format } = parsed;
  const q = new URL(request.url).searchParams;
  const { opts, errors } = exportOptionsFrom({
    reference: q.get("reference"),
    unparsed: q.get("unparsed"),
    missing: q.get("missing"),
    task: q.get("task"),
    run: q.get("run"),
  });
  if (errors.length) throw text(errors.map((e) => e.message).join(" "), 400);
  try {
    await checkExport(getDal(), project.id, what, opts);
  } catch (err) {
    if (err instanceof DomainError) throw text(err.message, err.status);
    throw err;
  }
  return new Response(heavyReadStream(user.id, exportChunks(getDal(), project.id, what, format, opts)), {
    status: 200,
    headers: {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="${exportFileName(project.slug, what, format, opts)}"`,
      "Cache-Control": "no-store",
    },
  });
}
