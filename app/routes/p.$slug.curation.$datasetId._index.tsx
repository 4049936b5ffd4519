import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { humanErrors, humanIssue } from "~/forms/messages";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useParams } from "@remix-run/react";
import { requireResponseOfDataset } from "~/curation/rules.server";
import { DomainError, domainErrorResponse } from "~/errors.server";
import { CurationAction } from "~/forms/curation.server";
import { firstZodIssue } from "~/forms.server";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { findDataset } from "~/benchmark/browse.server";
import { type Flag } from "~/curation/flags.server";
import { curationIndex, parseDuplicateThreshold } from "~/curation/curation-index.server";
import { CurationError, freezeDataset, promoteResponse, startNextVersion } from "~/curation/versions.server";
import { runBackCheck } from "~/curation/assist.server";
import { createTask, TaskError } from "~/annotation/tasks.server";
import { ActionMessage } from "~/components/ActionMessage";
import { FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError } from "~/components/FieldError";
import { blindingWarning } from "~/annotation/task-names.server";
import { useRef } from "react";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Curate ${data?.dataset.name ?? "dataset"} · Concord` }];

async function loadDataset(projectId: number, raw: string | undefined) {
  const dataset = await findDataset(projectId, Number(raw));
  if (!dataset) notFound("Dataset not found.");
  return dataset;
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const dataset = await loadDataset(project.id, params.datasetId);
  const threshold = parseDuplicateThreshold(new URL(request.url).searchParams.get("threshold"));
  return json(await curationIndex(project.id, dataset, threshold));
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const dataset = await loadDataset(project.id, params.datasetId);
  const form = await request.formData();
  if (form.get("intent") === "reference-task") return referenceTask(project.id, user.id, dataset.id, form);
  if (form.get("intent") === "back-check") {
    const providerId = Number(form.get("providerId"));
    if (!Number.isInteger(providerId) || providerId <= 0)
      return json({ error: "providerId: choose a provider.", field: "providerId" }, { status: 400 });
    try {
      const s = await runBackCheck({ projectId: project.id, datasetId: dataset.id, providerId, userId: user.id });
      const failed = s.failedCalls.length
        ? ` ${s.failedCalls.length} call(s) failed (first: ${s.failedCalls[0].sourceId}: ${s.failedCalls[0].error}).`
        : "";
      return json({
        ok: `Back-check ran on ${s.checked} of ${s.items} items: ${s.flagged} checklist item(s) answered No on the reference, ${s.unparsed} unparsed.${failed}`,
      });
    } catch (err) {
      if (err instanceof CurationError) return domainErrorResponse(err);
      throw err;
    }
  }
  const parsed = CurationAction.safeParse(Object.fromEntries(form), {
    error: humanErrors({ reason: "Reason", responseId: "Response", annotationIds: "Annotations" }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return json({ error: issue.message, field: String(issue.path[0] ?? "") }, { status: 400 });
  }
  const actor = { userId: user.id, reason: parsed.data.reason };
  try {
    switch (parsed.data.intent) {
      case "freeze":
        await freezeDataset(dataset.id, actor);
        return json({ ok: `Version ${dataset.version} is frozen. Download the release below.` });
      case "next-version": {
        const next = await startNextVersion(dataset.id, actor);
        return redirect(`/p/${project.slug}/curation/${next.id}`);
      }
      case "promote": {
        await requireResponseOfDataset(dataset.id, parsed.data.responseId);
        const justification = parsed.data.annotationIds?.split(",").map(Number) ?? [];
        const r = await promoteResponse(parsed.data.responseId, { ...actor, justification });
        return json({
          ok: `Promoted to reference version ${r.version}; ${r.stale.annotations} label(s) and ${r.stale.verdicts} verdict(s) that used the old reference are marked stale.`,
        });
      }
    }
  } catch (err) {
    // CurationError and the rules' refusals (the promoted response must be of this dataset).
    if (err instanceof DomainError) return domainErrorResponse(err);
    throw err;
  }
}

async function referenceTask(projectId: number, userId: number, datasetId: number, form: FormData) {
  const n = Number(form.get("n") ?? 2);
  const name = String(form.get("name") || "Reference optimisation: pick the best").trim();
  // Annotators see the task's name: one naming a model, judge or provider of the
  // project waits for "Save anyway".
  if (form.get("confirmNames") !== "yes") {
    const held = await blindingWarning(projectId, { name });
    if (held) return json({ error: held.fieldErrors.name, field: "name", form: "reference-task", warning: held.warning }, { status: 400 });
  }
  try {
    const { taskId, units } = await createTask(projectId, userId, {
      name,
      datasetId,
      kind: "best-of-n",
      plan: "sample-n",
      overlap: Number(form.get("overlap") ?? 2),
      seed: Number(form.get("seed") ?? 1),
      guidelines:
        "Read the instruction and every response, then pick the **best** one. One of them may be the benchmark's current reference; judge only the text.",
      pool: form.getAll("pool").map(Number),
      models: form.getAll("models").map(String),
      turn: form.get("turn") ? Number(form.get("turn")) : undefined,
      includeReference: true,
      allowTies: form.get("allowTies") === "on",
      n,
    });
    return json({ ok: `Created task ${taskId} with ${units} blind comparisons.`, taskId });
  } catch (err) {
    if (err instanceof TaskError) return domainErrorResponse(err, { form: "reference-task" });
    const issue = firstZodIssue(err);
    if (issue) {
      const field = String(issue.path[0] ?? "");
      // Zod's own wording ("Too small: …") becomes a sentence naming the field; the schema's own messages stay.
      const generic = /^(Too (small|big)|Invalid )/.test(issue.message);
      const labels: Record<string, string> = {
        overlap: "Overlap k",
        seed: "Seed",
        n: "Responses per comparison",
        pool: "Annotators",
        name: "Name",
        turn: "Turn",
      };
      return json(
        {
          error: generic ? humanIssue(issue as Parameters<typeof humanIssue>[0], labels[field] ?? field) : issue.message,
          field,
          form: "reference-task",
        },
        { status: 400 },
      );
    }
    throw err;
  }
}

const FLAG_LABEL: Record<Flag["kind"], string> = {
  inappropriate: "judged invalid",
  duplicate: "near-duplicate",
  "back-check": "reference fails it",
};

export default function CurateDataset() {
  const { dataset, versions, threshold, checklistCount, flags, candidates, models, annotators, providers } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const navigation = useNavigation();
  const { slug } = useParams();
  const busy = navigation.state === "submitting";
  const refErrors = fieldErrorsFrom(data, "reference-task");
  const refWarning = data && typeof data === "object" && "warning" in data ? (data.warning as { names: string[] }) : undefined;
  const refForm = useRef<HTMLFormElement>(null);
  useFocusFirstError(refForm, refErrors, data);
  return (
    <div>
      <h1>
        Curate {dataset.name} <span className="muted">v{dataset.version}</span>{" "}
        {dataset.frozenAt ? <span className="badge">frozen release</span> : <span className="badge">draft</span>}
      </h1>
      <p className="muted small">
        Versions:{" "}
        {versions.map((v, i) => (
          <span key={v.id}>
            {i > 0 ? " · " : ""}
            <Link to={`../curation/${v.id}`} relative="path">
              v{v.version}
            </Link>
            {v.frozenAt ? " (released)" : ""}
          </span>
        ))}
      </p>
      <ActionMessage data={data} />

      <h2>Flags ({flags.length})</h2>
      <div className="muted small toolbar">
        {checklistCount} active checklist items. Near-duplicates: ROUGE-L F ≥ {threshold} within one checklist.{" "}
        <Form method="get" className="inline">
          <label className="inline">
            Threshold{" "}
            <input name="threshold" type="number" step="0.05" min="0.05" max="1" defaultValue={threshold} style={{ width: "5rem" }} />
          </label>
          <button type="submit" className="secondary">
            Apply
          </button>
        </Form>
      </div>
      {flags.length === 0 ? (
        <p className="muted">Nothing flagged.</p>
      ) : (
        <table data-testid="flags">
          <thead>
            <tr>
              <th>Item</th>
              <th>Checklist item</th>
              <th>Flag</th>
              <th>Why</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {flags.map((f, i) => (
              <tr key={`${f.kind}-${f.checklistItemId}-${i}`}>
                <td>{f.sourceId}</td>
                <td>{f.text}</td>
                <td>
                  <span className="badge no">{FLAG_LABEL[f.kind]}</span>
                </td>
                <td className="small">
                  {f.kind === "inappropriate" ? `${f.noVotes} No vs ${f.yesVotes} Yes (task ${f.taskId})` : null}
                  {f.kind === "duplicate" ? `ROUGE-L F = ${f.f.toFixed(2)} with "${f.otherText}"` : null}
                  {f.kind === "back-check" ? `${f.judge} answered ${f.answer} on the reference` : null}
                </td>
                <td>
                  <Link to={`items/${f.itemId}#c${f.checklistItemId}`}>Fix</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {!dataset.frozenAt ? (
        <div className="panel">
          <h3 style={{ marginTop: 0 }}>Back-check the references</h3>
          <p className="muted small">
            The checklist judge (RefineBench G.2 prompt, temperature 0) answers every checklist item on the current reference answer; items
            it answers No, or leaves unparsed, are flagged above.
          </p>
          {providers.length === 0 ? (
            <p className="muted small">Add a provider to this project first.</p>
          ) : (
            <Form method="post" className="inline">
              <CsrfField />
              <input type="hidden" name="intent" value="back-check" />
              <select name="providerId" aria-label="Judge provider">
                {providers.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name} ({p.model}){p.kind === "replay" ? " · recorded" : ""}
                  </option>
                ))}
              </select>
              <button type="submit" disabled={busy}>
                {busy ? "Running…" : "Run back-check"}
              </button>
            </Form>
          )}
        </div>
      ) : null}

      <h2>Reference optimisation</h2>
      <p className="muted small">
        Blind best-of-N comparisons that hide the current reference among strong model outputs (RAVEL §4.2). Where annotators prefer a model
        output, promote it in one action; the old reference stays in the history.
      </p>
      {candidates.length === 0 ? (
        <p className="muted">No model output has beaten a reference yet.</p>
      ) : (
        <table data-testid="candidates">
          <thead>
            <tr>
              <th>Item</th>
              <th>Preferred response</th>
              <th className="num">Votes</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {candidates.map((c) => (
              <tr key={`${c.taskId}-${c.unitId}`}>
                <td>
                  <Link to={`items/${c.itemId}`}>{c.sourceId}</Link>
                </td>
                <td className="small">
                  <strong>
                    {c.model} · turn {c.turn}
                  </strong>
                  <div className="prewrap">{c.text.length > 400 ? `${c.text.slice(0, 400)}…` : c.text}</div>
                </td>
                <td className="num small">
                  {c.votes.response} for it · {c.votes.reference} for the reference
                  {c.votes.others ? ` · ${c.votes.others} other` : ""}
                  {c.votes.ties ? ` · ${c.votes.ties} tie` : ""}
                  {c.rule === "adjudication" ? <div className="badge">adjudicated</div> : null}
                  <div className="muted">
                    <Link to={`../../tasks/${c.taskId}`} relative="path">
                      task {c.taskId}
                    </Link>
                  </div>
                </td>
                <td>
                  {c.promoted ? (
                    <span className="badge yes">promoted</span>
                  ) : (
                    <Form method="post" className="stack" style={{ minWidth: "14rem" }}>
                      <CsrfField />
                      <input type="hidden" name="intent" value="promote" />
                      <input type="hidden" name="responseId" value={c.responseId} />
                      <input type="hidden" name="annotationIds" value={c.annotationIds.join(",")} />
                      <label>
                        Reason
                        <input
                          name="reason"
                          required
                          defaultValue={`Annotators preferred it ${c.votes.response} to ${c.votes.reference} over the reference (task ${c.taskId})`}
                        />
                      </label>
                      <button type="submit" disabled={busy || Boolean(dataset.frozenAt)}>
                        Promote to reference
                      </button>
                    </Form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {!dataset.frozenAt ? (
        <details
          className="panel"
          style={{ marginTop: "1rem" }}
          open={Object.keys(refErrors).length > 0 || undefined}
          data-testid="reference-task-form"
        >
          <summary>Create a reference-optimisation task</summary>
          <Form method="post" className="stack" ref={refForm}>
            <CsrfField />
            <input type="hidden" name="intent" value="reference-task" />
            <label>
              Name (annotators see it)
              <input name="name" defaultValue="Reference optimisation: pick the best" {...invalidProps(refErrors, "name", "ref-")} />
            </label>
            <FieldError errors={refErrors} name="name" scope="ref-" />
            <fieldset>
              <legend>Strong models to compare with the reference</legend>
              {models.map((m) => (
                <label key={m} style={{ display: "flex", gap: "0.4rem" }}>
                  <input type="checkbox" name="models" value={m} defaultChecked /> {m}
                </label>
              ))}
            </fieldset>
            <label>
              Turn (blank: any)
              <input name="turn" type="number" min="1" />
            </label>
            <label>
              Responses per comparison, reference included (2 = pairwise)
              <select name="n" defaultValue="2">
                {[2, 3, 4].map((n) => (
                  <option key={n}>{n}</option>
                ))}
              </select>
            </label>
            <label>
              Annotators per comparison
              <input name="overlap" type="number" min="1" defaultValue={Math.min(2, annotators.length) || 1} />
            </label>
            <fieldset>
              <legend>Annotators</legend>
              {annotators.map((a) => (
                <label key={a.id} style={{ display: "flex", gap: "0.4rem" }}>
                  <input type="checkbox" name="pool" value={a.id} defaultChecked /> {a.name}
                </label>
              ))}
            </fieldset>
            <label style={{ display: "flex", gap: "0.4rem" }}>
              <input type="checkbox" name="allowTies" /> Allow ties
            </label>
            <div className="actions">
              <button type="submit" name="confirmNames" value="no" disabled={busy}>
                Create task
              </button>
              {refWarning ? (
                <button type="submit" name="confirmNames" value="yes" className="danger" disabled={busy}>
                  Save anyway
                </button>
              ) : null}
            </div>
          </Form>
        </details>
      ) : null}

      <h2>Release</h2>
      <p>
        <a href={`/p/${slug}/curation/${dataset.id}/release?file=jsonl`} download>
          Download {dataset.name} v{dataset.version} (JSONL)
        </a>
        {" · "}
        <a href={`/p/${slug}/curation/${dataset.id}/release?file=changelog`} download>
          Changelog (markdown)
        </a>
      </p>
      {dataset.frozenAt ? (
        <Form method="post" className="inline">
          <CsrfField />
          <input type="hidden" name="intent" value="next-version" />
          <input name="reason" required placeholder="Why a new version?" aria-label="Reason for the next version" />
          <button type="submit" disabled={busy}>
            Start version {dataset.version + 1}
          </button>
        </Form>
      ) : (
        <Form method="post" className="inline">
          <CsrfField />
          <input type="hidden" name="intent" value="freeze" />
          <input name="reason" required placeholder="Release note" aria-label="Release note" />
          <button type="submit" disabled={busy}>
            Freeze v{dataset.version} as a release
          </button>
        </Form>
      )}
    </div>
  );
}
