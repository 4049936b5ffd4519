import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireProjectRole } from "~/auth/guards.server";
import { COLUMNS, EXPORT_FORMATS, EXPORT_KINDS, type ExportFormat, type ProjectExportKind } from "~/formats/export.server";

export const meta: MetaFunction = () => [{ title: "Export · Concord" }];

const DESCRIPTIONS: Record<ProjectExportKind, string> = {
  annotations:
    "Every annotation in long form: task, unit, item, checklist item, response, annotator, label, penalty reasons, notes, shown order, timestamps, status.",
  agreement:
    "Inter-annotator agreement per task: percent agreement, Fleiss' kappa, Krippendorff's alpha (at the task's level), Gwet's AC1, Cohen's kappa for two annotators.",
  "judge-agreement":
    "Each judge against the strict human majority of the same unit, response or checklist item, for any label set: accuracy and Cohen's kappa with 95% CIs, macro precision/recall/F1, unparsed verdicts, Yes rates and confusion counts for Yes/No labels.",
  runs: "Responses and judge verdicts, one row per verdict.",
  "judge-confusion":
    "The confusion matrix of each judge against the human majority, one row per (human label, judge label), with each label's precision, recall, F1 and support on its diagonal row.",
};

/** The page. Downloads are the resource route p.$slug.export.$file (old `?what=KIND&format=F` links redirect there). */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const url = new URL(request.url);
  const what = url.searchParams.get("what");
  if (what !== null) {
    const format = url.searchParams.get("format") ?? "csv";
    if (EXPORT_KINDS.includes(what as ProjectExportKind) && EXPORT_FORMATS.includes(format as ExportFormat)) {
      throw redirect(`/p/${project.slug}/export/${what}.${format}`);
    }
  }
  return json({
    project: { slug: project.slug },
    exports: EXPORT_KINDS.map((k) => ({ what: k, description: DESCRIPTIONS[k], columns: COLUMNS[k] })),
  });
}

type PageData = { project: { slug: string }; exports: { what: ProjectExportKind; description: string; columns: string[] }[] };

export default function ExportPage() {
  const { project, exports } = useLoaderData<typeof loader>() as unknown as PageData;
  return (
    <div>
      <h1>Export</h1>
      <p className="muted">
        CSV files load with <code>pandas.read_csv(path)</code> and no options (UTF-8, a header row, empty cells for missing values, lists as
        JSON text); JSONL files have one object per line with the same keys. Import files on the{" "}
        <Link to={`/p/${project.slug}/import`}>import page</Link>. A run&apos;s results (every table of its results page) download from that
        page, under each table, or as one file from <Link to={`/p/${project.slug}/runs`}>its run</Link>&apos;s results page.
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
                <a href={`/p/${project.slug}/export/${e.what}.csv`} download={`${project.slug}-${e.what}.csv`}>
                  CSV
                </a>{" "}
                ·{" "}
                <a href={`/p/${project.slug}/export/${e.what}.jsonl`} download={`${project.slug}-${e.what}.jsonl`}>
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
