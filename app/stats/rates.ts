import type { Label, Rating } from "./types";

/** Result of {@link rates}. */
export interface RatesResult {
  /** True-positive rate (sensitivity, recall of the positive label): TP / (TP + FN); NaN without human positives. */
  tpr: number;
  /** True-negative rate (specificity): TN / (TN + FP); NaN without human negatives. */
  tnr: number;
  tp: number;
  fn: number;
  tn: number;
  fp: number;
}

/**
 * True-positive and true-negative rates of a judge for one positive label,
 * with the human label as truth; every other label counts as negative.
 *
 * Definition: TPR = TP/(TP + FN), TNR = TN/(TN + FP) on complete pairs.
 *
 * Reference: J. Yerushalmy (1947) "Statistical problems in assessing methods
 * of medical diagnosis", Public Health Reports 62(40) (sensitivity/specificity).
 *
 * Preconditions: equal lengths; `positive` is a label (string, finite number
 * or boolean); pairs with a missing label are dropped.
 *
 * @throws {Error} "rates: ..." for a length mismatch, a missing `positive`, or NaN/Infinity
 * @example
 * rates(["Yes", "Yes", "No", "No"], ["Yes", "No", "No", "Yes"], "Yes"); // => { tpr: 0.5, tnr: 0.5, tp: 1, fn: 1, tn: 1, fp: 1 }
 */
export function rates(human: ArrayLike<Rating>, judge: ArrayLike<Rating>, positive: Label): RatesResult {
  const fn = "rates";
  if (human == null || judge == null || typeof human.length !== "number" || typeof judge.length !== "number")
    throw new Error(`${fn}: human and judge must be arrays`);
  if (human.length !== judge.length)
    throw new Error(`${fn}: human and judge must have the same length (got ${human.length} and ${judge.length})`);
  if (positive === null || positive === undefined) throw new Error(`${fn}: positive label is required`);
  let tp = 0;
  let fnc = 0;
  let tn = 0;
  let fp = 0;
  for (let i = 0; i < human.length; i++) {
    const h = human[i];
    const j = judge[i];
    for (const v of [h, j])
      if (typeof v === "number" && !Number.isFinite(v)) throw new Error(`${fn}: non-finite value ${String(v)} at index ${i}`);
    if (h === null || h === undefined || j === null || j === undefined) continue;
    const hp = h === positive;
    const jp = j === positive;
    if (hp && jp) tp++;
    else if (hp) fnc++;
    else if (jp) fp++;
    else tn++;
  }
  return { tpr: tp + fnc === 0 ? NaN : tp / (tp + fnc), tnr: tn + fp === 0 ? NaN : tn / (tn + fp), tp, fn: fnc, tn, fp };
}
