/**
 * GET /api/v1/projects/{slug}: one project the token reaches, with its user's role there; for researchers and
 * admins also its datasets (with their counts) and the project's counts, as its overview page shows them
 * (null for an annotator, as the page shows them their task list instead).
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { projectOverview } from "~/projects/projects.server";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project, role } = await requireApiProjectRole(request, params.slug, "annotator", { scope: "read" });
  const overview = await projectOverview(project.id, role);
  return apiJson({ ...project, role, datasets: overview?.datasets ?? null, counts: overview?.counts ?? null });
});

export const action = apiMethodNotAllowed(["GET"]);
