/**
 * Judge–human agreement on the fixture of tests/fixtures/judge (original content: a pairwise
 * task with ties, three annotators, two judges; judge-wobbly leaves two units without a verdict
 * and gives three outputs outside the label set: an empty one, "Unsure", "I cannot decide").
 *
 * Every expected value was computed with scikit-learn 1.2.1 (python3, pandas) on the same files:
 * the strict majority of ann_1..ann_3 per unit (units without one left out), the judge's verdict
 * trimmed, an out-of-set verdict replaced by "(unparsed)" (count-as-wrong), dropped (exclude) or
 * replaced by "tie" (as:tie); then accuracy_score(y_true, y_pred), cohen_kappa_score(y_true, y_pred),
 * precision_recall_fscore_support(y_true, y_pred, average="macro", zero_division=0) and, per label,
 * average=None with labels=sorted(set(y_true) | set(y_pred)), and confusion_matrix(y_true, y_pred,
 * labels=that list). "each": y_true stacks every annotator's label of a unit, y_pred repeats the
 * judge's verdict. Weighted kappa: cohen_kappa_score(..., weights="quadratic", labels=[0, 1, 2])
 * on the numeric copy (A=1, B=2, tie=0), pairs with an unparsed verdict left out.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJudgeFiles } from "~/formats/judgeFiles.server";
import { judgeAgreement, labelText, strictMajority, UNPARSED } from "~/reports/judgeAgreement";

const FX = path.resolve(__dirname, "../../fixtures/judge");
/**
 * judge-wobbly's empty verdict (u02, an empty CSV cell) counted as an unparsed output, as the
 * expected values below (scikit-learn's, and the hand computations) take it; by default an empty
 * CSV cell is a missing verdict, left out of n (tests/integration/judge-agreement-missing.test.ts).
 */
const AS_BEFORE = { missing: "unparsed" } as const;
const wide = () =>
  readJudgeFiles({
    labels: path.join(FX, "labels-wide.csv"),
    annotators: ["ann_1", "ann_2", "ann_3"],
    verdicts: path.join(FX, "verdicts.csv"),
  });
const close = (a: number | null, b: number) => expect(a).toBeCloseTo(b, 12);

describe("judgeAgreement on the pairwise fixture", () => {
  it("majority reference, count-as-wrong: every figure equals scikit-learn", async () => {
    const { input, summary } = await wide();
    expect(summary.ignoredColumns).toEqual(["prompt", "notes"]);
    const r = judgeAgreement(input, AS_BEFORE);
    expect(r.labels).toEqual(["A", "B", "tie"]);
    expect(r.units).toBe(14);
    expect(r.unitsWithoutMajority).toBe(2); // u04 (A, B, tie) and u10 (A, B)
    const [steady, wobbly] = r.judges;
    expect(steady.judge).toBe("judge-steady");
    expect([steady.n, steady.unparsed, steady.missing]).toEqual([12, 0, 0]);
    close(steady.accuracy, 0.6666666666666666);
    close(steady.cohenKappa, 0.49473684210526314);
    close(steady.macroPrecision, 0.6722222222222222);
    close(steady.macroRecall, 0.6722222222222222);
    close(steady.macroF1, 0.6666666666666665);
    // confusion_matrix(labels=["A", "B", "tie"]) = [[3, 1, 0], [1, 3, 1], [1, 0, 2]]: "tie" is a real human label.
    expect(steady.confusion).toEqual({ A: { A: 3, B: 1, tie: 0 }, B: { A: 1, B: 3, tie: 1 }, tie: { A: 1, B: 0, tie: 2 } });
    close(steady.perLabel.A.precision, 0.6);
    close(steady.perLabel.B.recall, 0.6);
    expect(steady.perLabel.tie.support).toBe(3);

    expect(wobbly.judge).toBe("judge-wobbly");
    expect([wobbly.n, wobbly.unparsed, wobbly.missing]).toEqual([10, 3, 2]);
    close(wobbly.accuracy, 0.6);
    close(wobbly.cohenKappa, 0.48051948051948057);
    close(wobbly.macroPrecision, 0.6666666666666666);
    close(wobbly.macroRecall, 0.45833333333333326);
    close(wobbly.macroF1, 0.5333333333333333);
    // labels ["(unparsed)", "A", "B", "tie"]: cm [[0,0,0,0], [1,2,0,0], [2,0,2,0], [0,1,0,2]]
    expect(wobbly.confusion.A).toEqual({ A: 2, B: 0, tie: 0, [UNPARSED]: 1 });
    expect(wobbly.confusion.B).toEqual({ A: 0, B: 2, tie: 0, [UNPARSED]: 2 });
    expect(wobbly.confusion.tie).toEqual({ A: 1, B: 0, tie: 2, [UNPARSED]: 0 });
    expect(wobbly.perLabel[UNPARSED]).toEqual({ precision: 0, recall: 0, f1: 0, support: 0 });
    close(wobbly.perLabel.tie.f1, 0.8);
  });

  it("CIs: Wilson for accuracy, the asymptotic kappa SE, a seeded bootstrap for macro F1", async () => {
    const { input } = await wide();
    const steady = judgeAgreement(input, AS_BEFORE).judges[0];
    // Wilson 95% for 8/12, z = 1.96 (Newcombe 1998 method 3; the formula evaluated in python3): 0.3906–0.8619.
    expect(steady.accuracyCI![0]).toBeCloseTo(0.3906, 4);
    expect(steady.accuracyCI![1]).toBeCloseTo(0.8619, 4);
    const [lo, hi] = steady.cohenKappaCI!;
    expect((lo + hi) / 2).toBeCloseTo(steady.cohenKappa!, 12);
    expect(hi).toBeGreaterThan(steady.cohenKappa!);
    const again = judgeAgreement(input, { ...AS_BEFORE, seed: 1 }).judges[0].macroF1CI;
    expect(steady.macroF1CI).toEqual(again);
    expect(steady.macroF1CI![0]).toBeLessThan(steady.macroF1!);
    expect(steady.macroF1CI![1]).toBeGreaterThan(steady.macroF1!);
  });

  it("exclude and as:tie", async () => {
    const { input } = await wide();
    const ex = judgeAgreement(input, { ...AS_BEFORE, unparsed: "exclude" }).judges[1];
    expect([ex.n, ex.unparsed]).toEqual([7, 3]);
    close(ex.accuracy, 0.8571428571428571);
    close(ex.cohenKappa, 0.7878787878787878);
    close(ex.macroPrecision, 0.8888888888888888);
    close(ex.macroRecall, 0.8888888888888888);
    close(ex.macroF1, 0.8666666666666667);
    const as = judgeAgreement(input, { ...AS_BEFORE, unparsed: "as:tie" }).judges[1];
    expect([as.n, as.unparsed]).toEqual([10, 3]);
    close(as.accuracy, 0.6);
    close(as.cohenKappa, 0.4117647058823529);
    close(as.macroPrecision, 0.6888888888888888);
    close(as.macroRecall, 0.611111111111111);
    close(as.macroF1, 0.611111111111111);
    expect(as.confusion.B).toEqual({ A: 0, B: 2, tie: 2 });
    expect(() => judgeAgreement(input, { ...AS_BEFORE, unparsed: "as:Maybe" })).toThrow(/not one of the human labels \(A, B, tie\)/);
  });

  it("each annotator: every (annotator, unit) pair pooled", async () => {
    const { input } = await wide();
    const r = judgeAgreement(input, { ...AS_BEFORE, reference: "each" });
    expect(r.unitsWithoutMajority).toBe(0);
    const [steady, wobbly] = r.judges;
    expect(steady.n).toBe(40);
    close(steady.accuracy, 0.6);
    close(steady.cohenKappa, 0.3922127255460589);
    close(steady.macroPrecision, 0.6129785247432307);
    close(steady.macroRecall, 0.5961038961038961);
    close(steady.macroF1, 0.6004449388209121);
    expect(steady.confusion).toEqual({ A: { A: 9, B: 4, tie: 1 }, B: { A: 4, B: 9, tie: 2 }, tie: { A: 4, B: 1, tie: 6 } });
    expect([wobbly.n, wobbly.unparsed]).toEqual([35, 3]);
    close(wobbly.accuracy, 0.5142857142857142);
    close(wobbly.cohenKappa, 0.35043668122270744);
    close(wobbly.macroF1, 0.4447875494071146);
    // Pooled accuracy is the n-weighted mean of the per-annotator accuracies.
    const pooled = steady.perAnnotator.reduce((s, a) => s + a.accuracy! * a.n, 0) / steady.perAnnotator.reduce((s, a) => s + a.n, 0);
    close(pooled, 0.6);
  });

  it("numeric human labels (JSON numbers) against string verdicts give the same figures", async () => {
    const { input, summary } = await readJudgeFiles({
      labels: path.join(FX, "labels-numeric.json"),
      verdicts: path.join(FX, "verdicts-numeric.jsonl"),
    });
    expect(summary.labelsLayout).toBe("long");
    const r = judgeAgreement(input, AS_BEFORE);
    expect(r.labels).toEqual(["0", "1", "2"]);
    const [steady, wobbly] = r.judges;
    close(steady.accuracy, 0.6666666666666666);
    close(steady.cohenKappa, 0.49473684210526314);
    close(steady.macroF1, 0.6666666666666665);
    expect([wobbly.n, wobbly.unparsed, wobbly.missing]).toEqual([10, 3, 2]);
    close(wobbly.macroF1, 0.5333333333333333);
    // No weighted kappa unless the scale is declared ordinal (codes are not guessed to be ordered).
    expect(steady.weightedKappa).toBeNull();
    const ord = judgeAgreement(input, { ...AS_BEFORE, ordinal: true }).judges;
    close(ord[0].weightedKappa, 0.5227272727272727);
    close(ord[1].weightedKappa, 0.8888888888888888);
  });

  it("the human baseline: leave-one-out majority, or every two annotators", async () => {
    const { input } = await wide();
    // scikit-learn 1.2.1: each annotator's label (y_pred) against the strict majority of the other
    // annotators of the unit (y_true), pooled: 21 pairs, accuracy_score 0.5238095238095238,
    // cohen_kappa_score 0.27835051546391754.
    const m = judgeAgreement(input, AS_BEFORE).humans!;
    expect(m.n).toBe(21);
    close(m.accuracy, 0.5238095238095238);
    close(m.cohenKappa, 0.27835051546391754);
    // Every two annotators of a unit, both orders stacked: 38 pairs, accuracy 0.47368421052631576,
    // cohen_kappa_score 0.20543648719289076.
    const e = judgeAgreement(input, { ...AS_BEFORE, reference: "each" }).humans!;
    expect(e.n).toBe(38);
    close(e.accuracy, 0.47368421052631576);
    close(e.cohenKappa, 0.20543648719289076);
  });

  it("label text, strict majority", () => {
    expect([labelText(1), labelText(" 1 "), labelText("1.0"), labelText("yes"), labelText(" tie "), labelText("")]).toEqual([
      "1",
      "1",
      "1",
      "Yes",
      "tie",
      null,
    ]);
    expect(strictMajority(["A", "A", "B"])).toBe("A");
    expect(strictMajority(["A", "B", "tie"])).toBeNull();
    expect(strictMajority(["A", "B", null])).toBeNull();
    expect(strictMajority(["A", "A", "B", "C"])).toBeNull(); // a plurality is not a majority
    expect(strictMajority(["tie", null, null])).toBe("tie");
  });
});
