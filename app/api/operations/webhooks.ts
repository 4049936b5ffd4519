/**
 * The webhooks endpoints of the HTTP API, as the OpenAPI document describes them (./types.ts): a project's
 * webhooks (list, register, read, delete) and each one's delivery log. The rules are app/webhooks/webhooks.server.ts's
 * (the Webhooks page calls the same functions); the request body's schema is its WebhookInput.
 */
import { z } from "zod";
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENTS } from "../../../db/schema";
import { WebhookInput } from "../../webhooks/webhooks.server";
import { pageSchema } from "./shared";
import type { ApiOperation } from "./types";

const Slug = z.string().describe("The project's slug.");
const Time = z.string().describe("RFC 3339 date and time, UTC, whole seconds (2026-12-07T09:30:00Z).");

export const WebhookPathParams = z.object({ slug: Slug });
export const WebhookIdPathParams = z.object({
  slug: Slug,
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, "a webhook's id (a positive whole number)")
    .describe("The webhook's id."),
});

/** POST …/webhooks: the URL and the events (the domain's WebhookInput, so the API and the page share the rules). */
export const WebhookCreateBody = WebhookInput.meta({
  id: "WebhookCreate",
  description:
    "url: http or https, at most 2,000 characters, no user name or password; a literal address must be global or allowed by the operator's CONCORD_EGRESS_ALLOW (a host name is checked at each delivery). events: one or more of " +
    WEBHOOK_EVENTS.join(", ") +
    ".",
});

export const WebhookSchema = z
  .object({
    id: z.number().int().min(1),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    status: z.enum(["active", "disabled"]).describe("A disabled webhook gets no new events; its pending deliveries wait."),
    created_at: Time,
    disabled_at: Time.nullable(),
    created_by: z.string().nullable().describe("The name of the user who registered it (null once that account is gone)."),
  })
  .meta({ id: "Webhook" });

export const WebhookCreatedSchema = WebhookSchema.extend({
  secret: z
    .string()
    .describe(
      "The signing secret (whsec_ and 43 characters), shown this once: Concord-Signature is sha256= the hex HMAC-SHA256 of '<Concord-Timestamp>.<body>' with it.",
    ),
}).meta({ id: "WebhookCreated" });

export const WebhookDeliverySchema = z
  .object({
    id: z.number().int().min(1).describe("The delivery's id, sent as Concord-Delivery."),
    webhook_id: z.number().int().min(1),
    event: z.string().describe(`${WEBHOOK_EVENTS.join(", ")}, or ping (a test event).`),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.number().int().min(0),
    next_attempt_at: Time.nullable().describe("When a pending delivery is tried next; null once delivered or failed."),
    last_status: z.number().int().nullable().describe("The last attempt's HTTP status; null when no answer came."),
    last_error: z.string().nullable().describe("Why the last failed attempt failed (kept after a later success)."),
    created_at: Time,
    delivered_at: Time.nullable(),
  })
  .meta({ id: "WebhookDelivery" });

export const WebhooksPageSchema = pageSchema(WebhookSchema);
export const WebhookDeliveriesPageSchema = pageSchema(WebhookDeliverySchema);

export const OPERATIONS: ApiOperation[] = [
  {
    method: "get",
    path: "/api/v1/projects/{slug}/webhooks",
    operationId: "listWebhooks",
    summary: "The project's webhooks",
    description: "Oldest first, without their secrets.",
    tag: "webhooks",
    auth: "read",
    minRole: "researcher",
    params: WebhookPathParams,
    paged: true,
    responses: { 200: { description: "A page of webhooks.", schema: WebhooksPageSchema } },
  },
  {
    method: "post",
    path: "/api/v1/projects/{slug}/webhooks",
    operationId: "createWebhook",
    summary: "Register a webhook",
    description:
      "Concord POSTs each chosen event to the URL, signed with the secret this answer carries (the only time it is shown). At most 20 webhooks a project.",
    tag: "webhooks",
    auth: "write",
    minRole: "researcher",
    params: WebhookPathParams,
    body: [{ contentType: "application/json", schema: WebhookCreateBody }],
    idempotent: true,
    responses: {
      201: { description: "Registered.", schema: WebhookCreatedSchema, headers: { Location: "The webhook's URL in the API." } },
      409: { description: "The project has 20 webhooks already." },
    },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}/webhooks/{id}",
    operationId: "getWebhook",
    summary: "One webhook",
    tag: "webhooks",
    auth: "read",
    minRole: "researcher",
    params: WebhookIdPathParams,
    responses: { 200: { description: "The webhook.", schema: WebhookSchema } },
  },
  {
    method: "delete",
    path: "/api/v1/projects/{slug}/webhooks/{id}",
    operationId: "deleteWebhook",
    summary: "Delete a webhook and its delivery log",
    description: "Pending deliveries are dropped. Deleting a webhook that is already gone answers 404.",
    tag: "webhooks",
    auth: "write",
    minRole: "researcher",
    params: WebhookIdPathParams,
    responses: { 204: { description: "Deleted." } },
  },
  {
    method: "get",
    path: "/api/v1/projects/{slug}/webhooks/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "A webhook's delivery log",
    description: "Newest first: each event sent (or to be sent), its attempts and their outcome.",
    tag: "webhooks",
    auth: "read",
    minRole: "researcher",
    params: WebhookIdPathParams,
    paged: true,
    responses: { 200: { description: "A page of deliveries.", schema: WebhookDeliveriesPageSchema } },
  },
];
