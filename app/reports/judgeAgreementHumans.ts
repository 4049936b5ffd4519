/** The human ceiling of the judge–human table: annotators against each other (MT-Bench Table 2). */
// Each statistic from its own file (not the ~/stats index): the command line loads only what it uses.
import { countsBootstrapCIs } from "~/stats/countsBootstrapCI";
import { cohenKappa } from "~/stats/cohenKappa";
import { wilsonCI } from "~/stats/wilsonCI";
import { honestInterval } from "./honest";
import { finiteOrNull, interval } from "./judgeAgreementIntervals";
import { strictMajority, type Reference } from "./judgeAgreementLabels";
import type { JudgeAgreementInput, JudgeAgreementOptions, JudgeAgreementResult } from "./judgeAgreementTypes";

export function humanBaseline(
  input: JudgeAgreementInput,
  reference: Reference,
  options: JudgeAgreementOptions,
): JudgeAgreementResult["humans"] {
  const a: string[] = [];
  const b: string[] = [];
  // Per unit with pairs: its agreeing pairs and its pairs (each pair once), for the interval.
  const unitHits: number[] = [];
  const unitPairs: number[] = [];
  for (const row of input.labels) {
    const start = a.length;
    if (reference === "each") {
      for (let x = 0; x < row.length; x++) {
        const lx = row[x];
        if (lx === null) continue;
        for (let y = x + 1; y < row.length; y++) {
          const ly = row[y];
          if (ly === null) continue;
          a.push(lx, ly);
          b.push(ly, lx);
        }
      }
    } else {
      for (let i = 0; i < row.length; i++) {
        const l = row[i];
        if (l === null) continue;
        const others = strictMajority(row, i);
        if (others === null) continue;
        a.push(others);
        b.push(l);
      }
    }
    if (a.length === start) continue;
    let h = 0;
    for (let i = start; i < a.length; i++) if (a[i] === b[i]) h++;
    const per = reference === "each" ? 2 : 1;
    unitHits.push(h / per);
    unitPairs.push((a.length - start) / per);
  }
  if (a.length === 0) return null;
  let hits = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) hits++;
  // Each annotator–unit pair counts once (in "each", every pair twice: n is the number of label pairs).
  const n = reference === "each" ? a.length / 2 : a.length;
  // A unit's pairs share its annotators' labels, so they are not independent: where a unit gives
  // more than one pair, the interval is a seeded percentile bootstrap over units (as the judges'
  // under reference "each"); with one pair per unit, Wilson's.
  let accuracyCI = interval(wilsonCI(reference === "each" ? hits / 2 : hits, n));
  const B = options.resamples ?? 1000;
  if (unitPairs.some((x) => x > 1)) {
    accuracyCI = null;
    if (B > 0 && unitPairs.length > 1) {
      // Units with the same (agreeing, pairs) are interchangeable: one pattern each.
      const patternIndex = new Map<string, number>();
      const hitsOf: number[] = [];
      const pairsOf: number[] = [];
      const counts: number[] = [];
      const patternOfUnit = new Int32Array(unitPairs.length);
      unitPairs.forEach((m, u) => {
        const key = `${unitHits[u]}/${m}`;
        let p = patternIndex.get(key);
        if (p === undefined) {
          p = counts.length;
          patternIndex.set(key, p);
          hitsOf.push(unitHits[u]);
          pairsOf.push(m);
          counts.push(0);
        }
        counts[p]++;
        patternOfUnit[u] = p;
      });
      const [acc] = countsBootstrapCIs({
        counts,
        patternOfUnit,
        resamples: B,
        seed: options.seed ?? 1,
        statistics: [
          (w) => {
            let h = 0;
            let m = 0;
            for (let p = 0; p < w.length; p++) {
              h += w[p] * hitsOf[p];
              m += w[p] * pairsOf[p];
            }
            return m ? h / m : NaN;
          },
        ],
      });
      accuracyCI = honestInterval(hits / a.length, interval(acc.ci), [0, 1]).ci;
    }
  }
  return {
    n,
    accuracy: hits / a.length,
    accuracyCI,
    cohenKappa: finiteOrNull(cohenKappa(a, b).kappa),
  };
}
