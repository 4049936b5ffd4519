/** Lookup over the kinds' client parts (./forms.ts). */
import * as FORMS from "./forms";
import type { KindForm } from "./form-types";

const BY_ID = new Map<string, KindForm>(Object.values(FORMS).map((f) => [f.id, f]));

/** The kind's client part; throws for a kind not labelled in Concord. */
export function kindForm(kind: string): KindForm {
  const f = BY_ID.get(kind);
  if (!f) throw new Error(`task kind "${kind}" has no form`);
  return f;
}
