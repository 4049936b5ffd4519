import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { moveChecklistItem, requireChecklistItemOf } from "~/curation/rules.server";
import { DomainError, domainErrorResponse } from "~/errors.server";
import { ItemAction } from "~/forms/curation.server";
import { notFound, requireProjectRole } from "~/auth/guards.server";
import { findItemOfDataset, itemCurationView } from "~/curation/itemPage.server";
import { draftChecklist } from "~/curation/assist.server";
import {
  addChecklistItem,
  addChecklistItems,
  CurationError,
  editChecklistItem,
  editItem,
  reweightChecklist,
  setChecklistItemRetired,
  setReference,
} from "~/curation/versions.server";
import { ActionMessage } from "~/components/ActionMessage";
import { FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError } from "~/components/FieldError";
import { requeueStale } from "~/curation/requeue.server";
import { humanErrors } from "~/forms/messages";
import { useRef } from "react";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Curate ${data?.item.sourceId ?? "item"} · Concord` }];

async function load(projectId: number, params: Record<string, string | undefined>) {
  const { dataset, item } = await findItemOfDataset(projectId, Number(params.datasetId), Number(params.itemId));
  if (!dataset) notFound("Dataset not found.");
  if (!item) notFound("Item not found.");
  return { dataset, item };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const { dataset, item } = await load(project.id, params);
  return json(await itemCurationView(project.id, dataset, item));
}

const LABELS: Record<string, string> = {
  query: "Prompt",
  text: "Text",
  weight: "Weight",
  reason: "Reason",
  items: "Draft",
  providerId: "Provider",
  checklistItemId: "Checklist item",
};

/** Which form answered: errors are shown beside the fields of that form only. */
function formKey(entries: Record<string, FormDataEntryValue>): string {
  const intent = String(entries.intent ?? "");
  return intent === "edit-checklist" || intent === "retire" ? `${intent}-${String(entries.checklistItemId ?? "")}` : intent;
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const { item } = await load(project.id, params);
  const entries = Object.fromEntries(await request.formData());
  const form = formKey(entries);
  const parsed = ItemAction.safeParse(entries, { error: humanErrors(LABELS) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return json({ error: issue.message, field: String(issue.path[0] ?? ""), form }, { status: 400 });
  }
  const input = parsed.data;
  if (input.intent === "requeue-stale") {
    const r = await requeueStale(project.id, { itemId: item.id });
    return json({
      ok:
        r.assignments === 0
          ? "No stale labels to send back."
          : `Sent ${r.assignments} stale label${r.assignments === 1 ? "" : "s"} on ${r.units} unit${r.units === 1 ? "" : "s"} back to their annotators.`,
    });
  }
  if (input.intent === "draft") {
    try {
      const draft = await draftChecklist({ projectId: project.id, itemId: item.id, providerId: input.providerId });
      if (!draft.ok)
        return json({ error: `The model's reply could not be read: ${draft.error}`, field: "providerId", raw: draft.raw }, { status: 422 });
      return json({ draft: { items: draft.items, warnings: draft.warnings, promptVersion: draft.promptVersion } });
    } catch (err) {
      if (err instanceof CurationError) return domainErrorResponse(err);
      return json({ error: `The provider failed: ${(err as Error).message}`, field: "providerId" }, { status: 502 });
    }
  }
  const actor = { userId: user.id, reason: input.reason };
  try {
    switch (input.intent) {
      case "edit-item": {
        const r = await editItem(
          item.id,
          { query: input.query, passage: input.passage, domain: input.domain, subject: input.subject },
          actor,
        );
        return json({
          ok: `Item is now version ${r.version}; ${r.stale.annotations} label(s) and ${r.stale.verdicts} verdict(s) marked stale.`,
        });
      }
      case "edit-checklist": {
        await requireChecklistItemOf(item.id, input.checklistItemId);
        const r = await editChecklistItem(
          input.checklistItemId,
          { text: input.text, ...(input.weight !== undefined ? { weight: input.weight } : {}) },
          actor,
        );
        return json({
          ok: `Saved as a new version; ${r.stale.annotations} label(s) and ${r.stale.verdicts} verdict(s) of the old version marked stale.`,
        });
      }
      case "add-checklist":
        await addChecklistItem(item.id, { text: input.text, weight: input.weight ?? null }, actor);
        return json({ ok: "Checklist item added." });
      case "retire":
      case "restore":
        await requireChecklistItemOf(item.id, input.checklistItemId);
        await setChecklistItemRetired(input.checklistItemId, input.intent === "retire", actor);
        return json({ ok: input.intent === "retire" ? "Checklist item retired." : "Checklist item restored." });
      case "move":
        await moveChecklistItem(item.id, input.checklistItemId, input.direction, actor);
        return json({ ok: "Checklist reordered." });
      case "reweight":
        await reweightChecklist(item.id, input.weights, actor);
        return json({ ok: "Weights saved and re-normalised to sum to 1." });
      case "add-draft": {
        const { ids } = await addChecklistItems(item.id, input.items.split(/\r?\n/), actor);
        return json({ ok: `Added ${ids.length} drafted checklist item(s).` });
      }
      case "edit-reference": {
        const r = await setReference(item.id, input.text, { ...actor, provenance: "edited" });
        return json({
          ok: `Reference is now version ${r.version}; ${r.stale.annotations} label(s) and ${r.stale.verdicts} score(s) that used the old one marked stale.`,
        });
      }
    }
  } catch (err) {
    // A CurationError belongs to the form that sent it; the rules' refusals (checklist ownership, reorder) to the page.
    if (err instanceof CurationError) return domainErrorResponse(err, { form });
    if (err instanceof DomainError) return domainErrorResponse(err);
    throw err;
  }
}

const FLAG_TEXT = { inappropriate: "judged invalid", duplicate: "near-duplicate", "back-check": "reference fails it" } as const;

export default function CurateItem() {
  const { dataset, item, active, retired, weighted, flags, references, history, providers, stale } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const pageRef = useRef<HTMLDivElement>(null);
  const answered = data && typeof data === "object" && "form" in data ? String(data.form) : "";
  const errorsOf = (form: string) => fieldErrorsFrom(data, form);
  useFocusFirstError(pageRef, answered ? errorsOf(answered) : {}, data);
  const busy = useNavigation().state === "submitting";
  const frozen = dataset.frozen;
  const current = references.find((r) => r.isCurrent);
  return (
    <div ref={pageRef}>
      <div className="breadcrumbs">
        <Link to="../..">
          Curate {dataset.name} v{dataset.version}
        </Link>{" "}
        / {item.sourceId}
      </div>
      <h1>
        {item.sourceId} <span className="muted">item v{item.version}</span>
      </h1>
      {frozen ? <div className="alert info">This version is a frozen release and read-only. Start the next version to edit.</div> : null}
      <ActionMessage data={data} />
      {stale.assignments > 0 ? (
        <div className="alert info" data-testid="stale-labels">
          {stale.assignments} submitted label{stale.assignments === 1 ? "" : "s"} on {stale.units} unit{stale.units === 1 ? "" : "s"} of
          this item judged an older version.{" "}
          <Form method="post" className="inline">
            <CsrfField />
            <button type="submit" name="intent" value="requeue-stale">
              Send stale units back to their annotators
            </button>
          </Form>
          <div className="small">
            They see the current text with a &ldquo;changed&rdquo; badge and label it again; the old labels are kept, marked stale.
          </div>
        </div>
      ) : null}

      <div className="panel">
        <h2>Checklist ({active.length})</h2>
        <fieldset disabled={frozen || busy} style={{ border: 0, padding: 0, margin: 0 }}>
          <table>
            <thead>
              <tr>
                <th>#</th>
                <th>Text</th>
                {weighted ? <th className="num">Weight</th> : null}
                <th>Flags</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {active.map((c, i) => (
                <tr key={c.id} id={`c${c.id}`}>
                  <td>
                    {i + 1}
                    <div className="muted small">v{c.version}</div>
                  </td>
                  <td>
                    <Form method="post" className="stack" style={{ maxWidth: "none" }} noValidate>
                      <CsrfField />
                      <input type="hidden" name="intent" value="edit-checklist" />
                      <input type="hidden" name="checklistItemId" value={c.id} />
                      <textarea
                        name="text"
                        defaultValue={c.text}
                        rows={2}
                        aria-label={`Text of checklist item ${i + 1}`}
                        {...invalidProps(errorsOf(`edit-checklist-${c.id}`), "text", `c${c.id}-`)}
                      />
                      <FieldError errors={errorsOf(`edit-checklist-${c.id}`)} name="text" scope={`c${c.id}-`} />
                      <div className="inline">
                        <input
                          name="reason"
                          placeholder="Why this edit?"
                          aria-label={`Reason for editing item ${i + 1}`}
                          {...invalidProps(errorsOf(`edit-checklist-${c.id}`), "reason", `c${c.id}-`)}
                        />
                        <button type="submit" className="secondary">
                          Save as new version
                        </button>
                      </div>
                      <FieldError errors={errorsOf(`edit-checklist-${c.id}`)} name="reason" scope={`c${c.id}-`} />
                    </Form>
                  </td>
                  {weighted ? <td className="num">{c.weight?.toFixed(3)}</td> : null}
                  <td>
                    {flags
                      .filter((f) => f.checklistItemId === c.id)
                      .map((f, k) => (
                        <span key={k} className="badge no">
                          {FLAG_TEXT[f.kind]}
                        </span>
                      ))}
                  </td>
                  <td>
                    {(["up", "down"] as const).map((direction) => (
                      <Form key={direction} method="post" className="inline" style={{ marginRight: "0.25rem" }}>
                        <CsrfField />
                        <input type="hidden" name="intent" value="move" />
                        <input type="hidden" name="checklistItemId" value={c.id} />
                        <input type="hidden" name="direction" value={direction} />
                        <button
                          type="submit"
                          className="secondary"
                          aria-label={`Move item ${i + 1} ${direction}`}
                          disabled={direction === "up" ? i === 0 : i === active.length - 1}
                        >
                          {direction === "up" ? "↑" : "↓"}
                        </button>
                      </Form>
                    ))}
                    <Form method="post" className="inline" style={{ marginTop: "0.3rem" }}>
                      <CsrfField />
                      <input type="hidden" name="intent" value="retire" />
                      <input type="hidden" name="checklistItemId" value={c.id} />
                      <input
                        name="reason"
                        placeholder="Why retire?"
                        required
                        aria-label={`Reason for retiring item ${i + 1}`}
                        style={{ width: "9rem" }}
                      />
                      <button type="submit" className="danger">
                        Retire
                      </button>
                    </Form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {weighted ? (
            <Form method="post" className="inline" style={{ marginTop: "0.75rem", flexWrap: "wrap" }}>
              <CsrfField />
              <input type="hidden" name="intent" value="reweight" />
              {active.map((c, i) => (
                <label key={c.id} className="inline small">
                  #{i + 1}{" "}
                  <input name={`weight-${c.id}`} type="number" step="any" min="0" defaultValue={c.weight ?? 0} style={{ width: "6rem" }} />
                </label>
              ))}
              <input name="reason" required placeholder="Why re-weight?" aria-label="Reason for re-weighting" />
              <button type="submit">Save weights (re-normalised to 1)</button>
            </Form>
          ) : null}
          <Form method="post" className="inline" style={{ marginTop: "0.75rem", flexWrap: "wrap" }} noValidate>
            <CsrfField />
            <input type="hidden" name="intent" value="add-checklist" />
            <input
              name="text"
              required
              placeholder="Does the response …?"
              aria-label="New checklist item"
              style={{ minWidth: "24rem" }}
              {...invalidProps(errorsOf("add-checklist"), "text", "add-")}
            />
            {weighted ? (
              <input
                name="weight"
                type="number"
                step="any"
                min="0"
                placeholder="weight"
                aria-label="Weight"
                style={{ width: "6rem" }}
                {...invalidProps(errorsOf("add-checklist"), "weight", "add-")}
              />
            ) : null}
            <input
              name="reason"
              required
              placeholder="Why add it?"
              aria-label="Reason for adding"
              {...invalidProps(errorsOf("add-checklist"), "reason", "add-")}
            />
            <button type="submit">Add</button>
            {["text", "weight", "reason"].map((f) => (
              <FieldError key={f} errors={errorsOf("add-checklist")} name={f} scope="add-" />
            ))}
          </Form>
        </fieldset>
        {retired.length > 0 ? (
          <>
            <h3>Retired</h3>
            <ul>
              {retired.map((c) => (
                <li key={c.id} className="muted">
                  {c.text}{" "}
                  {!frozen ? (
                    <Form method="post" className="inline">
                      <CsrfField />
                      <input type="hidden" name="intent" value="restore" />
                      <input type="hidden" name="checklistItemId" value={c.id} />
                      <input type="hidden" name="reason" value="Restored" />
                      <button type="submit" className="link-button">
                        Restore
                      </button>
                    </Form>
                  ) : null}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </div>

      {!frozen ? (
        <div className="panel">
          <h2>Draft checklist items with a model</h2>
          <p className="muted small">
            RefineBench G.3 prompt from the question and the current reference. Nothing is added until you edit and confirm.
          </p>
          {providers.length === 0 ? (
            <p className="muted small">Add a provider to this project first.</p>
          ) : (
            <Form method="post" className="inline">
              <CsrfField />
              <input type="hidden" name="intent" value="draft" />
              <select name="providerId" aria-label="Drafting provider">
                {providers.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name} ({p.model})
                  </option>
                ))}
              </select>
              <button type="submit" className="secondary" disabled={busy}>
                Draft
              </button>
            </Form>
          )}
          {data && "draft" in data ? (
            <Form method="post" className="stack" style={{ maxWidth: "none", marginTop: "0.75rem" }}>
              <CsrfField />
              <input type="hidden" name="intent" value="add-draft" />
              {data.draft.warnings.length ? (
                <ul className="small muted">
                  {data.draft.warnings.map((w, i) => (
                    <li key={i}>{w}</li>
                  ))}
                </ul>
              ) : null}
              <label>
                Draft (one item per line; edit before adding)
                <textarea name="items" rows={Math.min(14, data.draft.items.length + 2)} defaultValue={data.draft.items.join("\n")} />
              </label>
              <div className="inline">
                <input
                  name="reason"
                  required
                  defaultValue={`Drafted with the G.3 prompt (${data.draft.promptVersion}), edited by the maintainer`}
                  aria-label="Reason for adding the draft"
                  style={{ minWidth: "24rem" }}
                />
                <button type="submit">Add to checklist</button>
              </div>
            </Form>
          ) : null}
        </div>
      ) : null}

      <div className="panel">
        <h2>Reference</h2>
        <Form method="post" className="stack" style={{ maxWidth: "none" }} noValidate>
          <CsrfField />
          <input type="hidden" name="intent" value="edit-reference" />
          <textarea
            name="text"
            rows={8}
            defaultValue={current?.text ?? ""}
            aria-label="Reference text"
            disabled={frozen}
            {...invalidProps(errorsOf("edit-reference"), "text", "ref-")}
          />
          <FieldError errors={errorsOf("edit-reference")} name="text" scope="ref-" />
          <div className="inline">
            <input
              name="reason"
              required
              placeholder="Why change the reference?"
              aria-label="Reason for the reference change"
              disabled={frozen}
              {...invalidProps(errorsOf("edit-reference"), "reason", "ref-")}
            />
            <button type="submit" disabled={frozen || busy}>
              Save as new reference version
            </button>
          </div>
          <FieldError errors={errorsOf("edit-reference")} name="reason" scope="ref-" />
        </Form>
        <h3>History</h3>
        <table className="small">
          <thead>
            <tr>
              <th>Version</th>
              <th>Source</th>
              <th>Who</th>
              <th>When</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {references.map((r) => (
              <tr key={r.id}>
                <td>
                  v{r.version} {r.isCurrent ? <span className="badge yes">current</span> : null}
                </td>
                <td>
                  {r.provenance}
                  {r.promotedFromResponseId ? ` (response ${r.promotedFromResponseId})` : ""}
                </td>
                <td>{r.by ?? "—"}</td>
                <td>{new Date(r.createdAt * 1000).toISOString().slice(0, 16).replace("T", " ")}</td>
                <td>
                  {r.reason ?? ""}
                  {r.justification?.length ? <div className="muted">annotations {r.justification.join(", ")}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <div className="panel">
        <h2>Item</h2>
        <Form method="post" className="stack" style={{ maxWidth: "none" }} noValidate>
          <CsrfField />
          <input type="hidden" name="intent" value="edit-item" />
          <fieldset disabled={frozen || busy} style={{ border: 0, padding: 0, margin: 0, display: "grid", gap: "0.75rem" }}>
            <label>
              Prompt
              <textarea name="query" rows={5} defaultValue={item.query} {...invalidProps(errorsOf("edit-item"), "query", "item-")} />
            </label>
            <FieldError errors={errorsOf("edit-item")} name="query" scope="item-" />
            <label>
              Passage or grounding
              <textarea name="passage" rows={4} defaultValue={item.passage ?? ""} />
            </label>
            <div className="inline">
              <label>
                Domain <input name="domain" defaultValue={item.domain ?? ""} />
              </label>
              <label>
                Subject <input name="subject" defaultValue={item.subject ?? ""} />
              </label>
            </div>
            <div className="inline">
              <input
                name="reason"
                required
                placeholder="Why edit the item?"
                aria-label="Reason for the item edit"
                {...invalidProps(errorsOf("edit-item"), "reason", "item-")}
              />
              <button type="submit">Save as new item version</button>
            </div>
            <FieldError errors={errorsOf("edit-item")} name="reason" scope="item-" />
          </fieldset>
        </Form>
      </div>

      <div className="panel">
        <h2>Changes ({history.length})</h2>
        <ul className="small">
          {history.map((h) => (
            <li key={h.id}>
              {new Date(h.createdAt * 1000).toISOString().slice(0, 16).replace("T", " ")} · {h.entity} {h.action} · {h.by ?? "—"}:{" "}
              {h.reason}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
