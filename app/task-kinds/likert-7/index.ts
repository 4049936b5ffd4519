/**
 * Likert 1–7 with rationale: for one response, the annotator picks a point from 1 to 7 on
 * the researcher's question (config.question, anchored by config.lowAnchor at 1 and
 * config.highAnchor at 7) and writes a short rationale, required.
 *
 * Units: one per response of every item (the task's models and turn). Stored: label the
 * point, 1..7 (a number); notes the rationale (string); no penalty reasons. A draft may
 * lack either (label null). One subject per unit, ordinal on the fixed 1–7 scale, so the
 * report's weighted kappa and Krippendorff's ordinal alpha use the scale's order.
 */
import { filterResponses, MAX_NOTE, str } from "../shared/form";
import { sampleItems } from "../shared/items";
import { defineKind, type GoldResult, type ParseResult, type UnitSpec } from "../types";
import { likert7Server } from "./config.server";

export const LIKERT_POINTS = 7;
/** A rationale is short: a sentence or two. */
export const MAX_RATIONALE = 2000;

const pointOf = (label: unknown): number | null =>
  typeof label === "number" && Number.isInteger(label) && label >= 1 && label <= LIKERT_POINTS ? label : null;

/** The point field (`score`): empty, or a whole number 1..7. */
function readPoint(raw: string): { point: number | null; error?: string } {
  const t = raw.trim();
  if (t === "") return { point: null };
  const n = Number(t);
  if (!Number.isInteger(n) || n < 1 || n > LIKERT_POINTS)
    return { point: null, error: `Pick a point from 1 to ${LIKERT_POINTS}, not "${t.slice(0, 10)}".` };
  return { point: n };
}

export const likert7 = defineKind({
  id: "likert-7",
  title: "Likert 1–7 with rationale",
  // Its client parts, each a chunk of its own in the browser build (literal dynamic imports).
  form: () => import("./form").then((m) => m.likert7Form),
  fields: () => import("./fields").then((m) => m.likert7Fields),
  plans: ["all-responses"],
  settings: ["models", "turn"],
  textSettings: [
    { name: "question", label: "Question (annotators answer it for each response)", required: true, multiline: true },
    { name: "lowAnchor", label: "Anchor of 1", placeholder: "Strongly disagree", required: true },
    { name: "highAnchor", label: "Anchor of 7", placeholder: "Strongly agree", required: true },
  ],
  // The zod schema of those settings (server only: undefined in the browser build).
  server: likert7Server,
  multiResponse: false,
  // A judge gives the same 1–7 point on the unit's response: the judge–human table applies.
  judgeAgreement: true,
  showsReference: () => false,
  labelsJudgeReference: false,
  goldShowsReference: false,
  buildUnits(candidates, config, seed) {
    const out: UnitSpec[] = [];
    for (const it of sampleItems(candidates, config, seed))
      for (const r of filterResponses(it, config)) out.push({ itemId: it.id, responseId: r.id });
    return out;
  },
  parseLabel(_rules, form, mode): ParseResult {
    const errors: Record<string, string> = {};
    const { point, error } = readPoint(str(form, "score"));
    const rationale = str(form, "rationale").trim();
    if (error) errors.score = error;
    else if (point === null && mode === "submit") errors.score = `Pick a point from 1 to ${LIKERT_POINTS}.`;
    if (rationale.length > MAX_RATIONALE) errors.rationale = `Keep the rationale under ${MAX_RATIONALE} characters.`;
    else if (rationale === "" && mode === "submit") errors.rationale = "Write a short rationale for your choice.";
    if (Object.keys(errors).length) return { ok: false, fieldErrors: errors };
    return { ok: true, value: { label: point, penaltyReasons: null, notes: rationale || null } };
  },
  // The adjudicator's reason (read by the caller) is the final label's rationale.
  parseFinal(_rules, form): ParseResult {
    const { point, error } = readPoint(str(form, "score"));
    if (point === null) return { ok: false, fieldErrors: { score: error ?? `Pick a point from 1 to ${LIKERT_POINTS}.` } };
    return { ok: true, value: { label: point, penaltyReasons: null, notes: null } };
  },
  labelToForm(stored) {
    const out: Record<string, string> = {};
    const point = pointOf(stored.label);
    if (point !== null) out.score = String(point);
    if (typeof stored.notes === "string") out.rationale = stored.notes.slice(0, MAX_NOTE);
    return out;
  },
  // Neighbouring points count as agreement; two or more points apart go to adjudication.
  labelsDisagree: (a, b) => {
    const x = pointOf(a);
    const y = pointOf(b);
    return x === null || y === null || Math.abs(x - y) >= 2;
  },
  matchesGold: (label, gold) => {
    const x = pointOf(label);
    const g = pointOf(gold);
    return x !== null && g !== null && Math.abs(x - g) <= 1;
  },
  parseGoldLabel(_ids, _config, form): GoldResult {
    const { point } = readPoint(str(form, "score"));
    return point === null
      ? { ok: false, fieldErrors: { score: `Choose the known point, 1 to ${LIKERT_POINTS}.` } }
      : { ok: true, label: point };
  },
  describe(label, _penalties, notes) {
    const point = pointOf(label);
    return { summary: [point === null ? "(no answer)" : `${point} of ${LIKERT_POINTS}`], notes: typeof notes === "string" ? [notes] : [] };
  },
  coding: {
    level: "ordinal",
    subjects: "unit",
    categories: () => Array.from({ length: LIKERT_POINTS }, (_, i) => i + 1),
  },
  // The question and both anchors are shown with every unit.
  annotatorTexts: (config) => ({
    "settings.question": typeof config.question === "string" ? config.question : "",
    "settings.lowAnchor": typeof config.lowAnchor === "string" ? config.lowAnchor : "",
    "settings.highAnchor": typeof config.highAnchor === "string" ? config.highAnchor : "",
  }),
  annotatorSettings: (config) => ({
    question: typeof config.question === "string" ? config.question : "",
    lowAnchor: typeof config.lowAnchor === "string" ? config.lowAnchor : "",
    highAnchor: typeof config.highAnchor === "string" ? config.highAnchor : "",
  }),
});
