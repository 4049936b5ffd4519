/**
 * Adjudication: units where annotators disagree, their labels and notes side
 * by side, and the final label with a reason. Researchers, and annotators the
 * task names as adjudicators (only for units they did not label).
 */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction, SerializeFrom } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams, type ClientLoaderFunctionArgs } from "@remix-run/react";
import { adjudicate, adjudicationView, canAdjudicate, disagreements } from "~/annotation/adjudication.server";
import { penaltyReasonsOf, readConfig, scoreScaleOf } from "~/annotation/config.server";
import { findTask } from "~/annotation/tasks.server";
import { kindFields, loadKindFields } from "~/task-kinds/fields-registry";
import type { KindPartsHandle } from "~/task-kinds/parts-handle";
import { isAnnotatable, taskKind } from "~/task-kinds/registry.server";
import { forbidden, notFound, requireProjectRole } from "~/auth/guards.server";
import { Markdown, markdownLinks } from "~/components/Markdown";
import styles from "~/components/annotation.css";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }, ...markdownLinks];
export const meta: MetaFunction = () => [{ title: "Adjudicate · Concord" }];

async function context(request: Request, params: { slug?: string; taskId?: string }) {
  const access = await requireProjectRole(request, params.slug, "annotator");
  const task = await findTask(access.project.id, Number(params.taskId));
  if (!task || !isAnnotatable(task.kind)) notFound("Task not found.");
  if (!canAdjudicate(task, access.user.id, access.role)) forbidden("Only researchers and this task's adjudicators can adjudicate.");
  return { ...access, task };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { user, role, task } = await context(request, params);
  const list = await disagreements(task, user.id, role);
  const requested = new URL(request.url).searchParams.get("unit");
  const unitId = requested != null ? Number(requested) : (list.find((d) => !d.adjudicated)?.unitId ?? null);
  const view = unitId != null ? await adjudicationView(task, unitId, user.id, role) : null;
  if (requested != null && !view) notFound("No such unit to adjudicate.");
  const config = readConfig(task.config);
  return json({
    task: { name: task.name, kind: task.kind },
    list,
    unitId,
    view,
    rules: {
      penaltyReasons: penaltyReasonsOf(config),
      allowTies: true,
      scale: scoreScaleOf(config),
      settings: taskKind(task.kind).annotatorSettings?.(config) ?? {},
    },
  });
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { user, role, task, project } = await context(request, params);
  const form = await request.formData();
  const unitId = Number(form.get("unitId"));
  const res = await adjudicate({ projectId: project.id, taskId: task.id, unitId, userId: user.id, role, form });
  if (!res.ok) return json({ fieldErrors: res.fieldErrors, ok: false }, { status: 400 });
  return json({ fieldErrors: {} as Record<string, string>, ok: true });
}

/** The kind part this page renders (see app/task-kinds/parts-handle.ts): loaded before hydration and before a client navigation renders. */
export const handle: KindPartsHandle<SerializeFrom<typeof loader>> = {
  kindParts: (data) => loadKindFields(data.task.kind),
};

export async function clientLoader({ serverLoader }: ClientLoaderFunctionArgs) {
  const data = await serverLoader<typeof loader>();
  await handle.kindParts(data);
  return data;
}

export default function Adjudicate() {
  const { task, list, unitId, view, rules } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const { slug, taskId } = useParams();
  const base = `/p/${slug}/tasks/${taskId}`;
  const e = (n: string) => (data?.fieldErrors?.[n] ? <div className="field-error">{data.fieldErrors[n]}</div> : null);
  const kindUi = kindFields(task.kind);
  return (
    <div>
      <div className="annotate-head">
        <h1>Adjudicate: {task.name}</h1>
        <Link to={`${base}/queue`}>Back to the queue</Link>
      </div>
      <p className="muted">
        {list.length} disputed unit(s), {list.filter((d) => d.adjudicated).length} adjudicated.
      </p>
      <ul className="queue-list" style={{ marginBottom: "1rem" }}>
        {list.map((d) => (
          <li key={d.unitId}>
            <Link to={`${base}/adjudicate?unit=${d.unitId}`}>Unit #{d.unitId}</Link>
            <span className={d.adjudicated ? "status-submitted" : "status-draft"}>
              {d.adjudicated ? "adjudicated" : `${d.labels} labels disagree`}
            </span>
          </li>
        ))}
      </ul>
      {data?.ok ? <div className="alert ok">Final label saved.</div> : null}
      {view && unitId != null ? (
        <>
          <div className="panel">
            <Markdown>{view.unit.query}</Markdown>
            {view.unit.checklistItem ? (
              <p>
                <strong>Checklist item:</strong> {view.unit.checklistItem}
              </p>
            ) : null}
            {view.unit.reference ? (
              <div className="reference-box">
                <Markdown>{view.unit.reference}</Markdown>
              </div>
            ) : null}
          </div>
          <div className={`compare n${Math.min(4, view.unit.responses.length)}`}>
            {view.unit.responses.map((r) => (
              <article key={r.letter} className="response-card">
                <h3>Response {r.letter}</h3>
                <Markdown>{r.text}</Markdown>
              </article>
            ))}
          </div>
          <h2>Labels</h2>
          <div className="side-by-side" data-testid="labels">
            {view.labels.map((l, i) => (
              <div className="panel" key={i}>
                <h3 style={{ marginTop: 0 }}>{l.annotator}</h3>
                <p className="small muted">
                  {l.status}
                  {l.skipReason ? `: ${l.skipReason}` : ""}
                </p>
                {l.summary.map((s, j) => (
                  <div key={j}>{s}</div>
                ))}
                {l.notes.map((s, j) => (
                  <div key={j} className="small muted">
                    {s}
                  </div>
                ))}
              </div>
            ))}
          </div>
          {view.final ? (
            <div className="alert info">
              Final: {view.final.summary.join("; ")} — {view.final.reason} ({view.final.by})
            </div>
          ) : null}
          <Form method="post" className="panel">
            <CsrfField />
            <input type="hidden" name="unitId" value={unitId} />
            <h2 style={{ marginTop: 0 }}>Final label</h2>
            <kindUi.Final responses={view.unit.responses} rules={rules} />
            {Object.entries(data?.fieldErrors ?? {})
              .filter(([k]) => k !== "reason")
              .map(([k, v]) => (
                <div key={k} className="field-error">
                  {v}
                </div>
              ))}
            <label>
              Reason
              <textarea name="reason" rows={2} />
            </label>
            {e("reason")}
            <button type="submit">Record final label</button>
          </Form>
        </>
      ) : (
        <p className="muted">Nothing to adjudicate.</p>
      )}
    </div>
  );
}
