import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useRevalidator } from "@remix-run/react";
import { useEffect, useState } from "react";
import { requireProjectRole } from "~/auth/guards.server";
import { FieldError, fieldErrorsFrom, invalidProps } from "~/components/FieldError";
import { looksLikeAnnotatorColumn } from "~/formats/labels";
import { handleImportAction, importPageData, type JobView } from "~/formats/upload.server";

export const meta: MetaFunction = () => [{ title: "Import · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  return json(await importPageData(project, new URL(request.url)));
}

export async function action({ request, params }: ActionFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  return handleImportAction(request, project);
}

type Data = ReturnType<typeof useLoaderData<typeof loader>>;

const mb = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;

export default function ImportPage() {
  const data = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const errors = fieldErrorsFrom(answer);
  const { project, upload } = data;
  return (
    <div>
      <h1>Import</h1>
      <p className="muted">
        Upload a file (CSV, JSONL or a JSON array, up to {data.maxUploadMb} MB, UTF-8), choose which column holds each field, and check the
        preview: the counts, the first rows as Concord read them and the first 20 problems. Nothing is written until you confirm, and then
        the whole file is imported or nothing is. Exports are on the <Link to={`/p/${project.slug}/export`}>export page</Link>.
      </p>
      {data.uploadGone ? (
        <p className="alert error" role="alert">
          This upload is no longer here: it expired, it was imported, or the server restarted while it was being imported (an import cut
          short writes nothing). Upload the file again.
        </p>
      ) : null}
      {upload ? <UploadSteps data={data} upload={upload} errors={errors} /> : <UploadForm data={data} errors={errors} />}
    </div>
  );
}

function UploadForm({ data, errors }: { data: Data; errors: Record<string, string> }) {
  const navigation = useNavigation();
  const [presetName, setPresetName] = useState(data.presets[0].name);
  const preset = data.presets.find((p) => p.name === presetName) ?? data.presets[0];
  const busy = navigation.state === "submitting";
  return (
    <Form method="post" encType="multipart/form-data" className="stack" data-testid="upload-form">
      {/* First field: the CSRF token arrives before the file. */}
      <CsrfField />
      <input type="hidden" name="intent" value="upload" />
      {errors.form ? (
        <p className="alert error" role="alert">
          {errors.form}
        </p>
      ) : null}
      <label>
        Preset
        <select name="preset" value={presetName} onChange={(e) => setPresetName(e.target.value)} {...invalidProps(errors, "preset")}>
          {data.presets.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <FieldError errors={errors} name="preset" />
      <p className="muted small">{preset.summary}</p>
      <label>
        File
        <input
          type="file"
          name="file"
          required
          accept={preset.formats.map((f) => `.${f}`).join(",") + ",.tsv,.ndjson,.txt"}
          {...invalidProps(errors, "file")}
        />
      </label>
      <FieldError errors={errors} name="file" />
      <button type="submit" disabled={busy}>
        {busy ? "Uploading…" : "Upload"}
      </button>
    </Form>
  );
}

function UploadSteps({ data, upload, errors }: { data: Data; upload: NonNullable<Data["upload"]>; errors: Record<string, string> }) {
  const job = upload.job;
  const active = job?.state === "queued" || job?.state === "running";
  const revalidator = useRevalidator();
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => {
      if (revalidator.state === "idle") revalidator.revalidate();
    }, 600);
    return () => clearInterval(t);
  }, [active, revalidator]);
  const preset = data.presets.find((p) => p.name === upload.preset)!;
  const confirmed = job?.kind === "confirm" && job.state === "done";
  return (
    <section className="stack">
      <p data-testid="upload-file">
        <strong>{upload.fileName}</strong>{" "}
        <span className="muted">
          ({mb(upload.size)}, {upload.format.toUpperCase()}, preset {upload.preset})
        </span>
      </p>
      {errors.form ? (
        <p className="alert error" role="alert">
          {errors.form}
        </p>
      ) : null}
      {active ? <JobProgress job={job} /> : null}
      {!active && !confirmed ? <OptionsForm data={data} upload={upload} preset={preset} errors={errors} /> : null}
      {job && job.state === "failed" ? (
        <p className="alert error" role="alert">
          {job.message}
        </p>
      ) : null}
      {job && job.state === "done" ? <JobResult job={job} upload={upload} slug={data.project.slug} /> : null}
      {!active ? (
        <Form method="post">
          <CsrfField />
          <input type="hidden" name="intent" value="discard" />
          <input type="hidden" name="token" value={upload.token} />
          <button type="submit" className="link-button">
            {confirmed ? "Import another file" : "Start over with another file"}
          </button>
        </Form>
      ) : null}
      {active ? (
        <noscript>
          <meta httpEquiv="refresh" content="2" />
        </noscript>
      ) : null}
    </section>
  );
}

function JobProgress({ job }: { job: Extract<JobView, { state: "queued" | "running" }> }) {
  const what = job.kind === "preview" ? "Checking the file" : "Importing";
  const label =
    job.phase === "waiting"
      ? "Waiting for another import to finish…"
      : job.phase === "writing"
        ? "Writing to the database…"
        : `${what}… ${job.percent}%`;
  return (
    <div className="progress" data-testid="import-progress" aria-live="polite">
      <div className="progress-label">
        <span>{label}</span>
        {job.totalBytes ? (
          <span className="muted">
            {mb(job.bytes)} of {mb(job.totalBytes)}
          </span>
        ) : null}
      </div>
      <div
        className="progress-track"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={job.percent}
      >
        <div className="progress-fill" style={{ width: `${job.phase === "writing" ? 100 : job.percent}%` }} />
      </div>
    </div>
  );
}

function OptionsForm({
  data,
  upload,
  preset,
  errors,
}: {
  data: Data;
  upload: NonNullable<Data["upload"]>;
  preset: Data["presets"][number];
  errors: Record<string, string>;
}) {
  const navigation = useNavigation();
  const busy = navigation.state === "submitting";
  const chosen = upload.options?.mapping ?? upload.detected;
  return (
    <Form method="post" className="stack" data-testid="mapping-form">
      <CsrfField />
      <input type="hidden" name="intent" value="preview" />
      <input type="hidden" name="token" value={upload.token} />
      {preset.fields.length ? (
        upload.columns.length ? (
          <fieldset>
            <legend>Columns: which column of the file holds each field (found {upload.columns.length} columns)</legend>
            {preset.fields.map((f) => {
              const name = `map.${f.name}`;
              const missing = f.required && !chosen[f.name];
              return (
                <div key={f.name}>
                  <label>
                    {f.name}
                    {f.required ? " *" : ""} <span className="muted small">{f.help}</span>
                    <select name={name} defaultValue={chosen[f.name] ?? ""} {...invalidProps(errors, name)}>
                      <option value="">{f.required ? "— choose a column —" : "— none —"}</option>
                      {upload.columns.map((c) => (
                        <option key={c} value={c}>
                          {c}
                        </option>
                      ))}
                    </select>
                  </label>
                  {missing ? <p className="muted small">No column has this name; choose the one that holds it.</p> : null}
                  <FieldError errors={errors} name={name} />
                </div>
              );
            })}
          </fieldset>
        ) : (
          <p className="muted">No columns could be read from the first line; the preview will say what is wrong.</p>
        )
      ) : (
        <p className="muted">This preset knows the file's layout; no mapping is needed.</p>
      )}
      {preset.kind === "attach" ? (
        <label>
          Items from dataset
          <select name="dataset" defaultValue={upload.options?.dataset ?? ""}>
            <option value="">any dataset of the project</option>
            {data.datasets.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <label>
          Dataset name (optional)
          <input
            type="text"
            name="dataset"
            maxLength={200}
            defaultValue={upload.options?.dataset ?? ""}
            placeholder="default: from the file name"
          />
        </label>
      )}
      {preset.name === "labels-wide" && upload.columns.length ? (
        <fieldset data-testid="annotator-columns">
          <legend>Annotator columns: each ticked column is one annotator's labels; the others are ignored</legend>
          <p className="muted small" id="annotators-help">
            Pre-ticked: the columns whose names read like annotators (ann_1, rater_a, coder 2, …). Tick every column that holds an
            annotator's labels and only those.
          </p>
          {upload.columns
            .filter((col) => col !== chosen.unit && col !== chosen.response)
            .map((col) => (
              <label key={col} className="inline">
                <input
                  type="checkbox"
                  name="annotators"
                  value={col}
                  aria-describedby="annotators-help"
                  defaultChecked={upload.options?.annotators ? upload.options.annotators.includes(col) : looksLikeAnnotatorColumn(col)}
                />{" "}
                {col}
              </label>
            ))}
          <FieldError errors={errors} name="annotators" />
        </fieldset>
      ) : null}
      {preset.kind === "labels" ? (
        <>
          <label>
            Scale (categories, in order) <span className="muted small">optional; separated by commas, e.g. 1, 2, 3, 4, 5 or A, B, tie</span>
            <input
              type="text"
              name="categories"
              maxLength={4000}
              defaultValue={upload.options?.categories?.join(", ") ?? ""}
              placeholder="default: the labels found in the file"
              {...invalidProps(errors, "categories")}
            />
          </label>
          <p className="muted small">
            Declare the scale when some of its categories may be unused: Gwet's AC1 counts the categories of the scale. Labels outside it
            are refused.
          </p>
          <FieldError errors={errors} name="categories" />
        </>
      ) : null}
      {preset.kind === "labels" ? (
        <label>
          Label level
          <select name="level" defaultValue={upload.options?.level ?? ""}>
            <option value="">infer from the labels</option>
            {data.levels.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <button type="submit" disabled={busy}>
        {upload.job?.kind === "preview" && upload.job.state === "done" ? "Preview again" : "Preview"}
      </button>
    </Form>
  );
}

function JobResult({ job, upload, slug }: { job: Extract<JobView, { state: "done" }>; upload: NonNullable<Data["upload"]>; slug: string }) {
  const s = job.summary;
  const counts: [string, number][] = (
    [
      ["Items", s.items],
      ["Checklist items", s.checklistItems],
      ["References", s.references],
      ["Responses", s.responses],
      ["Verdicts", s.verdicts],
      ["Annotations", s.annotations],
    ] as [string, number][]
  ).filter(([, n]) => n > 0);
  const ds = s.dataset ? ` ${s.dataset.name}${s.dataset.version ? ` v${s.dataset.version}` : ""}` : "";
  let heading: string;
  if (s.errorCount > 0) heading = `${upload.fileName}: ${s.errorCount} problem${s.errorCount === 1 ? "" : "s"}; nothing was imported`;
  else if (job.kind === "preview")
    heading = s.unchanged
      ? `${upload.fileName} is already imported${ds}: importing it again would change nothing`
      : `${upload.fileName}: ready to import`;
  else
    heading = s.unchanged
      ? `${upload.fileName} was already imported${ds}; nothing changed`
      : `Imported ${upload.fileName}${ds ? ` into${ds}` : ""}`;
  const columns = Array.from(new Set(job.sample.flatMap((r) => Object.keys(r.fields))));
  return (
    <section aria-live="polite" data-testid="import-result" className="stack">
      <h2>{heading}</h2>
      {s.conflictCount > 0 ? (
        <p className="alert error" role="alert" data-testid="import-conflicts">
          {s.conflictCount} row{s.conflictCount === 1 ? "" : "s"} of this file conflict{s.conflictCount === 1 ? "s" : ""} with what is
          already imported under the same key (responses: item, model and turn; verdicts: judge, item, response and checklist item).
          Imported rows are never replaced, so the file is refused; the rows are listed below.
        </p>
      ) : null}
      {s.errorCount === 0 && s.alreadyPresent > 0 && !s.unchanged ? (
        <p className="muted">
          {s.alreadyPresent} row{s.alreadyPresent === 1 ? " is" : "s are"} already imported with the same content and{" "}
          {s.alreadyPresent === 1 ? "is" : "are"} left as {s.alreadyPresent === 1 ? "it is" : "they are"}.
        </p>
      ) : null}
      {s.level ? (
        <p data-testid="import-level">
          Measurement level: <strong>{s.level.level}</strong> <span className="muted">({s.level.reason})</span>
        </p>
      ) : null}
      <table>
        <caption className="muted small">
          In the file{job.kind === "confirm" && s.errorCount === 0 ? ` · written in ${job.seconds.toFixed(1)} s` : ""}
        </caption>
        <tbody>
          {counts.map(([k, v]) => (
            <tr key={k}>
              <th>{k}</th>
              <td className="num">{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {job.kind === "preview" && job.sample.length ? (
        <div className="table-scroll">
          <h3>First rows as read</h3>
          <table data-testid="import-sample">
            <thead>
              <tr>
                <th>row</th>
                {columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {job.sample.map((r, i) => (
                <tr key={i}>
                  <td className="num">{r.row}</td>
                  {columns.map((c) => (
                    <td key={c} style={{ whiteSpace: "pre-wrap" }}>
                      {r.fields[c] ?? ""}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {job.problems.length ? (
        <>
          <h3>Problems{s.errorCount > 20 ? ` (first 20 of ${s.errorCount})` : ""}</h3>
          <ul className="error" data-testid="import-problems">
            {job.problems.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ul>
        </>
      ) : null}
      {job.warnings.length ? (
        <>
          <h3>Warnings{s.warningCount > 20 ? ` (first 20 of ${s.warningCount})` : ""}</h3>
          <ul>
            {job.warnings.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ul>
        </>
      ) : null}
      {job.kind === "preview" && s.errorCount === 0 && !s.unchanged ? (
        <Form method="post">
          <CsrfField />
          <input type="hidden" name="intent" value="confirm" />
          <input type="hidden" name="token" value={upload.token} />
          <button type="submit">Confirm import</button>
        </Form>
      ) : null}
      {job.kind === "confirm" && s.errorCount === 0 && s.dataset?.id ? (
        <p>
          <Link to={`/p/${slug}/datasets/${s.dataset.id}`}>Open the dataset</Link>
        </p>
      ) : null}
    </section>
  );
}

export function ErrorBoundary() {
  return <p className="error">The import page failed to load.</p>;
}
