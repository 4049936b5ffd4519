/**
 * The registry for loaders and actions: the lookups of ./registry.ts, and what only the
 * server does with a kind (its own settings, checked by the zod schema of its
 * config.server.ts, which its index.ts declares as `server`). Server-only. A route whose
 * component does not need the kinds' rules imports them from here: the client build
 * empties `.server` modules, so the page's JavaScript leaves the rules out (they ran in the loader).
 */
import { findKind } from "./registry";

export { findKind, isAnnotatable, taskKind } from "./registry";
export type { KindServer } from "./types";

/** The kind's title ("Writing quality"), or the stored kind itself for one not labelled in Concord (imported labels). */
export function kindTitle(kind: string): string {
  return findKind(kind)?.title ?? kind;
}

/**
 * The kind's own settings from the new-task form, checked by its schema: the values to
 * store in tasks.config, or the first problem and its form field (`settings.<name>`).
 * A kind without settings of its own takes none.
 */
export function kindSettings(
  kind: string,
  raw: Record<string, string>,
): { ok: true; settings: Record<string, unknown> } | { ok: false; message: string; field: string } {
  const schema = findKind(kind)?.server?.settings;
  if (!schema) return { ok: true, settings: {} };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, settings: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: issue.message, field: `settings.${String(issue.path[0] ?? "form")}` };
}
