import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireProjectRole } from "~/auth/guards.server";
import { projectOverview } from "~/projects/projects.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.project.name ?? "Project"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, role } = await requireProjectRole(request, params.slug, "annotator");
  const overview = await projectOverview(project.id, role);
  // An annotator's home in a project is their own task list.
  if (!overview) throw redirect(`/p/${project.slug}/tasks`);
  return json({ project, role, researcher: true, ...overview });
}

export default function ProjectOverview() {
  const { project, datasets, counts, researcher } = useLoaderData<typeof loader>();
  return (
    <div>
      <h1>{project.name}</h1>
      {project.description ? <p className="muted">{project.description}</p> : null}
      {counts ? (
        <div className="grid">
          <div className="panel">
            <div className="stat">{datasets.length}</div>
            <div className="muted">datasets</div>
          </div>
          <div className="panel">
            <div className="stat">{counts.judges}</div>
            <div className="muted">judges</div>
          </div>
          <div className="panel">
            <div className="stat">{counts.tasks}</div>
            <div className="muted">annotation tasks</div>
          </div>
          <div className="panel">
            <div className="stat">{counts.labelled}</div>
            <div className="muted">units labelled</div>
          </div>
          <div className="panel">
            <div className="stat">{(counts.members.admin ?? 0) + (counts.members.researcher ?? 0) + (counts.members.annotator ?? 0)}</div>
            <div className="muted">members ({counts.members.annotator ?? 0} annotators)</div>
          </div>
        </div>
      ) : null}
      <h2>Datasets</h2>
      {datasets.length === 0 ? (
        <p className="muted">
          No datasets yet. Import one with <code>npm run import</code>.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Dataset</th>
              <th className="num">Version</th>
              <th className="num">Items</th>
              <th className="num">Domains</th>
              <th className="num">Checklist items</th>
              {researcher ? <th className="num">Responses</th> : null}
              {researcher ? <th className="num">Verdicts</th> : null}
              <th>Source</th>
            </tr>
          </thead>
          <tbody>
            {datasets.map((d) => (
              <tr key={d.id}>
                <td>
                  {researcher ? <Link to={`datasets/${d.id}`}>{d.name}</Link> : d.name}
                  {d.frozenAt ? <span className="badge">frozen</span> : null}
                  {researcher ? (
                    <div className="small">
                      <Link to={`curation/${d.id}`} aria-label={`Curate ${d.name} v${d.version}`}>
                        Curate
                      </Link>
                    </div>
                  ) : null}
                </td>
                <td className="num">v{d.version}</td>
                <td className="num">{d.items}</td>
                <td className="num">{d.domains}</td>
                <td className="num">{d.checklistItems}</td>
                {researcher ? <td className="num">{d.responses}</td> : null}
                {researcher ? <td className="num">{d.verdicts}</td> : null}
                <td className="small">
                  {d.source}
                  {d.licenseNote ? <div className="muted">{d.licenseNote}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
