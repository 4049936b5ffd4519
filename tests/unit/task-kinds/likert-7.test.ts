/**
 * The Likert 1–7 kind through the registry, as the rest of the app sees it: its form
 * parser (point and rationale required on submit, field errors by field), its units
 * (one per response), its settings schema, and its coding for the statistics (ordinal,
 * the fixed 1–7 scale, unused points included).
 */
import { describe, expect, it } from "vitest";
import { ANNOTATABLE_KINDS, KIND_TITLES, PLANS } from "../../../app/annotation/config";
import { labelsDisagree, labelToForm, matchesGold, parseFinalLabel, parseLabel, rulesOf } from "../../../app/annotation/labels";
import { buildUnits, type Candidate } from "../../../app/annotation/sampling";
import { buildTaskData, labelKindOf } from "../../../app/reports/subjects";
import { kindSettings } from "../../../app/task-kinds/registry.server";

const rules = rulesOf("likert-7", {}, null);
const form = (o: Record<string, string>) => new URLSearchParams(o);

describe("likert-7 in the registry", () => {
  it("is a kind the new-task form offers, with its title and plan", () => {
    expect(ANNOTATABLE_KINDS).toContain("likert-7");
    expect(KIND_TITLES["likert-7"]).toBe("Likert 1–7 with rationale");
    expect(PLANS["likert-7"]).toEqual(["all-responses"]);
  });

  it("stores the point as a number and the rationale as the note; both are required to submit", () => {
    expect(parseLabel(rules, form({ score: "6", rationale: "  Clear and correct.  " }), "submit")).toEqual({
      ok: true,
      value: { label: 6, penaltyReasons: null, notes: "Clear and correct." },
    });
    expect(parseLabel(rules, form({ score: "6" }), "submit")).toEqual({
      ok: false,
      fieldErrors: { rationale: "Write a short rationale for your choice." },
    });
    expect(parseLabel(rules, form({ rationale: "why" }), "submit")).toEqual({
      ok: false,
      fieldErrors: { score: "Pick a point from 1 to 7." },
    });
    for (const bad of ["0", "8", "3.5", "x"]) {
      const r = parseLabel(rules, form({ score: bad, rationale: "why" }), "submit");
      expect(r.ok ? null : r.fieldErrors.score).toMatch(/^Pick a point from 1 to 7, not/);
    }
    // A draft may be incomplete.
    expect(parseLabel(rules, form({ rationale: "half-written" }), "draft")).toEqual({
      ok: true,
      value: { label: null, penaltyReasons: null, notes: "half-written" },
    });
    expect(parseLabel(rules, form({ score: "2", rationale: "x".repeat(2001) }), "submit")).toEqual({
      ok: false,
      fieldErrors: { rationale: "Keep the rationale under 2000 characters." },
    });
  });

  it("shows a stored label again, compares labels and gold answers within one point", () => {
    expect(labelToForm("likert-7", { label: 3, penaltyReasons: null, notes: "Vague." }, null)).toEqual({ score: "3", rationale: "Vague." });
    expect(labelsDisagree("likert-7", 4, 5)).toBe(false);
    expect(labelsDisagree("likert-7", 4, 6)).toBe(true);
    expect(matchesGold("likert-7", 5, "6")).toBe(true);
    expect(matchesGold("likert-7", 5, "7")).toBe(false);
    // An adjudicator gives the point; the reason is their rationale.
    expect(parseFinalLabel(rules, form({ score: "7" }))).toEqual({ ok: true, value: { label: 7, penaltyReasons: null, notes: null } });
  });

  it("makes one unit per response of the task's models", () => {
    const items: Candidate[] = [1, 2].map((id) => ({
      id,
      domain: null,
      hasReference: true,
      checklist: [{ id: 10 * id }],
      responses: [
        { id: 100 * id + 1, model: "m1", turn: 1 },
        { id: 100 * id + 2, model: "m2", turn: 1 },
      ],
    }));
    expect(buildUnits("likert-7", items, { models: ["m2"] }, 1)).toEqual([
      { itemId: 1, responseId: 102 },
      { itemId: 2, responseId: 202 },
    ]);
  });

  it("checks its settings with its own schema: question and both anchors", () => {
    expect(kindSettings("likert-7", { question: " Is it helpful? ", lowAnchor: "No", highAnchor: "Yes" })).toEqual({
      ok: true,
      settings: { question: "Is it helpful?", lowAnchor: "No", highAnchor: "Yes" },
    });
    expect(kindSettings("likert-7", { question: "Q", lowAnchor: "No", highAnchor: " " })).toEqual({
      ok: false,
      message: "Name the anchor of 7 (e.g. Strongly agree).",
      field: "settings.highAnchor",
    });
  });

  it("is coded ordinal on the whole 1–7 scale, one subject per unit", () => {
    expect(labelKindOf("likert-7", {})).toBe("ordinal");
    const data = buildTaskData({
      task: { id: 1, name: "t", kind: "likert-7", overlap: 2 } as never,
      config: {},
      adjudications: { 2: 5 },
      units: [1, 2].map((id) => ({
        id,
        itemId: id,
        checklistItemId: null,
        responseId: 10 + id,
        responseIds: null,
        isGold: false,
        goldLabel: null,
        domain: null,
        subject: null,
        taskType: null,
      })),
      responses: [11, 12].map((id) => ({ id, model: "m", turn: 1, length: 10 })),
      annotations: [
        { unitId: 1, annotatorId: 1, label: 2, durationMs: 1, shownOrder: null },
        { unitId: 1, annotatorId: 2, label: 3, durationMs: 1, shownOrder: null },
        { unitId: 2, annotatorId: 1, label: 6, durationMs: 1, shownOrder: null },
        { unitId: 2, annotatorId: 2, label: null, durationMs: 1, shownOrder: null },
      ],
      annotators: [
        { id: 1, name: "a" },
        { id: 2, name: "b" },
      ],
    });
    expect(data.labelKind).toBe("ordinal");
    expect(data.categories).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(data.subjects.map((s) => [s.unitId, s.responseId, s.adjudicated])).toEqual([
      [1, 11, null],
      [2, 12, 5],
    ]);
    // Three ratings: the empty draft-like label is not one.
    expect(data.ratings.length).toBe(3);
    expect([...data.ratings.value]).toEqual([2, 3, 6]);
  });
});
