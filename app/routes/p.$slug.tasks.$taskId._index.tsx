/**
 * Researcher view of one task: progress per annotator, gold accuracy, the
 * pool (adding or removing annotators hands over unstarted work only),
 * adjudicators, gold answers, and closing or reopening the task.
 */
import { ConfirmButton } from "~/components/ConfirmButton";
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction, SerializeFrom } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams, type ClientLoaderFunctionArgs } from "@remix-run/react";
import { useRef } from "react";
import { goldUnitOf, parseGoldLabel } from "~/annotation/gold.server";
import { taskPage } from "~/annotation/task-view.server";
import { DomainError, domainErrorResponse } from "~/errors.server";
import { RemoveSchema, StatusSchema } from "~/forms/tasks.server";
import { readConfig, scoreScaleOf } from "~/annotation/config.server";
import { kindFields, loadKindFields } from "~/task-kinds/fields-registry";
import type { KindPartsHandle } from "~/task-kinds/parts-handle";
import {
  addToPool,
  archiveTask,
  deleteTask,
  findTask,
  removeFromPool,
  setAdjudicators,
  setGoldLabel,
  setTaskStatus,
  TaskError,
} from "~/annotation/tasks.server";
import { requeueStale } from "~/curation/requeue.server";
import { FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError } from "~/components/FieldError";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { ProgressBar } from "~/components/ProgressBar";
import styles from "~/components/annotation.css";
import { ActionMessage } from "~/components/ActionMessage";
import { renameTask } from "~/annotation/task-names.server";
import { TaskNameForm, type TaskNameOutcome } from "~/components/TaskNameForm";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.task.name ?? "Task"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const task = await findTask(project.id, Number(params.taskId));
  if (!task) notFound("Task not found.");
  return json(await taskPage(project.id, task));
}

const ids = (form: FormData) =>
  form
    .getAll("userId")
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);

export async function action({ request, params }: ActionFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const task = await findTask(project.id, Number(params.taskId));
  if (!task) notFound("Task not found.");
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  try {
    if (intent === "rename") {
      const values = { name: String(form.get("name") ?? ""), guidelines: String(form.get("guidelines") ?? "") };
      const r = await renameTask(project.id, task.id, { ...values, confirmed: form.get("confirmNames") === "yes" });
      return r.ok
        ? json({ ok: r.message })
        : json({ intent: "rename", fieldErrors: r.fieldErrors, warning: r.warning, values }, { status: 400 });
    }
    if (StatusSchema.safeParse(intent).success) {
      await setTaskStatus(project.id, task.id, intent === "close" ? "closed" : "open");
      return json({ ok: intent === "close" ? "Task closed: labels are frozen." : "Task reopened." });
    }
    if (intent === "archive" || intent === "unarchive") {
      await archiveTask(project.id, task.id, intent === "archive");
      return json({
        ok:
          intent === "archive"
            ? "Task archived: its labels and reports are kept; annotators no longer see it."
            : "Task brought back from the archive, closed.",
      });
    }
    if (intent === "delete") {
      if (form.get("confirm") !== "yes")
        return json(
          { error: "Tick the box to confirm that the task is deleted for good.", field: "confirm", form: "delete" },
          { status: 400 },
        );
      await deleteTask(project.id, task.id);
      return redirect(`/p/${project.slug}/tasks`);
    }
    if (intent === "requeue-stale") {
      const r = await requeueStale(project.id, { taskId: task.id });
      return json({
        ok:
          r.assignments === 0
            ? "No stale labels to send back."
            : `Sent ${r.assignments} stale label${r.assignments === 1 ? "" : "s"} on ${r.units} unit${r.units === 1 ? "" : "s"} back to their annotators${r.moved ? ` (${r.moved} unit${r.moved === 1 ? "" : "s"} moved to the checklist item's current version)` : ""}.`,
      });
    }
    if (intent === "add-annotators") {
      const add = ids(form);
      if (add.length === 0) return json({ error: "userId: choose at least one member to add." }, { status: 400 });
      const { moved } = await addToPool(project.id, task.id, add);
      return json({ ok: `Pool updated; ${moved} unstarted assignment(s) moved to rebalance.` });
    }
    if (intent === "remove-annotator") {
      const parsed = RemoveSchema.safeParse({ userId: form.get("userId") ?? undefined });
      if (!parsed.success) return json({ error: "userId: choose the annotator to remove." }, { status: 400 });
      const { moved, kept } = await removeFromPool(project.id, task.id, parsed.data.userId);
      return json({
        ok: `Removed from the pool; ${moved} unstarted assignment(s) handed to others, ${kept} started kept with the annotator.`,
      });
    }
    if (intent === "set-adjudicators") {
      await setAdjudicators(project.id, task.id, ids(form));
      return json({ ok: "Adjudicators saved." });
    }
    if (intent === "gold") {
      const unitId = Number(form.get("unitId"));
      const unit = await goldUnitOf(task, unitId);
      const parsed = parseGoldLabel(
        unit.kind,
        unit.responseIds ?? null,
        readConfig(task.config).allowTies === true,
        form,
        scoreScaleOf(readConfig(task.config)),
        readConfig(task.config),
      );
      if (!parsed.ok) {
        return json(
          {
            error: `Gold answer of unit #${unitId} not saved: ${Object.values(parsed.fieldErrors).join(" ")}`,
            fieldErrors: parsed.fieldErrors,
            form: `gold-${unitId}`,
          },
          { status: 400 },
        );
      }
      await setGoldLabel(task.id, unitId, parsed.label);
      return json({ ok: `Gold answer of unit #${unitId} saved.` });
    }
  } catch (err) {
    // A TaskError belongs to the form that sent it (its intent); other refusals (gold lookup) to the page.
    if (err instanceof TaskError) return domainErrorResponse(err, { form: intent });
    if (err instanceof DomainError) return domainErrorResponse(err);
    throw err;
  }
  return json({ error: `Unknown intent "${intent.slice(0, 20)}".` }, { status: 400 });
}

/** The kind part this page renders (see app/task-kinds/parts-handle.ts): loaded before hydration and before a client navigation renders. */
export const handle: KindPartsHandle<SerializeFrom<typeof loader>> = {
  kindParts: (data) => (data.task.annotatable ? loadKindFields(data.task.kind) : Promise.resolve()),
};

export async function clientLoader({ serverLoader }: ClientLoaderFunctionArgs) {
  const data = await serverLoader<typeof loader>();
  await handle.kindParts(data);
  return data;
}

export default function TaskOverview() {
  const { task, progress, pool, adjudicators, members, gold, work, stale } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const { slug } = useParams();
  const outside = members.filter((m) => !pool.includes(m.id));
  const kindUi = task.annotatable ? kindFields(task.kind) : null;
  const pageRef = useRef<HTMLDivElement>(null);
  const answeredForm = data && typeof data === "object" && "form" in data ? String(data.form) : "";
  useFocusFirstError(pageRef, answeredForm ? fieldErrorsFrom(data, answeredForm) : {}, data);
  const hasWork = work.annotations > 0 || work.skips > 0;
  return (
    <div ref={pageRef}>
      <div className="annotate-head">
        <h1>{task.name}</h1>
        <span className="muted">
          {task.kindTitle} · k = {task.overlap} · seed {task.seed}
          {task.plan ? ` · plan ${task.plan}` : ""} · <Link to={`/p/${slug}/tasks/${task.id}/queue`}>My queue</Link> ·{" "}
          <Link to={`/p/${slug}/tasks/${task.id}/adjudicate`}>Adjudicate</Link>
        </span>
      </div>
      <ActionMessage data={data} />
      <TaskNameForm name={task.name} guidelines={task.guidelines} outcome={data as TaskNameOutcome} />
      <div className="panel">
        <ProgressBar label="Overall" done={progress.done} total={progress.total} testId="progress-overall" />
        <Form method="post" className="inline">
          <CsrfField />
          <span>
            Status: <strong data-testid="task-status">{task.status}</strong>
          </span>
          {task.status === "archived" ? null : task.status === "open" ? (
            <ConfirmButton
              name="intent"
              value="close"
              className="danger"
              question="Close this task? Annotators can no longer label or revise; you can reopen it."
            >
              Close task
            </ConfirmButton>
          ) : (
            <button type="submit" name="intent" value="reopen" className="secondary">
              Reopen task
            </button>
          )}
        </Form>
      </div>
      {stale.assignments > 0 || stale.inClosedTasks > 0 ? (
        <div className="alert info" data-testid="stale-labels">
          <p style={{ margin: 0 }}>
            {stale.assignments + stale.inClosedTasks} submitted label{stale.assignments + stale.inClosedTasks === 1 ? "" : "s"} judged an
            older version of their unit (the item, checklist item or reference was edited in curation since).
          </p>
          {stale.assignments > 0 ? (
            <Form method="post" className="inline" style={{ marginTop: "0.5rem" }}>
              <CsrfField />
              <button type="submit" name="intent" value="requeue-stale">
                Send {stale.units} stale unit{stale.units === 1 ? "" : "s"} back to{" "}
                {stale.assignments === 1 ? "its annotator" : "their annotators"}
              </button>
              <span className="small">
                They see the current text with a &ldquo;changed&rdquo; badge and label it again; the old labels are kept, marked stale.
              </span>
            </Form>
          ) : (
            <p className="small" style={{ margin: "0.5rem 0 0" }}>
              Reopen the task to send them back for relabelling.
            </p>
          )}
        </div>
      ) : null}
      <h2>Progress per annotator</h2>
      <table data-testid="per-annotator">
        <thead>
          <tr>
            <th>Annotator</th>
            <th className="num">Assigned</th>
            <th className="num">Submitted</th>
            <th className="num">Drafts</th>
            <th className="num">Skipped</th>
            <th className="num">Pending</th>
            <th className="num">Median time</th>
            <th className="num">Gold accuracy</th>
          </tr>
        </thead>
        <tbody>
          {progress.annotators.map((a) => (
            <tr key={a.annotatorId}>
              <td>{a.name}</td>
              <td className="num">{a.total}</td>
              <td className="num">{a.submitted}</td>
              <td className="num">{a.draft}</td>
              <td className="num">{a.skipped}</td>
              <td className="num">{a.pending}</td>
              <td className="num">{a.medianMs != null ? `${(a.medianMs / 1000).toFixed(1)} s` : "—"}</td>
              <td className="num">
                {a.gold.scored > 0 ? `${a.gold.correct}/${a.gold.scored} (${Math.round((100 * a.gold.correct) / a.gold.scored)}%)` : "—"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <div className="side-by-side" style={{ marginTop: "1rem" }}>
        <div className="panel">
          <h2 style={{ marginTop: 0 }}>Add annotators</h2>
          <p className="small muted">New annotators take over work nobody has started; started work never moves.</p>
          {outside.length === 0 ? (
            <p className="muted">Every member is already in the pool.</p>
          ) : (
            <Form method="post" className="stack">
              <CsrfField />
              {outside.map((m) => (
                <label key={m.id} className="choice">
                  <input type="checkbox" name="userId" value={m.id} /> {m.name} <span className="muted small">({m.role})</span>
                </label>
              ))}
              <button type="submit" name="intent" value="add-annotators">
                Add to pool
              </button>
            </Form>
          )}
        </div>
        <div className="panel" data-testid="pool">
          <h2 style={{ marginTop: 0 }}>Pool</h2>
          <p className="small muted">
            Removing an annotator hands their unstarted units to the others (each unit keeps {task.overlap} annotators); their drafts,
            submissions and skips stay theirs.
          </p>
          <ul className="stack">
            {pool.map((id) => {
              const name =
                members.find((m) => m.id === id)?.name ?? progress.annotators.find((a) => a.annotatorId === id)?.name ?? `#${id}`;
              return (
                <li key={id}>
                  <Form method="post" className="inline">
                    <CsrfField />
                    <input type="hidden" name="userId" value={id} />
                    <span>{name}</span>
                    <ConfirmButton
                      name="intent"
                      value="remove-annotator"
                      className="secondary"
                      disabled={pool.length <= task.overlap}
                      aria-label={`Remove ${name} from the pool`}
                      question={`Remove ${name} from this task's pool? Their unlabelled units move to others; their labels stay.`}
                    >
                      Remove
                    </ConfirmButton>
                  </Form>
                </li>
              );
            })}
          </ul>
          {pool.length <= task.overlap ? (
            <p className="small muted">The pool has exactly k = {task.overlap} annotators; add one before removing another.</p>
          ) : null}
        </div>
        <div className="panel">
          <h2 style={{ marginTop: 0 }}>Adjudicators</h2>
          <p className="small muted">Researchers can always adjudicate. Annotators named here adjudicate units they did not label.</p>
          <Form method="post" className="stack">
            <CsrfField />
            {members
              .filter((m) => m.role === "annotator")
              .map((m) => (
                <label key={m.id} className="choice">
                  <input type="checkbox" name="userId" value={m.id} defaultChecked={adjudicators.includes(m.id)} /> {m.name}
                </label>
              ))}
            <button type="submit" name="intent" value="set-adjudicators">
              Save adjudicators
            </button>
          </Form>
        </div>
      </div>

      {gold.length > 0 ? (
        <>
          <h2>Gold units ({gold.length})</h2>
          <p className="small muted">Hidden among every annotator's units. Record the known answer to score their accuracy.</p>
          <div className="gold-list">
            {gold.map((g) => {
              const scope = `gold-${g.id}`;
              const errors = fieldErrorsFrom(data, scope);
              return (
                <section className="panel gold-unit" key={g.id} aria-labelledby={`gold-${g.id}-title`} data-testid={`gold-unit-${g.id}`}>
                  <h3 id={`gold-${g.id}-title`} style={{ marginTop: 0 }}>
                    Unit {g.position + 1} (#{g.id}) · item {g.content.item}{" "}
                    <span className={g.known ? "badge yes" : "badge"}>{g.known ? "answer set" : "no answer yet"}</span>
                  </h3>
                  <div className="gold-grid">
                    <div className="gold-content" data-testid="gold-content">
                      <div className="small muted">Prompt</div>
                      <div className="prewrap gold-text">{g.content.query}</div>
                      {g.content.passage ? (
                        <details>
                          <summary className="small">Passage</summary>
                          <div className="prewrap gold-text">{g.content.passage}</div>
                        </details>
                      ) : null}
                      {g.content.checklistItem ? (
                        <>
                          <div className="small muted">Checklist item</div>
                          <div className="gold-checklist">{g.content.checklistItem}</div>
                        </>
                      ) : null}
                      {g.content.response ? (
                        <>
                          <div className="small muted">Response ({g.content.response.model})</div>
                          <div className="prewrap gold-text">{g.content.response.text}</div>
                        </>
                      ) : null}
                      {g.content.reference ? (
                        <details>
                          <summary className="small">Reference answer</summary>
                          <div className="prewrap gold-text">{g.content.reference}</div>
                        </details>
                      ) : null}
                      {g.responses.length > 0 ? (
                        <div className="gold-responses">
                          {g.responses.map((r) => (
                            <div key={r.letter} className="response">
                              <div className="small muted">
                                Response {r.letter} · {r.reference ? "the reference" : (r.model ?? "response")}
                              </div>
                              <div className="prewrap gold-text">{r.text}</div>
                            </div>
                          ))}
                        </div>
                      ) : null}
                    </div>
                    <Form method="post" className="stack gold-form" noValidate>
                      <CsrfField />
                      <input type="hidden" name="unitId" value={g.id} />
                      {kindUi ? (
                        <kindUi.Gold
                          unitId={g.id}
                          values={g.values}
                          responses={g.responses}
                          allowTies={task.allowTies}
                          errors={errors}
                          scope={scope}
                        />
                      ) : null}
                      {Object.keys(errors)
                        .filter((k) => !kindUi?.goldField(k))
                        .map((k) => (
                          <FieldError key={k} errors={errors} name={k} scope={scope} />
                        ))}
                      <button type="submit" name="intent" value="gold" className="secondary">
                        Save answer
                      </button>
                    </Form>
                  </div>
                </section>
              );
            })}
          </div>
        </>
      ) : null}

      <h2>Archive or delete</h2>
      <div className="panel" data-testid="task-lifecycle">
        {task.status === "archived" ? (
          <Form method="post" className="inline">
            <CsrfField />
            <span>This task is archived: its labels and reports are kept, annotators no longer see it.</span>
            <button type="submit" name="intent" value="unarchive" className="secondary">
              Bring back (closed)
            </button>
          </Form>
        ) : (
          <Form method="post" className="inline">
            <CsrfField />
            <span>Archive: labels and reports are kept; the task disappears from annotators&apos; lists and labels are frozen.</span>
            <button type="submit" name="intent" value="archive" className="secondary">
              Archive task
            </button>
          </Form>
        )}
        {hasWork ? (
          <p className="small muted" data-testid="delete-refused">
            This task cannot be deleted: it holds {work.annotations} label{work.annotations === 1 ? "" : "s"}
            {work.skips ? ` and ${work.skips} skip${work.skips === 1 ? "" : "s"}` : ""}. Archive it instead.
          </p>
        ) : (
          <details style={{ marginTop: "0.75rem" }} open={answeredForm === "delete"}>
            <summary>Delete this task…</summary>
            <Form method="post" className="stack" noValidate style={{ marginTop: "0.5rem" }}>
              <CsrfField />
              <label className="choice">
                <input
                  type="checkbox"
                  name="confirm"
                  value="yes"
                  {...invalidProps(fieldErrorsFrom(data, "delete"), "confirm", "delete-")}
                />{" "}
                Delete &ldquo;{task.name}&rdquo; and its {progress.total} assignment{progress.total === 1 ? "" : "s"} for good. Nobody has
                labelled anything in it yet.
              </label>
              <FieldError errors={fieldErrorsFrom(data, "delete")} name="confirm" scope="delete-" />
              <button type="submit" name="intent" value="delete" className="danger">
                Delete task
              </button>
            </Form>
          </details>
        )}
      </div>
    </div>
  );
}
