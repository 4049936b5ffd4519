/**
 * The Yes/No kinds (checklist appropriateness, response satisfaction): label "Yes" | "No",
 * notes the optional comment (string) or null; one subject per unit, binary.
 * A draft with no choice yet is "".
 */
import type { Coding, FormLike, GoldResult, ParseResult, ParsedLabel } from "../types";
import { MAX_NOTE, noteLines, str } from "./form";

export function parseYesNo(form: FormLike, mode: "draft" | "submit"): ParseResult {
  const errors: Record<string, string> = {};
  const answer = str(form, "answer");
  const comment = str(form, "comment").trim();
  if (answer !== "Yes" && answer !== "No") {
    if (mode === "submit" || answer !== "")
      errors.answer = answer === "" ? "Choose Yes or No." : `"${answer.slice(0, 20)}" is not Yes or No.`;
  }
  if (comment.length > MAX_NOTE) errors.comment = `Keep the comment under ${MAX_NOTE} characters.`;
  if (Object.keys(errors).length) return { ok: false, fieldErrors: errors };
  return { ok: true, value: { label: answer, penaltyReasons: null, notes: comment || null } };
}

export function yesNoToForm(stored: ParsedLabel): Record<string, string> {
  const out: Record<string, string> = {};
  if (stored.label === "Yes" || stored.label === "No") out.answer = stored.label;
  if (typeof stored.notes === "string") out.comment = stored.notes;
  return out;
}

export function parseYesNoGold(form: FormLike): GoldResult {
  const answer = str(form, "answer");
  return answer === "Yes" || answer === "No"
    ? { ok: true, label: answer }
    : { ok: false, fieldErrors: { answer: "Choose Yes or No as the known answer." } };
}

export const yesNoCoding: Coding = { level: "binary", subjects: "unit" };

/** The parts both Yes/No kinds share. */
export const yesNo = {
  parseLabel: (_rules: unknown, form: FormLike, mode: "draft" | "submit") => parseYesNo(form, mode),
  labelToForm: (stored: ParsedLabel) => yesNoToForm(stored),
  labelsDisagree: (a: unknown, b: unknown) => a !== b,
  matchesGold: (label: unknown, gold: unknown) => label === gold,
  parseGoldLabel: (_ids: unknown, _config: unknown, form: FormLike) => parseYesNoGold(form),
  describe: (label: unknown, _p: unknown, notes: unknown, nameOf: (key: unknown) => string) => ({
    summary: typeof label === "string" ? [label || "(no answer)"] : [],
    notes: noteLines(notes, nameOf),
  }),
  coding: yesNoCoding,
  multiResponse: false,
  judgeAgreement: true,
};
