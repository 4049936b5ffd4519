/** The intervals of the judge–human table: the unit bootstrap and the helpers that keep an interval finite. */
// Each statistic from its own file (not the ~/stats index): the command line loads only what it uses.
import { countsBootstrapCIs } from "~/stats/countsBootstrapCI";
import { cohenKappaFromTable } from "~/stats/cohenKappaFromTable";

export const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);
export const interval = (ci: readonly number[] | null | undefined): [number, number] | null =>
  ci && Number.isFinite(ci[0]) && Number.isFinite(ci[1]) ? [ci[0], ci[1]] : null;

/**
 * Percentile bootstraps over units of macro precision, recall and F1 and, with `clustered`
 * (reference "each"), of accuracy, Cohen's kappa and (given the scale, `weightedScale`) the
 * quadratic-weighted kappa: units are resampled, a unit's pairs together (a cluster bootstrap:
 * Davison & Hinkley 1997, §3.8; Field & Welsh 2007 for the cluster case). Every one of these
 * depends only on the confusion table, so units with the same pairs (the same pattern) are
 * interchangeable: countsBootstrapCI draws the units per pattern (the units themselves on small
 * data, with the row bootstrap's draws; one multinomial draw over the few patterns on large data),
 * and each resample's table is the patterns' tables weighted by their draws. All the statistics
 * share the resamples (the macro ones are the same whether or not the others are drawn).
 */
export function unitBootstrap(
  ref: string[],
  jud: string[],
  unitOf: number[],
  index: Map<string, number>,
  B: number,
  seed: number,
  clustered: boolean,
  weightedScale: string[] | null,
): Record<"precision" | "recall" | "f1" | "accuracy" | "kappa" | "weightedKappa", [number, number] | null> {
  const q = index.size;
  const n = ref.length;
  // Units in order of first appearance, each with its pattern (the sorted cells of its pairs).
  const patternIndex = new Map<string | number, number>();
  const patternCells: number[][] = [];
  const counts: number[] = [];
  const unitPattern: number[] = [];
  let i = 0;
  while (i < n) {
    const u = unitOf[i];
    const cells: number[] = [];
    for (; i < n && unitOf[i] === u; i++) cells.push(index.get(ref[i])! * q + index.get(jud[i])!);
    if (cells.length > 1) cells.sort((x, y) => x - y);
    const key = cells.length === 1 ? cells[0] : cells.join(",");
    let p = patternIndex.get(key);
    if (p === undefined) {
      p = patternCells.length;
      patternIndex.set(key, p);
      patternCells.push(cells);
      counts.push(0);
    }
    counts[p]++;
    unitPattern.push(p);
  }
  const table = new Float64Array(q * q);
  const patternOfUnit = Int32Array.from(unitPattern);
  // Macro precision (0), recall (1) or F1 (2) over the labels present in the resample (either side),
  // undefined ratios 0: as on the full data (scikit-learn average="macro", zero_division=0).
  const macro = (w: Float64Array, which: 0 | 1 | 2, build: boolean) => {
    if (build) {
      table.fill(0);
      for (let p = 0; p < w.length; p++) {
        if (w[p] === 0) continue;
        for (const c of patternCells[p]) table[c] += w[p];
      }
    }
    let sum = 0;
    let labels = 0;
    for (let k = 0; k < q; k++) {
      let support = 0;
      let predicted = 0;
      for (let x = 0; x < q; x++) {
        support += table[k * q + x];
        predicted += table[x * q + k];
      }
      if (support === 0 && predicted === 0) continue;
      labels++;
      const tp = table[k * q + k];
      sum += which === 0 ? (predicted ? tp / predicted : 0) : which === 1 ? (support ? tp / support : 0) : (2 * tp) / (support + predicted);
    }
    return labels ? sum / labels : NaN;
  };
  // Accuracy and Cohen's kappa of the resample's table (J. Cohen 1960: (p_o − p_e)/(1 − p_e)).
  const accuracyOf = () => {
    let total = 0;
    let hits = 0;
    for (let c = 0; c < q * q; c++) total += table[c];
    for (let k = 0; k < q; k++) hits += table[k * q + k];
    return total ? hits / total : NaN;
  };
  const kappaOf = () => cohenKappaFromTable({ counts: table, q }).kappa;
  // The weighted kappa's table: the scale's categories in order, pairs with an unparsed verdict left out (as on the full data).
  const scaleOf = weightedScale ? [...index.keys()].map((l) => weightedScale.indexOf(l)) : [];
  const S = weightedScale?.length ?? 0;
  const scaled = new Float64Array(S * S);
  const weightedOf = () => {
    scaled.fill(0);
    for (let a = 0; a < q; a++)
      for (let b = 0; b < q; b++) if (scaleOf[a] >= 0 && scaleOf[b] >= 0) scaled[scaleOf[a] * S + scaleOf[b]] += table[a * q + b];
    return cohenKappaFromTable({ counts: scaled, q: S }, { weights: "quadratic" }).kappa;
  };
  // One set of draws for all; countsBootstrapCIs calls them in order on each resample, so the
  // first (F1) builds the resample's table and the others read it.
  const statistics = [
    (w: Float64Array) => macro(w, 2, true),
    (w: Float64Array) => macro(w, 0, false),
    (w: Float64Array) => macro(w, 1, false),
  ];
  if (clustered) statistics.push(accuracyOf, kappaOf);
  if (clustered && weightedScale) statistics.push(weightedOf);
  const [f1, precision, recall, accuracy, kappa, weightedKappa] = countsBootstrapCIs({
    counts,
    patternOfUnit,
    resamples: B,
    seed,
    statistics,
  });
  return {
    precision: interval(precision.ci),
    recall: interval(recall.ci),
    f1: interval(f1.ci),
    accuracy: accuracy ? interval(accuracy.ci) : null,
    kappa: kappa ? interval(kappa.ci) : null,
    weightedKappa: weightedKappa ? interval(weightedKappa.ci) : null,
  };
}
