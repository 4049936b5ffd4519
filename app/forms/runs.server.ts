/**
 * The zod schemas of the Runs pages' forms (new run from fields or JSON; run
 * controls and calibration), parsed once by the routes' actions. Server-only, so
 * zod stays out of the browser bundle.
 */
import { z } from "zod";
import { PROTOCOL_IDS } from "~/runs/protocols";

export const NewRunJson = z.object({ intent: z.literal("create-json"), definition: z.string().min(2).max(1_000_000) });
export const NewRunForm = z.object({
  intent: z.literal("create"),
  name: z.string().trim().min(1, "Give the run a name.").max(200),
  protocol: z.enum(PROTOCOL_IDS as [string, ...string[]]),
  datasetId: z.coerce.number().int().positive("Choose a dataset."),
  limit: z
    .string()
    .trim()
    .max(12)
    .default("")
    .transform((v) => (v === "" ? undefined : Number(v)))
    .pipe(
      z
        .number("Items must be a whole number, or empty for every item.")
        .int("Items must be a whole number, or empty for every item.")
        .positive("Items must be 1 or more, or empty for every item.")
        .optional(),
    ),
});

export const RunAction = z.discriminatedUnion("intent", [
  z.object({ intent: z.enum(["pause", "resume", "cancel", "retry-failed"]) }),
  z.object({
    intent: z.literal("calibrate"),
    plan: z.enum(["e4", "stratified", "responses", "uniform"]).default("e4"),
    perStratum: z.coerce.number().int().min(1).max(1000).default(10),
    seed: z.coerce.number().int().default(1),
    overlap: z.coerce.number().int().min(1).max(10).default(2),
    splits: z.enum(["exclude", "adjudicate"]).default("exclude"),
  }),
]);

/** A run definition refused by its schema (createRun parses it with zod). */
export const isZodError = (err: unknown): err is z.ZodError => err instanceof z.ZodError;
