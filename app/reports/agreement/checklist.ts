/** Checklist appropriateness: the share of checklist items whose final label is Yes, overall and per domain, in the paper's wording. */
import { ratingsBySubject } from "../finalLabels";
import type { Estimate, FinalLabels, TaskData } from "../types";
import { proportionEstimate, SMALL_N } from "./intervals";

export interface ChecklistReport {
  overall: { yes: number; n: number; share: Estimate };
  perDomain: { domain: string; yes: number; n: number; share: Estimate; small: boolean }[];
  /** Subjects judged inappropriate (final label "No"). */
  inappropriate: { s: number; itemId: number; checklistItemId: number; domain: string | null; yesVotes: number; noVotes: number }[];
  undecided: number;
}

export function checklistAppropriateness(data: TaskData, final: FinalLabels): ChecklistReport {
  const { start, idx } = ratingsBySubject(data);
  const yesFlags: number[] = [];
  const byDomain = new Map<string, number[]>();
  const inappropriate: ChecklistReport["inappropriate"] = [];
  let undecided = 0;
  data.subjects.forEach((s, i) => {
    const f = final.values[i];
    if (start[i + 1] === start[i] && f == null) return;
    if (f == null) {
      undecided++;
      return;
    }
    const y = f === "Yes" ? 1 : 0;
    yesFlags.push(y);
    const d = s.domain ?? "(none)";
    (byDomain.get(d) ?? byDomain.set(d, []).get(d)!).push(y);
    if (!y && s.checklistItemId != null) {
      let yesVotes = 0;
      let noVotes = 0;
      for (let k = start[i]; k < start[i + 1]; k++) data.ratings.value[idx[k]] === "Yes" ? yesVotes++ : noVotes++;
      inappropriate.push({ s: i, itemId: s.itemId, checklistItemId: s.checklistItemId, domain: s.domain, yesVotes, noVotes });
    }
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    overall: { yes: sum(yesFlags), n: yesFlags.length, share: proportionEstimate(yesFlags) },
    perDomain: [...byDomain]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([domain, ys]) => ({ domain, yes: sum(ys), n: ys.length, share: proportionEstimate(ys), small: ys.length < SMALL_N })),
    inappropriate,
    undecided,
  };
}

/** "821 of 854 (96.1%)" */
export function paperShare(yes: number, n: number): string {
  return n === 0 ? "0 of 0 (n/a)" : `${yes} of ${n} (${((100 * yes) / n).toFixed(1)}%)`;
}
