/**
 * GET /api/v1/projects: the projects the token reaches (its user's, as the Projects page lists them, those the
 * token covers), sorted by name, in cursor pages: `{ data: [{ id, slug, name, description, role }], next }`
 * (described in app/api/operations/projects.ts).
 */
import type { z } from "zod";
import { requireApiToken } from "~/auth/api-guards.server";
import { projectsOfToken } from "~/auth/tokens.server";
import type { ProjectsPageSchema } from "~/api/operations/projects";
import { pageHeaders, pageOfList } from "~/api/pagination.server";
import { apiJson } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";

export const loader = apiRoute(async ({ request }) => {
  const auth = await requireApiToken(request, { scope: "read" });
  const projects = (await projectsOfToken(auth)).map((p) => ({
    id: p.id,
    slug: p.slug,
    name: p.name,
    description: p.description,
    role: p.role,
  }));
  const page = pageOfList(request, projects, (p) => [p.name, p.id]) satisfies z.output<typeof ProjectsPageSchema>;
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiMethodNotAllowed(["GET"]);
