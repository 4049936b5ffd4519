/**
 * What a kind's client part (app/task-kinds/<kind>/form.tsx) gives the pages: the annotate
 * form's controls and keys, the known-answer fields of a gold unit (task page) and the
 * final-label fields of adjudication. No zod, no server code: it ships to the browser.
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
  /** The known-answer fields of a gold unit. */
  Gold: (p: GoldProps) => ReactNode;
  /** Whether Gold shows the error of this field itself (the page lists the others below it). */
  goldField: (name: string) => boolean;
  /** The final-label fields of adjudication. */
  Final: (p: FinalProps) => ReactNode;
};
