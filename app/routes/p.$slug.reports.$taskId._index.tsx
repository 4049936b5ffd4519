import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useLoaderData } from "@remix-run/react";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { heavyRead } from "~/request-limits.server";
import { BarsWithCI, Heatmap, Histogram } from "~/reports/charts";
import { staleCounts } from "~/reports/load.server";
import { parseDelta, parseRule, parseStale, taskReport } from "~/reports/report.server";
import { FINAL_RULES } from "~/reports/types";
import { findKind } from "~/task-kinds/registry.server";
import { csvHref, Figure, FigureTable, ReportTabs, reportQuery, StaleNote, StaleSelect } from "~/reports/ui";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Agreement: ${data?.report.task.name ?? "Task"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const taskId = Number(params.taskId);
  const url = new URL(request.url);
  // A heavy read (app/request-limits.server.ts): the figures are computed again after every change.
  const report = Number.isInteger(taskId)
    ? await heavyRead(user.id, () =>
        taskReport(project.id, taskId, {
          rule: parseRule(url.searchParams.get("rule")),
          delta: parseDelta(url.searchParams.get("delta")),
          slug: project.slug,
          stale: parseStale(url.searchParams.get("stale")),
        }),
      )
    : null;
  if (!report) notFound("Task not found.");
  // What one subject of the tables is, from the kind's coding (kind lookups stay on the server).
  const perResponse = findKind(report.task.kind)?.coding.subjects === "response";
  return json({ slug: project.slug, report, stale: await staleCounts(report.task.id), perResponse });
}

const RULE_LABELS: Record<(typeof FINAL_RULES)[number], string> = {
  majority: "Majority",
  mean: "Mean of scores",
  adjudication: "Adjudication",
};

export default function TaskAgreementReport() {
  const { slug, report, stale, perResponse } = useLoaderData<typeof loader>();
  const { task, tables, charts, counts } = report;
  const q = reportQuery(report.rule, report.stale, { delta: String(report.delta) });
  const csv = (t: string) => csvHref(slug, task.id, t, q);
  const percentBars = report.labelKind !== "ordinal" && report.labelKind !== "interval";
  return (
    <div className="report-page">
      <h1>{task.name}</h1>
      <ReportTabs slug={slug} taskId={task.id} query={new URLSearchParams(q).toString()} />
      <p className="muted" data-testid="report-counts">
        {task.kind} · {report.labelKind} labels · {counts.annotations} submitted annotations by {counts.annotators} annotators ·{" "}
        {counts.rated} of {counts.subjects} rated subjects · k = {task.overlap}
      </p>
      <p className="muted small" data-testid="n-meaning">
        n in the tables below counts rated subjects ({perResponse ? "each scored response of a unit" : "units"}), not annotations.
      </p>
      <StaleNote counts={stale} mode={report.stale} />
      <Form method="get" className="toolbar">
        <label>
          Final label rule
          <select name="rule" defaultValue={report.rule}>
            {FINAL_RULES.map((r) => (
              <option key={r} value={r}>
                {RULE_LABELS[r]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Planner target ±δ
          <input name="delta" type="number" step="0.01" min="0.01" max="0.5" defaultValue={report.delta} />
        </label>
        <StaleSelect counts={stale} mode={report.stale} />
        <button type="submit">Apply</button>
      </Form>

      <h2>Inter-annotator agreement</h2>
      {report.paradox ? (
        <p className="alert" role="note" data-testid="kappa-paradox">
          {report.paradox}
        </p>
      ) : null}
      <FigureTable table={tables.iaa} csv={csv("iaa")} />
      <FigureTable table={tables.pairs} csv={csv("pairs")} />

      <h2>Per annotator</h2>
      <Figure
        chart={
          <Heatmap
            title="Annotator × annotator agreement (kappa)"
            rowLabels={charts.matrix.names}
            colLabels={charts.matrix.names}
            values={charts.matrix.values}
            min={0}
            max={1}
            format={(v) => v.toFixed(2)}
          />
        }
        table={tables.matrix}
        csv={csv("matrix")}
      />
      <FigureTable table={tables.annotators} csv={csv("annotators")} />

      <h2>Final labels and breakdowns</h2>
      <Figure
        chart={<Histogram title={`Final labels (${report.rule})`} bins={charts.histogram} />}
        table={tables.final}
        csv={csv("final")}
      />
      {charts.domainBars.length ? (
        <Figure
          chart={
            <BarsWithCI
              title={`${charts.domainMeasure} by domain, 95% CI (${charts.domainMethod})`}
              bars={charts.domainBars}
              percent={percentBars}
              domain={percentBars ? [0, 1] : undefined}
            />
          }
          table={{
            ...tables.breakdowns,
            id: "breakdowns-domain",
            title: "By domain",
            rows: tables.breakdowns.rows.filter((r) => r.dimension === "Domain"),
          }}
          csv={csv("breakdowns")}
        />
      ) : null}
      <FigureTable table={tables.breakdowns} csv={csv("breakdowns")} />

      {tables.checklist ? (
        <>
          <h2>Checklist appropriateness</h2>
          <p data-testid="checklist-overall">
            Judged appropriate: <strong>{String(tables.checklist.rows[0]?.paper ?? "")}</strong>
          </p>
          <FigureTable table={tables.checklist} csv={csv("checklist")} />
          <FigureTable table={tables.inappropriate} csv={csv("inappropriate")} />
        </>
      ) : null}

      <h2>Annotator bias</h2>
      <FigureTable table={tables.bias} csv={csv("bias")} />

      <h2>Sample-size planner</h2>
      <p className="muted small">
        How many units must be labelled in total (and how many more) for the 95% CI to be no wider than ±{report.delta}, using the current
        estimates.
      </p>
      <FigureTable table={tables.planner} csv={csv("planner")} />
    </div>
  );
}
