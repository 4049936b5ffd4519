/** Lookup over the kinds' gold and final-label fields (./fields.ts). */
import * as FIELDS from "./fields";
import type { KindFields } from "./form-types";

const BY_ID = new Map<string, KindFields>(Object.values(FIELDS).map((f) => [f.id, f]));

/** The kind's gold and final-label fields; throws for a kind not labelled in Concord. */
export function kindFields(kind: string): KindFields {
  const f = BY_ID.get(kind);
  if (!f) throw new Error(`task kind "${kind}" has no fields`);
  return f;
}
