/**
 * clusterBootstrapCIs and the humans-differing consistency (issue 41). Expected values are written
 * out here: the draws follow the documented order (cluster ⌊U·G⌋ from seededRandom(seed)), so a
 * loop over the same generator gives the same resamples; the consistency counts are enumerated.
 */
import { describe, expect, it } from "vitest";
import { clusterBootstrapCIs } from "../../../app/stats/clusterBootstrapCIs";
import { pairwiseOrderingConsistency } from "../../../app/stats/pairwiseOrderingConsistency";
import { seededRandom } from "../../../app/stats/seededRandom";

describe("clusterBootstrapCIs", () => {
  it("draws G clusters per resample in the documented order; type-6 percentile limits", () => {
    const v = [1, 2, 6, 3, 10];
    const mean = (w: Int32Array) => w.reduce((s, x, c) => s + x * v[c], 0) / 5;
    const [r] = clusterBootstrapCIs({ clusters: 5, seed: 3, resamples: 200, statistics: [mean] });
    expect(r.estimate).toBe(22 / 5);
    const random = seededRandom(3);
    const values: number[] = [];
    for (let b = 0; b < 200; b++) {
      let s = 0;
      for (let i = 0; i < 5; i++) s += v[Math.floor(random() * 5)];
      values.push(s / 5);
    }
    values.sort((a, b) => a - b);
    // (B+1)·0.025 = 5.025 → x(5) + 0.025·(x(6) − x(5)); (B+1)·0.975 = 195.975.
    expect(r.ci[0]).toBeCloseTo(values[4] + 0.025 * (values[5] - values[4]), 12);
    expect(r.ci[1]).toBeCloseTo(values[194] + 0.975 * (values[195] - values[194]), 12);
  });

  it("a statistic that is undefined on a resample is left out and counted", () => {
    const [r] = clusterBootstrapCIs({ clusters: 2, seed: 1, resamples: 100, statistics: [(w) => (w[0] > 0 ? 1 : NaN)] });
    expect(r.undefinedResamples).toBeGreaterThan(0);
    expect(r.undefinedResamples).toBeLessThan(100);
  });

  it("refuses bad options with its name", () => {
    expect(() => clusterBootstrapCIs({ clusters: 0, seed: 1, statistics: [() => 1] })).toThrow(/^clusterBootstrapCIs: clusters/);
    expect(() => clusterBootstrapCIs({ clusters: 2, seed: NaN, statistics: [() => 1] })).toThrow(/^clusterBootstrapCIs: seed/);
  });
});

describe("pairwiseOrderingConsistency: humans differing (RAVEL §5.5)", () => {
  it("counts the pairs the humans order, a judge tie inconsistent", () => {
    // Item a: humans 5, 3, 3, 1; judge 9, 6, 6, 6. Pairs (h sign, g sign):
    // (5,3) +,+ ; (5,3) +,+ ; (5,1) +,+ ; (3,3) 0,0 ; (3,1) +,0 ; (3,1) +,0.
    const r = pairwiseOrderingConsistency([
      { itemId: "a", human: 5, judge: 9 },
      { itemId: "a", human: 3, judge: 6 },
      { itemId: "a", human: 3, judge: 6 },
      { itemId: "a", human: 1, judge: 6 },
    ]);
    expect([r.pairs, r.consistentWithTies]).toEqual([6, 4]);
    expect([r.pairsWithoutTies, r.consistentWithoutTies]).toEqual([3, 3]);
    expect([r.pairsHumanDiffering, r.consistentHumanDiffering]).toEqual([5, 3]);
    expect([r.withTies, r.withoutTies, r.humanDiffering]).toEqual([4 / 6, 1, 3 / 5]);
  });
});
