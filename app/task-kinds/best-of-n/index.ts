/**
 * Best-of-N / pairwise: pick the best of n sampled responses (or a tie, when allowed); the
 * benchmark's reference may be one of them, unmarked (reference optimisation).
 *
 * Stored: label {best: responseId | "reference" | "tie"}; notes {[responseId|"reference"]: note}.
 * One subject per unit, nominal: the rated value is the pick's slot among the unit's
 * candidates in the unit's own order ("A", "B", ... — not the shown order), or "reference" /
 * "tie" (pickSlot below).
 */
import { letter, rng, sample } from "~/annotation/random";
import type { Label } from "~/stats";
import { filterResponses, noteLines, notesToForm, readNotes, str } from "../shared/form";
import { sampleItems } from "../shared/items";
import { defineKind, type GoldResult, type ResponseKey, type UnitSpec } from "../types";

/**
 * A best-of-N pick as its slot among the unit's candidates, in the unit's own order:
 * "A" for the first response, "B" for the second, ...; "reference" and "tie" as they
 * are. A pick that is not one of the unit's candidates keeps its id (as text). The same
 * agreement as comparing response ids (same pick ⇔ same slot), with a handful of
 * categories instead of one per response in the task.
 */
export function pickSlot(best: unknown, responseIds: ResponseKey[] | null): Label | null {
  if (best == null || best === "") return null;
  if (best === "tie" || best === "reference") return best;
  const candidates = (responseIds ?? []).filter((r) => r !== "reference");
  const k = candidates.findIndex((r) => String(r) === String(best));
  return k >= 0 ? String.fromCharCode(65 + k) : String(best);
}

const bestOf = (l: unknown): unknown => (l as { best?: unknown } | null)?.best;

export const bestOfN = defineKind({
  id: "best-of-n",
  title: "Best-of-N / pairwise",
  // Its client parts, each a chunk of its own in the browser build (literal dynamic imports).
  form: () => import("./form").then((m) => m.bestOfNForm),
  fields: () => import("./fields").then((m) => m.bestOfNFields),
  plans: ["sample-n"],
  settings: ["models", "turn", "n", "allowTies", "includeReference"],
  multiResponse: true,
  // A judge names the picked response (or a tie): the judge–human table applies (see app/reports/judgeUnits.server.ts).
  judgeAgreement: true,
  // Never shown as such: it may be hidden among the responses and is never named.
  showsReference: () => false,
  labelsJudgeReference: true,
  goldShowsReference: false,
  buildUnits(candidates, config, seed) {
    const n = config.n ?? 4;
    const withRef = config.includeReference === true;
    const out: UnitSpec[] = [];
    for (const it of sampleItems(candidates, config, seed)) {
      const rand = rng("bestofn", seed, it.id);
      const ref = withRef && it.hasReference;
      const ids: ResponseKey[] = sample(filterResponses(it, config), ref ? n - 1 : n, rand).map((r) => r.id);
      if (ref) ids.push("reference");
      if (ids.length >= 2) out.push({ itemId: it.id, responseIds: ids });
    }
    return out;
  },
  parseLabel(rules, form, mode) {
    const errors: Record<string, string> = {};
    const order = rules.shownOrder ?? [];
    if (order.length === 0) return { ok: false, fieldErrors: { form: "This unit has no responses to label." } };
    const notes = readNotes(order, form, errors);
    const best = str(form, "best").trim();
    let value: ResponseKey | "tie" | null = null;
    if (best === "tie") {
      if (!rules.allowTies) errors.best = "This task does not allow ties; pick the best response.";
      else value = "tie";
    } else if (best !== "") {
      const i = order.findIndex((_, j) => letter(j) === best);
      if (i < 0) errors.best = `"${best.slice(0, 10)}" is not one of the shown responses.`;
      else value = order[i];
    } else if (mode === "submit") {
      errors.best = rules.allowTies ? "Pick the best response, or a tie." : "Pick the best response.";
    }
    if (Object.keys(errors).length) return { ok: false, fieldErrors: errors };
    return { ok: true, value: { label: value === null ? {} : { best: value }, penaltyReasons: null, notes } };
  },
  labelToForm(stored, shownOrder) {
    const out: Record<string, string> = {};
    const order = shownOrder ?? [];
    notesToForm(stored.notes, order, out);
    const best = bestOf(stored.label);
    order.forEach((key, i) => {
      if (best === key) out.best = letter(i);
    });
    if (best === "tie") out.best = "tie";
    return out;
  },
  labelsDisagree: (a, b) => bestOf(a) !== bestOf(b),
  matchesGold: (label, gold) => bestOf(label) === bestOf(gold),
  parseGoldLabel(responseIds, config, form): GoldResult {
    const order = responseIds ?? [];
    if (order.length === 0) return { ok: false, fieldErrors: { form: "This unit has no responses." } };
    const best = str(form, "best").trim();
    if (best === "tie")
      return config.allowTies === true
        ? { ok: true, label: { best: "tie" } }
        : { ok: false, fieldErrors: { best: "This task does not allow ties." } };
    const i = order.findIndex((_, j) => letter(j) === best);
    return i < 0 ? { ok: false, fieldErrors: { best: "Choose the known best response." } } : { ok: true, label: { best: order[i] } };
  },
  describe(label, _penalties, notes, nameOf) {
    const summary: string[] = [];
    if (label && typeof label === "object" && "best" in label)
      summary.push(bestOf(label) === "tie" ? "Tie" : `Best: ${nameOf(bestOf(label))}`);
    return { summary, notes: noteLines(notes, nameOf) };
  },
  coding: {
    level: "nominal",
    subjects: "unit",
    value: (label, responseIds) => pickSlot(bestOf(label), responseIds),
    pick: bestOf,
  },
});
