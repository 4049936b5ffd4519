/** The project's annotation tasks: researchers see all, annotators their own. */
import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { taskList } from "~/annotation/task-view.server";
import { requireProjectRole } from "~/auth/guards.server";
import { ProgressBar } from "~/components/ProgressBar";
import styles from "~/components/annotation.css";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.researcher ? "Tasks" : "My tasks"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { user, project, role } = await requireProjectRole(request, params.slug, "annotator");
  const { researcher, tasks } = await taskList(project.id, user.id, role);
  // The page shows the kind by its title.
  return json({ researcher, tasks: tasks.map((t) => ({ ...t, kind: t.kindTitle })) });
}

export default function Tasks() {
  const { researcher, tasks } = useLoaderData<typeof loader>();
  const { slug } = useParams();
  return (
    <div>
      <div className="annotate-head">
        <h1>{researcher ? "Annotation tasks" : "My tasks"}</h1>
        {researcher ? (
          <Link className="button" to={`/p/${slug}/tasks/new`}>
            New task
          </Link>
        ) : null}
      </div>
      {tasks.length === 0 ? <p className="muted">{researcher ? "No tasks yet." : "No tasks are assigned to you yet."}</p> : null}
      <div className="grid">
        {tasks.map((t) => (
          <div className="panel" key={t.id} data-testid={`task-${t.id}`}>
            <h2 style={{ marginTop: 0 }}>{t.name}</h2>
            <p className="muted small">
              {t.kind} · k = {t.overlap} · {t.status}
            </p>
            {t.mine.total > 0 ? <ProgressBar label="Yours" done={t.mine.done} total={t.mine.total} /> : null}
            <ProgressBar label="Overall" done={t.overall.done} total={t.overall.total} />
            <p className="actions">
              {t.annotatable && t.mine.total > 0 && t.mine.done < t.mine.total && t.status === "open" ? (
                <Link className="button" to={`/p/${slug}/tasks/${t.id}/annotate`}>
                  Continue labelling
                </Link>
              ) : null}
              {t.annotatable && t.mine.total > 0 ? <Link to={`/p/${slug}/tasks/${t.id}/queue`}>Open queue</Link> : null}
              {researcher ? <Link to={`/p/${slug}/tasks/${t.id}`}>Overview</Link> : null}
            </p>
          </div>
        ))}
      </div>
    </div>
  );
}
