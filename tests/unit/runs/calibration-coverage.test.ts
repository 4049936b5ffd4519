/**
 * Seeded coverage check of the calibration interval under the whole-responses
 * plan. A fixed population of 60 responses × 5 checklist items; the judge says
 * Yes to everything; the human says No to 4 of the 5 items of the responses
 * that are bad (same-direction errors clustered in a response). Each
 * replicate draws 15 responses by simple random sampling (π = 1/4) and takes
 * every item of them; the interval is the estimator's own ± 1.96·SE. With the
 * variance over sampled responses (cluster totals) the interval covers the
 * true Acc at least at the nominal rate; treating the pairs as independent
 * draws (computed here from the same samples) it does not (with these seeds:
 * 0.98 and 0.74; the Poisson form Σ (1 − π)·Z² is conservative under SRS).
 */
import { describe, expect, it } from "vitest";
import { differenceEstimate, type Draw, type Term } from "~/runs/calibration.server";
import { PERCENT } from "~/runs/protocols/calibration";
import { seededRandom } from "~/stats";

describe("whole-responses plan: interval coverage", () => {
  it("covers the true value ≥ 93% of 2,000 seeded replicates; the per-pair variance would cover < 90%", () => {
    const R = 60;
    const J = 5;
    const m = 15;
    const pi = m / R;
    const rand = seededRandom(20240);
    const bad = Array.from({ length: R }, () => rand() < 0.4);
    const a = 100 / (R * J);
    const pop: Term[] = [];
    const human = new Map<string, number>();
    for (let r = 0; r < R; r++)
      for (let j = 0; j < J; j++) {
        const key = `${r}/${j}`;
        pop.push({ key, a, f: 1, stratum: "s" });
        human.set(key, bad[r] && j < 4 ? 0 : 1);
      }
    const truth = pop.reduce((s, t) => s + t.a * human.get(t.key)!, 0);
    let covered = 0;
    let coveredPairwise = 0;
    const reps = 2000;
    const draw = seededRandom(7);
    for (let k = 0; k < reps; k++) {
      const ids = Array.from({ length: R }, (_, i) => i);
      const chosen: number[] = [];
      for (let i = 0; i < m; i++) chosen.push(ids.splice(Math.floor(draw() * ids.length), 1)[0]);
      const draws = new Map<string, Draw>();
      for (const r of chosen)
        for (let j = 0; j < J; j++) draws.set(`${r}/${j}`, { pi, stratum: "s", y: human.get(`${r}/${j}`)!, cluster: `r${r}` });
      const est = differenceEstimate(pop, draws, [0, 100]).corrected!;
      if (Math.abs(est.unclipped - truth) <= 1.96 * est.se) covered++;
      // The same estimate with each pair its own draw: SE² = Σ_pairs (1 − π)·(a·(y − f)/π)².
      let v = 0;
      for (const d of draws.values()) v += (1 - pi) * ((a * (d.y! - 1)) / pi) ** 2;
      if (Math.abs(est.unclipped - truth) <= 1.96 * Math.sqrt(v)) coveredPairwise++;
    }
    expect(covered / reps).toBeGreaterThanOrEqual(0.93);
    expect(coveredPairwise / reps).toBeLessThan(0.9);
  });
});

describe("the corrected run score's interval at the plan's default minimum of 10 labelled units (issue 36, item 9)", () => {
  // One design of `npm run bench:coverage` at a fixed seed: N = 1,000 judged units of one stratum, truth
  // Bernoulli(0.80), a judge that says Yes to every true Yes and to 90% of the true No (Yes 98%); 2,000 simple random
  // samples of n = 10 (the stratified plan, π = n/N), corrected share of Yes in % by the run page's estimator.
  it("covers the true share ≥ 94% of 2,000 replicates and never has zero width; ± 1.96·SE covered 0.85, with 15% of them zero width", () => {
    const N = 1000;
    const n = 10;
    const rand = seededRandom(36);
    const y: number[] = [];
    const pop: Term[] = [];
    for (let i = 0; i < N; i++) {
      y.push(rand() < 0.8 ? 1 : 0);
      pop.push({ key: `${i}/-`, a: 100 / N, f: y[i] === 1 || rand() < 0.9 ? 1 : 0, stratum: "m\u00001\u0000" });
    }
    const truth = (100 * y.reduce((s, v) => s + v, 0)) / N;
    const draw = seededRandom(9);
    const reps = 2000;
    let covered = 0;
    let zero = 0;
    let coveredWald = 0;
    let zeroWald = 0;
    for (let k = 0; k < reps; k++) {
      const ids = Array.from({ length: N }, (_, i) => i);
      const draws = new Map<string, Draw>();
      for (let i = 0; i < n; i++) {
        const u = ids.splice(Math.floor(draw() * ids.length), 1)[0];
        draws.set(`${u}/-`, { pi: n / N, stratum: "m\u00001\u0000", y: y[u], cluster: `u${u}` });
      }
      const c = differenceEstimate(pop, draws, PERCENT).corrected!;
      if (c.ci[0] <= truth && truth <= c.ci[1]) covered++;
      if (c.ci[1] - c.ci[0] < 1e-9) zero++;
      // The interval shown before: the estimate ± 1.96·SE (the estimator's own design SE), clipped to 0–100.
      const lo = Math.max(0, c.unclipped - 1.96 * c.se);
      const hi = Math.min(100, c.unclipped + 1.96 * c.se);
      if (lo <= truth && truth <= hi) coveredWald++;
      if (hi - lo < 1e-9) zeroWald++;
    }
    expect(covered / reps).toBeGreaterThanOrEqual(0.94);
    expect(zero).toBe(0);
    expect(coveredWald / reps).toBeLessThan(0.9);
    expect(zeroWald / reps).toBeGreaterThan(0.1);
  });
});
