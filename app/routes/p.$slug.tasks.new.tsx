/** Researchers create a task: dataset, kind, sampling plan, overlap, guidelines, pool. */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useRef, useState } from "react";
import { ANNOTATABLE_KINDS, DEFAULT_PENALTY_REASONS, KIND_TITLES, PLANS, type AnnotatableKind } from "~/annotation/config";
import { newTaskFormOptions, submitNewTask } from "~/annotation/new-task.server";
import { domainFieldErrorsResponse, orDomainError } from "~/errors.server";
import { requireProjectRole } from "~/auth/guards.server";
import styles from "~/components/annotation.css";
import { ErrorSummary, FieldError, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";
import { findKind, taskKind } from "~/task-kinds/registry";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];
export const meta: MetaFunction = () => [{ title: "New task · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  return json(await newTaskFormOptions(project.id));
}

const opt = (v: FormDataEntryValue | null) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const form = await request.formData();
  const raw = {
    name: String(form.get("name") ?? ""),
    datasetId: form.get("datasetId") ?? "",
    kind: String(form.get("kind") ?? ""),
    plan: opt(form.get("plan")),
    overlap: form.get("overlap") ?? "2",
    seed: opt(form.get("seed")) ?? "1",
    guidelines: String(form.get("guidelines") ?? ""),
    pool: form.getAll("pool").map(String),
    models: form.getAll("models").map(String),
    turn: opt(form.get("turn")),
    itemLimit: opt(form.get("itemLimit")),
    responsesPerItem: opt(form.get("responsesPerItem")),
    strata: opt(form.get("strata")),
    perStratum: opt(form.get("perStratum")),
    showReference: form.get("showReference") === "on",
    penaltyReasons: opt(form.get("penaltyReasons"))
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    allowTies: form.get("allowTies") === "on",
    includeReference: form.get("includeReference") === "on",
    n: opt(form.get("n")),
    goldRate: opt(form.get("goldRate")) ?? "0",
    // The kind's own settings (its textSettings), validated by its config.server.ts.
    settings: Object.fromEntries(
      (findKind(String(form.get("kind") ?? ""))?.textSettings ?? []).map((t) => [t.name, String(form.get(`settings.${t.name}`) ?? "")]),
    ),
  };
  // A refusal (TaskError, SamplingError, AssignmentError) is shown beside its field, or for the whole form.
  return orDomainError(async () => {
    const outcome = await submitNewTask(project.id, user.id, raw, { confirmed: form.get("confirmNames") === "yes" });
    if (!outcome.ok)
      return json({ fieldErrors: outcome.fieldErrors, ...(outcome.warning ? { warning: outcome.warning } : {}) }, { status: 400 });
    return redirect(`/p/${project.slug}/tasks/${outcome.taskId}`);
  }, domainFieldErrorsResponse);
}

const PLAN_TITLES: Record<string, string> = {
  "all-items": "every checklist item of every item",
  paper: "one checklist item and one response per item, at random (RefineBench E.4)",
  "all-items-of-sampled-responses": "every checklist item of m sampled responses per item",
  stratified: "a fixed number of units per stratum (model, domain or turn)",
  "all-responses": "every response of every item",
  "sample-n": "n responses sampled per item",
};

export default function NewTask() {
  const { datasets, models, members } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const errors: FieldErrors = (data && "fieldErrors" in data ? data.fieldErrors : {}) ?? {};
  const warning = data && "warning" in data ? data.warning : undefined;
  const [kind, setKind] = useState<AnnotatableKind>(ANNOTATABLE_KINDS[0]);
  const [plan, setPlan] = useState<string>("");
  const formRef = useRef<HTMLFormElement>(null);
  const summaryRef = useRef<HTMLDivElement>(null);
  useFocusFirstError(formRef, errors, data, summaryRef);
  const kindDef = taskKind(kind);
  const uses = (field: string) => (kindDef.settings as readonly string[]).includes(field);
  const effectivePlan = plan && (PLANS[kind] as readonly string[]).includes(plan) ? plan : PLANS[kind][0];
  const err = (name: string) => <FieldError errors={errors} name={name} />;
  const aria = (name: string) => invalidProps(errors, name);
  return (
    <div>
      <h1>New annotation task</h1>
      <ErrorSummary errors={errors} summaryRef={summaryRef} />
      <Form method="post" className="stack" style={{ maxWidth: 640 }} noValidate ref={formRef}>
        <CsrfField />
        <label>
          Name
          <input name="name" required {...aria("name")} />
        </label>
        {err("name")}
        <label>
          Dataset
          <select name="datasetId" required {...aria("datasetId")}>
            {datasets.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name} v{d.version}
              </option>
            ))}
          </select>
        </label>
        {err("datasetId")}
        <label>
          Kind
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as AnnotatableKind)} {...aria("kind")}>
            {ANNOTATABLE_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_TITLES[k]}
              </option>
            ))}
          </select>
        </label>
        {err("kind")}
        {uses("plan") ? (
          <>
            <label>
              Sampling plan
              <select name="plan" value={effectivePlan} onChange={(e) => setPlan(e.target.value)} {...aria("plan")}>
                {PLANS[kind].map((p) => (
                  <option key={p} value={p}>
                    {p}: {PLAN_TITLES[p] ?? p}
                  </option>
                ))}
              </select>
            </label>
            {err("plan")}
          </>
        ) : (
          <p className="muted small" data-testid="plan-note">
            Units: {PLAN_TITLES[PLANS[kind][0]] ?? PLANS[kind][0]}.
          </p>
        )}
        {uses("models") ? (
          <fieldset {...aria("models")}>
            <legend>Models (none chosen: all)</legend>
            {models.map((m) => (
              <label key={m} className="choice">
                <input type="checkbox" name="models" value={m} /> {m}
              </label>
            ))}
            {err("models")}
          </fieldset>
        ) : null}
        <div className="side-by-side">
          <div>
            <label>
              Overlap k
              <input name="overlap" type="number" min={1} max={20} defaultValue={2} {...aria("overlap")} />
            </label>
            {err("overlap")}
          </div>
          <div>
            <label>
              Seed
              <input name="seed" type="number" min={0} defaultValue={1} {...aria("seed")} />
            </label>
            {err("seed")}
          </div>
          {uses("turn") ? (
            <div>
              <label>
                Turn (blank: all)
                <input name="turn" type="number" min={1} {...aria("turn")} />
              </label>
              {err("turn")}
            </div>
          ) : null}
          <div>
            <label>
              Items to sample (blank: all)
              <input name="itemLimit" type="number" min={1} {...aria("itemLimit")} />
            </label>
            {err("itemLimit")}
          </div>
          {uses("responsesPerItem") && effectivePlan === "all-items-of-sampled-responses" ? (
            <div>
              <label>
                Responses per item
                <input name="responsesPerItem" type="number" min={1} {...aria("responsesPerItem")} />
              </label>
              {err("responsesPerItem")}
            </div>
          ) : null}
          {uses("strata") && effectivePlan === "stratified" ? (
            <>
              <div>
                <label>
                  Stratify by
                  <select name="strata" defaultValue="model" {...aria("strata")}>
                    <option value="model">model</option>
                    <option value="domain">domain</option>
                    <option value="turn">turn</option>
                  </select>
                </label>
                {err("strata")}
              </div>
              <div>
                <label>
                  Units per stratum
                  <input name="perStratum" type="number" min={1} placeholder="5" {...aria("perStratum")} />
                </label>
                {err("perStratum")}
              </div>
            </>
          ) : null}
          {uses("n") ? (
            <div>
              <label>
                Responses per comparison (2–4)
                <input name="n" type="number" min={2} max={4} placeholder="4" {...aria("n")} />
              </label>
              {err("n")}
            </div>
          ) : null}
          <div>
            <label>
              Gold rate (0–0.5)
              <input name="goldRate" type="number" step="0.01" min={0} max={0.5} defaultValue={0} {...aria("goldRate")} />
            </label>
            {err("goldRate")}
          </div>
        </div>
        {uses("showReference") ? (
          <label className="choice">
            <input type="checkbox" name="showReference" /> Show annotators the benchmark&apos;s reference answer beside the unit
          </label>
        ) : null}
        {uses("allowTies") ? (
          <label className="choice">
            <input type="checkbox" name="allowTies" /> Allow ties
          </label>
        ) : null}
        {uses("includeReference") ? (
          <label className="choice">
            <input type="checkbox" name="includeReference" /> Add the benchmark&apos;s reference answer as one of the compared responses,
            unmarked (annotators cannot tell which one it is; used to test whether a model output beats the reference)
          </label>
        ) : null}
        {uses("penaltyReasons") ? (
          <>
            <label>
              Penalty reasons (comma-separated)
              <input name="penaltyReasons" placeholder={DEFAULT_PENALTY_REASONS.join(", ")} {...aria("penaltyReasons")} />
            </label>
            {err("penaltyReasons")}
          </>
        ) : null}
        {(kindDef.textSettings ?? []).map((t) => (
          <div key={t.name}>
            <label>
              {t.label}
              {t.multiline ? (
                <textarea name={`settings.${t.name}`} rows={2} placeholder={t.placeholder} {...aria(`settings.${t.name}`)} />
              ) : (
                <input name={`settings.${t.name}`} placeholder={t.placeholder} required={t.required} {...aria(`settings.${t.name}`)} />
              )}
            </label>
            {err(`settings.${t.name}`)}
          </div>
        ))}
        <label>
          Guidelines (markdown)
          <textarea name="guidelines" rows={6} {...aria("guidelines")} />
        </label>
        {err("guidelines")}
        <fieldset>
          <legend>Annotator pool</legend>
          {members.map((m, i) => (
            <label key={m.id} className="choice">
              <input type="checkbox" name="pool" value={m.id} defaultChecked={m.role === "annotator"} {...(i === 0 ? aria("pool") : {})} />{" "}
              {m.name} <span className="muted small">({m.role})</span>
            </label>
          ))}
          {err("pool")}
        </fieldset>
        <div className="actions">
          <button type="submit" name="confirmNames" value="no">
            Create task
          </button>
          {warning ? (
            <button type="submit" name="confirmNames" value="yes" className="danger">
              Save anyway
            </button>
          ) : null}
        </div>
      </Form>
    </div>
  );
}
