import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireProjectRole } from "~/auth/guards.server";
import { listTasks } from "~/reports/load.server";

export const meta: MetaFunction = () => [{ title: "Reports · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  return json({ slug: project.slug, tasks: listTasks(project.id) });
}

export default function ReportsIndex() {
  const { slug, tasks } = useLoaderData<typeof loader>();
  return (
    <div>
      <h1>Reports</h1>
      <p className="muted">Inter-annotator agreement, judge–human agreement and checklist quality for each annotation task.</p>
      {tasks.length === 0 ? (
        <p className="muted">No annotation tasks yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Task</th>
              <th>Kind</th>
              <th className="num">k</th>
              <th className="num">Units</th>
              <th className="num">Submitted labels</th>
              <th>Reports</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t) => (
              <tr key={t.id}>
                <td>
                  <Link to={`${t.id}`}>{t.name}</Link>
                </td>
                <td>{t.kind}</td>
                <td className="num">{t.overlap}</td>
                <td className="num">{t.units}</td>
                <td className="num">{t.annotations}</td>
                <td>
                  <Link to={`${t.id}`}>Annotator agreement</Link> · <Link to={`${t.id}/judges`}>Judge–human</Link> ·{" "}
                  <Link to={`${t.id}/disagreements`}>Disagreements</Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
