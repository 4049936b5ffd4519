import { ConfirmButton } from "~/components/ConfirmButton";
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import { RunAction } from "~/forms/runs.server";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { domainErrorResponse, domainFieldErrorsResponse } from "~/errors.server";
import { projectMembers } from "~/annotation/tasks.server";
import { CalibrationError, createCalibrationTask } from "~/runs/calibration.server";
import { controlProjectRun, projectRun, RunNotFoundError, runOverview } from "~/runs/project-runs.server";
import { RunInputError, type RunProgress } from "~/runs/runner.server";
import { ensureInProcessWorker } from "~/runs/worker.server";
import { settingRows } from "~/runs/setting-rows";
import { IntervalMethod, intervalText } from "~/components/Interval";
import styles from "~/components/annotation.css";
import { ErrorSummary, FieldError, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";
import { fieldErrorsOf, humanErrors } from "~/forms/messages";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.run.name ?? "Run"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const d = getDal();
  const o = await orNotFound(() => runOverview(d, project.id, Number(params.runId)));
  if (o.run.status === "queued" || o.run.status === "running") ensureInProcessWorker();
  return json({
    project: { slug: project.slug },
    calibrationPlans: o.calibrationPlans,
    run: {
      id: o.summary.id,
      name: o.summary.name,
      protocol: o.summary.protocol,
      protocolVersion: o.summary.protocolVersion,
      status: o.summary.status,
      settings: o.summary.settings,
      models: o.summary.models,
      judges: o.summary.judges.map((j) => j.name),
    },
    recorded: o.recorded,
    progress: o.progress,
    calibration: o.calibration,
    scoreCalibration: o.scoreCalibration,
    failedJobs: o.failedJobs,
    providerSampling: o.providers,
    members: (await projectMembers(project.id, d)).map((m) => ({ id: m.id, name: m.name, role: m.role })),
  });
}

/** The page's 404 for a run that is not the project's (the domain's RunNotFoundError). */
async function orNotFound<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof RunNotFoundError) notFound("Run not found.");
    throw err;
  }
}

/** The calibration form's labels, also used to word its errors ("Units per stratum must be 1 or more."). */
const CALIBRATION_LABELS: Record<string, string> = {
  plan: "Sampling plan",
  splits: "Splits",
  perStratum: "Units per stratum",
  seed: "Seed",
  overlap: "Annotators per unit",
  pool: "Annotator pool",
};

/**
 * A calibration refusal ("pool: choose at least one annotator") as a sentence
 * beside its field ("Choose at least one annotator."); one with no field of the
 * form goes to the top of the form.
 */
function calibrationFieldErrors(err: CalibrationError): FieldErrors {
  const field = err.field !== undefined && err.field in CALIBRATION_LABELS ? err.field : "form";
  const text = field === "form" ? err.message : err.message.replace(`${field}: `, "");
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return { [field]: /[.!?]$/.test(sentence) ? sentence : `${sentence}.` };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const form = await request.formData();
  const calibrate = form.get("intent") === "calibrate";
  const parsed = RunAction.safeParse(Object.fromEntries(form), { error: humanErrors(CALIBRATION_LABELS) });
  if (!parsed.success) {
    if (calibrate) return json({ form: "calibrate", fieldErrors: fieldErrorsOf(parsed.error) }, { status: 400 });
    return json({ error: `${parsed.error.issues[0].path.join(".") || "form"}: ${parsed.error.issues[0].message}` }, { status: 400 });
  }
  const run = await orNotFound(() => projectRun(getDal(), project.id, Number(params.runId)));
  try {
    if (parsed.data.intent === "calibrate") {
      const d = parsed.data;
      const pool = form.getAll("pool").map(Number);
      if (pool.some((id) => !Number.isInteger(id)))
        return json({ form: "calibrate", fieldErrors: { pool: "Choose annotators from the list." } }, { status: 400 });
      const r = await createCalibrationTask(getDal(), {
        runId: run.id,
        projectId: project.id,
        plan:
          d.plan === "e4"
            ? { kind: "e4" }
            : d.plan === "uniform"
              ? { kind: "uniform", size: d.perStratum }
              : { kind: d.plan, perStratum: d.perStratum },
        seed: d.seed,
        overlap: d.overlap,
        pool,
        splits: d.splits,
        createdBy: user.id,
      });
      return json({
        ok: `Task ${r.taskId} created with ${r.units} units, each assigned to ${d.overlap} of ${r.pool.length} annotators (${r.assignments} assignments): it can be labelled now.${r.warnings.length ? ` Warning: ${r.warnings.join("; ")}.` : ""}`,
        taskId: r.taskId,
      });
    }
    await controlProjectRun(getDal(), project.id, run.id, parsed.data.intent);
    ensureInProcessWorker();
    return redirect(`/p/${project.slug}/runs/${run.id}`);
  } catch (err) {
    if (err instanceof CalibrationError && calibrate)
      return domainFieldErrorsResponse(err, { form: "calibrate", fieldErrors: calibrationFieldErrors(err) });
    // RunInputError ("cannot pause a finished run"), and any other failure of the action, for the page as a whole.
    if (err instanceof RunInputError) return domainErrorResponse(err);
    if (err instanceof Error) return json({ error: err.message }, { status: 400 });
    throw err;
  }
}

function fmtEta(s: number | null) {
  if (s == null) return "—";
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export function ProgressBar({ p }: { p: RunProgress }) {
  const total = Math.max(1, p.total);
  const pct = (n: number) => `${(100 * n) / total}%`;
  return (
    <div className="panel" data-testid="progress">
      <div
        style={{ display: "flex", height: 18, background: "#eee", borderRadius: 4, overflow: "hidden" }}
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={p.total}
        aria-valuenow={p.done + p.failed}
      >
        <div style={{ width: pct(p.done), background: "#2ca02c" }} title="done" />
        <div style={{ width: pct(p.failed), background: "#d62728" }} title="failed" />
      </div>
      <p className="small">
        <span className="badge">{p.status}</span> <b data-testid="done">{p.done}</b> done · <b>{p.failed}</b> failed · <b>{p.remaining}</b>{" "}
        remaining ({p.inFlight} in flight) · {p.throughput.toFixed(1)} jobs/s · ETA {fmtEta(p.etaSeconds)} · tokens{" "}
        {p.promptTokens.toLocaleString()} in / {p.completionTokens.toLocaleString()} out
        {p.cost != null ? ` · cost ${p.cost.toFixed(4)}` : ""}
      </p>
      {(p.status === "queued" || p.status === "running") && p.workers === 0 ? (
        <p className="small" role="status" data-testid="no-worker">
          No run worker is running, so this run waits. Start one with <code>npm run worker</code> on any machine with this
          installation&apos;s <code>DATABASE_URL</code> (and <code>CONCORD_ENCRYPTION_KEY</code>); it starts on its own once one does.
        </p>
      ) : null}
    </div>
  );
}

/** Which controls apply to a run in this state (the others are shown disabled, with the reason). */
export function applicableActions(status: string, failed: number): Record<"pause" | "resume" | "cancel" | "retry-failed", string | null> {
  const active = status === "queued" || status === "running";
  const terminal = ["completed", "completed-with-errors", "failed", "cancelled"].includes(status);
  return {
    pause: active ? null : `a ${status} run cannot be paused`,
    resume: status === "paused" ? null : "only a paused run can be resumed",
    cancel: terminal ? `the run is already ${status}` : null,
    "retry-failed": status === "cancelled" ? "a cancelled run cannot be retried" : failed === 0 ? "no failed jobs" : null,
  };
}

const ACTION_LABELS = { pause: "Pause", resume: "Resume", cancel: "Cancel", "retry-failed": "Retry failed jobs" } as const;

export default function RunPage() {
  const data = useLoaderData<typeof loader>();
  const { project, run, progress, recorded, calibration, scoreCalibration, members, failedJobs, providerSampling } = data;
  const result = useActionData<typeof action>() as
    { ok?: string; error?: string; taskId?: number; form?: string; fieldErrors?: FieldErrors } | undefined;
  const calErrors: FieldErrors = (result?.form === "calibrate" ? result.fieldErrors : undefined) ?? {};
  const calForm = useRef<HTMLFormElement>(null);
  const calSummary = useRef<HTMLDivElement>(null);
  useFocusFirstError(calForm, calErrors, result, calSummary);
  const calErr = (name: string) => <FieldError errors={calErrors} name={name} scope="cal-" />;
  const calAria = (name: string) => invalidProps(calErrors, name, "cal-");
  const [p, setP] = useState(progress);
  useEffect(() => {
    setP(progress);
    if (!["queued", "running"].includes(progress.status)) return;
    const es = new EventSource(`/p/${project.slug}/runs/${run.id}/events`);
    es.addEventListener("progress", (e) => setP(JSON.parse((e as MessageEvent).data)));
    es.addEventListener("end", () => es.close());
    return () => es.close();
  }, [progress, project.slug, run.id]);
  return (
    <div>
      <h1>
        {run.name} {recorded ? <span className="badge">recorded outputs (replay)</span> : null}
      </h1>
      <p className="muted">
        {run.protocol} v{run.protocolVersion} · models: {run.models.join(", ")} · judges: {run.judges.join(", ")}
      </p>
      <ProgressBar p={p} />
      {p.interruptedCalls > 0 ? (
        <p className="small muted">
          {p.interruptedCalls} call{p.interruptedCalls === 1 ? " was" : "s were"} cut off when a worker stopped; they are counted (prompt
          tokens estimated).
        </p>
      ) : null}
      {result?.error ? (
        <div className="alert" role="alert">
          {result.error}
        </div>
      ) : null}
      {result?.ok ? (
        <div className="panel">
          {result.ok} {result.taskId ? <Link to={`/p/${project.slug}/tasks/${result.taskId}`}>Open the task</Link> : null}
        </div>
      ) : null}
      <div className="toolbar" data-testid="run-actions">
        {(["pause", "resume", "cancel", "retry-failed"] as const).map((intent) => {
          const why = applicableActions(p.status, p.failed)[intent];
          return (
            <Form method="post" key={intent} style={{ display: "inline" }}>
              <CsrfField />
              <input type="hidden" name="intent" value={intent} />
              {intent === "cancel" ? (
                <ConfirmButton
                  disabled={why !== null}
                  title={why ?? undefined}
                  className="secondary"
                  question="Cancel this run? Jobs not yet done are dropped; finished results are kept."
                >
                  {ACTION_LABELS[intent]}
                </ConfirmButton>
              ) : (
                <button type="submit" disabled={why !== null} title={why ?? undefined}>
                  {ACTION_LABELS[intent]}
                </button>
              )}
            </Form>
          );
        })}{" "}
        <Link to="results">Results</Link>
      </div>
      <h2>Settings</h2>
      <dl className="settings" data-testid="run-settings">
        {settingRows(run.settings as Record<string, unknown>).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <table className="small">
        <caption className="muted">
          Providers of this run: the sampling settings each adds to its requests (the run's settings above override them), and its limits
        </caption>
        <thead>
          <tr>
            <th>Provider</th>
            <th>Model</th>
            <th>Sampling</th>
            <th className="num">Concurrency</th>
            <th className="num">Requests/min</th>
          </tr>
        </thead>
        <tbody>
          {providerSampling.map((ps) => (
            <tr key={ps.name}>
              <td>{ps.name}</td>
              <td>{ps.kind === "replay" ? `${ps.model} (recorded)` : ps.model}</td>
              <td>
                {Object.keys(ps.sampling).length
                  ? Object.entries(ps.sampling)
                      .map(([k, v]) => `${k.replace("_", " ")} ${v}`)
                      .join(", ")
                  : "provider defaults"}
              </td>
              <td className="num">{ps.concurrency}</td>
              <td className="num">{ps.requestsPerMinute ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {failedJobs.length > 0 ? (
        <section data-testid="failed-jobs">
          <h2>
            Failed jobs ({p.failed}){" "}
            <Form method="post" style={{ display: "inline" }}>
              <CsrfField />
              <input type="hidden" name="intent" value="retry-failed" />
              <button type="submit" disabled={run.status === "cancelled"}>
                Retry failed jobs
              </button>
            </Form>
          </h2>
          <p className="small muted">A failed job is never counted as a result: its item is reported as failed until a retry succeeds.</p>
          <table>
            <thead>
              <tr>
                <th>Job</th>
                <th>Provider</th>
                <th className="num">Attempts</th>
                <th>Error (from the provider)</th>
              </tr>
            </thead>
            <tbody>
              {failedJobs.map((j) => (
                <tr key={j.id}>
                  <td className="small">
                    <code>{j.key}</code>
                  </td>
                  <td>{j.provider}</td>
                  <td className="num">{j.attempts}</td>
                  <td className="small">{j.error}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {p.failed > failedJobs.length ? (
            <p className="small muted">
              The first {failedJobs.length} of {p.failed} are listed.
            </p>
          ) : null}
        </section>
      ) : null}
      <h2>Calibrate the judge</h2>
      <div className="panel" data-testid="calibrate">
        <ErrorSummary errors={calErrors} summaryRef={calSummary} />
        <Form method="post" className="stack" noValidate ref={calForm} style={{ maxWidth: 640 }}>
          <CsrfField />
          <input type="hidden" name="intent" value="calibrate" />
          <label>
            Sampling plan
            <select name="plan" defaultValue={data.calibrationPlans[0]?.kind} {...calAria("plan")}>
              {data.calibrationPlans.map((p) => (
                <option key={p.kind} value={p.kind}>
                  {p.label}
                </option>
              ))}
            </select>
          </label>
          {calErr("plan")}
          <label>
            Splits (annotators disagree)
            <select name="splits" defaultValue="exclude" {...calAria("splits")}>
              <option value="exclude">left out</option>
              <option value="adjudicate">resolved by adjudication</option>
            </select>
          </label>
          {calErr("splits")}
          <label>
            Units per stratum
            <input name="perStratum" type="number" defaultValue={10} min={1} max={1000} {...calAria("perStratum")} />
          </label>
          {calErr("perStratum")}
          <label>
            Seed
            <input name="seed" type="number" defaultValue={1} {...calAria("seed")} />
          </label>
          {calErr("seed")}
          <label>
            Annotators per unit
            <input name="overlap" type="number" defaultValue={2} min={1} max={10} {...calAria("overlap")} />
          </label>
          {calErr("overlap")}
          <fieldset className="pool-picker">
            <legend>Annotator pool</legend>
            <p className="small muted">Units are assigned at once, balanced over the pool.</p>
            {members.map((m, i) => (
              <label key={m.id} className="choice">
                <input
                  type="checkbox"
                  name="pool"
                  value={m.id}
                  defaultChecked={m.role === "annotator"}
                  {...(i === 0 ? calAria("pool") : {})}
                />{" "}
                {m.name} <span className="muted small">({m.role})</span>
              </label>
            ))}
            {calErr("pool")}
          </fieldset>
          <div>
            <button type="submit">Create human task</button>
          </div>
        </Form>
      </div>
      {scoreCalibration.map((c) => (
        <div key={c.taskId} data-testid="score-calibration">
          <h3>{c.name}</h3>
          <p>
            Human 1–10 scores of this run&rsquo;s writings (<Link to={`/p/${project.slug}/tasks/${c.taskId}`}>task page</Link>): the raw and
            bias-corrected mean scores per task type are on the <Link to={`/p/${project.slug}/runs/${run.id}/results`}>results page</Link>.
          </p>
        </div>
      ))}
      {calibration.map((c) => (
        <div key={c.taskId}>
          <h3>{c.name}</h3>
          {c.warnings.length ? (
            <div className="alert" role="status" data-testid="calibration-warning">
              {c.warnings.map((w, i) => (
                <p key={i}>Warning: {w}.</p>
              ))}
            </div>
          ) : null}
          <table>
            <thead>
              <tr>
                <th>Model</th>
                <th className="num">Judge (raw)</th>
                <th>95% CI (Wilson score)</th>
                <th className="num">Bias-corrected (PPI)</th>
                <th>95% CI (Wilson score per direction of the judge&apos;s errors, MOVER)</th>
                <th className="num">Human labels</th>
              </tr>
            </thead>
            <tbody>
              {c.scores.map((s) => (
                <tr key={s.model}>
                  <td>{s.model}</td>
                  <td className="num">{s.raw.mean.toFixed(1)}</td>
                  <td data-ci="percent">{intervalText(s.raw.ci, 1, "too few verdicts")}</td>
                  <td className="num">{s.corrected ? s.corrected.estimate.toFixed(1) : "—"}</td>
                  <td data-ci="percent">
                    {s.corrected
                      ? intervalText(
                          s.corrected.ci,
                          1,
                          "too few labels",
                          s.corrected.exact ? "exact: every unit labelled" : "narrower than the digits shown",
                        )
                      : "too few labels (needs ≥ 2 labelled units)"}
                  </td>
                  <td className="num">{s.corrected?.n ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <IntervalMethod>
            Share of Yes verdicts, in %. Intervals: the Wilson score interval (Wilson 1927), which stays within 0–100 without clipping. The
            corrected share uses the prediction-powered rectifier of Angelopoulos et al. (2023, §2) with each labelled unit weighted by its
            inclusion probability. The rectifier is the difference between two shares of the judge&apos;s errors (too harsh, too lenient):
            each gets a Wilson interval at its effective sample size (Korn &amp; Graubard 1998), never less wide than for the labelled
            units&apos; count, combined by MOVER (Zou &amp; Donner 2008) per stratum and over strata — so labels that all agree with the
            judge still leave an interval of honest width. A stratum with fewer than two labelled units adds its whole range. &ldquo;Too
            few&rdquo;: fewer than two labelled units; with every unit labelled the corrected figure is exact.
          </IntervalMethod>
        </div>
      ))}
    </div>
  );
}
