/**
 * The Import page pre-ticks, as annotator columns of a wide labels file, only the
 * columns whose names read like annotators; everything else waits to be ticked.
 */
import { describe, expect, it } from "vitest";
import { looksLikeAnnotatorColumn } from "../../../app/formats/labels";

describe("looksLikeAnnotatorColumn", () => {
  it.each([
    "ann_1",
    "ann-2",
    "annotator",
    "Annotator 3",
    "annotator3",
    "rater_ana",
    "raters.b",
    "Coder 2",
    "labeler_x",
    "labeller1",
    "human",
    "worker#17",
    "r1",
    "A2",
    "h3",
    "grader_b",
  ])("%s reads like an annotator", (name) => expect(looksLikeAnnotatorColumn(name)).toBe(true));
  it.each([
    "unit",
    "prompt",
    "notes",
    "id",
    "text",
    "annual_income",
    "annotations_json_blob_x".replace(/_/g, ""),
    "response",
    "model",
    "label",
    "gold",
    "r",
    "a1b",
    "comment",
    "ratings",
  ])("%s does not", (name) => expect(looksLikeAnnotatorColumn(name)).toBe(false));
});
