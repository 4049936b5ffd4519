import { json } from "@remix-run/node";
import type { z } from "zod";

/**
 * The answer to a form that failed its zod schema: the first problem as
 * "field: reason", and the field's name so the page can show it beside the input.
 */
export function formError(error: z.ZodError, status = 400) {
  const issue = error.issues[0];
  const field = issue.path.join(".");
  return json({ error: `${field || "form"}: ${issue.message}`, field: String(issue.path[0] ?? "") }, { status });
}
