/**
 * What every task kind's annotate controls (app/task-kinds/<kind>/form.tsx) get from
 * the annotate form, and what they give back: their controls, their keys and their
 * lines of the shortcut sheet. The form itself (drafts, navigation, skip, guidelines,
 * raw text) is kind-agnostic.
 */
import type { ReactNode } from "react";

export type BlindUnitProps = {
  unitId: number;
  kind: string;
  query: string;
  passage: string | null;
  reference: string | null;
  checklistItem: string | null;
  responses: { letter: string; text: string }[];
};

/**
 * `scale`: writing quality's 1..max scale, the reference's score and the score below which a penalty reason is needed (default 5, 4, 3).
 * `settings`: the kind's own settings the annotator sees (TaskKind.annotatorSettings; e.g. a Likert question and its anchors).
 */
export type Rules = {
  penaltyReasons: string[];
  allowTies: boolean;
  scale?: { max: number; reference: number; penaltyBelow: number };
  settings?: Record<string, string>;
};

export type KindContext = {
  unit: BlindUnitProps;
  rules: Rules;
  values: Record<string, string>;
  set: (name: string, value: string) => void;
  /** The focused response (multi-response kinds). */
  focus: number;
  setFocus: (i: number) => void;
  closed: boolean;
  /** The error message under a field, if any. */
  err: (name: string) => ReactNode;
};

export type KindModule = {
  /** Several responses side by side, with a focused one (H/L move the focus; J/K move between units as on every kind). */
  multi: boolean;
  Body: (c: KindContext) => ReactNode;
  /** Handles a shortcut key; true when it did something. */
  onKey: (key: string, c: KindContext) => boolean;
  /** Rows of the shortcut sheet: keys, what they do. */
  shortcuts: (c: KindContext) => [ReactNode, string][];
  /** The textarea that C focuses. */
  commentField: (c: KindContext) => string;
};
