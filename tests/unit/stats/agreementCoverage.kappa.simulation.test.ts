/**
 * Coverage of Cohen's kappa (two raters) and pooled-pairs kappa (three raters) intervals,
 * analytic and bootstrap, at realistic n: see agreementCoverage.ts for the model and seeds.
 */
import { describe, expect, it } from "vitest";
import { CASES, Q, checkCoverage, model, pooledTable, report, seedFor } from "./agreementCoverage";
import { cohenKappaFromTable, multinomialSample, patternStatistics, seededRandom } from "~/stats";

describe("coverage of kappa intervals at realistic n (seeded simulations)", () => {
  it.each([[CASES[0].name, 0] as const, [CASES[1].name, 1] as const])(
    "%s: analytic and bootstrap 95 percent intervals cover the true value 93 to 97 percent of the time",
    (_name, index) => checkCoverage(index),
  );

  it("the pooled pairs of a unit are not independent: the cluster-robust SE is wider than the pairs-as-independent (FCE) SE", () => {
    const { patterns, probs } = model(3);
    const stats = patternStatistics(patterns);
    const random = seededRandom(seedFor(77));
    const w = new Float64Array(probs.length);
    let ratio = 0;
    const R = 200;
    for (let rep = 0; rep < R; rep++) {
      multinomialSample(100, probs, random, w);
      const fce = cohenKappaFromTable({ counts: pooledTable(stats, 3, w), q: Q });
      const clustered = CASES[1].analytic(stats, w, patterns);
      ratio += (clustered[1] - clustered[0]) / (fce.ci[1] - fce.ci[0]) / R;
    }
    report("clustered / FCE width, pooled pairs", ratio);
    expect(ratio).toBeGreaterThan(1.1);
  });
});
