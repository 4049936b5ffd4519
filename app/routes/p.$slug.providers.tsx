import { ConfirmButton } from "~/components/ConfirmButton";
import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useEffect, useRef } from "react";
import { ProviderForm } from "~/forms/providers.server";
import { requireProjectRole } from "~/auth/guards.server";
import { getDal } from "~/dal.server";
import { domainFieldErrorsResponse } from "~/errors.server";
import { listRecordings } from "~/runs/providers/replay.server";
import { addProvider, listProviders, ProviderInputError, removeProvider } from "~/runs/providers/store.server";
import { OPENAI_SETTING_KEYS } from "~/runs/providers/settings";
import { ErrorSummary, FieldError, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";
import { fieldErrorsOf, humanErrors } from "~/forms/messages";

export const meta: MetaFunction = () => [{ title: "Providers · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  // Never the API key: only whether one is set.
  const providers = await listProviders(getDal(), project.id);
  return json({
    project: { slug: project.slug, name: project.name },
    providers,
    recordings: listRecordings(),
    settingKeys: OPENAI_SETTING_KEYS,
  });
}

/** The add-provider form's labels, also used to word its errors ("Concurrency must be 512 or less."). */
const LABELS: Record<string, string> = {
  name: "Name",
  kind: "Kind",
  baseUrl: "Base URL",
  apiKey: "API key",
  model: "Model",
  concurrency: "Concurrency",
  requestsPerMinute: "Requests/minute",
  recording: "Recording",
  settings: "Settings",
};

/**
 * A store refusal as a sentence beside its field: "baseUrl: an http(s) URL is
 * required …" → "An http(s) URL is required …". A refusal about one key of the
 * settings keeps that key's name ("settings.file: …"), which says which key.
 */
function providerFieldErrors(message: string): FieldErrors {
  const m = /^(\w+)(\.[\w.]+)?: (.*)$/s.exec(message);
  const field = m && m[1] in LABELS ? m[1] : "form";
  if (field === "form" || m![2]) return { [field]: message };
  const text = m![3].charAt(0).toUpperCase() + m![3].slice(1);
  return { [field]: /[.!?)]$/.test(text) ? text : `${text}.` };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const form = await request.formData();
  const parsed = ProviderForm.safeParse(Object.fromEntries(form), { error: humanErrors(LABELS) });
  if (!parsed.success) {
    if (form.get("intent") === "create") return json({ fieldErrors: fieldErrorsOf(parsed.error) }, { status: 400 });
    // A row's Remove form is all hidden fields: only a stale page sends a bad one.
    return json(
      {
        form: `delete-${String(form.get("providerId") ?? "")}`,
        fieldErrors: { form: "This form is out of date: reload the page and try again." },
      },
      { status: 400 },
    );
  }
  const db = getDal();
  const d = parsed.data;
  try {
    if (d.intent === "delete") {
      const n = await removeProvider(db, project.id, { id: d.providerId });
      // Already removed (another tab, another researcher): what was asked for holds.
      return json({ ok: n ? "Provider removed." : "That provider was already removed." });
    }
    // A replay provider names a recording of the recordings folder (never a path).
    const settings = d.kind === "replay" && d.recording ? { ...d.settings, file: d.recording } : d.settings;
    await addProvider(db, project.id, {
      name: d.name,
      kind: d.kind,
      baseUrl: d.baseUrl || undefined,
      apiKey: d.apiKey || undefined,
      model: d.model,
      concurrency: d.concurrency,
      requestsPerMinute: d.requestsPerMinute,
      settings,
    });
  } catch (err) {
    if (err instanceof ProviderInputError)
      return d.intent === "create"
        ? domainFieldErrorsResponse(err, { fieldErrors: providerFieldErrors(err.message) })
        : // Beside the Remove button of that provider's row ("The run "…" still has jobs for this provider; …").
          domainFieldErrorsResponse(err, {
            form: `delete-${d.providerId}`,
            fieldErrors: { form: `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}${/[.!?]$/.test(err.message) ? "" : "."}` },
          });
    throw err;
  }
  return json({ ok: `Provider ${d.name} added.` });
}

export default function Providers() {
  const { project, providers, recordings, settingKeys } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as { ok?: string; error?: string; form?: string; fieldErrors?: FieldErrors } | undefined;
  // The add form's errors; a row's Remove answers with `form: "delete-<id>"` and its message shows in that row.
  const errors: FieldErrors = result?.form ? {} : (result?.fieldErrors ?? {});
  const formRef = useRef<HTMLFormElement>(null);
  const summaryRef = useRef<HTMLDivElement>(null);
  const rowErrorRef = useRef<HTMLParagraphElement>(null);
  useFocusFirstError(formRef, errors, result, summaryRef);
  useEffect(() => {
    if (result?.form && rowErrorRef.current) rowErrorRef.current.focus();
  }, [result]);
  const err = (name: string) => <FieldError errors={errors} name={name} />;
  const aria = (name: string) => invalidProps(errors, name);
  return (
    <div>
      <h1>Providers</h1>
      <p className="muted">
        OpenAI-compatible endpoints (vLLM, OpenRouter, LiteLLM, OpenAI) or recorded outputs. API keys stay on the server and are never shown
        again.
      </p>
      {result?.error ? (
        <div className="alert" role="alert">
          {result.error}
        </div>
      ) : null}
      {result?.ok ? <div className="panel">{result.ok}</div> : null}
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Kind</th>
            <th>Model</th>
            <th>Endpoint</th>
            <th className="num">Concurrency</th>
            <th className="num">RPM</th>
            <th>Key</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {providers.map((p) => (
            <tr key={p.id}>
              <td>{p.name}</td>
              <td>{p.kind === "replay" ? <span className="badge">recorded outputs</span> : p.kind}</td>
              <td>{p.model}</td>
              <td className="small">
                {p.kind === "replay" ? `recording ${String((p.settings as Record<string, unknown>).file ?? "")}` : p.baseUrl}
              </td>
              <td className="num">{p.concurrency}</td>
              <td className="num">{p.requestsPerMinute ?? "—"}</td>
              <td>{p.hasKey ? "set" : "—"}</td>
              <td>
                <Form method="post">
                  <CsrfField />
                  <input type="hidden" name="intent" value="delete" />
                  <input type="hidden" name="providerId" value={p.id} />
                  <ConfirmButton className="link-button" question={`Remove the provider ${p.name}? Runs that used it keep their results.`}>
                    Remove
                  </ConfirmButton>
                  {result?.form === `delete-${p.id}` && result.fieldErrors?.form ? (
                    <p className="field-error" data-field="form" role="alert" tabIndex={-1} ref={rowErrorRef}>
                      {result.fieldErrors.form}
                    </p>
                  ) : null}
                </Form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Add a provider</h2>
      <div className="panel" data-testid="add-provider">
        <ErrorSummary errors={errors} summaryRef={summaryRef} />
        <Form method="post" className="stack" noValidate ref={formRef} style={{ maxWidth: 640 }}>
          <CsrfField />
          <input type="hidden" name="intent" value="create" />
          <label>
            Name
            <input name="name" required maxLength={100} {...aria("name")} />
          </label>
          {err("name")}
          <label>
            Kind
            <select name="kind" defaultValue="openai-compatible" {...aria("kind")}>
              <option value="openai-compatible">OpenAI-compatible</option>
              <option value="replay">Recorded outputs (replay)</option>
            </select>
          </label>
          {err("kind")}
          <label>
            Base URL
            <input name="baseUrl" placeholder="http://localhost:8000/v1" {...aria("baseUrl")} />
          </label>
          {err("baseUrl")}
          <label>
            API key
            <input name="apiKey" type="password" autoComplete="off" {...aria("apiKey")} />
          </label>
          {err("apiKey")}
          <label>
            Model
            <input name="model" required {...aria("model")} />
          </label>
          {err("model")}
          <label>
            Concurrency
            <input name="concurrency" type="number" defaultValue={4} min={1} max={512} {...aria("concurrency")} />
          </label>
          {err("concurrency")}
          <label>
            Requests/minute (blank: no limit)
            <input name="requestsPerMinute" type="number" min={1} {...aria("requestsPerMinute")} />
          </label>
          {err("requestsPerMinute")}
          <label>
            Recording (replay only)
            <select name="recording" defaultValue="" {...aria("recording")}>
              <option value="">—</option>
              {recordings.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          {err("recording")}
          <label>
            Settings (JSON; an unknown key is refused). Keys: {settingKeys.join(", ")}.
            <textarea name="settings" rows={3} defaultValue="{}" {...aria("settings")} />
          </label>
          {err("settings")}
          <p className="small muted">
            Concurrency and requests/minute hold for the provider across every worker process. API keys are stored encrypted.
          </p>
          <div>
            <button type="submit">Add provider</button>
          </div>
        </Form>
      </div>
      <p className="small muted">Project: {project.name}</p>
    </div>
  );
}
