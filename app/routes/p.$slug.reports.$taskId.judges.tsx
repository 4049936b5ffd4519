import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { CsrfField } from "~/components/CsrfField";
import { orDomainError } from "~/errors.server";
import { loadJudges } from "~/reports/load.server";
import { setJudgeVariant } from "~/reports/judgeVariants.server";
import { heavyRead } from "~/request-limits.server";
import { BarsWithCI, Heatmap, Histogram } from "~/reports/charts";
import { staleCounts } from "~/reports/load.server";
import {
  MISSING_POLICIES,
  missingPolicyLabel,
  parseMissingPolicy,
  parseReference,
  parseUnparsedPolicy,
  policyLabel,
  referenceLabel,
  REFERENCES,
  UNPARSED,
} from "~/reports/judgeAgreement";
import { judgeAgreementFor, judgeReportFor, parseDelta, parseRule, parseStale } from "~/reports/report.server";
import { FINAL_RULES } from "~/reports/types";
import { csvHref, Figure, FigureTable, ReportTabs, reportQuery, StaleNote, StaleSelect } from "~/reports/ui";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Judges: ${data?.report.task.name ?? "Task"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const taskId = Number(params.taskId);
  const url = new URL(request.url);
  // The any-label-set table: reference and unparsed policy from the query (defaults: majority, count-as-wrong).
  const reference = parseReference(url.searchParams.get("reference")) ?? "majority";
  const unparsed = parseUnparsedPolicy(url.searchParams.get("unparsed")) ?? "count-as-wrong";
  // Verdicts imported without a value (or NA, N/A): missing (default: out of n) or unparsed.
  const missing = parseMissingPolicy(url.searchParams.get("missing")) ?? "missing";
  // A heavy read (app/request-limits.server.ts): the figures are computed again after every change.
  const { report, agreement } = await heavyRead(user.id, async () => {
    const report = Number.isInteger(taskId)
      ? await judgeReportFor(project.id, taskId, {
          rule: parseRule(url.searchParams.get("rule")),
          delta: parseDelta(url.searchParams.get("delta")),
          stale: parseStale(url.searchParams.get("stale")),
        })
      : null;
    if (!report) notFound("Task not found.");
    return { report, agreement: await judgeAgreementFor(project.id, taskId, { reference, unparsed, missing, stale: report.stale }) };
  });
  // The judges and their variant marks (settings.variantOf, settings.variant), for the variant form.
  const judges = (await loadJudges(project.id))
    .filter((j) => report.judges.some((r) => r.id === j.id))
    .map((j) => ({
      id: j.id,
      name: j.name,
      variantOf: typeof j.settings?.variantOf === "string" ? j.settings.variantOf : "",
      variant: typeof j.settings?.variant === "string" ? j.settings.variant : "",
    }));
  const delta = parseDelta(url.searchParams.get("delta"));
  return json({
    slug: project.slug,
    report,
    agreement,
    reference,
    unparsed,
    missing,
    delta,
    judges,
    stale: await staleCounts(report.task.id),
  });
}

const VariantForm = z.object({
  intent: z.literal("set-variant"),
  judgeId: z.coerce.number().int().positive(),
  variantOf: z.string().max(200).optional(),
  variant: z.string().max(200).optional(),
});

/** Marks a judge as a variant (ablation) of another, or not (the variant table pairs them). */
export async function action({ request, params }: ActionFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const parsed = VariantForm.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) return json({ error: "This form is out of date: reload the page and try again.", judgeId: null }, { status: 400 });
  const { judgeId, variantOf, variant } = parsed.data;
  return orDomainError(
    async () => {
      await setJudgeVariant(project.id, judgeId, { variantOf: variantOf ?? null, variant: variant ?? null });
      return json({ ok: variantOf ? `Saved: a variant of ${variantOf}.` : "Saved: not a variant.", judgeId });
    },
    (err) => json({ error: err.message, judgeId }, { status: err.status }),
  );
}

export default function JudgeAgreementReport() {
  const { slug, report, agreement, reference, unparsed, missing, delta, judges, stale } = useLoaderData<typeof loader>();
  const saved = useActionData<typeof action>();
  const { task, tables } = report;
  // δ travels with every link (tabs, CSV downloads), as the rule does.
  const q = reportQuery(report.rule, report.stale, { delta: String(delta) });
  const csv = (t: string, extra: Record<string, string> = {}) => csvHref(slug, task.id, t, { ...q, ...extra });
  const numeric = report.labelKind === "ordinal" || report.labelKind === "interval";
  return (
    <div>
      <h1>{task.name}: judges against humans</h1>
      <ReportTabs slug={slug} taskId={task.id} query={new URLSearchParams(q).toString()} />
      <StaleNote counts={stale} mode={report.stale} />
      <Form method="get" className="toolbar">
        <label>
          Final label rule
          <select name="rule" defaultValue={report.rule}>
            {FINAL_RULES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <StaleSelect counts={stale} mode={report.stale} />
        <label>
          Planner target ±δ
          <input name="delta" type="number" step="any" min="0.001" max="0.999" defaultValue={delta} style={{ width: "6em" }} />
        </label>
        <button type="submit">Apply</button>
      </Form>
      {agreement?.applicable && agreement.result && agreement.result.judges.length > 0 ? (
        <section aria-labelledby="any-label-set">
          <h2 id="any-label-set">Any label set: accuracy, kappa, macro precision/recall/F1</h2>
          <Form method="get" className="toolbar">
            <input type="hidden" name="rule" value={report.rule} />
            <input type="hidden" name="delta" value={delta} />
            {report.stale === "exclude" ? <input type="hidden" name="stale" value="exclude" /> : null}
            <label>
              Reference
              <select name="reference" defaultValue={reference}>
                {REFERENCES.map((r) => (
                  <option key={r} value={r}>
                    {referenceLabel(r, "choice")}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Unparsed verdicts
              <select name="unparsed" defaultValue={unparsed}>
                {(["count-as-wrong", "exclude", ...agreement.result.labels.map((l) => `as:${l}` as const)] as const).map((p) => (
                  <option key={p} value={p}>
                    {policyLabel(p, "choice")}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Missing verdicts
              <select name="missing" defaultValue={missing}>
                {MISSING_POLICIES.map((p) => (
                  <option key={p} value={p}>
                    {missingPolicyLabel(p, "choice")}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Apply</button>
          </Form>
          {agreement.note ? (
            <p className="alert info" role="status">
              {agreement.note}
            </p>
          ) : null}
          <p className="muted small" data-testid="unparsed-summary">
            {agreement.result.judges
              .map((j) => `${j.judge}: ${j.unparsed} unparsed (${j.unparsedCompared} on units with a reference)`)
              .join("; ") || "No judge has verdicts on these units."}{" "}
            Unparsed verdicts (unreadable, or outside the label set) are {policyLabel(agreement.result.unparsedPolicy)}. Missing verdicts
            (imported without a value, or as NA or N/A) are {missingPolicyLabel(agreement.result.missingPolicy)}
            {agreement.result.judges.some((j) => j.missingVerdicts > 0)
              ? ` (${agreement.result.judges.map((j) => `${j.judge}: ${j.missingVerdicts}`).join("; ")})`
              : ""}
            .
          </p>
          {["agreement-judges", "agreement-per-label", "agreement-annotators"].map((id) => (
            <FigureTable
              key={id}
              table={agreement.tables[id]}
              csv={csv(id, { reference, unparsed: agreement.result!.unparsedPolicy, missing: agreement.result!.missingPolicy })}
            />
          ))}
          {agreement.result.judges.map((j, i) => {
            const labels = Object.keys(j.confusion);
            const id = `agreement-confusion-${i}`;
            return (
              <Figure
                key={id}
                chart={
                  <Heatmap
                    title={`${j.judge}: reference (rows) × judge (columns)`}
                    rowLabels={labels}
                    colLabels={labels}
                    values={labels.map((h) => labels.map((l) => j.confusion[h][l]))}
                    min={0}
                    max={Math.max(1, ...labels.flatMap((h) => labels.map((l) => j.confusion[h][l])))}
                    format={(v) => String(v)}
                    rowTitle="rows: reference label"
                    colTitle={`columns: judge verdict${labels.includes(UNPARSED) ? ` (${UNPARSED}: outside the label set)` : ""}`}
                  />
                }
                table={agreement.tables[id]}
                csv={csv(id, { reference, unparsed: agreement.result!.unparsedPolicy, missing: agreement.result!.missingPolicy })}
              />
            );
          })}
        </section>
      ) : null}

      {report.judges.length === 0 ? <p className="muted">No judge has verdicts on the labelled units of this task.</p> : null}
      <FigureTable table={tables.judges} csv={csv("judges")} />

      {report.confusions.length ? <h2>Confusion matrices</h2> : null}
      {report.confusions.map((c) => (
        <Figure
          key={c.judgeId}
          chart={
            <Heatmap
              title={`${c.judge}: human (rows) × judge (columns)`}
              rowLabels={c.labels}
              colLabels={c.labels}
              values={c.matrix}
              min={0}
              max={Math.max(1, ...c.matrix.flat())}
              format={(v) => String(v)}
              rowTitle="rows: final human label"
              colTitle="columns: judge verdict"
            />
          }
          table={tables[`confusion-${c.judgeId}`]}
          csv={csv(`confusion-${c.judgeId}`)}
        />
      ))}

      {tables["label-metrics"] ? <FigureTable table={tables["label-metrics"]} csv={csv("label-metrics")} /> : null}

      <h2>By domain and judged model</h2>
      {report.domainBars.map((d) => (
        <BarsWithCI
          key={d.judge}
          title={`${d.judge}: ${numeric ? "Pearson r" : "accuracy"} by domain, 95% CI (${numeric ? "Fisher z" : "Wilson score"})`}
          bars={d.bars}
          percent={!numeric}
          domain={numeric ? [-1, 1] : [0, 1]}
        />
      ))}
      <FigureTable table={tables["judge-breakdowns"]} csv={csv("judge-breakdowns")} />

      {numeric ? (
        <>
          <h2>Score distributions</h2>
          <div style={{ display: "flex", flexWrap: "wrap", gap: "1rem" }}>
            {report.histograms.map((h, i) => (
              <div key={h.title}>
                <Histogram title={h.title} bins={h.bins} />
                <FigureTable table={tables[`histogram-${i}`]} csv={csv(`histogram-${i}`)} />
              </div>
            ))}
          </div>
          <FigureTable table={tables.ordering} csv={csv("ordering")} />
        </>
      ) : null}

      <h2>Judge variants</h2>
      <FigureTable table={tables.ablation} csv={csv("ablation")} />
      {judges.length > 1 ? (
        <details>
          <summary>Mark a judge as a variant (ablation) of another</summary>
          <p className="muted small">
            A variant sits beside its base judge in the table above (e.g. the same judge without its rubric). Imports set it with a
            variant_of column or npm run import -- --variant-of JUDGE=BASE.
          </p>
          <table>
            <thead>
              <tr>
                <th>Judge</th>
                <th>Variant of</th>
                <th>Variant label</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {judges.map((j) => (
                <tr key={j.id}>
                  <td>{j.name}</td>
                  <td colSpan={3}>
                    <Form method="post" className="toolbar" aria-label={`Variant of ${j.name}`}>
                      <CsrfField />
                      <input type="hidden" name="intent" value="set-variant" />
                      <input type="hidden" name="judgeId" value={j.id} />
                      <select name="variantOf" defaultValue={j.variantOf} aria-label={`${j.name}: variant of`}>
                        <option value="">(not a variant)</option>
                        {judges
                          .filter((b) => b.id !== j.id)
                          .map((b) => (
                            <option key={b.id} value={b.name}>
                              {b.name}
                            </option>
                          ))}
                      </select>
                      <input
                        name="variant"
                        defaultValue={j.variant}
                        placeholder="e.g. without rubric"
                        aria-label={`${j.name}: variant label`}
                      />
                      <button type="submit">Save</button>
                      {saved && saved.judgeId === j.id ? (
                        <span role="status" className={"error" in saved ? "error" : "muted"}>
                          {"error" in saved ? saved.error : saved.ok}
                        </span>
                      ) : null}
                    </Form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}

      {tables.planner ? (
        <>
          <h2>Sample-size planner</h2>
          <FigureTable table={tables.planner} csv={csv("judge-planner")} />
        </>
      ) : null}
    </div>
  );
}
