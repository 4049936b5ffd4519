/**
 * CSV downloads of every report table: /p/:slug/reports/:taskId/csv?table=<id>&rule=<rule>[&stale=exclude].
 * The rows are the ones the page shows, at full precision (CIs as low/high columns); the judges'
 * any-label-set table (agreement-judges) has the columns of the judge-agreement export.
 * With &format=latex: the same table as a LaTeX booktabs table at the page's precision.
 * Every download is a heavy read (app/request-limits.server.ts): 429 beyond the user's limit.
 */
import { parseQuery } from "~/forms.server";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { DisagreementQuerySchema, disagreementFilters } from "~/reports/disagreements";
import { tableToCsv, tableToLatex } from "~/reports/format";
import type { ReportTable } from "~/reports/types";
import { parseMissingPolicy, parseReference, parseUnparsedPolicy } from "~/reports/judgeAgreement";
import { judgeAgreementPageCsv } from "~/formats/export.server";
import { objectsToCsv } from "~/formats/csv";
import { heavyRead } from "~/request-limits.server";
import {
  disagreementsFor,
  judgeAgreementFor,
  judgeReportFor,
  parseDelta,
  parseRule,
  parseStale,
  taskReport,
} from "~/reports/report.server";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const taskId = Number(params.taskId);
  if (!Number.isInteger(taskId)) notFound("Task not found.");
  const url = new URL(request.url);
  const name = url.searchParams.get("table") ?? "iaa";
  const latex = url.searchParams.get("format") === "latex";
  const body = await heavyRead(user.id, () => tableText(project, taskId, url, name, latex));
  if (body === null) notFound(`No table named "${name}".`);
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": latex ? "application/x-tex; charset=utf-8" : "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="task-${taskId}-${name.replace(/[^a-z0-9-]/gi, "_")}.${latex ? "tex" : "csv"}"`,
    },
  });
}

/** The table named `name` as CSV or LaTeX text, or null when the task has no such table. */
async function tableText(project: { id: number; slug: string }, taskId: number, url: URL, name: string, latex: boolean) {
  const rule = parseRule(url.searchParams.get("rule"));
  const delta = parseDelta(url.searchParams.get("delta"));
  const stale = parseStale(url.searchParams.get("stale"));
  const render = (t: ReportTable) =>
    latex
      ? tableToLatex(
          t,
          `project ${project.slug}, task ${taskId}, final labels by ${rule ?? "the task's default rule"}${stale === "exclude" ? ", stale labels left out" : ""}`,
        )
      : tableToCsv(t);
  let body: string | null = null;
  if (name === "disagreements") {
    const q = parseQuery(DisagreementQuerySchema, url);
    const result = await disagreementsFor(project.id, taskId, disagreementFilters(q), { fullText: true });
    if (!result) notFound("Task not found.");
    body = objectsToCsv(
      result.rows.map((r) => ({ ...r })),
      { newline: "\r\n" },
    );
  } else if (name.startsWith("agreement-")) {
    // The any-label-set judge table, for the reference, unparsed and missing policies in the query.
    const page = await judgeAgreementFor(project.id, taskId, {
      reference: parseReference(url.searchParams.get("reference")) ?? "majority",
      unparsed: parseUnparsedPolicy(url.searchParams.get("unparsed")) ?? "count-as-wrong",
      missing: parseMissingPolicy(url.searchParams.get("missing")) ?? "missing",
      stale,
    });
    if (!page) notFound("Task not found.");
    const t = page.tables[name];
    // The judges' table as CSV has the judge-agreement export's columns and figures (one builder for both).
    if (t) body = name === "agreement-judges" && !latex ? judgeAgreementPageCsv(page) : render(t);
  } else {
    const judgeTable =
      name === "judges" ||
      name === "judge-breakdowns" ||
      name === "label-metrics" ||
      name === "ordering" ||
      name === "ablation" ||
      name === "judge-planner" ||
      name.startsWith("confusion-") ||
      name.startsWith("histogram-");
    if (judgeTable) {
      const report = await judgeReportFor(project.id, taskId, { rule, delta, stale });
      if (!report) notFound("Task not found.");
      const t = report.tables[name === "judge-planner" ? "planner" : name];
      if (t) body = render(t);
    } else {
      const report = await taskReport(project.id, taskId, { rule, delta, slug: project.slug, stale });
      if (!report) notFound("Task not found.");
      const t = report.tables[name];
      if (t) body = render(t);
    }
  }
  return body;
}
