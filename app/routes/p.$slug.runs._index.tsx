import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { asc, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { requireProjectRole } from "~/auth/guards.server";
import { getDb, schema } from "~/db.server";
import { PROTOCOL_IDS } from "~/runs/protocols";
import { createRun, RunInputError } from "~/runs/runner.server";
import { ensureInProcessWorker } from "~/runs/worker.server";

export const meta: MetaFunction = () => [{ title: "Runs · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  const db = getDb();
  const runs = db
    .select({ id: schema.runs.id, name: schema.runs.name, protocol: schema.runs.protocol, status: schema.runs.status, createdAt: schema.runs.createdAt })
    .from(schema.runs)
    .where(eq(schema.runs.projectId, project.id))
    .orderBy(desc(schema.runs.id))
    .all();
  const datasets = db.select({ id: schema.datasets.id, name: schema.datasets.name, version: schema.datasets.version }).from(schema.datasets).where(eq(schema.datasets.projectId, project.id)).orderBy(asc(schema.datasets.id)).all();
  const providers = db.select({ name: schema.providers.name, kind: schema.providers.kind, model: schema.providers.model }).from(schema.providers).where(eq(schema.providers.projectId, project.id)).orderBy(asc(schema.providers.name)).all();
  if (runs.some((r) => r.status === "queued" || r.status === "running")) ensureInProcessWorker();
  // The form starts from the latest run's definition (on the demo: the recorded providers), else a template.
  const latest = runs.length ? db.select({ config: schema.runs.config }).from(schema.runs).where(eq(schema.runs.id, runs[0].id)).get() : undefined;
  const previous = (latest?.config as { definition?: Record<string, unknown> } | undefined)?.definition ?? null;
  return json({ project: { slug: project.slug, name: project.name }, runs, datasets, providers, protocols: PROTOCOL_IDS, previous });
}

const NewRun = z.object({ intent: z.literal("create"), definition: z.string().min(2) });

export async function action({ request, params }: ActionFunctionArgs) {
  const { project, user } = await requireProjectRole(request, params.slug, "researcher");
  const parsed = NewRun.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) return json({ error: `${parsed.error.issues[0].path.join(".") || "form"}: ${parsed.error.issues[0].message}` }, { status: 400 });
  let def: unknown;
  try {
    def = JSON.parse(parsed.data.definition);
  } catch (err) {
    return json({ error: `definition: not valid JSON (${(err as Error).message})` }, { status: 400 });
  }
  try {
    const run = createRun(getDb(), project.id, def as never, user.id);
    ensureInProcessWorker();
    return redirect(`/p/${project.slug}/runs/${run.id}`);
  } catch (err) {
    if (err instanceof z.ZodError) return json({ error: `definition.${err.issues[0].path.join(".")}: ${err.issues[0].message}` }, { status: 400 });
    if (err instanceof RunInputError) return json({ error: err.message }, { status: 400 });
    throw err;
  }
}

export default function Runs() {
  const { project, runs, datasets, providers, protocols, previous } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>() as { error?: string } | undefined;
  const example = JSON.stringify(
    previous ? { ...previous, name: `${String(previous.name ?? "run").replace(/ \(again( \d+)?\)$/, "")} (again)` } : {
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
      {result?.error ? <div className="alert">{result.error}</div> : null}
      <Form method="post" className="panel">
        <CsrfField />
        <input type="hidden" name="intent" value="create" />
        <p className="small muted">
          Protocols: {protocols.join(", ")}. Providers: {providers.map((p) => `${p.name} (${p.kind === "replay" ? "recorded" : p.model})`).join(", ") || "none yet"}. Datasets:{" "}
          {datasets.map((d) => `${d.id} = ${d.name} v${d.version}`).join(", ") || "none"}.
        </p>
        <textarea name="definition" rows={14} cols={80} defaultValue={example} />
        <div>
          <button type="submit">Start run</button>
        </div>
      </Form>
    </div>
  );
}
