import { CsrfField } from "~/components/CsrfField";
import { FieldError as FieldErrorBelow, fieldErrorsFrom, invalidProps } from "~/components/FieldError";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useEffect, useState } from "react";
import { asc, desc, eq } from "drizzle-orm";
import { isZodError, NewRunForm, NewRunJson } from "~/forms/runs.server";
import { requireProjectRole } from "~/auth/guards.server";
import { first, getDal } from "~/dal.server";
import { domainErrorResponse } from "~/errors.server";
import { getProtocol, PROTOCOL_IDS } from "~/runs/protocols";
import { protocolForms, RunFormError, settingsFromForm, type FormField } from "~/runs/run-form.server";
import { createRun, RunDefinition, RunInputError } from "~/runs/runner.server";
import { ensureInProcessWorker } from "~/runs/worker.server";
import { humanErrors, humanIssue } from "~/forms/messages";

export const meta: MetaFunction = () => [{ title: "Runs · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const d = getDal();
  const { runs: runTable, datasets: datasetTable, providers: providerTable } = d.t;
  const runs = await d.q
    .select({
      id: runTable.id,
      name: runTable.name,
      protocol: runTable.protocol,
      status: runTable.status,
      createdAt: runTable.createdAt,
    })
    .from(runTable)
    .where(eq(runTable.projectId, project.id))
    .orderBy(desc(runTable.id));
  const datasets = await d.q
    .select({ id: datasetTable.id, name: datasetTable.name, version: datasetTable.version })
    .from(datasetTable)
    .where(eq(datasetTable.projectId, project.id))
    .orderBy(asc(datasetTable.id));
  const providers = await d.q
    .select({ name: providerTable.name, kind: providerTable.kind, model: providerTable.model })
    .from(providerTable)
    .where(eq(providerTable.projectId, project.id))
    .orderBy(asc(providerTable.name));
  if (runs.some((r) => r.status === "queued" || r.status === "running")) ensureInProcessWorker();
  // The form starts from the latest run's definition (on the demo: the recorded providers), else a template.
  const latest = runs.length
    ? first(await d.q.select({ config: runTable.config }).from(runTable).where(eq(runTable.id, runs[0].id)))
    : undefined;
  const previous = (latest?.config as { definition?: Record<string, unknown> } | undefined)?.definition ?? null;
  return json({
    project: { slug: project.slug, name: project.name },
    runs,
    datasets,
    providers,
    protocols: PROTOCOL_IDS,
    previous,
    forms: protocolForms(),
  });
}

type ActionError = { error: string; field?: string };

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const form = await request.formData();
  const fromJson = form.get("intent") === "create-json";
  let def: unknown;
  if (fromJson) {
    const parsed = NewRunJson.safeParse(Object.fromEntries(form), { error: humanErrors(LABELS) });
    if (!parsed.success) return json<ActionError>({ error: parsed.error.issues[0].message, field: "definition" }, { status: 400 });
    try {
      def = JSON.parse(parsed.data.definition);
    } catch {
      return json<ActionError>({ error: "The definition is not valid JSON.", field: "definition" }, { status: 400 });
    }
  } else {
    const parsed = NewRunForm.safeParse(
      {
        intent: form.get("intent"),
        name: form.get("name") ?? "",
        protocol: form.get("protocol") ?? "",
        datasetId: form.get("datasetId") ?? "",
        limit: form.get("limit") ?? "",
      },
      { error: humanErrors(LABELS) },
    );
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      const field = String(i.path[0] ?? "form");
      return json<ActionError>({ error: i.message, field }, { status: 400 });
    }
    const d = parsed.data;
    const models = form.getAll("models").map(String).filter(Boolean);
    const judges = form.getAll("judges").map(String).filter(Boolean);
    if (models.length === 0) return json<ActionError>({ error: "Choose at least one model to run.", field: "models" }, { status: 400 });
    if (judges.length === 0) return json<ActionError>({ error: "Choose at least one judge.", field: "judges" }, { status: 400 });
    let settings: Record<string, unknown>;
    try {
      settings = settingsFromForm(d.protocol, form);
    } catch (err) {
      if (err instanceof RunFormError) return domainErrorResponse(err);
      throw err;
    }
    def = {
      name: d.name,
      protocol: d.protocol,
      datasetId: d.datasetId,
      limit: d.limit,
      models: models.map((provider) => ({ provider })),
      judges: judges.map((provider) => ({ provider })),
      settings,
    };
  }
  const protocol = String(form.get("protocol") ?? "");
  // The JSON names a place in the definition ("The definition's settings.maxTurns …"); the form names its field.
  const labelOf = (path: PropertyKey[]) => (fromJson ? jsonLabel(path) : formLabel(protocol, path));
  const problem = definitionProblem(def, labelOf);
  if (problem) {
    if (fromJson) return json<ActionError>({ error: problem.message, field: "definition" }, { status: 400 });
    const [head, ...rest] = problem.path.map(String);
    const field = head === "settings" ? `s.${protocol}.${rest.join(".")}` : head;
    return json<ActionError>(
      { error: problem.message, field: head === "settings" && !fieldLabel(protocol, field) ? undefined : field },
      { status: 400 },
    );
  }
  try {
    const run = await createRun(getDal(), project.id, def as never, user.id);
    ensureInProcessWorker();
    return redirect(`/p/${project.slug}/runs/${run.id}`);
  } catch (err) {
    if (isZodError(err))
      return json<ActionError>(
        { error: humanIssue(err.issues[0], labelOf(err.issues[0].path)), field: fromJson ? "definition" : undefined },
        { status: 400 },
      );
    if (err instanceof RunInputError) {
      // What the schemas cannot see (no such dataset or provider in this project), beside the JSON when it came from there.
      if (fromJson) return json<ActionError>({ error: err.message, field: "definition" }, { status: err.status });
      return domainErrorResponse(err);
    }
    throw err;
  }
}

/** The form's labels, also used to word its errors. */
const LABELS: Record<string, string> = {
  name: "Name",
  protocol: "Protocol",
  datasetId: "Dataset",
  limit: "Items",
  definition: "Definition",
};

/** The label the form shows for a protocol setting (`s.refinebench.maxTurns` → "Max turns"). */
function fieldLabel(protocol: string, name: string): string | undefined {
  const walk = (fields: FormField[]): string | undefined => {
    for (const f of fields) {
      if (f.name === name) return f.label;
      if (f.kind === "group") {
        const inner = walk(f.fields);
        if (inner) return f.label === inner ? inner : `${f.label} · ${inner}`;
      }
    }
    return undefined;
  };
  const pf = protocolForms().find((f) => f.id === protocol);
  return pf ? walk(pf.fields) : undefined;
}

/**
 * The first problem with a run definition (the JSON one, or the one the form's fields make) in a sentence naming
 * the field by `labelOf` — zod's generic "Too small: expected number to be >=1" never reaches the page — with its
 * path in the definition; null when it is well-formed. createRun checks the same schemas, and then the data.
 */
function definitionProblem(def: unknown, labelOf: (path: PropertyKey[]) => string): { message: string; path: PropertyKey[] } | null {
  const error = (prefix: PropertyKey[]) => (issue: Parameters<typeof humanIssue>[0]) =>
    humanIssue(issue, labelOf([...prefix, ...(issue.path ?? [])]));
  const parsed = RunDefinition.safeParse(def, { error: error([]) });
  if (!parsed.success) return { message: parsed.error.issues[0].message, path: parsed.error.issues[0].path };
  const settings = getProtocol(parsed.data.protocol).configSchema.safeParse(parsed.data.settings, { error: error(["settings"]) });
  if (!settings.success) return { message: settings.error.issues[0].message, path: ["settings", ...settings.error.issues[0].path] };
  return null;
}

/** A place in the JSON definition as its author wrote it: ["models", 0, "provider"] → "the definition's models[0].provider". */
function jsonLabel(path: PropertyKey[]): string {
  const at = path.map((k, i) => (typeof k === "number" ? `[${k}]` : `${i ? "." : ""}${String(k)}`)).join("");
  return at ? `the definition's ${at}` : "the definition";
}

/** A field of the new-run form as it is labelled ("Max turns" for settings.maxTurns of RefineBench). */
function formLabel(protocol: string, path: PropertyKey[]): string {
  const [head, ...rest] = path.map(String);
  if (head === "settings") return fieldLabel(protocol, `s.${protocol}.${rest.join(".")}`) ?? rest.join(".");
  return LABELS[head] ?? path.map(String).join(".");
}

/** The form's error, shown beside the field it concerns. */
function FieldError({ name, result }: { name: string; result?: ActionError }) {
  if (!result?.field || result.field !== name) return null;
  return (
    <span className="field-error" role="alert" id={`err-${name}`} data-field={name}>
      {result.error}
    </span>
  );
}

function Field({ f, result }: { f: FormField; result?: ActionError }) {
  const help = f.help ? <span className="small muted"> {f.help}</span> : null;
  const invalid = result?.field === f.name || undefined;
  if (f.kind === "group")
    return (
      <fieldset>
        <legend>{f.label}</legend>
        {help ? <p className="small muted">{f.help}</p> : null}
        {f.fields.map((c) => (
          <Field key={c.name} f={c} result={result} />
        ))}
        <FieldError name={f.name} result={result} />
      </fieldset>
    );
  if (f.kind === "select")
    return (
      <label className="choice">
        {f.label}{" "}
        <select name={f.name} defaultValue={f.value} aria-invalid={invalid}>
          {f.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
        {help}
        <FieldError name={f.name} result={result} />
      </label>
    );
  if (f.kind === "multi")
    return (
      <fieldset>
        <legend>{f.label}</legend>
        {help ? <p className="small muted">{f.help}</p> : null}
        {f.options.map((o) => (
          <label key={o} className="choice">
            <input type="checkbox" name={f.name} value={o} defaultChecked={f.value.includes(o)} /> {o}
          </label>
        ))}
        <FieldError name={f.name} result={result} />
      </fieldset>
    );
  return (
    <label className="choice">
      {f.label}{" "}
      <input
        type="number"
        name={f.name}
        defaultValue={f.value ?? ""}
        min={f.min}
        max={f.max}
        step={f.integer ? 1 : "any"}
        style={{ width: "8em" }}
        aria-invalid={invalid}
      />
      {help}
      <FieldError name={f.name} result={result} />
    </label>
  );
}

export default function Runs() {
  const { project, runs, datasets, providers, protocols, previous, forms } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as ActionError | undefined;
  // The JSON's problems go under the text area, like the other forms' (app/components/FieldError.tsx).
  const jsonErrors = result?.field === "definition" ? fieldErrorsFrom(result) : {};
  const [protocol, setProtocol] = useState(forms[0]?.id ?? "refinebench");
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  useEffect(() => {
    if (!result?.field) return;
    const el = document.querySelector<HTMLElement>(`[name="${CSS.escape(result.field)}"]`);
    el?.focus();
  }, [result, protocol]);
  const example = JSON.stringify(
    previous
      ? { ...previous, name: `${String(previous.name ?? "run").replace(/ \(again( \d+)?\)$/, "")} (again)` }
      : {
          name: "RefineBench self-refinement",
          protocol: "refinebench",
          datasetId: datasets[0]?.id ?? 1,
          limit: 20,
          models: [{ provider: providers[0]?.name ?? "my-provider" }],
          judges: [{ provider: providers[0]?.name ?? "my-judge" }],
          settings: { setting: "self-refinement", maxTurns: 5 },
        },
    null,
    2,
  );
  return (
    <div>
      <h1>Runs</h1>
      <p>
        <Link to={`/p/${project.slug}/providers`}>Providers</Link>
      </p>
      {runs.length === 0 ? (
        <p className="muted">No runs yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Run</th>
              <th>Protocol</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link to={`${r.id}`}>{r.name}</Link>
                </td>
                <td>{r.protocol}</td>
                <td>
                  <span className="badge">{r.status}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Start a run</h2>
      {result?.error && !result.field ? (
        <div className="alert" role="alert">
          {result.error}
        </div>
      ) : result?.error ? (
        <p className="small muted">The form has an error: see the field marked below.</p>
      ) : null}
      {providers.length === 0 ? (
        <p className="muted">
          Add a <Link to={`/p/${project.slug}/providers`}>provider</Link> first: the models and judges of a run are providers.
        </p>
      ) : null}
      <Form method="post" className="panel" data-testid="new-run">
        <CsrfField />
        <input type="hidden" name="intent" value="create" />
        <label className="choice">
          Name{" "}
          <input
            name="name"
            required
            maxLength={200}
            defaultValue={previous ? "" : "RefineBench self-refinement"}
            aria-invalid={result?.field === "name" || undefined}
          />
          <FieldError name="name" result={result} />
        </label>
        <label className="choice">
          Protocol{" "}
          <select name="protocol" value={protocol} onChange={(e) => setProtocol(e.target.value)}>
            {forms.map((f) => (
              <option key={f.id} value={f.id}>
                {f.title}
              </option>
            ))}
          </select>
        </label>
        <label className="choice">
          Dataset{" "}
          <select name="datasetId" defaultValue={datasets[0]?.id}>
            {datasets.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name} (v{d.version})
              </option>
            ))}
          </select>
        </label>
        <label className="choice">
          Items{" "}
          <input
            name="limit"
            type="number"
            min={1}
            placeholder="all"
            style={{ width: "8em" }}
            aria-invalid={result?.field === "limit" || undefined}
          />{" "}
          <span className="small muted">the first N items of the dataset; empty for all</span>
          <FieldError name="limit" result={result} />
        </label>
        <fieldset>
          <legend>Models (the responses come from these)</legend>
          {providers.map((p) => (
            <label key={p.name} className="choice">
              <input type="checkbox" name="models" value={p.name} /> {p.name}{" "}
              <span className="small muted">({p.kind === "replay" ? "recorded outputs" : p.model})</span>
            </label>
          ))}
          <FieldError name="models" result={result} />
        </fieldset>
        <fieldset>
          <legend>Judges (the first one also writes guided feedback)</legend>
          {providers.map((p) => (
            <label key={p.name} className="choice">
              <input type="checkbox" name="judges" value={p.name} /> {p.name}{" "}
              <span className="small muted">({p.kind === "replay" ? "recorded outputs" : p.model})</span>
            </label>
          ))}
          <FieldError name="judges" result={result} />
        </fieldset>
        {forms.map((f) => (
          <fieldset key={f.id} hidden={hydrated && f.id !== protocol} data-protocol={f.id}>
            <legend>Settings: {f.title}</legend>
            {!hydrated ? <p className="small muted">Used when this protocol is chosen above.</p> : null}
            {f.fields.map((field) => (
              <Field key={field.name} f={field} result={result} />
            ))}
          </fieldset>
        ))}
        <button type="submit">Start run</button>
      </Form>
      <details className="panel" open={result?.field === "definition" || undefined}>
        <summary>Advanced: a run definition in JSON</summary>
        <Form method="post">
          <CsrfField />
          <input type="hidden" name="intent" value="create-json" />
          <p className="small muted">
            The same definition `npm run runs -- start --config FILE` reads (models can be renamed with <code>as</code>, items chosen with{" "}
            <code>itemIds</code>). Protocols: {protocols.join(", ")}. Datasets:{" "}
            {datasets.map((d) => `${d.id} = ${d.name} v${d.version}`).join(", ") || "none"}.
          </p>
          <textarea name="definition" rows={14} cols={80} defaultValue={example} {...invalidProps(jsonErrors, "definition")} />
          <FieldErrorBelow errors={jsonErrors} name="definition" />
          <div>
            <button type="submit">Start run from JSON</button>
          </div>
        </Form>
      </details>
    </div>
  );
}
