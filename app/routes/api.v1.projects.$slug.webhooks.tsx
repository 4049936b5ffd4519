/**
 * GET /api/v1/projects/{slug}/webhooks: the project's webhooks, in cursor pages (no secrets).
 * POST /api/v1/projects/{slug}/webhooks: registers one (`{ url, events }`); 201 with its secret, shown this once.
 * Idempotency-Key honoured. Researchers and admins, as the Webhooks page (app/webhooks/webhooks.server.ts).
 */
import { requireApiProjectRole } from "~/auth/api-guards.server";
import { hashBody, idempotent } from "~/api/idempotency.server";
import { WebhookCreateBody } from "~/api/operations/webhooks";
import { pageHeaders, pageOfList } from "~/api/pagination.server";
import { apiJson, problem, PROBLEM_TYPES } from "~/api/problem.server";
import { apiMethodNotAllowed, apiRoute } from "~/api/route.server";
import { createWebhook, listWebhooks, webhookJson } from "~/webhooks/webhooks.server";

export const loader = apiRoute(async ({ request, params }) => {
  const { project } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "read" });
  const page = pageOfList(request, (await listWebhooks(project.id)).map(webhookJson), (h) => [h.id]);
  return apiJson(page, { headers: pageHeaders(page) });
});

const notAllowed = apiMethodNotAllowed(["GET", "POST"]);

export const action = apiRoute(async (args) => {
  const { request, params } = args;
  if (request.method !== "POST") return notAllowed(args);
  const { project, user } = await requireApiProjectRole(request, params.slug, "researcher", { scope: "write" });
  const text = await request.text();
  return idempotent(request, user.id, hashBody(text), async () => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw problem(400, 'The body must be JSON: {"url": "https://…", "events": ["run.finished"]}.', {
        type: PROBLEM_TYPES.invalidRequest,
      });
    }
    const input = WebhookCreateBody.parse(body);
    const { webhook, secret } = await createWebhook(project.id, user.id, input);
    return apiJson(
      { ...webhookJson(webhook), secret },
      { status: 201, headers: { Location: `/api/v1/projects/${project.slug}/webhooks/${webhook.id}` } },
    );
  });
});
