import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { and, eq } from "drizzle-orm";
import { useEffect, useState } from "react";
import { z } from "zod";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { getDb, schema } from "~/db.server";
import { projectMembers } from "~/annotation/tasks.server";
import { CalibrationError, calibratedScores, createCalibrationTask } from "~/runs/calibration.server";
import { runRow } from "~/runs/results.server";
import { controlRun, runProgress, RunInputError, type RunProgress, type StoredRunConfig } from "~/runs/runner.server";
import { ensureInProcessWorker } from "~/runs/worker.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.run.name ?? "Run"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const db = getDb();
  const run = runRow(db, project.id, Number(params.runId));
  if (!run) notFound("Run not found.");
  if (run.status === "queued" || run.status === "running") ensureInProcessWorker();
  const cfg = run.config as unknown as StoredRunConfig;
  const providerIds = [...new Set([...(cfg.models ?? []), ...(cfg.judges ?? [])].map((m) => m.providerId))];
  const recorded = providerIds.some((id) => db.select({ kind: schema.providers.kind }).from(schema.providers).where(eq(schema.providers.id, id)).get()?.kind === "replay");
  const tasks = db
    .select({ id: schema.tasks.id, name: schema.tasks.name, config: schema.tasks.config })
    .from(schema.tasks)
    .where(and(eq(schema.tasks.projectId, project.id), eq(schema.tasks.kind, "response-satisfaction")))
    .all()
    .filter((t) => (t.config as Record<string, unknown>).runId === run.id);
  const calibration = tasks.map((t) => ({ taskId: t.id, name: t.name, scores: calibratedScores(db, run.id, t.id) }));
  return json({
    project: { slug: project.slug },
    run: { id: run.id, name: run.name, protocol: run.protocol, protocolVersion: run.protocolVersion, status: run.status, settings: cfg.settings, models: cfg.models?.map((m) => m.name) ?? [], judges: cfg.judges?.map((j) => j.name) ?? [] },
    recorded,
    progress: runProgress(db, run.id)!,
    calibration,
    members: projectMembers(project.id, db).map((m) => ({ id: m.id, name: m.name, role: m.role })),
  });
}

const RunAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.enum(["pause", "resume", "cancel", "retry-failed"]) }),
  z.object({ intent: z.literal("calibrate"), plan: z.enum(["e4", "stratified"]).default("e4"), perStratum: z.coerce.number().int().min(1).max(1000).default(10), seed: z.coerce.number().int().default(1), overlap: z.coerce.number().int().min(1).max(10).default(2) }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const form = await request.formData();
  const parsed = RunAction.safeParse(Object.fromEntries(form));
  if (!parsed.success) return json({ error: `${parsed.error.issues[0].path.join(".") || "form"}: ${parsed.error.issues[0].message}` }, { status: 400 });
  const db = getDb();
  const run = runRow(db, project.id, Number(params.runId));
  if (!run) notFound("Run not found.");
  try {
    if (parsed.data.intent === "calibrate") {
      const d = parsed.data;
      const pool = form.getAll("pool").map(Number);
      if (pool.some((id) => !Number.isInteger(id))) return json({ error: "pool: not a user id" }, { status: 400 });
      const r = createCalibrationTask(db, { runId: run.id, projectId: project.id, plan: d.plan === "e4" ? { kind: "e4" } : { kind: "stratified", perStratum: d.perStratum }, seed: d.seed, overlap: d.overlap, pool, createdBy: user.id });
      return json({ ok: `Task ${r.taskId} created with ${r.units} units, each assigned to ${d.overlap} of ${r.pool.length} annotators (${r.assignments} assignments): it can be labelled now.`, taskId: r.taskId });
    }
    controlRun(db, run.id, parsed.data.intent);
    ensureInProcessWorker();
    return redirect(`/p/${project.slug}/runs/${run.id}`);
  } catch (err) {
    if (err instanceof RunInputError || err instanceof CalibrationError || err instanceof Error) return json({ error: err.message }, { status: 400 });
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
      <div style={{ display: "flex", height: 18, background: "#eee", borderRadius: 4, overflow: "hidden" }} role="progressbar" aria-valuemin={0} aria-valuemax={p.total} aria-valuenow={p.done + p.failed}>
        <div style={{ width: pct(p.done), background: "#2ca02c" }} title="done" />
        <div style={{ width: pct(p.failed), background: "#d62728" }} title="failed" />
      </div>
      <p className="small">
        <span className="badge">{p.status}</span> <b data-testid="done">{p.done}</b> done · <b>{p.failed}</b> failed · <b>{p.remaining}</b> remaining ({p.inFlight} in flight) ·{" "}
        {p.throughput.toFixed(1)} jobs/s · ETA {fmtEta(p.etaSeconds)} · tokens {p.promptTokens.toLocaleString()} in / {p.completionTokens.toLocaleString()} out
        {p.cost != null ? ` · cost ${p.cost.toFixed(4)}` : ""}
      </p>
    </div>
  );
}

export default function RunPage() {
  const { project, run, progress, recorded, calibration, members } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as { ok?: string; error?: string; taskId?: number } | undefined;
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
        {run.protocol} v{run.protocolVersion} · models: {run.models.join(", ")} · judges: {run.judges.join(", ")} · settings: <code>{JSON.stringify(run.settings)}</code>
      </p>
      <ProgressBar p={p} />
      {result?.error ? <div className="alert">{result.error}</div> : null}
      {result?.ok ? (
        <div className="panel">
          {result.ok} {result.taskId ? <Link to={`/p/${project.slug}/tasks/${result.taskId}`}>Open the task</Link> : null}
        </div>
      ) : null}
      <div className="toolbar">
        {(["pause", "resume", "cancel", "retry-failed"] as const).map((intent) => (
          <Form method="post" key={intent} style={{ display: "inline" }}>
            <CsrfField />
            <input type="hidden" name="intent" value={intent} />
            <button type="submit">{intent}</button>
          </Form>
        ))}{" "}
        <Link to="results">Results</Link>
      </div>
      <h2>Calibrate the judge</h2>
      <Form method="post" className="panel">
        <CsrfField />
        <input type="hidden" name="intent" value="calibrate" />
        <label>
          Sampling plan{" "}
          <select name="plan" defaultValue="e4">
            <option value="e4">RefineBench E.4: one checklist item and one response per problem</option>
            <option value="stratified">Stratified by model × turn</option>
          </select>
        </label>{" "}
        <label>
          Per stratum <input name="perStratum" type="number" defaultValue={10} min={1} />
        </label>{" "}
        <label>
          Seed <input name="seed" type="number" defaultValue={1} />
        </label>{" "}
        <label>
          Annotators per unit <input name="overlap" type="number" defaultValue={2} min={1} />
        </label>
        <fieldset>
          <legend>Annotators (the pool; units are assigned at once, balanced)</legend>
          {members.map((m) => (
            <label key={m.id} style={{ marginRight: "1em" }}>
              <input type="checkbox" name="pool" value={m.id} defaultChecked={m.role === "annotator"} /> {m.name} <span className="muted small">({m.role})</span>
            </label>
          ))}
        </fieldset>
        <button type="submit">Create human task</button>
      </Form>
      {calibration.map((c) => (
        <div key={c.taskId}>
          <h3>{c.name}</h3>
          <table>
            <thead>
              <tr>
                <th>Model</th>
                <th className="num">Judge (raw)</th>
                <th>95% CI</th>
                <th className="num">Bias-corrected (PPI)</th>
                <th>95% CI</th>
                <th className="num">Human labels</th>
              </tr>
            </thead>
            <tbody>
              {c.scores.map((s) => (
                <tr key={s.model}>
                  <td>{s.model}</td>
                  <td className="num">{s.raw.mean.toFixed(1)}</td>
                  <td>
                    [{s.raw.ci[0].toFixed(1)}, {s.raw.ci[1].toFixed(1)}]
                  </td>
                  <td className="num">{s.corrected ? s.corrected.estimate.toFixed(1) : "—"}</td>
                  <td>{s.corrected ? `[${s.corrected.ci[0].toFixed(1)}, ${s.corrected.ci[1].toFixed(1)}]` : "needs ≥ 2 labelled units"}</td>
                  <td className="num">{s.corrected?.n ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
}
