import { confusionMatrix } from "./confusionMatrix";
import type { Rating } from "./types";

/**
 * Accuracy of a judge against human labels: the share of items on which they agree.
 *
 * Definition: accuracy = #{judge = human} / n over complete pairs (the trace of
 * the confusion matrix over its total); scikit-learn `accuracy_score`.
 *
 * Reference: any classification text, e.g. T. Fawcett (2006) "An introduction
 * to ROC analysis", Pattern Recognit. Lett. 27(8).
 *
 * Preconditions: equal lengths; pairs with a missing label are dropped. NaN
 * when no complete pair remains.
 *
 * @throws {Error} "accuracy: ..." for a length mismatch or invalid values
 * @example
 * accuracy(["y", "y", "n", "n"], ["y", "n", "n", "n"]); // => 0.75
 */
export function accuracy(human: ArrayLike<Rating>, judge: ArrayLike<Rating>): number {
  let cm;
  try {
    cm = confusionMatrix(human, judge);
  } catch (e) {
    throw new Error(String((e as Error).message).replace(/^confusionMatrix:/, "accuracy:"));
  }
  if (cm.n === 0) return NaN;
  let hit = 0;
  for (let i = 0; i < cm.labels.length; i++) hit += cm.matrix[i][i];
  return hit / cm.n;
}
