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
    // A blank passage, domain or subject means the item has none.
    passage: z
      .string()
      .default("")
      .transform((p) => (p.trim() ? p : null)),
    domain: z
      .string()
      .trim()
      .default("")
      .transform((d) => d || null),
    subject: z
      .string()
      .trim()
      .default("")
      .transform((d) => d || null),
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
  // One `weight-<checklist item id>` field per live item; a blank one is NaN, which the rule refuses.
  z
    .object({ intent: z.literal("reweight"), reason: Reason })
    .passthrough()
    .transform(({ intent, reason, ...fields }) => {
      const weights: Record<number, number> = {};
      for (const [k, v] of Object.entries(fields)) {
        const m = k.match(/^weight-(\d+)$/);
        if (m) weights[Number(m[1])] = v === "" ? NaN : Number(v);
      }
      return { intent, reason, weights };
    }),
  z.object({ intent: z.literal("edit-reference"), text: z.string().trim().min(1, "A reference needs text."), reason: Reason }),
  z.object({ intent: z.literal("draft"), providerId: Id }),
  z.object({ intent: z.literal("add-draft"), items: z.string().trim().min(1, "The draft has no items left to add."), reason: Reason }),
  z.object({ intent: z.literal("requeue-stale") }),
]);
