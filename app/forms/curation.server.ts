/**
 * The zod schemas of the curation pages' forms (dataset page and item page):
 * one per intent, parsed once by the route's action. Server-only, so zod stays
 * out of the browser bundle.
 */
import { z } from "zod";

const Reason = z.string().trim().min(1, "Say why; it goes into the changelog.").max(2000);
const Id = z.coerce.number().int().positive();
const OptionalWeight = z.preprocess((v) => (v === "" || v == null ? undefined : v), z.coerce.number().min(0).optional());

/** The dataset page: freeze, start the next version, promote a response to reference. */
export const CurationAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("freeze"), reason: Reason }),
  z.object({ intent: z.literal("next-version"), reason: Reason }),
  z.object({
    intent: z.literal("promote"),
    responseId: z.coerce.number().int().positive(),
    annotationIds: z
      .string()
      .regex(/^\d+(,\d+)*$/)
      .optional(),
    reason: Reason,
  }),
]);

/** The item page: edits of the item, its checklist and its reference. */
export const ItemAction = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("edit-item"),
    query: z.string().trim().min(1, "The prompt cannot be empty."),
    passage: z.string().default(""),
    domain: z.string().trim().default(""),
    subject: z.string().trim().default(""),
    reason: Reason,
  }),
  z.object({
    intent: z.literal("edit-checklist"),
    checklistItemId: Id,
    text: z.string().trim().min(1, "A checklist item needs text."),
    weight: OptionalWeight,
    reason: Reason,
  }),
  z.object({
    intent: z.literal("add-checklist"),
    text: z.string().trim().min(1, "A checklist item needs text."),
    weight: OptionalWeight,
    reason: Reason,
  }),
  z.object({ intent: z.literal("retire"), checklistItemId: Id, reason: Reason }),
  z.object({ intent: z.literal("restore"), checklistItemId: Id, reason: Reason }),
  z.object({ intent: z.literal("move"), checklistItemId: Id, direction: z.enum(["up", "down"]), reason: Reason.default("Reordered") }),
  z.object({ intent: z.literal("reweight"), reason: Reason }).passthrough(),
  z.object({ intent: z.literal("edit-reference"), text: z.string().trim().min(1, "A reference needs text."), reason: Reason }),
  z.object({ intent: z.literal("draft"), providerId: Id }),
  z.object({ intent: z.literal("add-draft"), items: z.string().trim().min(1, "The draft has no items left to add."), reason: Reason }),
  z.object({ intent: z.literal("requeue-stale") }),
]);
