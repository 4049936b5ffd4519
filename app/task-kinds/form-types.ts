/**
 * What a kind's client parts give the pages: form.tsx the annotate form's controls and keys
 * (lookup ./form-registry.ts); fields.tsx the known-answer fields of a gold unit (task page)
 * and the final-label fields of adjudication (./fields-registry.ts), apart so that the task
 * page does not load the annotate form's Markdown renderer. Its index.ts names both as
 * dynamic imports. No zod, no server code: they ship to the browser.
 */
import type { ReactNode } from "react";
import type { KindModule, Rules } from "~/components/annotate/types";
import type { FieldErrors } from "./types";

export type GoldProps = {
  unitId: number;
  /** The stored known answer as form values. */
  values: Record<string, string>;
  /** The unit's responses in its own order (the researcher is not blind). */
  responses: { letter: string; reference: boolean; model: string | null }[];
  allowTies: boolean;
  errors: FieldErrors;
  scope: string;
};

export type FinalProps = {
  responses: { letter: string }[];
  rules: Rules;
};

export type KindForm = {
  id: string;
  /** The annotate form's controls, keys and shortcut lines. */
  annotate: KindModule;
  /** The heading over the shown reference (default "Reference answer"). */
  referenceHeading?: (rules: Rules) => string;
};

export type KindFields = {
  id: string;
  /** The known-answer fields of a gold unit. */
  Gold: (p: GoldProps) => ReactNode;
  /** Whether Gold shows the error of this field itself (the page lists the others below it). */
  goldField: (name: string) => boolean;
  /** The final-label fields of adjudication. */
  Final: (p: FinalProps) => ReactNode;
};
