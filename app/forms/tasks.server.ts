/**
 * The zod schemas of the task page's forms, parsed once by the route's action.
 * Server-only, so zod stays out of the browser bundle.
 */
import { z } from "zod";

/** The close / reopen buttons. */
export const StatusSchema = z.enum(["close", "reopen"]);
/** Taking one annotator out of the task's pool. */
export const RemoveSchema = z.object({ userId: z.coerce.number().int().positive() });
