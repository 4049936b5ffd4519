/** GET /api/v1/projects/{slug}/webhooks/{id}/deliveries: the webhook's delivery log, newest first, in cursor pages. */
import { z } from "zod";
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { WebhookIdPathParams } from "~/api/operations/webhooks";
import { pageHeaders, pageOf, pageRequest } from "~/api/pagination.server";
import { apiJson, problem } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { deliveryJson, listDeliveries } from "~/webhooks/webhooks.server";

/** The cursor: the id of the last delivery of the previous page (ids fall). */
const IdCursor = z.tuple([z.number().int().positive()]);

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const parsed = WebhookIdPathParams.safeParse(params);
  if (!parsed.success) throw problem(404, "No such webhook in this project.");
  const { limit, after } = pageRequest(request, IdCursor);
  const rows = await listDeliveries(project.id, Number(parsed.data.id), { limit: limit + 1, beforeId: after?.[0] ?? null });
  const page = pageOf(request, rows.map(deliveryJson), limit, (d) => [d.id]);
  return apiJson(page, { headers: pageHeaders(page) });
});

export const action = apiMethodNotAllowed(["GET"]);
