/**
 * Schemas every group of endpoints shares: problem details (RFC 9457) and the cursor page envelope
 * (app/api/pagination.server.ts). A schema given an `id` with `.meta({ id })` becomes a named schema of the
 * OpenAPI document's `components/schemas` (app/api/openapi.server.ts), referred to wherever it is used.
 */
import { z } from "zod";
import type { Problem, ProblemError } from "../problem.server";
import type { Page } from "../pagination.server";

/** One rejected value (app/api/problem.server.ts ProblemError). */
export const ProblemErrorSchema = z
  .object({
    row: z.number().int().min(1).optional().describe("The row of the rejected file (1-based), when the problem is in a file."),
    field: z.string().optional().describe("The field, column or parameter (a dotted path for nested JSON)."),
    message: z.string().describe("Why it was rejected."),
  })
  .meta({ id: "ProblemError" });

/** Problem details, RFC 9457 §3.1 members, with the `errors` extension member (§3.2). */
export const ProblemSchema = z
  .object({
    type: z.string().describe("`about:blank` when the status says it all (RFC 9457 §4.2.1), else `urn:concord:problem:NAME`."),
    title: z.string().describe("A short summary of the problem type (the status phrase for about:blank)."),
    status: z.number().int().min(400).max(599).describe("The HTTP status code."),
    detail: z.string().optional().describe("What went wrong with this request, for a person to read."),
    errors: z.array(ProblemErrorSchema).optional().describe("Each rejected value: its row, field and why."),
  })
  .meta({
    id: "Problem",
    description: "Problem details (RFC 9457), served as application/problem+json.",
  });

/** The `next` member of a page: the URL of the following page, or null on the last one. */
const NextLink = z
  .string()
  .nullable()
  .describe("The URL of the next page (the same as the Link rel=next header), or null on the last page.");

/** The page envelope whatever its rows (the document's `Page` schema). */
export const PageSchema = z
  .object({ data: z.array(z.unknown()).describe("This page's rows."), next: NextLink })
  .meta({ id: "Page", description: "One page of a list: its rows and the link to the next page (cursor pagination)." });

/** A page of `item` rows: `{ data: item[], next }` (app/api/pagination.server.ts pageOf). */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item).describe("This page's rows."), next: NextLink });
}

// The schemas describe the types the code answers with (a compile-time check, both ways).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameProblem: Same<z.infer<typeof ProblemSchema>, Problem> = true;
const sameProblemError: Same<z.infer<typeof ProblemErrorSchema>, ProblemError> = true;
const samePage: Same<z.infer<typeof PageSchema>, Page<unknown>> = true;
void [sameProblem, sameProblemError, samePage];
