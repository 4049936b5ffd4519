import { confusionMatrix } from "./confusionMatrix";
import type { Label, Rating } from "./types";

/** One row of {@link perLabelMetrics}. */
export interface LabelMetrics {
  label: Label;
  /** TP / (TP + FP); NaN when the judge never gave this label. */
  precision: number;
  /** TP / (TP + FN); NaN when the humans never gave this label. */
  recall: number;
  /** 2TP / (2TP + FP + FN) (harmonic mean of precision and recall); NaN when TP + FP + FN = 0. */
  f1: number;
  /** Items the humans gave this label (TP + FN). */
  support: number;
  /** Items the judge gave this label (TP + FP). */
  predicted: number;
}

/**
 * Precision, recall and F1 of a judge for each label, with the human label as truth.
 *
 * Definition (one-vs-rest per label ℓ): TP = human ℓ and judge ℓ; FP = judge ℓ,
 * human not ℓ; FN = human ℓ, judge not ℓ. precision = TP/(TP+FP),
 * recall = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN). Undefined ratios are NaN (where
 * scikit-learn's `precision_recall_fscore_support` reports 0 with a warning).
 *
 * Reference: C. J. van Rijsbergen (1979) Information Retrieval, 2nd ed., ch. 7.
 *
 * Preconditions: equal lengths; pairs with a missing label are dropped;
 * `labels` fixes the order and must contain every present value.
 *
 * @throws {Error} "perLabelMetrics: ..." for a length mismatch or invalid values
 * @example
 * perLabelMetrics(["y", "y", "n", "n"], ["y", "n", "n", "n"])[1];
 * // => { label: "y", precision: 1, recall: 0.5, f1: 0.6666666666666666, support: 2, predicted: 1 }
 */
export function perLabelMetrics(human: ArrayLike<Rating>, judge: ArrayLike<Rating>, labels?: readonly Label[]): LabelMetrics[] {
  let cm;
  try {
    cm = confusionMatrix(human, judge, labels);
  } catch (e) {
    throw new Error(String((e as Error).message).replace(/^confusionMatrix:/, "perLabelMetrics:"));
  }
  const q = cm.labels.length;
  return cm.labels.map((label, k) => {
    const tp = cm.matrix[k][k];
    let support = 0;
    let predicted = 0;
    for (let i = 0; i < q; i++) {
      support += cm.matrix[k][i];
      predicted += cm.matrix[i][k];
    }
    const fp = predicted - tp;
    const fn = support - tp;
    return {
      label,
      precision: predicted === 0 ? NaN : tp / predicted,
      recall: support === 0 ? NaN : tp / support,
      f1: 2 * tp + fp + fn === 0 ? NaN : (2 * tp) / (2 * tp + fp + fn),
      support,
      predicted,
    };
  });
}
