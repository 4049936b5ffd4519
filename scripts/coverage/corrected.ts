/**
 * Coverage and width of the corrected-score estimators (issue 38): classical, PPI, PPI++, stratified PPI++ and
 * active, each with its default interval (app/stats/correctedCore.ts correctedInterval), against the Wald
 * interval θ̂ ± z·SE of the same estimate, by simulation.
 *
 * Finite populations of N = 1,000 judged units; the target is the population's mean of Y:
 *   - skewed: Y ~ Bernoulli(0.80); the judge says Yes to every true Yes and to 90% of the true No (Yes 98%);
 *   - balanced: Y ~ Bernoulli(0.52); the judge agrees with Y with probability 0.85;
 *   - strata: two strata of unequal size and inclusion probability — A: 800 units, Y ~ B(0.85), judge 90% right;
 *     B: 200 units, Y ~ B(0.40), judge 70% right; n/2 labelled in each (π_A = n/1600, π_B = n/400);
 *   - informative: the balanced population with an uncertainty score that is high (0.9) on most of the judge's
 *     errors and low (0.1) elsewhere, each unit labelled independently with π_i = n·(½·1/N + ½·u_i/Σu)
 *     (Poisson sampling; the active plan mixed half with uniform).
 * Simple random samples of n units (per stratum in "strata") except in "informative". A new population for each
 * replicate, so the figures are over populations and samples alike.
 */
import { activePpi } from "../../app/stats/activePpi.js";
import { classicalMean } from "../../app/stats/classicalMean.js";
import type { CorrectedResult, CorrectedUnit } from "../../app/stats/correctedCore.js";
import { ppiEstimate } from "../../app/stats/ppiEstimate.js";
import { seededRandom } from "../../app/stats/seededRandom.js";
import { stratifiedPpi } from "../../app/stats/stratifiedPpi.js";

export const N = 1000;
export const SIZES = [10, 20, 40, 80];
export const DESIGNS = ["skewed", "balanced", "strata", "informative"] as const;
export type Design = (typeof DESIGNS)[number];
export const ESTIMATORS = ["classical", "ppi", "ppi++", "stratified", "active"] as const;
type Estimator = (typeof ESTIMATORS)[number];

function shuffleTake(rand: () => number, idx: number[], k: number): number[] {
  const a = idx.slice();
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rand() * (a.length - i));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, k);
}

/** One replicate's population, labelled sample, and truth. */
export function replicate(design: Design, n: number, rand: () => number): { units: CorrectedUnit[]; truth: number } {
  const units: CorrectedUnit[] = [];
  const ys: number[] = [];
  if (design === "strata") {
    for (const [h, size, p, acc] of [
      ["A", 800, 0.85, 0.9],
      ["B", 200, 0.4, 0.7],
    ] as const) {
      const first = units.length;
      for (let i = 0; i < size; i++) {
        const y = rand() < p ? 1 : 0;
        ys.push(y);
        units.push({ f: rand() < acc ? y : 1 - y, stratum: h });
      }
      const chosen = shuffleTake(
        rand,
        Array.from({ length: size }, (_, i) => first + i),
        n / 2,
      );
      for (const i of chosen) units[i].y = ys[i];
      for (let i = first; i < first + size; i++) units[i].pi = n / 2 / size;
    }
  } else {
    for (let i = 0; i < N; i++) {
      let y: number;
      let f: number;
      if (design === "skewed") {
        y = rand() < 0.8 ? 1 : 0;
        f = y === 1 || rand() < 0.9 ? 1 : 0;
      } else {
        y = rand() < 0.52 ? 1 : 0;
        f = rand() < 0.85 ? y : 1 - y;
      }
      ys.push(y);
      units.push({ f });
    }
    if (design === "informative") {
      const u = units.map((x, i) => (x.f !== ys[i] && rand() < 0.8 ? 0.9 : 0.1));
      const su = u.reduce((t, x) => t + x, 0);
      units.forEach((x, i) => {
        x.pi = Math.min(1, n * (0.5 / N + (0.5 * u[i]) / su));
        if (rand() < x.pi) x.y = ys[i];
      });
    } else {
      for (const i of shuffleTake(
        rand,
        units.map((_, i) => i),
        n,
      ))
        units[i].y = ys[i];
    }
  }
  return { units, truth: ys.reduce((t, y) => t + y, 0) / ys.length };
}

function estimate(e: Estimator, design: Design, units: CorrectedUnit[]): CorrectedResult | null {
  const uniform = design === "skewed" || design === "balanced";
  switch (e) {
    case "classical":
      return design === "informative" ? null : classicalMean(units.map((u) => ({ ...u, pi: undefined })));
    case "ppi":
      return uniform ? ppiEstimate(units, { tuned: false }) : null;
    case "ppi++":
      return uniform ? ppiEstimate(units) : null;
    case "stratified":
      return design === "strata" ? stratifiedPpi(units) : null;
    case "active":
      return activePpi(uniform ? units.map((u) => ({ ...u, pi: SIZE_OF.get(units)! / N })) : units);
  }
}
const SIZE_OF = new WeakMap<CorrectedUnit[], number>();

export type CoverageRow = {
  design: Design;
  estimator: Estimator;
  n: number;
  coverage: number;
  waldCoverage: number;
  zeroWidthWald: number;
  meanWidth: number;
};

export function correctedCoverage(opts: { replicates: number; seed: number; designs?: readonly Design[] }): CoverageRow[] {
  const rows: CoverageRow[] = [];
  for (const design of opts.designs ?? DESIGNS) {
    for (const n of SIZES) {
      const rand = seededRandom(opts.seed * 7919 + n);
      const acc = new Map<Estimator, { hit: number; wald: number; zero: number; width: number; count: number }>();
      for (let r = 0; r < opts.replicates; r++) {
        const { units, truth } = replicate(design, n, rand);
        SIZE_OF.set(units, n);
        for (const e of ESTIMATORS) {
          const res = estimate(e, design, units);
          if (!res || !res.ci) continue;
          const a = acc.get(e) ?? { hit: 0, wald: 0, zero: 0, width: 0, count: 0 };
          a.count++;
          if (res.ci[0] <= truth + 1e-12 && truth <= res.ci[1] + 1e-12) a.hit++;
          a.width += res.ci[1] - res.ci[0];
          const se = res.se ?? 0;
          if (se === 0) a.zero++;
          if (Math.abs(res.estimate - truth) <= 1.959964 * se + 1e-12) a.wald++;
          acc.set(e, a);
        }
      }
      for (const [estimator, a] of acc)
        rows.push({
          design,
          estimator,
          n,
          coverage: a.hit / a.count,
          waldCoverage: a.wald / a.count,
          zeroWidthWald: a.zero / a.count,
          meanWidth: a.width / a.count,
        });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const replicates = Number(process.argv[2] ?? 2000);
  const seed = Number(process.argv[3] ?? 1);
  const rows = correctedCoverage({ replicates, seed });
  console.log("design       estimator   n   coverage  wald   wald-0-width  mean width");
  for (const r of rows)
    console.log(
      `${r.design.padEnd(12)} ${r.estimator.padEnd(10)} ${String(r.n).padStart(3)}  ${r.coverage.toFixed(3)}    ${r.waldCoverage.toFixed(3)}  ${r.zeroWidthWald.toFixed(3)}         ${r.meanWidth.toFixed(4)}`,
    );
}
