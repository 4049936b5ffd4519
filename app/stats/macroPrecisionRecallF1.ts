import { confusionMatrix } from "./confusionMatrix";
import type { Label, Rating } from "./types";

/** One label's figures in {@link macroPrecisionRecallF1} (undefined ratios are 0). */
export interface MacroLabelRow {
  label: Label;
  /** TP / (TP + FP); 0 when the judge never gave this label. */
  precision: number;
  /** TP / (TP + FN); 0 when the humans never gave this label. */
  recall: number;
  /** 2·P·R / (P + R) = 2TP / (2TP + FP + FN); 0 when TP = 0. */
  f1: number;
  /** Pairs whose reference label is this label (TP + FN). */
  support: number;
  /** Pairs the judge gave this label (TP + FP). */
  predicted: number;
}

/** Result of {@link macroPrecisionRecallF1}. */
export interface MacroPRFResult {
  /** Unweighted mean of the per-label precisions. */
  precision: number;
  /** Unweighted mean of the per-label recalls. */
  recall: number;
  /** Unweighted mean of the per-label F1 scores (not the F1 of the mean P and R). */
  f1: number;
  /** The labels averaged over, in order, with their figures. */
  perLabel: MacroLabelRow[];
  /** Complete (reference, judge) pairs counted. */
  n: number;
}

/**
 * Macro-averaged precision, recall and F1 of a judge against a reference
 * labelling, for any label set.
 *
 * Definition: for each label ℓ of the set L (default: the union of the labels
 * present in either sequence, sorted), one against the rest: P_ℓ = TP/(TP+FP),
 * R_ℓ = TP/(TP+FN), F_ℓ = 2·P_ℓ·R_ℓ/(P_ℓ+R_ℓ); an undefined ratio counts as 0
 * (a label the judge never gave has P = 0, a label only the judge gave has
 * R = 0, and F = 0 whenever TP = 0). The macro averages are the plain means of
 * P_ℓ, R_ℓ and F_ℓ over L — every label weighs the same, however rare. This is
 * scikit-learn's `precision_recall_fscore_support(y_true, y_pred,
 * average="macro", zero_division=0)` (and the default `zero_division="warn"`,
 * which also counts 0). A label only the judge used (an unparseable output kept
 * as a class of its own) therefore lowers macro precision and F1.
 *
 * References: C. J. van Rijsbergen (1979) Information Retrieval, 2nd ed., ch. 7
 * (F measure); Y. Yang (1999) "An evaluation of statistical approaches to text
 * categorization", Information Retrieval 1, §5 (macro- vs micro-averaging);
 * M. Sokolova & G. Lapalme (2009) "A systematic analysis of performance
 * measures for classification tasks", Inf. Process. Manage. 45(4), Table 3.
 *
 * Preconditions: equal lengths; pairs with a missing value are dropped;
 * `labels`, when given, fixes the set and order and must contain every present
 * value. With no complete pair, every average is NaN.
 *
 * @throws {Error} "macroPrecisionRecallF1: ..." for a length mismatch, a value not in `labels`, or invalid values
 * @example
 * macroPrecisionRecallF1(["A", "A", "B", "tie"], ["A", "B", "B", "A"]).f1;
 * // => 0.3888888888888889 (A: P 1/2 R 1/2 F 1/2; B: P 1/2 R 1 F 2/3; tie: 0, 0, 0)
 */
export function macroPrecisionRecallF1(reference: ArrayLike<Rating>, judge: ArrayLike<Rating>, labels?: readonly Label[]): MacroPRFResult {
  let cm;
  try {
    cm = confusionMatrix(reference, judge, labels);
  } catch (e) {
    throw new Error(String((e as Error).message).replace(/^confusionMatrix:/, "macroPrecisionRecallF1:"));
  }
  const q = cm.labels.length;
  const perLabel: MacroLabelRow[] = cm.labels.map((label, k) => {
    const tp = cm.matrix[k][k];
    let support = 0;
    let predicted = 0;
    for (let i = 0; i < q; i++) {
      support += cm.matrix[k][i];
      predicted += cm.matrix[i][k];
    }
    const precision = predicted === 0 ? 0 : tp / predicted;
    const recall = support === 0 ? 0 : tp / support;
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    return { label, precision, recall, f1, support, predicted };
  });
  if (cm.n === 0 || q === 0) return { precision: NaN, recall: NaN, f1: NaN, perLabel, n: cm.n };
  let p = 0;
  let r = 0;
  let f = 0;
  for (const row of perLabel) {
    p += row.precision;
    r += row.recall;
    f += row.f1;
  }
  return { precision: p / q, recall: r / q, f1: f / q, perLabel, n: cm.n };
}
