/**
 * GET /api/v1/projects/{slug}/webhooks/{id}: one webhook (no secret).
 * DELETE /api/v1/projects/{slug}/webhooks/{id}: deletes it and its delivery log (204; 404 when not there).
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { WebhookIdPathParams } from "~/api/operations/webhooks";
import { apiJson, problem } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { deleteWebhook, getWebhook, webhookJson } from "~/webhooks/webhooks.server";

const NOT_FOUND = "No such webhook in this project.";

/** The webhook's id from the path; an id of no shape is a webhook that is not there. */
function webhookId(params: unknown): number {
  const parsed = WebhookIdPathParams.safeParse(params);
  if (!parsed.success) throw problem(404, NOT_FOUND);
  return Number(parsed.data.id);
}

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const hook = await getWebhook(project.id, webhookId(params));
  if (!hook) throw problem(404, NOT_FOUND);
  return apiJson(webhookJson(hook));
});

const notAllowed = apiMethodNotAllowed(["GET", "DELETE"]);

export const action = apiRoute(async (args) => {
  const { request, params } = args;
  if (request.method !== "DELETE") return notAllowed(args);
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
  if (!(await deleteWebhook(project.id, webhookId(params)))) throw problem(404, NOT_FOUND);
  return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
});
