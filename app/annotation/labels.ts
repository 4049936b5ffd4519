/**
 * Labels: what each task kind stores, and the one parser from a submitted form
 * to a stored label. Pure, so the same rules serve the server and the tests.
 *
 * Stored shapes (annotations.label / penaltyReasons / notes):
 * - checklist-appropriateness, response-satisfaction:
 *     label "Yes" | "No"; notes: the optional comment (string) or null.
 * - writing-quality:
 *     label {scores: {[responseId]: 1..5}}; penaltyReasons {[responseId]: [reason]}
 *     for every score below 3; notes {[responseId]: observation} (non-empty only).
 * - best-of-n:
 *     label {best: responseId | "reference" | "tie"}; notes {[responseId|"reference"]: note}.
 * Response ids are the real ids; the form only ever names shown letters (A, B, ...),
 * mapped back through the assignment's shown order, so no id reaches the page.
 * Drafts hold the same shapes, possibly incomplete (a Yes/No draft with no choice is "").
 */
import { DEFAULT_SCORE_SCALE, type AnnotatableKind, type ScoreScale } from "./config";
import { letter } from "./random";

export type ResponseKey = number | "reference";
export type FormLike = { get(name: string): FormDataEntryValue | null };

export type ParsedLabel = {
  label: unknown;
  penaltyReasons: Record<string, string[]> | null;
  notes: Record<string, string> | string | null;
};

export type ParseResult = { ok: true; value: ParsedLabel } | { ok: false; fieldErrors: Record<string, string> };

export type LabelRules = {
  kind: AnnotatableKind;
  penaltyReasons: string[];
  allowTies: boolean;
  /** The assignment's shown order (multi-response kinds). */
  shownOrder: ResponseKey[] | null;
  /** Writing quality: the score scale (default 1–5, reference 4, penalty reason below 3). */
  scale?: ScoreScale;
};

const MAX_NOTE = 20_000;
const str = (form: FormLike, name: string) => {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
};

export function parseLabel(rules: LabelRules, form: FormLike, mode: "draft" | "submit"): ParseResult {
  const errors: Record<string, string> = {};
  const submit = mode === "submit";
  if (rules.kind === "checklist-appropriateness" || rules.kind === "response-satisfaction") {
    const answer = str(form, "answer");
    const comment = str(form, "comment").trim();
    if (answer !== "Yes" && answer !== "No") {
      if (submit || answer !== "") errors.answer = answer === "" ? "Choose Yes or No." : `"${answer.slice(0, 20)}" is not Yes or No.`;
    }
    if (comment.length > MAX_NOTE) errors.comment = `Keep the comment under ${MAX_NOTE} characters.`;
    if (Object.keys(errors).length) return { ok: false, fieldErrors: errors };
    return { ok: true, value: { label: answer, penaltyReasons: null, notes: comment || null } };
  }

  const order = rules.shownOrder ?? [];
  if (order.length === 0) return { ok: false, fieldErrors: { form: "This unit has no responses to label." } };
  const notes: Record<string, string> = {};
  order.forEach((key, i) => {
    const note = str(form, `note.${letter(i)}`).trim();
    if (note.length > MAX_NOTE) errors[`note.${letter(i)}`] = `Keep notes under ${MAX_NOTE} characters.`;
    else if (note) notes[String(key)] = note;
  });

  if (rules.kind === "writing-quality") {
    const { max, penaltyBelow } = rules.scale ?? DEFAULT_SCORE_SCALE;
    const scores: Record<string, number> = {};
    const penalties: Record<string, string[]> = {};
    order.forEach((key, i) => {
      const L = letter(i);
      const raw = str(form, `score.${L}`).trim();
      const reason = str(form, `reason.${L}`).trim();
      if (raw === "") {
        if (submit) errors[`score.${L}`] = `Score Response ${L} from 1 to ${max}.`;
        return;
      }
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1 || n > max) {
        errors[`score.${L}`] = `A score is a whole number from 1 to ${max}, not "${raw.slice(0, 10)}".`;
        return;
      }
      if (reason && !rules.penaltyReasons.includes(reason)) {
        errors[`reason.${L}`] = `"${reason.slice(0, 30)}" is not a penalty reason of this task.`;
        return;
      }
      if (n < penaltyBelow && !reason && submit) {
        errors[`reason.${L}`] = `A score below ${penaltyBelow} needs a penalty reason for Response ${L}.`;
        return;
      }
      if (reason === "safety" && n !== 1) {
        errors[`score.${L}`] = `A safety problem forces a score of 1 (Response ${L}).`;
        return;
      }
      scores[String(key)] = n;
      if (reason && n < penaltyBelow) penalties[String(key)] = [reason];
    });
    if (Object.keys(errors).length) return { ok: false, fieldErrors: errors };
    return { ok: true, value: { label: { scores }, penaltyReasons: penalties, notes } };
  }

  // best-of-n
  const best = str(form, "best").trim();
  let value: ResponseKey | "tie" | null = null;
  if (best === "tie") {
    if (!rules.allowTies) errors.best = "This task does not allow ties; pick the best response.";
    else value = "tie";
  } else if (best !== "") {
    const i = order.findIndex((_, j) => letter(j) === best);
    if (i < 0) errors.best = `"${best.slice(0, 10)}" is not one of the shown responses.`;
    else value = order[i];
  } else if (submit) {
    errors.best = rules.allowTies ? "Pick the best response, or a tie." : "Pick the best response.";
  }
  if (Object.keys(errors).length) return { ok: false, fieldErrors: errors };
  return { ok: true, value: { label: value === null ? {} : { best: value }, penaltyReasons: null, notes } };
}

/**
 * The form values (by shown letter) that reproduce a stored label, so a draft
 * or a submitted label can be shown again for revision.
 */
export function labelToForm(kind: AnnotatableKind, stored: ParsedLabel | null, shownOrder: ResponseKey[] | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!stored) return out;
  if (kind === "checklist-appropriateness" || kind === "response-satisfaction") {
    if (stored.label === "Yes" || stored.label === "No") out.answer = stored.label;
    if (typeof stored.notes === "string") out.comment = stored.notes;
    return out;
  }
  const order = shownOrder ?? [];
  const notes = stored.notes && typeof stored.notes === "object" ? stored.notes : {};
  const lab = (stored.label ?? {}) as { scores?: Record<string, number>; best?: ResponseKey | "tie" };
  order.forEach((key, i) => {
    const L = letter(i);
    if (notes[String(key)]) out[`note.${L}`] = notes[String(key)];
    if (kind === "writing-quality") {
      const s = lab.scores?.[String(key)];
      if (s != null) out[`score.${L}`] = String(s);
      const r = stored.penaltyReasons?.[String(key)]?.[0];
      if (r) out[`reason.${L}`] = r;
    } else if (lab.best === key) out.best = L;
  });
  if (kind === "best-of-n" && lab.best === "tie") out.best = "tie";
  return out;
}

/** Whether two submitted labels of one unit disagree (adjudication queue). */
export function labelsDisagree(kind: AnnotatableKind, a: unknown, b: unknown): boolean {
  if (kind === "writing-quality") {
    const sa = (a as { scores?: Record<string, number> })?.scores ?? {};
    const sb = (b as { scores?: Record<string, number> })?.scores ?? {};
    // Scores one point apart count as agreement; two or more points apart do not.
    return Object.keys({ ...sa, ...sb }).some((k) => sa[k] == null || sb[k] == null || Math.abs(sa[k] - sb[k]) >= 2);
  }
  if (kind === "best-of-n") return (a as { best?: unknown })?.best !== (b as { best?: unknown })?.best;
  return a !== b;
}

/** Whether a submitted label matches a gold unit's known answer (stored as JSON text). */
export function matchesGold(kind: AnnotatableKind, label: unknown, goldLabel: string): boolean {
  let gold: unknown;
  try {
    gold = JSON.parse(goldLabel);
  } catch {
    gold = goldLabel;
  }
  if (kind === "checklist-appropriateness" || kind === "response-satisfaction") return label === gold;
  if (kind === "best-of-n") return (label as { best?: unknown })?.best === (gold as { best?: unknown })?.best;
  const sl = (label as { scores?: Record<string, number> })?.scores ?? {};
  const sg = (gold as { scores?: Record<string, number> })?.scores ?? {};
  return Object.keys(sg).every((k) => sl[k] != null && Math.abs(sl[k] - sg[k]) <= 1);
}

/**
 * The known (gold) answer of a gold unit from the researcher's form. Fields name the
 * unit's responses by letter in the unit's own order (A = its first response), not a
 * shown order: the researcher is not blind. Yes/No kinds: `answer`. Writing quality:
 * `score.A`, `score.B`, ... (1–5) for every response (the reference is the fixed anchor
 * and is not scored). Best-of-N: `best` = a letter, or "tie" when the task allows ties.
 * Every field is required; the result is the stored label shape of the kind.
 */
export function parseGoldLabel(
  kind: AnnotatableKind,
  responseIds: ResponseKey[] | null,
  allowTies: boolean,
  form: FormLike,
  scale: ScoreScale = DEFAULT_SCORE_SCALE,
): { ok: true; label: unknown } | { ok: false; fieldErrors: Record<string, string> } {
  if (kind === "checklist-appropriateness" || kind === "response-satisfaction") {
    const answer = str(form, "answer");
    return answer === "Yes" || answer === "No"
      ? { ok: true, label: answer }
      : { ok: false, fieldErrors: { answer: "Choose Yes or No as the known answer." } };
  }
  const order = responseIds ?? [];
  if (order.length === 0) return { ok: false, fieldErrors: { form: "This unit has no responses." } };
  if (kind === "writing-quality") {
    const errors: Record<string, string> = {};
    const scores: Record<string, number> = {};
    order.forEach((key, i) => {
      if (key === "reference") return;
      const L = letter(i);
      const raw = str(form, `score.${L}`).trim();
      const n = Number(raw);
      if (raw === "" || !Number.isInteger(n) || n < 1 || n > scale.max)
        errors[`score.${L}`] = `Give Response ${L} a known score from 1 to ${scale.max}.`;
      else scores[String(key)] = n;
    });
    return Object.keys(errors).length ? { ok: false, fieldErrors: errors } : { ok: true, label: { scores } };
  }
  const best = str(form, "best").trim();
  if (best === "tie")
    return allowTies ? { ok: true, label: { best: "tie" } } : { ok: false, fieldErrors: { best: "This task does not allow ties." } };
  const i = order.findIndex((_, j) => letter(j) === best);
  return i < 0 ? { ok: false, fieldErrors: { best: "Choose the known best response." } } : { ok: true, label: { best: order[i] } };
}
