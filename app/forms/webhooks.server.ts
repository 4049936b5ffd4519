/**
 * The forms of the Webhooks page, one per intent. The webhook's own rules (URL, events, egress) are
 * app/webhooks/webhooks.server.ts's; this only says which form was sent and reads its fields.
 */
import { z } from "zod";

const Id = z.coerce.number().int().positive();

export const WebhookAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("create"), url: z.string().default(""), events: z.array(z.string()).default([]) }),
  z.object({ intent: z.literal("delete"), webhookId: Id }),
  z.object({ intent: z.literal("disable"), webhookId: Id }),
  z.object({ intent: z.literal("enable"), webhookId: Id }),
  z.object({ intent: z.literal("test"), webhookId: Id }),
  z.object({ intent: z.literal("redeliver"), deliveryId: Id }),
]);
