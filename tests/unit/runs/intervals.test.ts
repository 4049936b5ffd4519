/**
 * Results-page intervals stay inside the metric's range. Self-Correction Bench
 * accuracy (a proportion) uses Wilson's score interval; the blind spot
 * (≤ 1 by definition) keeps the authors' delta-method interval with its upper
 * end clipped at 1, and says so.
 */
import { describe, expect, it } from "vitest";
import { blindSpot } from "~/stats";
import { selfCorrectionMetrics, type ScObservation } from "~/runs/protocols/self-correction";

function obsOf(cells: { dataset: string; condition: "internal" | "external"; correct: number; n: number }[]): ScObservation[] {
  const out: ScObservation[] = [];
  for (const c of cells)
    for (let i = 0; i < c.n; i++) out.push({ model: "m", dataset: c.dataset, condition: c.condition, correct: i < c.correct, reply: "" });
  return out;
}

describe("Self-Correction intervals stay in range", () => {
  it("19 of 20 correct: Wilson [0.764, 0.991], not mean ± 1.96·SEM = [0.852, 1.048]", () => {
    const [m] = selfCorrectionMetrics(
      obsOf([
        { dataset: "D", condition: "internal", correct: 19, n: 20 },
        { dataset: "D", condition: "external", correct: 20, n: 20 },
      ]),
    );
    const acc = m.datasets[0].byCondition.internal!;
    // By hand (z = 1.96, n = 20, p = 0.95): centre = (0.95 + 1.9208/20)/(1 + 3.8416/20), half = 1.96/(1 + 3.8416/20)·√(0.95·0.05/20 + 3.8416/1600).
    const z = 1.96;
    const n = 20;
    const p = 0.95;
    const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
    expect(acc.mean).toBe(0.95);
    expect(acc.ci[0]).toBeCloseTo(centre - half, 12);
    expect(acc.ci[1]).toBeCloseTo(centre + half, 12);
    // scipy 1.10.1, binomtest(19, 20).proportion_ci(method="wilson") (exact normal quantile): (0.763868806553258, 0.9911185511992047).
    expect(acc.ci[0]).toBeCloseTo(0.763868806553258, 4);
    expect(acc.ci[1]).toBeCloseTo(0.9911185511992047, 4);
    // The paper's SEM is still given: s/√N with s the sample sd, s² = N·p(1 − p)/(N − 1).
    expect(acc.sem).toBeCloseTo(Math.sqrt((20 * 0.95 * 0.05) / 19) / Math.sqrt(20), 12);
    // 20 of 20: [0.839, 1], never above 1.
    const full = m.datasets[0].byCondition.external!;
    expect(full.ci[1]).toBeLessThanOrEqual(1);
    expect(full.ci[0]).toBeCloseTo(1 / (1 + (z * z) / n), 12); // p = 1: centre − half = 1/(1 + z²/n)
  });

  it("the blind spot's upper end is clipped at 1 and flagged; its lower end and the point stay as the delta method gives", () => {
    // p_I = 1/20, p_E = 19/20: value = 1 − 1/19; Var = SEM_I²/p_E² + p_I²·SEM_E²/p_E⁴ with SEM² = p(1 − p)/(N − 1).
    const pI = 1 / 20;
    const pE = 19 / 20;
    const se = Math.sqrt((pI * (1 - pI)) / 19 / pE ** 2 + (pI ** 2 * ((pE * (1 - pE)) / 19)) / pE ** 4);
    const value = 1 - pI / pE;
    expect(value + 1.96 * se).toBeGreaterThan(1); // the unclipped interval leaves the range
    const b = blindSpot({ internalCorrect: 1, internalN: 20, externalCorrect: 19, externalN: 20 });
    expect(b.value).toBeCloseTo(value, 14);
    expect(b.se).toBeCloseTo(se, 14);
    expect(b.ci).toEqual([expect.closeTo(value - 1.96 * se, 12), 1]);
    expect(b.clipped).toBe(true);
    const [m] = selfCorrectionMetrics(
      obsOf([
        { dataset: "D", condition: "internal", correct: 1, n: 20 },
        { dataset: "D", condition: "external", correct: 19, n: 20 },
      ]),
    );
    expect(m.datasets[0].blindSpot).toMatchObject({ ci: [expect.closeTo(value - 1.96 * se, 12), 1], clipped: true });
    // Well inside the range: nothing clipped.
    expect(blindSpot({ internalCorrect: 30, internalN: 100, externalCorrect: 80, externalN: 100 }).clipped).toBe(false);
  });
});
