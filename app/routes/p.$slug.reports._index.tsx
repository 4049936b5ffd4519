import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireProjectRole } from "~/auth/guards.server";
import { sql } from "drizzle-orm";
import { getDal } from "~/dal.server";
import { listTasks } from "~/reports/load.server";

export const meta: MetaFunction = () => [{ title: "Reports · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project } = await requireProjectRole(request, params.slug, "researcher");
  // "Submitted annotations" as each report counts them: one per annotator and unit (its
  // latest submitted revision), not every revision ever submitted.
  const d = getDal();
  const counts = await d.rows<{ task_id: number; n: number }>(
    sql`
        SELECT u.task_id, COUNT(DISTINCT an.assignment_id) AS n
        FROM annotations an JOIN assignments a ON a.id = an.assignment_id JOIN units u ON u.id = a.unit_id JOIN tasks t ON t.id = u.task_id
        WHERE t.project_id = ${project.id} AND an.status = 'submitted'
        GROUP BY u.task_id`,
  );
  const current = new Map(counts.map((r) => [Number(r.task_id), Number(r.n)]));
  return json({ slug: project.slug, tasks: (await listTasks(project.id)).map((t) => ({ ...t, annotations: current.get(t.id) ?? 0 })) });
}

export default function ReportsIndex() {
  const { tasks } = useLoaderData<typeof loader>();
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
              <th className="num">Submitted annotations</th>
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
      {tasks.length > 0 ? (
        <p className="muted small" data-testid="n-legend">
          Units: what annotators are assigned. Submitted annotations: one per annotator and unit (the latest revision), the count each
          report starts from. In the reports&apos; tables, n is the number of rated subjects behind a figure: units, or, in writing-quality
          tasks, each scored response of a unit.
        </p>
      ) : null}
    </div>
  );
}
