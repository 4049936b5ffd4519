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
  const { project, role, isAdmin } = useLoaderData<typeof loader>();
  return (
    <div>
      <div className="breadcrumbs">
        <NavLink to="/projects">Projects</NavLink> / <NavLink to={`/p/${project.slug}`} end>{project.name}</NavLink>{" "}
        <span className="badge">{role}</span>
        {isAdmin ? (
          <>
            {" · "}
            <NavLink to={`/p/${project.slug}/members`}>Members</NavLink>
          </>
        ) : null}
      </div>
      <Outlet />
    </div>
  );
}
