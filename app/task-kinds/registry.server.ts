/**
 * The registry for loaders and actions: the lookups of ./registry.ts, and the kinds' server
 * parts (./kinds.server.ts). Server-only. A route whose component does not need the kinds'
 * rules imports them from here: the client build empties `.server` modules, so the page's
 * JavaScript leaves the rules out (they ran in the loader).
 */
import type { z } from "zod";
import * as SERVER from "./kinds.server";
import { findKind } from "./registry";

export { findKind, isAnnotatable, taskKind } from "./registry";

/** The kind's title ("Writing quality"), or the stored kind itself for one not labelled in Concord (imported labels). */
export function kindTitle(kind: string): string {
  return findKind(kind)?.title ?? kind;
}

/** A kind's server part: the zod schema of its own settings (stored in tasks.config). */
export type KindServer = { id: string; settings: z.ZodType<Record<string, unknown>> };

const BY_ID = new Map<string, KindServer>((Object.values(SERVER) as KindServer[]).map((k) => [k.id, k]));

/**
 * The kind's own settings from the new-task form, checked by its schema: the values to
 * store in tasks.config, or the first problem and its form field (`settings.<name>`).
 * A kind without settings of its own takes none.
 */
export function kindSettings(
  kind: string,
  raw: Record<string, string>,
): { ok: true; settings: Record<string, unknown> } | { ok: false; message: string; field: string } {
  const k = BY_ID.get(kind);
  if (!k) return { ok: true, settings: {} };
  const parsed = k.settings.safeParse(raw);
  if (parsed.success) return { ok: true, settings: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: issue.message, field: `settings.${String(issue.path[0] ?? "form")}` };
}
