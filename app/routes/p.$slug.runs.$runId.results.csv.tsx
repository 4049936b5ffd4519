/**
 * Downloads of a run's results tables: /p/:slug/runs/:runId/results/csv?table=<id>[&judge=<judge id>][&format=latex].
 * CSV: the table's figures as the run-results export's tidy rows (full precision, its columns), the rows of
 * `npm run export -- --what run-results` for that table; LaTeX: the table as the page shows it, a booktabs
 * table for a paper. Both from app/runs/results-export.server.ts runResultTables, the export's one reader.
 * A heavy read (app/request-limits.server.ts): 429 beyond the user's limit.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { toCsv } from "~/formats/csv";
import { heavyRead } from "~/request-limits.server";
import { getDal } from "~/dal.server";
import { RUN_RESULT_COLUMNS, runResultRows, runResultTableLatex, runResultTables } from "~/runs/results-export.server";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const runId = Number(params.runId);
  if (!Number.isSafeInteger(runId) || runId < 1) notFound("Run not found.");
  const url = new URL(request.url);
  const table = url.searchParams.get("table") ?? "";
  const judgeParam = url.searchParams.get("judge");
  const judgeId = judgeParam === null || judgeParam === "" ? null : Number(judgeParam);
  const latex = url.searchParams.get("format") === "latex";
  const body = await heavyRead(user.id, async () => {
    const x = await runResultTables(getDal(), project.id, runId);
    if (!x) notFound("Run not found.");
    const t = x.tables.find((t) => t.id === table && (judgeId === null || t.judgeId === judgeId));
    if (!t) return null;
    if (latex) return runResultTableLatex(x, t, `project ${project.slug}, run ${x.run.id}`);
    const rows = runResultRows(x, { table: t.id, judgeId: t.judgeId });
    return toCsv([[...RUN_RESULT_COLUMNS], ...rows.map((r) => RUN_RESULT_COLUMNS.map((c) => r[c]))]) + "\n";
  });
  if (body === null) notFound(`No table named "${table}" in this run's results.`);
  const name = `run-${runId}-${table.replace(/[^a-z0-9-]/gi, "_")}${judgeId !== null ? `-judge-${judgeId}` : ""}`;
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": latex ? "application/x-tex; charset=utf-8" : "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${name}.${latex ? "tex" : "csv"}"`,
      "Cache-Control": "no-store",
    },
  });
}
