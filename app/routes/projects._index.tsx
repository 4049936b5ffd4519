import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { formError } from "~/forms.server";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { requireSiteAdmin, requireUser } from "~/auth/guards.server";
import { createProject, findProjectBySlug, listProjectsFor, NewProjectSchema } from "~/projects/projects.server";

export const meta: MetaFunction = () => [{ title: "Projects · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const projects = listProjectsFor(user);
  // An annotator of a single project lands straight on their tasks there.
  if (!user.isSiteAdmin && projects.length === 1 && projects[0].role === "annotator") throw redirect(`/p/${projects[0].slug}/tasks`);
  return json({ projects, canCreate: user.isSiteAdmin });
}

export async function action({ request }: ActionFunctionArgs) {
  await requireSiteAdmin(request);
  const parsed = NewProjectSchema.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) return formError(parsed.error);
  if (findProjectBySlug(parsed.data.slug)) {
    return json({ error: `slug: a project called "${parsed.data.slug}" already exists.` }, { status: 409 });
  }
  const project = createProject(parsed.data);
  return redirect(`/p/${project.slug}`);
}

export default function Projects() {
  const { projects, canCreate } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  return (
    <div>
      <h1>Projects</h1>
      {projects.length === 0 ? (
        <p className="muted">You are not a member of any project yet. Ask a site admin to add you.</p>
      ) : (
        <div className="grid">
          {projects.map((p) => (
            <Link
              key={p.id}
              to={p.role === "annotator" ? `/p/${p.slug}/tasks` : `/p/${p.slug}`}
              className="panel"
              style={{ textDecoration: "none", color: "inherit" }}
            >
              <strong>{p.name}</strong>
              <div className="muted small">{p.description || p.slug}</div>
              <span className="badge">{p.role}</span>
            </Link>
          ))}
        </div>
      )}
      {canCreate ? (
        <div className="panel">
          <h2>New project</h2>
          {data?.error ? <div className="alert error">{data.error}</div> : null}
          <Form method="post" className="stack">
            <CsrfField />
            <label>
              Name
              <input name="name" required maxLength={120} />
            </label>
            <label>
              Slug (used in addresses)
              <input name="slug" required pattern="[a-z0-9][a-z0-9\-]{1,62}" />
            </label>
            <label>
              Description
              <textarea name="description" rows={2} />
            </label>
            <button type="submit">Create project</button>
          </Form>
        </div>
      ) : null}
    </div>
  );
}
