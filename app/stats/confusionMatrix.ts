import { encodeLabels } from "./encodeLabels";
import type { Label, Rating } from "./types";

/** Result of {@link confusionMatrix}. */
export interface ConfusionMatrixResult {
  /** Label order of rows and columns. */
  labels: Label[];
  /** matrix[i][j] = number of items the human labelled labels[i] and the judge labelled labels[j]. */
  matrix: number[][];
  /** Number of complete (human, judge) pairs counted. */
  n: number;
}

/**
 * Confusion matrix of a judge against human labels, for any label set.
 *
 * Definition: C_ij = #{items : human = label_i and judge = label_j}. Rows are
 * the human (reference) labels, columns the judge's — the orientation of
 * scikit-learn `confusion_matrix(y_true, y_pred)`.
 *
 * Reference: S. V. Stehman (1997) "Selecting and interpreting measures of
 * thematic classification accuracy", Remote Sens. Environ. 62(1).
 *
 * Preconditions: equal lengths. Pairs with a missing label are dropped.
 * `labels` fixes the order (and keeps labels nobody used); every present value
 * must then be in it. Default order: sorted labels present.
 *
 * @throws {Error} "confusionMatrix: ..." for a length mismatch, a label not in
 *   `labels`, or invalid values
 * @example
 * confusionMatrix(["y", "y", "n"], ["y", "n", "n"]).matrix; // => [[1, 0], [1, 1]] (labels ["n", "y"])
 */
export function confusionMatrix(human: ArrayLike<Rating>, judge: ArrayLike<Rating>, labels?: readonly Label[]): ConfusionMatrixResult {
  const fn = "confusionMatrix";
  if (human == null || judge == null || typeof human.length !== "number" || typeof judge.length !== "number")
    throw new Error(`${fn}: human and judge must be arrays`);
  if (human.length !== judge.length)
    throw new Error(`${fn}: human and judge must have the same length (got ${human.length} and ${judge.length})`);
  const { codes, categories } = encodeLabels(fn, [human, judge], labels);
  const q = categories.length;
  const matrix = Array.from({ length: q }, () => new Array<number>(q).fill(0));
  let n = 0;
  const [h, j] = codes;
  for (let i = 0; i < h.length; i++) {
    if (h[i] < 0 || j[i] < 0) continue;
    matrix[h[i]][j[i]]++;
    n++;
  }
  return { labels: categories, matrix, n };
}
