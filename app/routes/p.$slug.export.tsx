import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireProjectRole } from "~/auth/guards.server";
import { getDb } from "~/db.server";
import { COLUMNS, EXPORT_FORMATS, EXPORT_KINDS, exportRows, writeExport, type ExportFormat, type ExportKind } from "~/formats/export.server";

export const meta: MetaFunction = () => [{ title: "Export · Concord" }];

const DESCRIPTIONS: Record<ExportKind, string> = {
  annotations: "Every annotation in long form: task, unit, item, checklist item, response, annotator, label, penalty reasons, notes, shown order, timestamps, status.",
  agreement: "Inter-annotator agreement per task: percent agreement, Fleiss' kappa, Krippendorff's alpha (at the task's level), Gwet's AC1, Cohen's kappa for two annotators.",
  "judge-agreement": "Each judge against the human majority label of the same response and checklist item: accuracy, Cohen's kappa, Yes rates, confusion counts.",
  runs: "Responses and judge verdicts, one row per verdict.",
};

/** With ?what=KIND[&format=csv|jsonl] the loader answers with the file (a download); otherwise the page. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const url = new URL(request.url);
  const what = url.searchParams.get("what");
  if (what !== null) {
    const format = (url.searchParams.get("format") ?? "csv") as ExportFormat;
    if (!EXPORT_KINDS.includes(what as ExportKind) || !EXPORT_FORMATS.includes(format)) {
      throw new Response(`Unknown export: what must be one of ${EXPORT_KINDS.join(", ")} and format csv or jsonl.`, { status: 400 });
    }
    const rows = exportRows(getDb().$client, project.id, what as ExportKind);
    const parts: string[] = [];
    writeExport(rows, what as ExportKind, format, (c) => parts.push(c));
    return new Response(parts.join(""), {
      headers: {
        "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
        "Content-Disposition": `attachment; filename="${project.slug}-${what}.${format}"`,
        "Cache-Control": "no-store",
      },
    });
  }
  return json({
    project: { slug: project.slug },
    exports: EXPORT_KINDS.map((k) => ({ what: k, description: DESCRIPTIONS[k], columns: COLUMNS[k] })),
  });
}

type PageData = { project: { slug: string }; exports: { what: ExportKind; description: string; columns: string[] }[] };

export default function ExportPage() {
  const { project, exports } = useLoaderData<typeof loader>() as unknown as PageData;
  return (
    <div>
      <h1>Export</h1>
      <p className="muted">
        CSV files load with <code>pandas.read_csv(path)</code> and no options (UTF-8, a header row, empty cells for missing values, lists as JSON
        text); JSONL files have one object per line with the same keys. Import files on the <Link to={`/p/${project.slug}/import`}>import page</Link>.
      </p>
      <table>
        <thead>
          <tr>
            <th>Export</th>
            <th>What it holds</th>
            <th>Download</th>
          </tr>
        </thead>
        <tbody>
          {exports.map((e) => (
            <tr key={e.what}>
              <td>{e.what}</td>
              <td>
                {e.description}
                <div className="muted small">Columns: {e.columns.join(", ")}</div>
              </td>
              <td>
                <a href={`?what=${e.what}&format=csv`} download>
                  CSV
                </a>{" "}
                ·{" "}
                <a href={`?what=${e.what}&format=jsonl`} download>
                  JSONL
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ErrorBoundary() {
  return <p className="error">The export page failed to load.</p>;
}
