/**
 * Checklist appropriateness: is this checklist item a valid criterion for grading answers
 * to the question? One unit per checklist item of every item; Yes/No with an optional comment.
 */
import { sampleItems } from "../shared/items";
import { yesNo } from "../shared/yes-no";
import { defineKind } from "../types";

export const checklistAppropriateness = defineKind({
  id: "checklist-appropriateness",
  title: "Checklist appropriateness",
  // Its client parts, each a chunk of its own in the browser build (literal dynamic imports).
  form: () => import("./form").then((m) => m.checklistAppropriatenessForm),
  fields: () => import("./fields").then((m) => m.checklistAppropriatenessFields),
  plans: ["all-items"],
  settings: ["showReference"],
  showsReference: (config) => config.showReference === true,
  labelsJudgeReference: false,
  goldShowsReference: true,
  buildUnits(candidates, config, seed) {
    return sampleItems(candidates, config, seed).flatMap((it) => it.checklist.map((c) => ({ itemId: it.id, checklistItemId: c.id })));
  },
  ...yesNo,
  reportExtras: ["checklist"],
});
