/**
 * The final human label of each subject, by a chosen rule. Everything
 * downstream (breakdowns, checklist quality, judge–human agreement) uses it.
 *
 * - majority: the most frequent rating; a tie leaves the subject without a
 *   final label (counted as `ties`, never guessed).
 * - mean: the mean of numeric ratings (RAVEL's final score is the mean of two
 *   annotators); for nominal labels there is no mean and majority is used.
 * - adjudication: the adjudicator's label from the task's adjudication store
 *   (tasks.config.adjudications, keyed by unit id) where there is one;
 *   majority elsewhere.
 */
import type { Label } from "~/stats";
import type { FinalLabels, FinalRule, TaskData } from "./types";

/**
 * Computed once per TaskData (keyed by its ratings array) and shared by every
 * phase of a report: final labels, per-annotator figures, bias checks, checklist.
 * Callers only read the result.
 */
const bySubjectCache = new WeakMap<TaskData["ratings"], { subjects: number; start: Int32Array; idx: Int32Array }>();

/** Ratings grouped by subject: offsets into a flat array of rating indices. */
export function ratingsBySubject(data: TaskData): { start: Int32Array; idx: Int32Array } {
  const hit = bySubjectCache.get(data.ratings);
  if (hit && hit.subjects === data.subjects.length && hit.idx.length === data.ratings.length) return hit;
  const S = data.subjects.length;
  const start = new Int32Array(S + 1);
  const of = data.ratings.s;
  for (let i = 0; i < of.length; i++) start[of[i] + 1]++;
  for (let s = 0; s < S; s++) start[s + 1] += start[s];
  const fill = start.slice(0, S);
  const idx = new Int32Array(data.ratings.length);
  for (let i = 0; i < of.length; i++) idx[fill[of[i]]++] = i;
  bySubjectCache.set(data.ratings, { subjects: S, start, idx });
  return { start, idx };
}

/** The unique most frequent value, or null on a tie (or no values). */
export function majority(values: readonly Label[]): Label | null {
  if (values.length === 0) return null;
  if (values.length === 1) return values[0];
  // Two values (k = 2, the common overlap): agreement or a tie, without a count map.
  if (values.length === 2) return values[0] === values[1] ? values[0] : null;
  const counts = new Map<Label, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: Label | null = null;
  let bestN = 0;
  let tie = false;
  for (const [v, n] of counts) {
    if (n > bestN) {
      best = v;
      bestN = n;
      tie = false;
    } else if (n === bestN) tie = true;
  }
  return tie ? null : best;
}

export function finalLabels(data: TaskData, rule: FinalRule): FinalLabels {
  const { start, idx } = ratingsBySubject(data);
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const values: (Label | null)[] = new Array(data.subjects.length).fill(null);
  let ties = 0;
  let adjudicated = 0;
  let note: string | null = null;
  if (rule === "mean" && !numeric) note = "The mean needs numeric labels; these labels are nominal, so the majority rule is used.";
  if (rule === "adjudication") {
    const any = data.subjects.some((s) => s.adjudicated !== null);
    note = any
      ? "Adjudicated labels where an adjudicator decided the unit; majority elsewhere."
      : "No unit of this task has been adjudicated yet; the majority rule is used for every unit.";
  }
  const vals: Label[] = [];
  for (let s = 0; s < data.subjects.length; s++) {
    vals.length = 0;
    for (let k = start[s]; k < start[s + 1]; k++) vals.push(data.ratings.value[idx[k]]);
    if (rule === "adjudication" && data.subjects[s].adjudicated !== null) {
      values[s] = data.subjects[s].adjudicated;
      adjudicated++;
      continue;
    }
    if (vals.length === 0) continue;
    if (rule === "mean" && numeric) {
      values[s] = vals.reduce<number>((a, b) => a + Number(b), 0) / vals.length;
      continue;
    }
    const m = majority(vals);
    if (m === null) ties++;
    values[s] = m;
  }
  return { rule, values, ties, adjudicated, note };
}
