/**
 * POST /api/v1/projects/{slug}/imports?preset=NAME&…: the body is the file (text/csv, application/x-ndjson,
 * application/json); imported as the Import page and `npm run import` import it (app/api/imports.server.ts).
 * GET: the project's API imports, newest first, in cursor pages. Both need the researcher role, as the Import page.
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { importFromRequest, importsPage } from "~/api/imports.server";
import { pageHeaders } from "~/api/pagination.server";
import { apiJson, problem } from "~/api/problem.server";
import { apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const page = await importsPage(request, project.id);
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiRoute(async ({ request, params }) => {
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
  if (request.method !== "POST") {
    return problem(405, `This endpoint answers GET and POST only, not ${request.method}.`, { headers: { Allow: "GET, HEAD, POST" } });
  }
  return importFromRequest(request, { project, userId: user.id });
});
