/**
 * GET /api/v1/projects/{slug}: one project the token reaches, with its user's role there; for researchers and
 * admins also its datasets (with their counts) and the project's counts, as its overview page shows them
 * (null for an annotator, as the page shows them their task list instead). Described in
 * app/api/operations/projects.ts.
 */
import type { z } from "zod";
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { projectOverview } from "~/projects/projects.server";
import { ProjectParamsSchema, type ProjectSchema } from "~/api/operations/projects";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { slug } = ProjectParamsSchema.parse(params);
  const { project, role } = await requireApiProjectRole(request, slug, "annotator", { scope: "read" });
  const overview = await projectOverview(project.id, role);
  const body = { ...project, role, datasets: overview?.datasets ?? null, counts: overview?.counts ?? null };
  return apiJson(body satisfies z.output<typeof ProjectSchema>);
});

export const action = apiMethodNotAllowed(["GET"]);
