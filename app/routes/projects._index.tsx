import { CsrfField } from "~/components/CsrfField";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useRef } from "react";
import { ErrorSummary, FieldError, fieldErrorsFrom, invalidProps, useFocusFirstError, type FieldErrors } from "~/components/FieldError";
import { fieldErrorsOf, humanErrors } from "~/forms/messages";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { requireSiteAdmin, requireUser } from "~/auth/guards.server";
import { listTasks } from "~/annotation/tasks.server";
import { ProgressBar } from "~/components/ProgressBar";
import { createProject, findProjectBySlug, listProjectsFor, NewProjectSchema } from "~/projects/projects.server";
import { isAnnotatable, kindTitle } from "~/task-kinds/registry.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.annotatorOnly ? "My tasks" : "Projects"} · Concord` }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const projects = await listProjectsFor(user);
  // An annotator of a single project lands straight on their tasks there.
  if (!user.isSiteAdmin && projects.length === 1 && projects[0].role === "annotator") throw redirect(`/p/${projects[0].slug}/tasks`);
  // What they came to do: the tasks with units assigned to them, in every project they belong to
  // (only their own counts: an annotator never sees how others are getting on), work left first.
  const myTasks = (
    await Promise.all(
      projects
        .filter((p) => p.role && p.role !== "admin")
        .map(async (p) =>
          (await listTasks(p.id, user.id, false))
            .filter((t) => isAnnotatable(t.kind))
            .map((t) => ({
              id: t.id,
              name: t.name,
              kind: kindTitle(t.kind),
              status: t.status,
              project: { slug: p.slug, name: p.name },
              done: t.mineDone,
              total: t.mine,
            })),
        ),
    )
  )
    .flat()
    .sort((a, b) => Number(a.done >= a.total || a.status !== "open") - Number(b.done >= b.total || b.status !== "open"));
  const annotatorOnly = !user.isSiteAdmin && projects.length > 0 && projects.every((p) => p.role === "annotator");
  return json({ projects, myTasks, annotatorOnly, canCreate: user.isSiteAdmin });
}

/** The new-project form's labels, also used to word its errors ("Description can be at most 2000 characters long."). */
const LABELS: Record<string, string> = { name: "Name", slug: "Slug", description: "Description" };

export async function action({ request }: ActionFunctionArgs) {
  await requireSiteAdmin(request);
  const parsed = NewProjectSchema.safeParse(Object.fromEntries(await request.formData()), { error: humanErrors(LABELS) });
  if (!parsed.success) return json({ fieldErrors: fieldErrorsOf(parsed.error) as FieldErrors }, { status: 400 });
  if (await findProjectBySlug(parsed.data.slug)) {
    return json(
      { fieldErrors: { slug: `A project called "${parsed.data.slug}" already exists: choose another slug.` } as FieldErrors },
      { status: 409 },
    );
  }
  const project = await createProject(parsed.data);
  return redirect(`/p/${project.slug}`);
}

export default function Projects() {
  const { projects, myTasks, annotatorOnly, canCreate } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const errors = fieldErrorsFrom(data);
  const formRef = useRef<HTMLFormElement>(null);
  const summaryRef = useRef<HTMLDivElement>(null);
  useFocusFirstError(formRef, errors, data, summaryRef);
  const tasksSection =
    myTasks.length > 0 || annotatorOnly ? (
      <section aria-labelledby="my-tasks" data-testid="my-tasks">
        {annotatorOnly ? <h1 id="my-tasks">My tasks</h1> : <h2 id="my-tasks">My tasks</h2>}
        {myTasks.length === 0 ? <p className="muted">No tasks are assigned to you yet.</p> : null}
        <div className="grid">
          {myTasks.map((t) => (
            <div className="panel" key={`${t.project.slug}/${t.id}`} data-testid={`my-task-${t.id}`}>
              <h3 style={{ marginTop: 0 }}>{t.name}</h3>
              <p className="muted small">
                {t.project.name} · {t.kind}
                {t.status === "open" ? "" : ` · ${t.status}`}
              </p>
              <ProgressBar label="Yours" done={t.done} total={t.total} />
              <p className="actions">
                {t.status === "open" && t.done < t.total ? (
                  <Link className="button" to={`/p/${t.project.slug}/tasks/${t.id}/annotate`}>
                    Continue labelling
                  </Link>
                ) : null}
                <Link to={`/p/${t.project.slug}/tasks/${t.id}/queue`}>Open queue</Link>
              </p>
            </div>
          ))}
        </div>
      </section>
    ) : null;
  return (
    <div>
      {annotatorOnly ? tasksSection : null}
      {annotatorOnly ? <h2>Projects</h2> : <h1>Projects</h1>}
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
      {annotatorOnly ? null : tasksSection}
      {canCreate ? (
        <div className="panel">
          <h2>New project</h2>
          <ErrorSummary errors={errors} summaryRef={summaryRef} />
          <Form method="post" className="stack" noValidate ref={formRef}>
            <CsrfField />
            <label>
              Name
              <input name="name" required maxLength={120} {...invalidProps(errors, "name")} />
            </label>
            <FieldError errors={errors} name="name" />
            <label>
              Slug (used in addresses)
              <input name="slug" required pattern="[a-z0-9][a-z0-9\-]{1,62}" {...invalidProps(errors, "slug")} />
            </label>
            <FieldError errors={errors} name="slug" />
            <label>
              Description
              <textarea name="description" rows={2} {...invalidProps(errors, "description")} />
            </label>
            <FieldError errors={errors} name="description" />
            <button type="submit">Create project</button>
          </Form>
        </div>
      ) : null}
    </div>
  );
}
