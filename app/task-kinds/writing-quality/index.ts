/**
 * Writing quality: every response of an item scored 1–5 (RAVEL F.1: the shown reference
 * stands for 4, a score below 3 needs a penalty reason, a safety problem forces 1), or the
 * task's own scale (scoreMax / referenceScore / penaltyBelow, e.g. the judge's 1–10).
 *
 * Stored: label {scores: {[responseId]: 1..max}}; penaltyReasons {[responseId]: [reason]}
 * for every score below the threshold; notes {[responseId]: observation} (non-empty only).
 * One subject per scored response, ordinal on the task's 1..max scale.
 */
import { letter } from "~/annotation/random";
import { filterResponses, noteLines, notesToForm, readNotes, str } from "../shared/form";
import { sampleItems } from "../shared/items";
import { defineKind, type GoldResult, type UnitSpec } from "../types";
import { DEFAULT_SCORE_SCALE, penaltyReasonsOf, scoreScaleOf } from "./scale";

type Scores = Record<string, number>;
const scoresOf = (l: unknown): Scores => (l as { scores?: Scores } | null)?.scores ?? {};

export const writingQuality = defineKind({
  id: "writing-quality",
  title: "Writing quality",
  // Its client parts, each a chunk of its own in the browser build (literal dynamic imports).
  form: () => import("./form").then((m) => m.writingQualityForm),
  fields: () => import("./fields").then((m) => m.writingQualityFields),
  plans: ["all-responses"],
  settings: ["models", "turn", "penaltyReasons"],
  multiResponse: true,
  // A judge scores each response on the task's scale: the judge–human table applies, one subject per scored response.
  judgeAgreement: true,
  // The reference is always shown: it is the scale's anchor.
  showsReference: () => true,
  labelsJudgeReference: true,
  goldShowsReference: true,
  buildUnits(candidates, config, seed) {
    const out: UnitSpec[] = [];
    for (const it of sampleItems(candidates, config, seed)) {
      const rs = filterResponses(it, config);
      if (rs.length > 0) out.push({ itemId: it.id, responseIds: rs.map((r) => r.id) });
    }
    return out;
  },
  parseLabel(rules, form, mode) {
    const errors: Record<string, string> = {};
    const submit = mode === "submit";
    const order = rules.shownOrder ?? [];
    if (order.length === 0) return { ok: false, fieldErrors: { form: "This unit has no responses to label." } };
    const notes = readNotes(order, form, errors);
    const { max, penaltyBelow } = rules.scale ?? DEFAULT_SCORE_SCALE;
    const scores: Scores = {};
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
  },
  labelToForm(stored, shownOrder) {
    const out: Record<string, string> = {};
    const order = shownOrder ?? [];
    notesToForm(stored.notes, order, out);
    const scores = scoresOf(stored.label);
    order.forEach((key, i) => {
      const L = letter(i);
      const s = scores[String(key)];
      if (s != null) out[`score.${L}`] = String(s);
      const r = stored.penaltyReasons?.[String(key)]?.[0];
      if (r) out[`reason.${L}`] = r;
    });
    return out;
  },
  labelsDisagree(a, b) {
    const sa = scoresOf(a);
    const sb = scoresOf(b);
    // Scores one point apart count as agreement; two or more points apart do not.
    return Object.keys({ ...sa, ...sb }).some((k) => sa[k] == null || sb[k] == null || Math.abs(sa[k] - sb[k]) >= 2);
  },
  matchesGold(label, gold) {
    const sl = scoresOf(label);
    const sg = scoresOf(gold);
    return Object.keys(sg).every((k) => sl[k] != null && Math.abs(sl[k] - sg[k]) <= 1);
  },
  parseGoldLabel(responseIds, config, form): GoldResult {
    const order = responseIds ?? [];
    if (order.length === 0) return { ok: false, fieldErrors: { form: "This unit has no responses." } };
    const scale = scoreScaleOf(config);
    const errors: Record<string, string> = {};
    const scores: Scores = {};
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
  },
  describe(label, penalties, notes, nameOf) {
    const summary = Object.entries(scoresOf(label)).map(
      ([k, v]) => `${nameOf(k)}: ${v}${penalties?.[k]?.length ? ` (${penalties[k].join(", ")})` : ""}`,
    );
    return { summary, notes: noteLines(notes, nameOf) };
  },
  coding: {
    level: "ordinal",
    subjects: "response",
    // The task's 1–N scale (scoreMax; default 5), unused scores included.
    categories: (config) => Array.from({ length: typeof config.scoreMax === "number" ? config.scoreMax : 5 }, (_, i) => i + 1),
    scores: (label) => (label as { scores?: Record<string, unknown> } | null)?.scores ?? {},
  },
  // Annotators choose among the penalty reasons under every response.
  annotatorTexts: (config) => ({ penaltyReasons: penaltyReasonsOf(config).join(", ") }),
});
