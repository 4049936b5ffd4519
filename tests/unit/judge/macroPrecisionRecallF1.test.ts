/**
 * macroPrecisionRecallF1 against scikit-learn 1.2.1:
 *   precision_recall_fscore_support(y_true, y_pred, average="macro", zero_division=0)
 * run on each input below (python3, values pasted as literals; tests do not need python).
 */
import { describe, expect, it } from "vitest";
import { macroPrecisionRecallF1 } from "~/stats";

describe("macroPrecisionRecallF1", () => {
  it("pairwise labels with a tie class; @example", () => {
    // sklearn: (0.3333333333333333, 0.5, 0.38888888888888884)
    const r = macroPrecisionRecallF1(["A", "A", "B", "tie"], ["A", "B", "B", "A"]);
    expect(r.precision).toBeCloseTo(0.3333333333333333, 12);
    expect(r.recall).toBeCloseTo(0.5, 12);
    expect(r.f1).toBeCloseTo(0.38888888888888884, 12);
    expect(r.perLabel.map((x) => x.label)).toEqual(["A", "B", "tie"]);
    expect(r.perLabel[2]).toEqual({ label: "tie", precision: 0, recall: 0, f1: 0, support: 1, predicted: 0 });
    expect(r.n).toBe(4);
  });

  it("a label only the judge used counts in the average with zero precision and recall", () => {
    // sklearn on y_true = [y y n n n], y_pred = [y x n x y]: (0.5, 0.27777777777777773, 0.3333333333333333)
    const r = macroPrecisionRecallF1(["y", "y", "n", "n", "n"], ["y", "x", "n", "x", "y"]);
    expect(r.perLabel.map((x) => x.label)).toEqual(["n", "x", "y"]);
    expect(r.precision).toBeCloseTo(0.5, 12);
    expect(r.recall).toBeCloseTo(0.27777777777777773, 12);
    expect(r.f1).toBeCloseTo(0.3333333333333333, 12);
  });

  it("numeric labels; a single-label perfect judge", () => {
    // sklearn on [1 2 3 3 2 1 1] vs [1 2 2 3 3 1 2]: (0.611111111111111, 0.5555555555555555, 0.5666666666666668)
    const r = macroPrecisionRecallF1([1, 2, 3, 3, 2, 1, 1], [1, 2, 2, 3, 3, 1, 2]);
    expect(r.precision).toBeCloseTo(0.611111111111111, 12);
    expect(r.recall).toBeCloseTo(0.5555555555555555, 12);
    expect(r.f1).toBeCloseTo(0.5666666666666668, 12);
    expect(macroPrecisionRecallF1(["a", "a"], ["a", "a"]).f1).toBe(1);
  });

  it("drops missing pairs, NaN with none left, refuses unequal lengths and values outside `labels`", () => {
    expect(macroPrecisionRecallF1(["a", null], ["a", "b"]).n).toBe(1);
    expect(Number.isNaN(macroPrecisionRecallF1([null], ["a"]).f1)).toBe(true);
    expect(() => macroPrecisionRecallF1(["a"], ["a", "b"])).toThrow(/^macroPrecisionRecallF1: /);
    expect(() => macroPrecisionRecallF1(["a"], ["z"], ["a"])).toThrow(/^macroPrecisionRecallF1: /);
  });
});
