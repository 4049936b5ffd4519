/**
 * GET /api/v1/projects/{slug}/datasets: every dataset version of the project with the counts its overview page
 * shows (app/projects/projects.server.ts datasetSummaries), by name then version, in cursor pages. Researchers only,
 * as the dataset pages.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { datasetSummaries } from "~/projects/projects.server";
import { pageHeaders, pageOfList } from "~/api/pagination.server";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const page = pageOfList(request, await datasetSummaries(project.id), (d) => [d.name, d.version, d.id]);
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiMethodNotAllowed(["GET"]);
