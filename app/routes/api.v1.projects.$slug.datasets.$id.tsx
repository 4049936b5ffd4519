/**
 * GET /api/v1/projects/{slug}/datasets/{id}: one dataset version with its counts, and every version of the dataset
 * (the same name) with theirs, oldest first (app/benchmark/datasets.server.ts datasetWithVersions). Researchers only.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { datasetOfPath } from "~/api/datasets.server";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  return apiJson(await datasetOfPath(project.id, params));
});

export const action = apiMethodNotAllowed(["GET"]);
