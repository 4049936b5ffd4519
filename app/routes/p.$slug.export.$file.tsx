/**
 * Export downloads: /p/:slug/export/<what>.<csv|jsonl> answers with the file.
 * A resource route (no component), so the page route never has to render a
 * raw file as if it were page data. The file streams a window of rows at a
 * time (exportChunks) in one of the user's heavy-read slots (429 beyond them).
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireProjectRole } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { EXPORT_FORMATS, EXPORT_KINDS, exportChunks, type ExportFormat, type ExportKind } from "~/formats/export.server";
import { heavyReadStream } from "~/request-limits.server";

/** The file name of an export, as it appears in its URL and in the download. */
function exportFileName(what: ExportKind, format: ExportFormat): string {
  return `${what}.${format}`;
}

function parseExportFile(file: string | undefined): { what: ExportKind; format: ExportFormat } | null {
  const m = /^([a-z-]+)\.([a-z]+)$/.exec(file ?? "");
  if (!m || !EXPORT_KINDS.includes(m[1] as ExportKind) || !EXPORT_FORMATS.includes(m[2] as ExportFormat)) return null;
  return { what: m[1] as ExportKind, format: m[2] as ExportFormat };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const parsed = parseExportFile(params.file);
  if (!parsed) {
    throw new Response(
      `No such export. Choose one of ${EXPORT_KINDS.flatMap((k) => EXPORT_FORMATS.map((f) => exportFileName(k, f))).join(", ")}.`,
      {
        status: 404,
        headers: { "Content-Type": "text/plain; charset=utf-8" },
      },
    );
  }
  const { what, format } = parsed;
  return new Response(heavyReadStream(user.id, exportChunks(getDal(), project.id, what, format)), {
    status: 200,
    headers: {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="${project.slug}-${exportFileName(what, format)}"`,
      "Cache-Control": "no-store",
    },
  });
}
