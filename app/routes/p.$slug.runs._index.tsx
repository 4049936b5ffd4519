import { CsrfField } from "~/components/CsrfField";
import { FieldError as FieldErrorBelow, fieldErrorsFrom, invalidProps } from "~/components/FieldError";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useEffect, useState } from "react";
import { isZodError, NewRunJson } from "~/forms/runs.server";
import { requireProjectRole } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { domainErrorResponse } from "~/errors.server";
import { PROTOCOL_IDS } from "~/runs/protocols";
import { newRunChoices, projectRuns } from "~/runs/project-runs.server";
import {
  definitionFromForm,
  formFieldOf,
  formLabel,
  jsonLabel,
  protocolForms,
  RUN_FORM_LABELS,
  RunDefinitionError,
  RunFormError,
  startRun,
  type FormField,
} from "~/runs/run-form.server";
import { RunInputError } from "~/runs/runner.server";
import { ensureInProcessWorker } from "~/runs/worker.server";
import { humanErrors, humanIssue } from "~/forms/messages";

export const meta: MetaFunction = () => [{ title: "Runs · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const d = getDal();
  const runs = (await projectRuns(d, project.id)).map((r) => ({
    id: r.id,
    name: r.name,
    protocol: r.protocol,
    status: r.status,
    createdAt: r.createdAt,
  }));
  const { datasets, providers, previous } = await newRunChoices(d, project.id);
  if (runs.some((r) => r.status === "queued" || r.status === "running")) ensureInProcessWorker();
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
    const parsed = NewRunJson.safeParse(Object.fromEntries(form), { error: humanErrors(RUN_FORM_LABELS) });
    if (!parsed.success) return json<ActionError>({ error: parsed.error.issues[0].message, field: "definition" }, { status: 400 });
    try {
      def = JSON.parse(parsed.data.definition);
    } catch {
      return json<ActionError>({ error: "The definition is not valid JSON.", field: "definition" }, { status: 400 });
    }
  } else {
    try {
      def = definitionFromForm(form);
    } catch (err) {
      if (err instanceof RunFormError) return domainErrorResponse(err);
      throw err;
    }
  }
  const protocol = String(form.get("protocol") ?? "");
  // The JSON names a place in the definition ("The definition's settings.maxTurns …"); the form names its field.
  const labelOf = (path: PropertyKey[]) => (fromJson ? jsonLabel(path) : formLabel(protocol, path));
  try {
    const run = await startRun(getDal(), project.id, def, user.id, { labelOf });
    ensureInProcessWorker();
    return redirect(`/p/${project.slug}/runs/${run.id}`);
  } catch (err) {
    if (err instanceof RunDefinitionError) {
      const problem = err.problems[0];
      if (fromJson) return json<ActionError>({ error: problem.message, field: "definition" }, { status: 400 });
      return json<ActionError>({ error: problem.message, field: formFieldOf(protocol, problem.path) }, { status: 400 });
    }
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
