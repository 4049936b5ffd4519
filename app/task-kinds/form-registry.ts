/**
 * Lookup over the kinds' annotate forms: each kind's index.ts declares `form`, a dynamic
 * import of its form.tsx, so the browser fetches only the form of the task's kind. A
 * page loads it first (loadKindForm: the route's clientLoader on a client navigation,
 * app/entry.client.tsx before hydration, app/entry.server.tsx loads every part once) and
 * then renders with the synchronous kindForm, so no render ever waits or falls back.
 */
import type { KindForm } from "./form-types";
import { taskKind } from "./registry";

const LOADED = new Map<string, KindForm>();

/** Loads the kind's form (once); throws for a kind not labelled in Concord. */
export async function loadKindForm(kind: string): Promise<KindForm> {
  const have = LOADED.get(kind);
  if (have) return have;
  const form = await taskKind(kind).form();
  LOADED.set(kind, form);
  return form;
}

/** The kind's form, loaded by loadKindForm; throws for a kind not labelled in Concord or not loaded yet. */
export function kindForm(kind: string): KindForm {
  const f = LOADED.get(kind);
  if (!f) throw new Error(`task kind "${kind}" has no form loaded (loadKindForm first)`);
  return f;
}
