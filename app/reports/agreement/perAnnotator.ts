/** Per annotator: labels, agreement with the majority of the others (leave-one-out), gold accuracy, time spent, label distribution. */
import { quantileSorted } from "~/stats";
import type { Estimate, TaskData } from "../types";
import { meanEstimate, proportionEstimate, proportionOf } from "./intervals";
import { countedMatrix, reliabilityMatrix } from "./matrix";

export interface AnnotatorRow {
  id: number;
  name: string;
  ratings: number;
  annotations: number;
  /** Agreement with the majority of the other annotators (leave-one-out); ties among the others excluded. */
  looAgreement: Estimate;
  gold: Estimate;
  medianMs: number | null;
  meanMs: Estimate;
  distribution: Record<string, number>;
}

export function perAnnotator(data: TaskData): AnnotatorRow[] {
  const m = reliabilityMatrix(data, data.labelKind === "ordinal" || data.labelKind === "interval");
  const { counts, ratingsPerUnit, q } = countedMatrix(m);
  // Per annotator (matrix column): ratings, label distribution, and leave-one-out agreement —
  // the unique most frequent label among the unit's other ratings (its counts less this
  // rating), as `majority` of the others; units where the others tie are left out.
  const byAnnotator = new Map<number, { looHits: number; looN: number; ratings: number; dist: Record<string, number> }>();
  m.annotators.forEach((id, g) => {
    const e = { looHits: 0, looN: 0, ratings: 0, dist: Object.fromEntries(data.categories.map((c) => [String(c), 0])) };
    byAnnotator.set(id, e);
    const column = m.codes[g];
    for (let u = 0; u < column.length; u++) {
      const c = column[u];
      if (c < 0) continue;
      e.ratings++;
      e.dist[String(m.categories[c])]++;
      if (ratingsPerUnit[u] < 2) continue;
      let best = -1;
      let bestN = 0;
      let tie = false;
      for (let k = 0; k < q; k++) {
        const n = counts[u * q + k] - (k === c ? 1 : 0);
        if (n > bestN) {
          best = k;
          bestN = n;
          tie = false;
        } else if (n > 0 && n === bestN) tie = true;
      }
      if (best < 0 || tie) continue;
      e.looN++;
      if (best === c) e.looHits++;
    }
  });
  const durations = new Map<number, number[]>();
  const gold = new Map<number, number[]>();
  const annCount = new Map<number, number>();
  const an = data.annotations;
  for (let i = 0; i < an.length; i++) {
    const who = an.annotator[i];
    annCount.set(who, (annCount.get(who) ?? 0) + 1);
    if (!Number.isNaN(an.durationMs[i])) (durations.get(who) ?? durations.set(who, []).get(who)!).push(an.durationMs[i]);
    if (an.goldCorrect[i] >= 0) (gold.get(who) ?? gold.set(who, []).get(who)!).push(an.goldCorrect[i]);
  }
  return data.annotators.map((a) => {
    const e = byAnnotator.get(a.id)!;
    const d = Float64Array.from(durations.get(a.id) ?? []).sort(); // numeric sort of a typed array: no comparator
    return {
      id: a.id,
      name: a.name,
      ratings: e.ratings,
      annotations: annCount.get(a.id) ?? 0,
      looAgreement: proportionOf(e.looHits, e.looN),
      gold: proportionEstimate(gold.get(a.id) ?? []),
      medianMs: d.length ? quantileSorted(d, 0.5) : null,
      meanMs: meanEstimate(d),
      distribution: e.dist,
    };
  });
}
