/**
 * Researcher view of one task: progress per annotator, gold accuracy, the
 * pool (adding or removing annotators hands over unstarted work only),
 * adjudicators, gold answers, and closing or reopening the task.
 */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { and, asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { isAnnotatable, KIND_TITLES, readConfig } from "~/annotation/config";
import { labelToForm, parseGoldLabel, type ResponseKey } from "~/annotation/labels";
import { letter } from "~/annotation/random";
import { addToPool, findTask, removeFromPool, poolOf, projectMembers, setAdjudicators, setGoldLabel, setTaskStatus, taskProgress, TaskError } from "~/annotation/tasks.server";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { ProgressBar } from "~/components/ProgressBar";
import styles from "~/components/annotation.css";
import { getDb, schema } from "~/db.server";
import { ActionMessage } from "~/components/ActionMessage";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.task.name ?? "Task"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const task = findTask(project.id, Number(params.taskId));
  if (!task) notFound("Task not found.");
  const config = readConfig(task.config);
  const pool = poolOf(task);
  const members = projectMembers(project.id);
  const goldUnits = getDb()
    .select({ id: schema.units.id, position: schema.units.position, goldLabel: schema.units.goldLabel, responseIds: schema.units.responseIds })
    .from(schema.units)
    .where(and(eq(schema.units.taskId, task.id), eq(schema.units.isGold, true)))
    .orderBy(asc(schema.units.position))
    .all();
  // Multi-response kinds: the researcher (not blind) sees which response each letter is.
  const rids = [...new Set(goldUnits.flatMap((g) => (g.responseIds ?? []).filter((r): r is number => r !== "reference")))];
  const responses = new Map(
    (rids.length ? getDb().select({ id: schema.responses.id, model: schema.responses.model, text: schema.responses.text }).from(schema.responses).where(inArray(schema.responses.id, rids)).all() : []).map((r) => [r.id, r]),
  );
  const gold = goldUnits.map((g) => {
    const order: ResponseKey[] = g.responseIds ?? [];
    let stored: unknown = null;
    try {
      stored = g.goldLabel == null ? null : JSON.parse(g.goldLabel);
    } catch {
      stored = g.goldLabel;
    }
    return {
      id: g.id,
      position: g.position,
      known: g.goldLabel != null,
      values: isAnnotatable(task.kind) ? labelToForm(task.kind, stored == null ? null : { label: stored, penaltyReasons: null, notes: null }, order) : {},
      responses: order.map((key, i) => {
        const r = key === "reference" ? null : responses.get(key);
        return { letter: letter(i), reference: key === "reference", model: r?.model ?? null, preview: r ? r.text.slice(0, 140) : null };
      }),
    };
  });
  return json({
    task: {
      id: task.id,
      name: task.name,
      kind: task.kind,
      kindTitle: isAnnotatable(task.kind) ? KIND_TITLES[task.kind] : task.kind,
      status: task.status,
      overlap: task.overlap,
      seed: task.seed,
      plan: config.plan ?? null,
      models: config.models ?? null,
      goldRate: config.goldRate ?? 0,
      allowTies: config.allowTies === true,
    },
    progress: taskProgress(task),
    pool,
    adjudicators: config.adjudicators ?? [],
    members,
    gold,
  });
}

const ids = (form: FormData) => form.getAll("userId").map(Number).filter((n) => Number.isInteger(n) && n > 0);

const StatusSchema = z.enum(["close", "reopen"]);
const RemoveSchema = z.object({ userId: z.coerce.number().int().positive() });

export async function action({ request, params }: ActionFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const task = findTask(project.id, Number(params.taskId));
  if (!task) notFound("Task not found.");
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  try {
    if (StatusSchema.safeParse(intent).success) {
      setTaskStatus(project.id, task.id, intent === "close" ? "closed" : "open");
      return json({ ok: intent === "close" ? "Task closed: labels are frozen." : "Task reopened." });
    }
    if (intent === "add-annotators") {
      const add = ids(form);
      if (add.length === 0) return json({ error: "userId: choose at least one member to add." }, { status: 400 });
      const { moved } = addToPool(project.id, task.id, add);
      return json({ ok: `Pool updated; ${moved} unstarted assignment(s) moved to rebalance.` });
    }
    if (intent === "remove-annotator") {
      const parsed = RemoveSchema.safeParse({ userId: form.get("userId") ?? undefined });
      if (!parsed.success) return json({ error: "userId: choose the annotator to remove." }, { status: 400 });
      const { moved, kept } = removeFromPool(project.id, task.id, parsed.data.userId);
      return json({ ok: `Removed from the pool; ${moved} unstarted assignment(s) handed to others, ${kept} started kept with the annotator.` });
    }
    if (intent === "set-adjudicators") {
      setAdjudicators(project.id, task.id, ids(form));
      return json({ ok: "Adjudicators saved." });
    }
    if (intent === "gold") {
      const unitId = Number(form.get("unitId"));
      const unit = Number.isInteger(unitId)
        ? getDb()
            .select({ responseIds: schema.units.responseIds })
            .from(schema.units)
            .where(and(eq(schema.units.id, unitId), eq(schema.units.taskId, task.id), eq(schema.units.isGold, true)))
            .get()
        : undefined;
      if (!unit) return json({ error: "unitId: no such gold unit in this task." }, { status: 400 });
      if (!isAnnotatable(task.kind)) return json({ error: "kind: this task kind has no gold units." }, { status: 400 });
      const parsed = parseGoldLabel(task.kind, unit.responseIds ?? null, readConfig(task.config).allowTies === true, form);
      if (!parsed.ok) return json({ error: Object.entries(parsed.fieldErrors).map(([f, m]) => `${f}: ${m}`).join(" ") }, { status: 400 });
      setGoldLabel(task.id, unitId, parsed.label);
      return json({ ok: `Gold answer of unit #${unitId} saved.` });
    }
  } catch (err) {
    if (err instanceof TaskError) return json({ error: `${err.field}: ${err.message}` }, { status: 400 });
    throw err;
  }
  return json({ error: `Unknown intent "${intent.slice(0, 20)}".` }, { status: 400 });
}

export default function TaskOverview() {
  const { task, progress, pool, adjudicators, members, gold } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const { slug } = useParams();
  const outside = members.filter((m) => !pool.includes(m.id));
  const yesNo = task.kind === "checklist-appropriateness" || task.kind === "response-satisfaction";
  return (
    <div>
      <div className="annotate-head">
        <h1>{task.name}</h1>
        <span className="muted">
          {task.kindTitle} · k = {task.overlap} · seed {task.seed}
          {task.plan ? ` · plan ${task.plan}` : ""} · <Link to={`/p/${slug}/tasks/${task.id}/queue`}>My queue</Link> · <Link to={`/p/${slug}/tasks/${task.id}/adjudicate`}>Adjudicate</Link>
        </span>
      </div>
      <ActionMessage data={data} />
      <div className="panel">
        <ProgressBar label="Overall" done={progress.done} total={progress.total} testId="progress-overall" />
        <Form method="post" className="inline">
          <CsrfField />
          <span>
            Status: <strong data-testid="task-status">{task.status}</strong>
          </span>
          {task.status === "open" ? (
            <button type="submit" name="intent" value="close" className="danger">
              Close task
            </button>
          ) : (
            <button type="submit" name="intent" value="reopen" className="secondary">
              Reopen task
            </button>
          )}
        </Form>
      </div>
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
              <td className="num">{a.gold.scored > 0 ? `${a.gold.correct}/${a.gold.scored} (${Math.round((100 * a.gold.correct) / a.gold.scored)}%)` : "—"}</td>
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
            Removing an annotator hands their unstarted units to the others (each unit keeps {task.overlap} annotators); their drafts, submissions and skips stay
            theirs.
          </p>
          <ul className="stack">
            {pool.map((id) => {
              const name = members.find((m) => m.id === id)?.name ?? progress.annotators.find((a) => a.annotatorId === id)?.name ?? `#${id}`;
              return (
                <li key={id}>
                  <Form method="post" className="inline">
                    <CsrfField />
                    <input type="hidden" name="userId" value={id} />
                    <span>{name}</span>
                    <button type="submit" name="intent" value="remove-annotator" className="secondary" disabled={pool.length <= task.overlap} aria-label={`Remove ${name} from the pool`}>
                      Remove
                    </button>
                  </Form>
                </li>
              );
            })}
          </ul>
          {pool.length <= task.overlap ? <p className="small muted">The pool has exactly k = {task.overlap} annotators; add one before removing another.</p> : null}
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
          <table>
            <tbody>
              {gold.map((g) => (
                <tr key={g.id}>
                  <td>
                    Unit {g.position + 1} (#{g.id}) <span className="muted small">{g.known ? "answer set" : "no answer yet"}</span>
                  </td>
                  <td>
                    <Form method="post" className="inline gold-form">
                      <CsrfField />
                      <input type="hidden" name="unitId" value={g.id} />
                      {yesNo ? (
                        <select name="answer" defaultValue={g.values.answer ?? ""} aria-label={`Known answer of unit ${g.id}`}>
                          <option value="">—</option>
                          <option>Yes</option>
                          <option>No</option>
                        </select>
                      ) : task.kind === "writing-quality" ? (
                        g.responses.map((r) =>
                          r.reference ? null : (
                            <label key={r.letter} title={r.preview ?? ""}>
                              {r.letter} {r.model ? <span className="muted small">({r.model})</span> : null}
                              <select name={`score.${r.letter}`} defaultValue={g.values[`score.${r.letter}`] ?? ""} aria-label={`Known score of response ${r.letter} in unit ${g.id}`}>
                                <option value="">—</option>
                                {[1, 2, 3, 4, 5].map((n) => (
                                  <option key={n}>{n}</option>
                                ))}
                              </select>
                            </label>
                          ),
                        )
                      ) : (
                        <select name="best" defaultValue={g.values.best ?? ""} aria-label={`Known best response of unit ${g.id}`}>
                          <option value="">—</option>
                          {g.responses.map((r) => (
                            <option key={r.letter} value={r.letter}>
                              {r.letter}: {r.reference ? "the reference" : `${r.model ?? "response"} — ${r.preview ?? ""}`.slice(0, 80)}
                            </option>
                          ))}
                          {task.allowTies ? <option value="tie">Tie</option> : null}
                        </select>
                      )}
                      <button type="submit" name="intent" value="gold" className="secondary">
                        Save
                      </button>
                    </Form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </div>
  );
}
