/** GET /api/v1/projects/{slug}/imports/{id}: one API import (status, progress, summary, problems); another project's id is 404. */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { importOfProject } from "~/api/imports.server";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  return apiJson(await importOfProject(project.id, params));
});

export const action = apiMethodNotAllowed(["GET"]);
