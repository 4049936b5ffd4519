/* eslint-disable @typescript-eslint/no-explicit-any --
 * Each protocol's results have their own shape (app/runs/results.server.ts); these tables read
 * them loosely until protocols declare their result types themselves. */
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import type { ReactNode } from "react";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { getDb } from "~/db.server";
import { COLORS, turnCurvesSvg } from "~/runs/chart.server";
import { settingRows } from "~/runs/setting-rows";
import { IntervalMethod, intervalText } from "~/components/Interval";
import { calibrationReport } from "~/runs/calibration.server";
import { conversation, conversationList, runResultsAll, runRow } from "~/runs/results.server";
import { and, eq, inArray } from "drizzle-orm";
import { schema } from "~/db.server";

export const meta: MetaFunction = () => [{ title: "Run results · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const db = getDb();
  const run = runRow(db, project.id, Number(params.runId));
  if (!run) notFound("Run not found.");
  const url = new URL(request.url);
  // Every judge of the run, in the run's order (the first drives guided feedback).
  const judges = runResultsAll(db, run).map((results) => {
    let chart: string | null = null;
    let legend: { name: string; color: string }[] = [];
    if (results.protocol === "refinebench" && results.metrics) {
      const m = results.metrics as { model: string; turns: { turn: number; pass: number }[] }[];
      chart = turnCurvesSvg(
        m.map((x) => ({ name: x.model, points: x.turns.map((t) => ({ x: t.turn, y: t.pass })) })),
        { title: `Pass_t by turn (${results.judge})`, yMax: 100 },
      );
      legend = m.map((x, i) => ({ name: x.model, color: COLORS[i % COLORS.length] }));
    }
    return { results, chart, legend };
  });
  const settings = settingRows(((run.config ?? {}) as { settings?: Record<string, unknown> }).settings ?? {});
  // Calibration tasks made from this run: every headline metric raw and corrected by the human labels.
  const calibration = db
    .select({ id: schema.tasks.id, name: schema.tasks.name, config: schema.tasks.config })
    .from(schema.tasks)
    // Yes/No tasks (checklist protocols, Self-Correction) and 1–10 writing-score tasks (C3EBench).
    .where(and(eq(schema.tasks.projectId, project.id), inArray(schema.tasks.kind, ["response-satisfaction", "writing-quality"])))
    .all()
    .filter((t) => (t.config as Record<string, unknown>).runId === run.id)
    .map((t) => ({ name: t.name, report: calibrationReport(db, run.id, t.id) }));
  const itemId = Number(url.searchParams.get("item"));
  const model = url.searchParams.get("model");
  return json({
    project: { slug: project.slug },
    run: { id: run.id, name: run.name, protocol: run.protocol, status: run.status, protocolVersion: run.protocolVersion },
    judges,
    settings,
    calibration,
    conversations: conversationList(db, run.id),
    detail: Number.isInteger(itemId) && itemId > 0 && model ? conversation(db, run.id, itemId, model) : null,
    selected: { itemId, model },
  });
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "—");
const f3 = (x: number | undefined | null) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(3) : "—");

/** A results table with one row per model: the model's name, then one cell per column. */
type Column = { header: ReactNode; cell: (m: any) => ReactNode; key?: string; text?: boolean };
function ModelTable({ rows, columns }: { rows: any[]; columns: Column[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Model</th>
          {columns.map((c, i) => (
            <th key={c.key ?? i} className={c.text ? undefined : "num"}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={m.model}>
            <td>{m.model}</td>
            {columns.map((c, i) => (
              <td key={c.key ?? i} className={c.text ? undefined : "num"}>
                {c.cell(m)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One column per turn of the run (the turns of the first model). */
const turnColumns = (r: any, header: (turn: number) => ReactNode, cell: (t: any) => ReactNode): Column[] =>
  (r.metrics[0]?.turns ?? []).map((t0: any, i: number) => ({
    key: `turn-${t0.turn}`,
    header: header(t0.turn),
    cell: (m: any) => (m.turns[i] ? cell(m.turns[i]) : "—"),
  }));

function RefineTables({ r }: { r: any }) {
  return (
    <>
      <p className="muted">
        Setting: {r.setting}; judge: {r.judge}. Metrics are over the instances scored at each turn (n). An instance whose generation or
        judge call failed is counted as failed at that turn — and at the later turns it made impossible — never given an earlier turn's
        verdicts; an unparseable verdict is counted as unparsed. Only a [TERMINATE] reply, or a guided conversation with nothing left to
        refine, carries the last answer forward.
      </p>
      <ModelTable
        rows={r.metrics}
        columns={[
          ...turnColumns(
            r,
            (turn) => `Acc_${turn} / Pass_${turn}`,
            (t) => (
              <>
                {f1(t.acc)} / {f1(t.pass)}{" "}
                <span className="small muted">
                  n={t.n}, failed={t.failed}, unparsed={t.unparsed}
                  {t.pending ? `, ${t.pending} not finished` : ""}
                </span>
                {t.accKnown !== undefined ? (
                  <div className="small">
                    known {f1(t.accKnown)} · unknown {f1(t.accUnknown)}
                  </div>
                ) : null}
              </>
            ),
          ),
          { header: "Δ", cell: (m) => f1(m.delta) },
          { header: "Mean termination turn", cell: (m) => (m.termination.mean == null ? "—" : m.termination.mean.toFixed(2)) },
        ]}
      />
      <h3>Turn-to-turn transitions (Pass)</h3>
      <ModelTable
        rows={r.metrics}
        columns={(
          [
            ["correctToCorrect", "correct→correct"],
            ["correctToIncorrect", "correct→incorrect"],
            ["incorrectToCorrect", "incorrect→correct"],
            ["incorrectToIncorrect", "incorrect→incorrect"],
          ] as const
        ).map(([k, header]) => ({ key: k, header, cell: (m: any) => m.transitions[k] }))}
      />
    </>
  );
}

function OtherTables({ r }: { r: any }) {
  if (r.protocol === "self-correction")
    return (
      <table>
        <thead>
          <tr>
            <th>Model</th>
            <th>Dataset</th>
            <th className="num">Internal [95% Wilson CI]</th>
            <th className="num">External [95% Wilson CI]</th>
            <th className="num">Internal + Wait [95% Wilson CI]</th>
            <th className="num">Blind spot [95% CI, delta method, upper end clipped at 1]</th>
          </tr>
        </thead>
        <tbody>
          {r.metrics.flatMap((m: any) => [
            ...m.datasets.map((d: any) => (
              <tr key={m.model + d.dataset}>
                <td>{m.model}</td>
                <td>{d.dataset}</td>
                {["internal", "external", "internal-wait"].map((c) => (
                  <td key={c} className="num">
                    {d.byCondition[c] ? `${f3(d.byCondition[c].mean)} [${f3(d.byCondition[c].ci[0])}, ${f3(d.byCondition[c].ci[1])}]` : "—"}
                    {d.byCondition[c] ? (
                      <div className="small muted">
                        n={d.byCondition[c].n}, failed={d.byCondition[c].failed}, unparsed={d.byCondition[c].unparsed}
                      </div>
                    ) : null}
                  </td>
                ))}
                <td className="num">
                  {d.blindSpot ? `${f3(d.blindSpot.value)} [${f3(d.blindSpot.ci[0])}, ${f3(d.blindSpot.ci[1])}]` : "—"}
                  {d.blindSpot?.clipped ? <div className="small muted">clipped at 1</div> : null}
                </td>
              </tr>
            )),
            <tr key={m.model + "macro"}>
              <td>{m.model}</td>
              <td>
                <b>macro average</b>
              </td>
              <td className="num">{f3(m.macro.internal)}</td>
              <td className="num">{f3(m.macro.external)}</td>
              <td className="num">{f3(m.macro["internal-wait"])}</td>
              <td className="num">{f3(m.macro.blindSpot)}</td>
            </tr>,
            <tr key={m.model + "markers"}>
              <td colSpan={6} className="small">
                Correction markers —{" "}
                {Object.entries(m.markers)
                  .map(
                    ([c, counts]: any) =>
                      `${c}: ${
                        Object.entries(counts)
                          .filter(([, n]: any) => n > 0)
                          .map(([k, n]) => `${k} ${n}`)
                          .join(", ") || "none"
                      }`,
                  )
                  .join(" · ")}
              </td>
            </tr>,
          ])}
        </tbody>
      </table>
    );
  if (r.protocol === "fb-bench")
    return (
      <>
        <ModelTable
          rows={r.metrics}
          columns={[
            { header: "Error correction", cell: (m) => f1(m.errorCorrection.mean) },
            {
              header: `Response maintenance (rule: ${r.rule})`,
              cell: (m) => (
                <>
                  {f1(m.responseMaintenance.mean)} <span className="small">(rule: {m.rule})</span>
                </>
              ),
            },
            {
              header: `Overall (rule: ${r.rule})`,
              cell: (m) => (
                <>
                  {f1(m.overall)} <span className="small">(rule: {m.rule})</span>
                </>
              ),
            },
            { header: "n (EC / RM)", cell: (m) => `${m.errorCorrection.n} / ${m.responseMaintenance.n}` },
            { header: "Failed", cell: (m) => m.failed },
            { header: "Unparsed", cell: (m) => m.unparsed },
          ]}
        />
        {(["byTask", "byFeedbackType", "byDeficiencyType"] as const).map((k) => (
          <div key={k}>
            <h3>
              {k === "byTask" ? "By task" : k === "byFeedbackType" ? "By feedback type" : "By deficiency type (error correction)"} (rule:{" "}
              {r.rule})
            </h3>
            <table>
              <tbody>
                {r.metrics.flatMap((m: any) =>
                  Object.entries(m[k]).map(([g, c]: any) => (
                    <tr key={m.model + g}>
                      <td>{m.model}</td>
                      <td>{g}</td>
                      <td className="num">{f1(c.mean)}</td>
                      <td className="num small">n={c.n}</td>
                    </tr>
                  )),
                )}
              </tbody>
            </table>
          </div>
        ))}
      </>
    );
  if (r.protocol === "c3ebench")
    return (
      <ModelTable
        rows={r.metrics}
        columns={[
          ...["Cloze", "Edit", "Expand", "End2End"].map((t) => ({
            key: t,
            header: t,
            cell: (m: any) => (m.byTask[t] ? `${m.byTask[t].mean.toFixed(2)} (n=${m.byTask[t].n})` : "—"),
          })),
          { header: "Overall", cell: (m) => (Number.isFinite(m.overall) ? m.overall.toFixed(2) : "—") },
          { header: "n", cell: (m) => m.n },
          { header: "Failed", cell: (m) => m.failed },
          { header: "Unparsed", cell: (m) => m.unparsed },
        ]}
      />
    );
  return <p className="muted">No tables for this protocol.</p>;
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
      {judges.map(({ results, chart, legend }) => {
        const r = results as any;
        return (
          <section key={r.judgeId} aria-label={`Judge ${r.judge}`}>
            <h2>Judge: {r.judge}</h2>
            <p className="small">
              verdicts parsed: {r.parse.ok} ok, {r.parse.partial} partial, {r.parse.failed} failed
            </p>
            {r.protocol === "refinebench" && r.metrics ? (
              <div className="panel figure" data-testid="pass-figure">
                {chart ? (
                  <figure className="figure-chart">
                    <div dangerouslySetInnerHTML={{ __html: chart }} />
                    <figcaption>
                      <ul className="chart-legend" data-testid="chart-legend" aria-label="Legend">
                        {legend.map((l) => (
                          <li key={l.name}>
                            <span className="swatch" style={{ background: l.color }} aria-hidden="true" /> {l.name}
                          </li>
                        ))}
                      </ul>
                    </figcaption>
                  </figure>
                ) : null}
                <div className="figure-side">
                  <div className="figure-table">
                    <ModelTable
                      rows={r.metrics}
                      columns={turnColumns(
                        r,
                        (turn) => `Pass_${turn}`,
                        (t) => f1(t.pass),
                      )}
                    />
                  </div>
                </div>
              </div>
            ) : null}
            {r.metrics ? r.protocol === "refinebench" ? <RefineTables r={r} /> : <OtherTables r={r} /> : null}
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
            <table>
              <thead>
                <tr>
                  <th>Metric</th>
                  <th>Model</th>
                  <th>Group</th>
                  <th className="num">Judge (raw)</th>
                  <th className="num">Corrected</th>
                  <th>95% CI (normal approximation, clipped to the metric&apos;s range)</th>
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
                        "zero width: every unit labelled, or the labels never differ from the judge",
                      )}
                    </td>
                    <td className="num">{m.corrected?.n ?? 0}</td>
                    <td className="small">{m.note ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <IntervalMethod>
              Intervals: estimate ± 1.96·SE (normal approximation; ratios by the delta method), clipped to the metric&apos;s range (0–100
              for percentages). &ldquo;Too few labels&rdquo;: fewer than two labelled units, so no interval can be given.
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
                Turn {t.turn} {(t.metadata as any).terminated ? <span className="badge">[TERMINATE]</span> : null}{" "}
                {(t.metadata as any).recorded ? <span className="badge">recorded</span> : null}
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
