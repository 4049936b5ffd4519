import { describe, expect, it } from "vitest";
import { labelToForm, labelsDisagree, matchesGold, parseLabel, type LabelRules } from "../../../app/annotation/labels";

const form = (o: Record<string, string>) => new URLSearchParams(o);
const writing: LabelRules = {
  kind: "writing-quality",
  penaltyReasons: ["consistency", "accuracy", "fluency", "safety"],
  allowTies: false,
  shownOrder: [31, 30, 32],
};
const best: LabelRules = { kind: "best-of-n", penaltyReasons: [], allowTies: false, shownOrder: [8, "reference", 7] };

describe("labels", () => {
  it("Yes/No with an optional comment", () => {
    const r = parseLabel(
      { ...writing, kind: "checklist-appropriateness", shownOrder: null },
      form({ answer: "No", comment: " vague " }),
      "submit",
    );
    expect(r).toEqual({ ok: true, value: { label: "No", penaltyReasons: null, notes: "vague" } });
    const bad = parseLabel({ ...writing, kind: "response-satisfaction", shownOrder: null }, form({ answer: "Maybe" }), "submit");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.fieldErrors.answer).toMatch(/not Yes or No/);
    expect(parseLabel({ ...writing, kind: "response-satisfaction", shownOrder: null }, form({}), "draft")).toMatchObject({
      ok: true,
      value: { label: "" },
    });
  });

  it("writing: scores keyed by response id through the shown order", () => {
    const r = parseLabel(
      writing,
      form({ "score.A": "4", "score.B": "2", "reason.B": "fluency", "score.C": "5", "note.C": "vivid" }),
      "submit",
    );
    expect(r).toEqual({
      ok: true,
      value: { label: { scores: { "31": 4, "30": 2, "32": 5 } }, penaltyReasons: { "30": ["fluency"] }, notes: { "32": "vivid" } },
    });
  });

  it("writing: rejects a 7, a missing penalty reason, safety above 1, unknown reasons", () => {
    const seven = parseLabel(writing, form({ "score.A": "7", "score.B": "3", "score.C": "3" }), "submit");
    expect(!seven.ok && seven.fieldErrors["score.A"]).toMatch(/1 to 5/);
    const noReason = parseLabel(writing, form({ "score.A": "2", "score.B": "3", "score.C": "3" }), "submit");
    expect(!noReason.ok && noReason.fieldErrors["reason.A"]).toMatch(/penalty reason/);
    const safety = parseLabel(writing, form({ "score.A": "2", "reason.A": "safety", "score.B": "3", "score.C": "3" }), "submit");
    expect(!safety.ok && safety.fieldErrors["score.A"]).toMatch(/forces a score of 1/);
    const unknown = parseLabel(writing, form({ "score.A": "1", "reason.A": "vibes", "score.B": "3", "score.C": "3" }), "submit");
    expect(!unknown.ok && unknown.fieldErrors["reason.A"]).toMatch(/not a penalty reason/);
    const missing = parseLabel(writing, form({ "score.A": "3" }), "submit");
    expect(!missing.ok && missing.fieldErrors["score.B"]).toBeTruthy();
    expect(parseLabel(writing, form({ "score.A": "3" }), "draft").ok).toBe(true);
  });

  it("best-of-N: a letter maps to the hidden key; ties only when allowed", () => {
    expect(parseLabel(best, form({ best: "B", "note.A": "dull" }), "submit")).toEqual({
      ok: true,
      value: { label: { best: "reference" }, penaltyReasons: null, notes: { "8": "dull" } },
    });
    expect(parseLabel(best, form({ best: "tie" }), "submit").ok).toBe(false);
    expect(parseLabel({ ...best, allowTies: true }, form({ best: "tie" }), "submit")).toMatchObject({
      ok: true,
      value: { label: { best: "tie" } },
    });
    expect(parseLabel(best, form({ best: "D" }), "submit").ok).toBe(false);
  });

  it("labelToForm inverts parseLabel", () => {
    const values = { "score.A": "4", "score.B": "1", "reason.B": "safety", "score.C": "5", "note.C": "vivid" };
    const r = parseLabel(writing, form(values), "submit");
    if (!r.ok) throw new Error("parse failed");
    expect(labelToForm("writing-quality", r.value, writing.shownOrder)).toEqual(values);
    const b = parseLabel(best, form({ best: "C" }), "submit");
    if (!b.ok) throw new Error("parse failed");
    expect(labelToForm("best-of-n", b.value, best.shownOrder)).toEqual({ best: "C" });
  });

  it("disagreement and gold matching", () => {
    expect(labelsDisagree("checklist-appropriateness", "Yes", "No")).toBe(true);
    expect(labelsDisagree("writing-quality", { scores: { 1: 4 } }, { scores: { 1: 3 } })).toBe(false);
    expect(labelsDisagree("writing-quality", { scores: { 1: 4 } }, { scores: { 1: 2 } })).toBe(true);
    expect(labelsDisagree("best-of-n", { best: 1 }, { best: 2 })).toBe(true);
    expect(matchesGold("response-satisfaction", "Yes", JSON.stringify("Yes"))).toBe(true);
    expect(matchesGold("best-of-n", { best: "reference" }, JSON.stringify({ best: "reference" }))).toBe(true);
  });
});
