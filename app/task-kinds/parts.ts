/**
 * Every kind's client parts at once, for the server (app/entry.server.tsx awaits it before
 * rendering, so server rendering looks parts up synchronously as before) and the tests.
 * Not for the browser: it would fetch every kind's form.
 */
import { loadKindFields } from "./fields-registry";
import { loadKindForm } from "./form-registry";
import { TASK_KIND_LIST } from "./registry";

let all: Promise<void> | undefined;

/** Loads every kind's form and fields (once; again after a failure). */
export function loadKindParts(): Promise<void> {
  all ??= Promise.all(TASK_KIND_LIST.flatMap((k) => [loadKindForm(k.id), loadKindFields(k.id)])).then(
    () => undefined,
    (err: unknown) => {
      all = undefined;
      throw err;
    },
  );
  return all;
}
