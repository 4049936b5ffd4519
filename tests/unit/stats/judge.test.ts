import { describe, expect, it } from "vitest";
import { accuracy, confusionMatrix, pairwiseOrderingConsistency, perLabelMetrics, rates, yesRateDifference } from "~/stats";

// A small judge-vs-human sample (original data). Expected values are counted by hand from the
// confusion matrix below (rows human, columns judge, labels A, B, C):
//   A: [3, 1, 0]   B: [1, 2, 1]   C: [0, 1, 3]    n = 12, correct = 8
const human = ["A", "A", "A", "A", "B", "B", "B", "B", "C", "C", "C", "C"];
const judge = ["A", "A", "A", "B", "A", "B", "B", "C", "B", "C", "C", "C"];

describe("confusionMatrix", () => {
  it("counts rows = human, columns = judge (scikit-learn orientation)", () => {
    const cm = confusionMatrix(human, judge);
    expect(cm.labels).toEqual(["A", "B", "C"]);
    expect(cm.matrix).toEqual([
      [3, 1, 0],
      [1, 2, 1],
      [0, 1, 3],
    ]);
    expect(cm.n).toBe(12);
  });

  it("honours a label order, keeps unused labels, drops missing pairs; @example", () => {
    const cm = confusionMatrix(["y", null, "n"], ["y", "y", "n"], ["y", "n", "maybe"]);
    expect(cm.labels).toEqual(["y", "n", "maybe"]);
    expect(cm.matrix).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 0],
    ]);
    expect(confusionMatrix(["y", "y", "n"], ["y", "n", "n"]).matrix).toEqual([
      [1, 0],
      [1, 1],
    ]);
  });

  it("throws errors naming the function", () => {
    expect(() => confusionMatrix(["a"], ["a", "b"])).toThrow(/^confusionMatrix: human and judge must have the same length \(got 1 and 2\)/);
    expect(() => confusionMatrix(["a"], ["z"], ["a"])).toThrow(/^confusionMatrix: value "z"/);
    expect(() => confusionMatrix([NaN], [1])).toThrow(/^confusionMatrix: non-finite/);
  });
});

describe("accuracy", () => {
  it("is the trace over n: 8/12; @example 0.75; NaN without pairs", () => {
    expect(accuracy(human, judge)).toBeCloseTo(8 / 12, 15);
    expect(accuracy(["y", "y", "n", "n"], ["y", "n", "n", "n"])).toBe(0.75);
    expect(accuracy([null], ["y"])).toBeNaN();
    expect(accuracy([true], [true])).toBe(1);
  });
  it("throws errors naming the function", () => {
    expect(() => accuracy(["a"], [])).toThrow(/^accuracy: human and judge must have the same length/);
    expect(() => accuracy([Infinity], [1])).toThrow(/^accuracy: non-finite/);
  });
});

describe("perLabelMetrics", () => {
  it("precision/recall/F1 per label from the hand-counted matrix", () => {
    const m = perLabelMetrics(human, judge);
    // A: TP 3, FP 1, FN 1 -> P 3/4, R 3/4, F1 6/8. B: TP 2, FP 2, FN 2 -> 1/2, 1/2, 1/2. C: TP 3, FP 1, FN 1.
    expect(m.map((r) => r.label)).toEqual(["A", "B", "C"]);
    expect(m[0]).toEqual({ label: "A", precision: 0.75, recall: 0.75, f1: 0.75, support: 4, predicted: 4 });
    expect(m[1]).toEqual({ label: "B", precision: 0.5, recall: 0.5, f1: 0.5, support: 4, predicted: 4 });
    expect(m[2].f1).toBe(0.75);
  });

  it("@example; undefined ratios are NaN, F1 is 0 when TP = 0 but errors exist", () => {
    expect(perLabelMetrics(["y", "y", "n", "n"], ["y", "n", "n", "n"])[1]).toEqual({
      label: "y",
      precision: 1,
      recall: 0.5,
      f1: 2 / 3,
      support: 2,
      predicted: 1,
    });
    const m = perLabelMetrics(["y", "y"], ["n", "n"], ["y", "n", "x"]);
    expect(m[0].precision).toBeNaN(); // judge never said "y"
    expect(m[0].recall).toBe(0);
    expect(m[0].f1).toBe(0);
    expect(m[1].recall).toBeNaN(); // humans never said "n"
    expect(m[2].f1).toBeNaN(); // "x" never used
  });

  it("throws errors naming the function", () => {
    expect(() => perLabelMetrics(["a"], [])).toThrow(/^perLabelMetrics: human and judge must have the same length/);
  });
});

describe("rates", () => {
  it("TPR and TNR for a positive label; everything else is negative", () => {
    // positive "A": TP 3, FN 1; negatives (B, C) judged non-A: 7 of 8 -> TN 7, FP 1
    expect(rates(human, judge, "A")).toEqual({ tpr: 0.75, tnr: 7 / 8, tp: 3, fn: 1, tn: 7, fp: 1 });
    expect(rates(["Yes", "Yes", "No", "No"], ["Yes", "No", "No", "Yes"], "Yes")).toEqual({
      tpr: 0.5,
      tnr: 0.5,
      tp: 1,
      fn: 1,
      tn: 1,
      fp: 1,
    });
  });
  it("edge cases: no positives -> TPR NaN; missing pairs dropped; errors", () => {
    const r = rates(["No", "No", null], ["No", "Yes", "Yes"], "Yes");
    expect(r.tpr).toBeNaN();
    expect(r.tnr).toBe(0.5);
    expect(() => rates(["a"], ["a", "b"], "a")).toThrow(/^rates: human and judge must have the same length/);
    expect(() => rates([NaN], [1], 1)).toThrow(/^rates: non-finite/);
    expect(() => rates(["a"], ["a"], null as never)).toThrow(/^rates: positive label is required/);
  });
});

describe("yesRateDifference", () => {
  it("judge minus human Yes rate; equals (FP - FN)/n", () => {
    expect(yesRateDifference(["Yes", "No", "No", "No"], ["Yes", "Yes", "No", "No"])).toEqual({
      humanYesRate: 0.25,
      judgeYesRate: 0.5,
      difference: 0.25,
      n: 4,
    });
    const r = rates(human, judge, "A");
    expect(yesRateDifference(human, judge, "A").difference).toBeCloseTo((r.fp - r.fn) / 12, 15);
  });
  it("edge cases and errors", () => {
    expect(yesRateDifference([null], ["Yes"]).difference).toBeNaN();
    expect(yesRateDifference([true, false], [true, true], true).difference).toBe(0.5);
    expect(() => yesRateDifference(["Yes"], [])).toThrow(/^yesRateDifference: human and judge must have the same length/);
    expect(() => yesRateDifference([Infinity], [1])).toThrow(/^yesRateDifference: non-finite/);
  });
});

describe("pairwiseOrderingConsistency", () => {
  it("counts with ties and without ties (MT-Bench style), by hand", () => {
    // Item q1: humans 4, 2, 2; judge 8, 5, 6 -> pairs (1,2) +/+ ok, (1,3) +/+ ok, (2,3) human tie vs judge '-' -> not ok.
    // Item q2: humans 1, 3; judge 7, 7 -> human '-' vs judge tie -> not ok (excluded without ties).
    // Item q3: humans 5, 5; judge 9, 9 -> tie/tie -> ok with ties; excluded without ties.
    // Item q4: a single response -> no pair. A null score is skipped.
    const r = pairwiseOrderingConsistency([
      { itemId: "q1", human: 4, judge: 8 },
      { itemId: "q1", human: 2, judge: 5 },
      { itemId: "q1", human: 2, judge: 6 },
      { itemId: "q2", human: 1, judge: 7 },
      { itemId: "q2", human: 3, judge: 7 },
      { itemId: "q3", human: 5, judge: 9 },
      { itemId: "q3", human: 5, judge: 9 },
      { itemId: "q4", human: 5, judge: 9 },
      { itemId: "q1", human: null, judge: 1 },
    ]);
    expect(r.pairs).toBe(5);
    expect(r.consistentWithTies).toBe(3);
    expect(r.withTies).toBeCloseTo(3 / 5, 15);
    expect(r.pairsWithoutTies).toBe(2);
    expect(r.withoutTies).toBe(1);
    expect(r.humanTies).toBe(2);
    expect(r.judgeTies).toBe(2);
    expect(r.items).toBe(3);
  });

  it("@example; a judge reversing every order scores 0; no pairs -> NaN", () => {
    const ex = pairwiseOrderingConsistency([
      { itemId: "a", human: 5, judge: 9 },
      { itemId: "a", human: 3, judge: 6 },
      { itemId: "a", human: 3, judge: 7 },
    ]);
    expect(ex.withTies).toBeCloseTo(2 / 3, 15);
    expect(ex.withoutTies).toBe(1);
    const rev = pairwiseOrderingConsistency([1, 2, 3, 4].map((h) => ({ itemId: 1, human: h, judge: 10 - h })));
    expect(rev.withTies).toBe(0);
    expect(rev.withoutTies).toBe(0);
    const none = pairwiseOrderingConsistency([{ itemId: "x", human: 1, judge: 1 }]);
    expect(none.withTies).toBeNaN();
    expect(none.withoutTies).toBeNaN();
    expect(pairwiseOrderingConsistency([]).pairs).toBe(0);
  });

  it("throws errors naming the function", () => {
    expect(() => pairwiseOrderingConsistency("x" as never)).toThrow(/^pairwiseOrderingConsistency: responses must be an array/);
    expect(() => pairwiseOrderingConsistency([{ itemId: "a", human: NaN, judge: 1 }])).toThrow(
      /^pairwiseOrderingConsistency: responses\[0\]\.human is not a finite number/,
    );
    expect(() => pairwiseOrderingConsistency([{ itemId: undefined as never, human: 1, judge: 1 }])).toThrow(
      /^pairwiseOrderingConsistency: responses\[0\]\.itemId/,
    );
  });
});
