import type { LoaderFunctionArgs } from "@remix-run/node";
import { json } from "@remix-run/node";
import { NavLink, Outlet, useLoaderData } from "@remix-run/react";
import { hasRole, requireProjectRole } from "~/auth/guards.server";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const { project, role } = await requireProjectRole(request, params.slug, "annotator");
  return json({
    project: { slug: project.slug, name: project.name },
    role,
    isResearcher: hasRole(role, "researcher"),
    isAdmin: hasRole(role, "admin"),
  });
}

export default function ProjectLayout() {
  const { project, role, isResearcher, isAdmin } = useLoaderData<typeof loader>();
  const base = `/p/${project.slug}`;
  const links: [string, string][] = [
    [base, "Overview"],
    [`${base}/tasks`, isResearcher ? "Tasks" : "My tasks"],
    ...(isResearcher
      ? ([
          [`${base}/reports`, "Reports"],
          [`${base}/runs`, "Runs"],
          [`${base}/providers`, "Providers"],
          [`${base}/webhooks`, "Webhooks"],
          [`${base}/import`, "Import"],
          [`${base}/export`, "Export"],
        ] as [string, string][])
      : []),
    ...(isAdmin ? ([[`${base}/members`, "Members"]] as [string, string][]) : []),
  ];
  return (
    <div>
      <div className="breadcrumbs">
        <NavLink to="/projects">Projects</NavLink> / {project.name} <span className="badge">{role}</span>
      </div>
      <nav className="project-nav" aria-label="Project">
        {links.map(([to, label]) => (
          <NavLink key={to} to={to} end={to === base}>
            {label}
          </NavLink>
        ))}
      </nav>
      <Outlet />
    </div>
  );
}
