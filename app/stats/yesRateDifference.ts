import type { Label, Rating } from "./types";

/** Result of {@link yesRateDifference}. */
export interface YesRateDifferenceResult {
  /** Share of complete pairs the humans labelled `yes`. */
  humanYesRate: number;
  /** Share of complete pairs the judge labelled `yes`. */
  judgeYesRate: number;
  /** judgeYesRate - humanYesRate: > 0 means the judge says "Yes" more often (leniency). */
  difference: number;
  /** Complete pairs. */
  n: number;
}

/**
 * Difference between the judge's and the humans' rate of "Yes" verdicts on
 * the same items: a judge's leniency (positive) or strictness (negative).
 *
 * Definition: (1/n) Σ [judge_i = yes] - (1/n) Σ [human_i = yes] over the n
 * complete pairs. Equals (FP - FN)/n.
 *
 * Reference: the "Yes-rate"/positive-rate bias of a judge, e.g. L. Zheng et al.
 * (2023) "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena" (judge biases).
 *
 * Preconditions: equal lengths; pairs with a missing label are dropped; NaN
 * rates when n = 0.
 *
 * @throws {Error} "yesRateDifference: ..." for a length mismatch or NaN/Infinity
 * @example
 * yesRateDifference(["Yes", "No", "No", "No"], ["Yes", "Yes", "No", "No"]); // => { humanYesRate: 0.25, judgeYesRate: 0.5, difference: 0.25, n: 4 }
 */
export function yesRateDifference(human: ArrayLike<Rating>, judge: ArrayLike<Rating>, yes: Label = "Yes"): YesRateDifferenceResult {
  const fn = "yesRateDifference";
  if (human == null || judge == null || typeof human.length !== "number" || typeof judge.length !== "number")
    throw new Error(`${fn}: human and judge must be arrays`);
  if (human.length !== judge.length)
    throw new Error(`${fn}: human and judge must have the same length (got ${human.length} and ${judge.length})`);
  let n = 0;
  let h = 0;
  let j = 0;
  for (let i = 0; i < human.length; i++) {
    const a = human[i];
    const b = judge[i];
    for (const v of [a, b])
      if (typeof v === "number" && !Number.isFinite(v)) throw new Error(`${fn}: non-finite value ${String(v)} at index ${i}`);
    if (a === null || a === undefined || b === null || b === undefined) continue;
    n++;
    if (a === yes) h++;
    if (b === yes) j++;
  }
  const humanYesRate = n === 0 ? NaN : h / n;
  const judgeYesRate = n === 0 ? NaN : j / n;
  return { humanYesRate, judgeYesRate, difference: judgeYesRate - humanYesRate, n };
}
