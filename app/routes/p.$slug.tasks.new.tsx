/** Researchers create a task: dataset, kind, sampling plan, overlap, guidelines, pool. */
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { asc, eq } from "drizzle-orm";
import { ANNOTATABLE_KINDS, DEFAULT_PENALTY_REASONS, KIND_TITLES, PLANS } from "~/annotation/config";
import { SamplingError } from "~/annotation/sampling";
import { AssignmentError } from "~/annotation/assignment";
import { createTask, NewTaskSchema, projectMembers, TaskError } from "~/annotation/tasks.server";
import { requireProjectRole } from "~/auth/guards.server";
import styles from "~/components/annotation.css";
import { getDb, schema } from "~/db.server";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];
export const meta: MetaFunction = () => [{ title: "New task · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const db = getDb();
  const datasets = db
    .select({ id: schema.datasets.id, name: schema.datasets.name, version: schema.datasets.version })
    .from(schema.datasets)
    .where(eq(schema.datasets.projectId, project.id))
    .orderBy(asc(schema.datasets.name))
    .all();
  const models = db
    .selectDistinct({ model: schema.responses.model })
    .from(schema.responses)
    .innerJoin(schema.items, eq(schema.items.id, schema.responses.itemId))
    .innerJoin(schema.datasets, eq(schema.datasets.id, schema.items.datasetId))
    .where(eq(schema.datasets.projectId, project.id))
    .orderBy(asc(schema.responses.model))
    .all()
    .map((m) => m.model);
  return json({ datasets, models, members: projectMembers(project.id) });
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
    penaltyReasons: opt(form.get("penaltyReasons"))?.split(",").map((s) => s.trim()).filter(Boolean),
    allowTies: form.get("allowTies") === "on",
    includeReference: form.get("includeReference") === "on",
    n: opt(form.get("n")),
    goldRate: opt(form.get("goldRate")) ?? "0",
  };
  const parsed = NewTaskSchema.safeParse(raw);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0] ?? "form")] ??= issue.message;
    return json({ fieldErrors }, { status: 400 });
  }
  try {
    const { taskId } = createTask(project.id, user.id, parsed.data);
    return redirect(`/p/${project.slug}/tasks/${taskId}`);
  } catch (err) {
    if (err instanceof TaskError) return json({ fieldErrors: { [err.field]: err.message } }, { status: 400 });
    if (err instanceof SamplingError || err instanceof AssignmentError) return json({ fieldErrors: { form: err.message } }, { status: 400 });
    throw err;
  }
}

export default function NewTask() {
  const { datasets, models, members } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const errors = (data?.fieldErrors ?? {}) as Record<string, string>;
  const e = (name: string) => (errors[name] ? <div className="field-error">{errors[name]}</div> : null);
  return (
    <div>
      <h1>New annotation task</h1>
      {e("form")}
      <Form method="post" className="stack" style={{ maxWidth: 640 }}>
        <CsrfField />
        <label>
          Name
          <input name="name" required />
        </label>
        {e("name")}
        <label>
          Dataset
          <select name="datasetId" required>
            {datasets.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name} v{d.version}
              </option>
            ))}
          </select>
        </label>
        {e("datasetId")}
        <label>
          Kind
          <select name="kind">
            {ANNOTATABLE_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_TITLES[k]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sampling plan (default: the kind's first)
          <select name="plan" defaultValue="">
            <option value="">default</option>
            {ANNOTATABLE_KINDS.flatMap((k) => PLANS[k].map((p) => (
              <option key={`${k}-${p}`} value={p}>
                {KIND_TITLES[k]}: {p}
              </option>
            )))}
          </select>
        </label>
        {e("plan")}
        <fieldset>
          <legend>Models (none chosen: all)</legend>
          {models.map((m) => (
            <label key={m} className="choice">
              <input type="checkbox" name="models" value={m} /> {m}
            </label>
          ))}
        </fieldset>
        <div className="side-by-side">
          <label>
            Overlap k
            <input name="overlap" type="number" min={1} max={20} defaultValue={2} />
          </label>
          <label>
            Seed
            <input name="seed" type="number" min={0} defaultValue={1} />
          </label>
          <label>
            Turn (blank: all)
            <input name="turn" type="number" min={1} />
          </label>
          <label>
            Items to sample (blank: all)
            <input name="itemLimit" type="number" min={1} />
          </label>
          <label>
            Responses per item
            <input name="responsesPerItem" type="number" min={1} />
          </label>
          <label>
            Stratify by
            <select name="strata" defaultValue="">
              <option value="">—</option>
              <option value="model">model</option>
              <option value="domain">domain</option>
              <option value="turn">turn</option>
            </select>
          </label>
          <label>
            Units per stratum
            <input name="perStratum" type="number" min={1} />
          </label>
          <label>
            Responses per comparison (2–4)
            <input name="n" type="number" min={2} max={4} />
          </label>
          <label>
            Gold rate (0–0.5)
            <input name="goldRate" type="number" step="0.01" min={0} max={0.5} defaultValue={0} />
          </label>
        </div>
        {e("overlap")}
        {e("n")}
        {e("goldRate")}
        <label className="choice">
          <input type="checkbox" name="showReference" /> Show the reference answer (checklist kinds)
        </label>
        <label className="choice">
          <input type="checkbox" name="allowTies" /> Allow ties (best-of-N)
        </label>
        <label className="choice">
          <input type="checkbox" name="includeReference" /> Hide the reference among compared responses (best-of-N)
        </label>
        <label>
          Penalty reasons (writing quality, comma-separated)
          <input name="penaltyReasons" placeholder={DEFAULT_PENALTY_REASONS.join(", ")} />
        </label>
        <label>
          Guidelines (markdown)
          <textarea name="guidelines" rows={6} />
        </label>
        <fieldset>
          <legend>Annotator pool</legend>
          {members.map((m) => (
            <label key={m.id} className="choice">
              <input type="checkbox" name="pool" value={m.id} defaultChecked={m.role === "annotator"} /> {m.name} <span className="muted small">({m.role})</span>
            </label>
          ))}
        </fieldset>
        {e("pool")}
        <button type="submit">Create task</button>
      </Form>
    </div>
  );
}
