/**
 * Lookup over the kinds' gold and final-label fields: each kind's index.ts declares
 * `fields`, a dynamic import of its fields.tsx (apart from form.tsx, so the task and
 * adjudication pages never fetch the annotate form and its Markdown renderer). Loaded
 * first as the forms are (./form-registry.ts), then looked up synchronously.
 */
import type { KindFields } from "./form-types";
import { taskKind } from "./registry";

const LOADED = new Map<string, KindFields>();

/** Loads the kind's fields (once); throws for a kind not labelled in Concord. */
export async function loadKindFields(kind: string): Promise<KindFields> {
  const have = LOADED.get(kind);
  if (have) return have;
  const fields = await taskKind(kind).fields();
  LOADED.set(kind, fields);
  return fields;
}

/** The kind's fields, loaded by loadKindFields; throws for a kind not labelled in Concord or not loaded yet. */
export function kindFields(kind: string): KindFields {
  const f = LOADED.get(kind);
  if (!f) throw new Error(`task kind "${kind}" has no fields loaded (loadKindFields first)`);
  return f;
}
