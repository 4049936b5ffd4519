import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { heavyRead } from "~/request-limits.server";
import { getDal } from "~/dal.server";
import { COLORS, turnCurvesSvg } from "~/runs/chart.server";
import { PROTOCOLS } from "~/runs/protocols";
import type { ResultsFigure } from "~/runs/protocols/types";
import { ResultsView, TableDownloads } from "~/runs/protocols/views";
import { f3 } from "~/runs/protocols/views/tables";
import { settingRows } from "~/runs/setting-rows";
import { IntervalMethod, intervalText } from "~/components/Interval";
import { conversation, conversationList, runRow } from "~/runs/results.server";
import { runResultsReport } from "~/runs/project-runs.server";

export const meta: MetaFunction = () => [{ title: "Run results · Concord" }];

export async function loader(args: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(args.request, args.params.slug, "researcher");
  // A heavy read (app/request-limits.server.ts): every judge's results and calibration over the whole run.
  return heavyRead(user.id, () => results(args, project));
}

async function results({ request, params }: LoaderFunctionArgs, project: { id: number; slug: string }) {
  const d = getDal();
  const run = await runRow(d, project.id, Number(params.runId));
  if (!run) notFound("Run not found.");
  const url = new URL(request.url);
  // Every judge of the run, in the run's order (the first drives guided feedback), with the
  // protocol's figure drawn here and its tables laid out by the protocol (Protocol.tables); and
  // the calibration tasks made from this run (their kind follows the protocol's calibration unit):
  // every headline metric raw and corrected by the human labels. The same report as the API's.
  const protocol = PROTOCOLS[run.protocol];
  const report = await runResultsReport(d, run, project.id);
  const judges = report.judges.map((results) => {
    const spec = results.metrics && protocol?.figure ? protocol.figure(results, results.judge) : null;
    const figure: ResultsFigure | null = spec
      ? {
          svg: turnCurvesSvg(spec.series, { title: spec.title, yMax: spec.yMax }),
          legend: spec.series.map((x, i) => ({ name: x.name, color: COLORS[i % COLORS.length] })),
          testId: spec.testId,
        }
      : null;
    const tables = results.metrics && protocol?.tables ? protocol.tables(results, results.judge) : null;
    return { results, figure, tables };
  });
  // In label order (settingRows), the same on both dialects.
  const settings = settingRows(((run.config ?? {}) as { settings?: Record<string, unknown> }).settings ?? {});
  const calibration = report.calibration.map((c) => ({ name: c.name, report: c.report }));
  const itemId = Number(url.searchParams.get("item"));
  const model = url.searchParams.get("model");
  const [conversations, detail] = await Promise.all([
    conversationList(d, run.id),
    Number.isInteger(itemId) && itemId > 0 && model ? conversation(d, run.id, itemId, model) : null,
  ]);
  return json({
    project: { slug: project.slug },
    run: { id: run.id, name: run.name, protocol: run.protocol, status: run.status, protocolVersion: run.protocolVersion },
    judges,
    settings,
    calibration,
    conversations,
    detail,
    selected: { itemId, model },
  });
}

export default function RunResults() {
  const { project, run, judges, settings, calibration, conversations, detail, selected } = useLoaderData<typeof loader>();
  return (
    <div>
      <h1>Results: {run.name}</h1>
      <p>
        <Link to={`/p/${project.slug}/runs/${run.id}`}>Back to the run</Link> · <span className="badge">{run.status}</span> · protocol{" "}
        {run.protocol} v{run.protocolVersion}
      </p>
      <p className="small">
        Every table below as one file (tidy rows, full precision; the same as{" "}
        <code>npm run export -- --what run-results --run {run.id}</code>
        ):{" "}
        <a href={`/p/${project.slug}/export/run-results.csv?run=${run.id}`} download>
          CSV
        </a>{" "}
        ·{" "}
        <a href={`/p/${project.slug}/export/run-results.jsonl?run=${run.id}`} download>
          JSONL
        </a>
        . Each table also downloads on its own, as CSV or as a LaTeX table, from the links under it.
      </p>
      <details>
        <summary>Settings used (the paper's defaults unless overridden when the run was created)</summary>
        <dl className="settings" data-testid="results-settings">
          {settings.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      </details>
      {judges.map(({ results: r, figure, tables }) => {
        return (
          <section key={r.judgeId} aria-label={`Judge ${r.judge}`}>
            <h2>Judge: {r.judge}</h2>
            <p className="small">
              verdicts parsed: {r.parse.ok} ok, {r.parse.partial} partial, {r.parse.failed} failed
            </p>
            {r.metrics ? (
              <ResultsView
                blocks={tables}
                figure={figure}
                downloads={{ base: `/p/${project.slug}/runs/${run.id}/results/csv`, judgeId: r.judgeId }}
              />
            ) : null}
          </section>
        );
      })}
      {calibration.length ? <h2>Calibrated against human labels (first judge)</h2> : null}
      {calibration.map(({ name, report }) =>
        report ? (
          <section key={report.taskId} aria-label={name}>
            <h3>{name}</h3>
            {report.scale ? (
              <p className="small">
                Plan: {report.plan}. Weighting: {report.weighting}. Scale: {report.scale}
                {report.splitRule === "adjudicate" ? "; an adjudicated unit takes the adjudicated scores" : ""}. Units: {report.human.units}
                ; with a human score: {report.human.valued}; not labelled yet: {report.human.unlabelled}
                {report.splitRule === "adjudicate" ? `; adjudicated: ${report.human.adjudicated}` : ""}.
              </p>
            ) : (
              <p className="small">
                Plan: {report.plan}. Weighting: {report.weighting}. Human value: majority of the annotators; splits{" "}
                {report.splitRule === "adjudicate" ? "take the adjudicated label (left out until adjudicated)" : "left out"}. Units:{" "}
                {report.human.units}; with a human value: {report.human.valued}; dropped — no label yet: {report.human.unlabelled}, split:{" "}
                {report.human.splitDropped}
                {report.splitRule === "adjudicate" ? `; adjudicated: ${report.human.adjudicated}` : ""}.
              </p>
            )}
            {report.scale ? null : (
              <p className="small" aria-label="Units each rule drops">
                Units each rule drops — splits left out: {report.humanByRule.exclude.unlabelled + report.humanByRule.exclude.splitDropped} (
                {report.humanByRule.exclude.unlabelled} not labelled yet, {report.humanByRule.exclude.splitDropped} split)
                {report.splitRule === "exclude" ? " (in use)" : ""}; splits adjudicated:{" "}
                {report.humanByRule.adjudicate.unlabelled + report.humanByRule.adjudicate.splitDropped} (
                {report.humanByRule.adjudicate.unlabelled} not labelled yet, {report.humanByRule.adjudicate.splitDropped} split not yet
                adjudicated; {report.humanByRule.adjudicate.adjudicated} resolved by adjudication)
                {report.splitRule === "adjudicate" ? " (in use)" : ""}.
              </p>
            )}
            {report.warnings.length ? (
              <div className="alert" role="status" data-testid="calibration-warning">
                {report.warnings.map((w, i) => (
                  <p key={i}>Warning: {w}.</p>
                ))}
              </div>
            ) : null}
            <table>
              <thead>
                <tr>
                  <th>Metric</th>
                  <th>Model</th>
                  <th>Group</th>
                  <th className="num">Judge (raw)</th>
                  <th className="num">Corrected</th>
                  <th>95% CI (Wilson score per direction of the judge&apos;s errors, MOVER)</th>
                  <th className="num">Labelled</th>
                  <th>Note</th>
                </tr>
              </thead>
              <tbody>
                {report.metrics.map((m, i) => (
                  <tr key={i}>
                    <td>{m.metric}</td>
                    <td>{m.model}</td>
                    <td>{m.group ?? ""}</td>
                    <td className="num">{f3(m.raw)}</td>
                    <td className="num">{m.corrected ? f3(m.corrected.estimate) : "—"}</td>
                    <td data-ci="metric">
                      {intervalText(
                        m.corrected?.ci,
                        3,
                        "too few labels",
                        m.corrected?.exact ? "exact: every unit labelled" : "narrower than the digits shown",
                      )}
                    </td>
                    <td className="num">{m.corrected?.n ?? 0}</td>
                    <td className="small">{m.note ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <TableDownloads base={`/p/${project.slug}/runs/${run.id}/results/csv?table=calibration-${report.taskId}`} title={name} />
            <IntervalMethod>
              Intervals: the correction is the difference between two shares of the judge&apos;s errors (too harsh, too lenient); each gets
              a Wilson score interval at its effective sample size, never less wide than for the labelled units&apos; count, and the two are
              combined by MOVER (Zou &amp; Donner 2008), per stratum and then over strata; means and ratios of corrected metrics by MOVER
              too. So a sample that agreed with the judge everywhere still gets an interval of honest width (with 10–80 labelled units of
              1,000 it held the truth in 96–100% of simulated samples; ± 1.96·SE, shown before, in as few as 82%). A stratum with fewer than
              two labelled units has no estimable spread: its whole range is inside the interval. Within the metric&apos;s range (0–100 for
              percentages). &ldquo;Too few labels&rdquo;: fewer than two labelled units; &ldquo;exact&rdquo;: every unit labelled, nothing
              left to estimate.
            </IntervalMethod>
          </section>
        ) : null,
      )}
      <h2>Conversations</h2>
      <table>
        <thead>
          <tr>
            <th>Item</th>
            <th>Model</th>
            <th className="num">Turns</th>
            <th className="num">Unparsed verdicts</th>
          </tr>
        </thead>
        <tbody>
          {conversations.map((c) => (
            <tr key={`${c.itemId}/${c.model}`}>
              <td>
                <Link to={`?item=${c.itemId}&model=${encodeURIComponent(c.model)}`}>{c.sourceId}</Link>
              </td>
              <td>{c.model}</td>
              <td className="num">{c.turns}</td>
              <td className="num">{c.failed}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {detail ? (
        <div className="panel" id="conversation">
          <h2>
            {detail.item?.sourceId} · {selected.model}
          </h2>
          <p className="prewrap">{detail.item?.query}</p>
          {detail.turns.map((t) => (
            <div key={t.id} className="response">
              <h3>
                Turn {t.turn} {(t.metadata as { terminated?: boolean }).terminated ? <span className="badge">[TERMINATE]</span> : null}{" "}
                {(t.metadata as { recorded?: boolean }).recorded ? <span className="badge">recorded</span> : null}
              </h3>
              <div className="prewrap">{t.text}</div>
              <table>
                <tbody>
                  {t.verdicts.map((v) => (
                    <tr key={v.id}>
                      <td className="small">{v.judge}</td>
                      <td>{v.checklist ?? "whole response"}</td>
                      <td>{v.value ?? "—"}</td>
                      <td>
                        <span className="badge">{v.parseStatus}</span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {t.verdicts[0]?.rawOutput ? (
                <details>
                  <summary className="small">Judge's raw output</summary>
                  <pre className="prewrap small">{t.verdicts[0].rawOutput}</pre>
                </details>
              ) : null}
            </div>
          ))}
        </div>
      ) : null}
    </div>
  );
}
