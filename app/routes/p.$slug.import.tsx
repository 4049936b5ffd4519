import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { useState } from "react";
import { requireProjectRole } from "~/auth/guards.server";
import { handleImportAction, importPageData, type ActionResult } from "~/formats/upload.server";

export const meta: MetaFunction = () => [{ title: "Import · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  return json(importPageData(project));
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  return handleImportAction(request, project);
}

export default function ImportPage() {
  const { project, presets, levels, maxUploadMb } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const [presetName, setPresetName] = useState(presets[0].name);
  const preset = presets.find((p) => p.name === presetName) ?? presets[0];
  const busy = navigation.state !== "idle";
  return (
    <div>
      <h1>Import</h1>
      <p className="muted">
        Upload a file (CSV or JSONL, up to {maxUploadMb} MB; UTF-8). You get a preview first: the counts and the first 20 problems. Nothing is
        written until you confirm, and then the whole file is imported or nothing is. Exports are on the <Link to={`/p/${project.slug}/export`}>export page</Link>.
      </p>
      <Form method="post" encType="multipart/form-data" className="stack">
        <input type="hidden" name="intent" value="preview" />
        <label>
          Preset
          <select name="preset" value={presetName} onChange={(e) => setPresetName(e.target.value)}>
            {presets.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <p className="muted small">{preset.summary}</p>
        <label>
          File
          <input type="file" name="file" required accept={preset.formats.map((f) => `.${f}`).join(",") + ",.tsv,.ndjson"} />
        </label>
        <label>
          Dataset name (optional)
          <input type="text" name="dataset" placeholder={preset.kind === "attach" ? "look items up in this dataset" : "default: from the file name"} />
        </label>
        {preset.kind === "labels" ? (
          <label>
            Label level
            <select name="level" defaultValue="">
              <option value="">infer from the labels</option>
              {levels.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {preset.fields.length ? (
          <fieldset>
            <legend>Mapping: which column holds each field (leave blank to use the usual names)</legend>
            {preset.fields.map((f) => (
              <label key={f.name}>
                {f.name}
                {f.required ? " *" : ""} <span className="muted small">{f.help}</span>
                <input type="text" name={`map.${f.name}`} placeholder={f.name} />
              </label>
            ))}
          </fieldset>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Preview"}
        </button>
      </Form>
      {result ? <ImportResult result={result} /> : null}
    </div>
  );
}

function ImportResult({ result }: { result: ActionResult }) {
  if (!result.ok) {
    return (
      <p role="alert" className="error">
        {result.message}
      </p>
    );
  }
  const s = result.summary;
  const counts: [string, number][] = [
    ["Items", s.items],
    ["Checklist items", s.checklistItems],
    ["References", s.references],
    ["Responses", s.responses],
    ["Verdicts", s.verdicts],
    ["Annotations", s.annotations],
  ];
  return (
    <section aria-live="polite" data-testid="import-result">
      <h2>
        {s.errorCount > 0
          ? `${result.fileName}: ${s.errorCount} problem${s.errorCount === 1 ? "" : "s"}; nothing was imported`
          : result.intent === "preview"
            ? `${result.fileName}: ready to import${s.unchanged ? " (already imported: nothing would change)" : ""}`
            : s.unchanged
              ? `${result.fileName} was already imported; nothing changed`
              : `Imported ${result.fileName}${s.dataset ? ` into ${s.dataset.name} v${s.dataset.version}` : ""}`}
      </h2>
      <table>
        <tbody>
          {counts.map(([k, v]) => (
            <tr key={k}>
              <th>{k}</th>
              <td className="num">{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {result.problems.length ? (
        <>
          <h3>Problems{s.errorCount > 20 ? ` (first 20 of ${s.errorCount})` : ""}</h3>
          <ul className="error">
            {result.problems.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ul>
        </>
      ) : null}
      {result.warnings.length ? (
        <>
          <h3>Warnings{s.warningCount > 20 ? ` (first 20 of ${s.warningCount})` : ""}</h3>
          <ul>
            {result.warnings.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ul>
        </>
      ) : null}
      {result.intent === "preview" && result.token && s.errorCount === 0 ? (
        <Form method="post">
          <input type="hidden" name="intent" value="confirm" />
          <input type="hidden" name="token" value={result.token} />
          <button type="submit">Confirm import</button>
        </Form>
      ) : null}
    </section>
  );
}

export function ErrorBoundary() {
  return <p className="error">The import page failed to load.</p>;
}
