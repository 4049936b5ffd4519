/**
 * Labels: the one parser from a submitted form to a stored label, and the other label
 * rules, for any task kind. Each kind declares its stored shape and rules in its module
 * (app/task-kinds/<kind>/index.ts); these functions ask the registry. Pure, so the same
 * rules serve the server and the tests.
 *
 * Response ids are the real ids; the form only ever names shown letters (A, B, ...),
 * mapped back through the assignment's shown order, so no id reaches the page.
 * Drafts hold the same shapes, possibly incomplete.
 */
import { taskKind } from "~/task-kinds/registry";
import { parseStored } from "~/task-kinds/shared/form";
import type { FormLike, GoldResult, LabelRules, ParsedLabel, ParseResult, ResponseKey } from "~/task-kinds/types";
import { DEFAULT_SCORE_SCALE, penaltyReasonsOf, scoreScaleOf, type ScoreScale, type TaskConfig } from "./config";

export type { FormLike, LabelRules, ParsedLabel, ParseResult, ResponseKey } from "~/task-kinds/types";

/** The label rules of a task (its kind and config) for one assignment's shown order. */
export function rulesOf(
  kind: string,
  config: TaskConfig,
  shownOrder: ResponseKey[] | null,
  allowTies = config.allowTies === true,
): LabelRules {
  return { kind, penaltyReasons: penaltyReasonsOf(config), allowTies, shownOrder, scale: scoreScaleOf(config) };
}

export function parseLabel(rules: LabelRules, form: FormLike, mode: "draft" | "submit"): ParseResult {
  return taskKind(rules.kind).parseLabel(rules, form, mode);
}

/** An adjudicator's final label (the kind's own parser when it has one). */
export function parseFinalLabel(rules: LabelRules, form: FormLike): ParseResult {
  const k = taskKind(rules.kind);
  return k.parseFinal ? k.parseFinal(rules, form) : k.parseLabel(rules, form, "submit");
}

/**
 * The form values (by shown letter) that reproduce a stored label, so a draft
 * or a submitted label can be shown again for revision.
 */
export function labelToForm(kind: string, stored: ParsedLabel | null, shownOrder: ResponseKey[] | null): Record<string, string> {
  return stored ? taskKind(kind).labelToForm(stored, shownOrder) : {};
}

/** Whether two submitted labels of one unit disagree (adjudication queue). */
export function labelsDisagree(kind: string, a: unknown, b: unknown): boolean {
  return taskKind(kind).labelsDisagree(a, b);
}

/** Whether a submitted label matches a gold unit's known answer (stored as JSON text). */
export function matchesGold(kind: string, label: unknown, goldLabel: string): boolean {
  return taskKind(kind).matchesGold(label, parseStored(goldLabel));
}

/**
 * The known (gold) answer of a gold unit from the researcher's form. Fields name the
 * unit's responses by letter in the unit's own order (A = its first response), not a
 * shown order: the researcher is not blind. Every field is required; the result is the
 * stored label shape of the kind.
 */
export function parseGoldLabel(
  kind: string,
  responseIds: ResponseKey[] | null,
  allowTies: boolean,
  form: FormLike,
  scale: ScoreScale = DEFAULT_SCORE_SCALE,
  config: TaskConfig = {},
): GoldResult {
  const cfg: TaskConfig = { ...config, allowTies, scoreMax: scale.max, referenceScore: scale.reference, penaltyBelow: scale.penaltyBelow };
  return taskKind(kind).parseGoldLabel(responseIds, cfg, form);
}
