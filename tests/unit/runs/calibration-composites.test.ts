/**
 * Corrected metrics made of other corrected metrics: FB-Bench's overall score (the mean of two scenarios) and
 * Self-Correction Bench's blind spot (1 − P_internal/P_external, Eq. 2). Their intervals come from the parts'
 * intervals by MOVER (Zou & Donner 2008; Newcombe 2016 for the ratio), so they have width whenever a part does;
 * the expected values are computed here from the MOVER definitions.
 */
import { describe, expect, it } from "vitest";
import { BLIND_SPOT, corrected, meanOfCorrected, oneMinusRatio, PERCENT, PROPORTION } from "~/runs/protocols/calibration";

const part = (estimate: number, se: number, n: number, ci: [number, number], range: [number, number]) =>
  corrected(estimate, se, n, ci, range, { exact: false, bounded: 0 });

describe("composite corrected metrics", () => {
  it("the mean of two corrected scores: MOVER for ½θ₁ + ½θ₂, the SE √(SE₁² + SE₂²)/2", () => {
    const m = meanOfCorrected([part(60, 5, 10, [50, 68], PERCENT), part(40, 4, 12, [33, 49], PERCENT)], PERCENT);
    expect(m.estimate).toBeCloseTo(50, 12);
    // Lower: ½·(60 − 50) and ½·(40 − 33); upper: ½·(68 − 60) and ½·(49 − 40), each added in quadrature.
    expect(m.ci[0]).toBeCloseTo(50 - Math.hypot(5, 3.5), 12);
    expect(m.ci[1]).toBeCloseTo(50 + Math.hypot(4, 4.5), 12);
    expect(m.se).toBeCloseTo(Math.sqrt(25 + 16) / 2, 12);
    expect(m).toMatchObject({ n: 22, exact: false, bounded: 0 });
    // Two exact parts: exact.
    const e = corrected(100, 0, 12, [100, 100], PERCENT, { exact: true, bounded: 0 });
    expect(meanOfCorrected([e, e], PERCENT)).toMatchObject({ estimate: 100, ci: [100, 100], exact: true });
  });

  it("the blind spot 1 − θ₁/θ₂: the ratio's MOVER-R limits (found here by bisection) turned around; none when θ₂'s interval reaches 0", () => {
    const num = part(0.3, 0.05, 10, [0.2, 0.42], PROPORTION);
    const den = part(0.6, 0.06, 10, [0.48, 0.7], PROPORTION);
    const b = oneMinusRatio(num, den, BLIND_SPOT)!;
    const bisect = (g: (r: number) => number, lo: number, hi: number) => {
      for (let i = 0; i < 200; i++) {
        const mid = (lo + hi) / 2;
        if (g(lo) * g(mid) <= 0) hi = mid;
        else lo = mid;
      }
      return (lo + hi) / 2;
    };
    // The ratio's limits: where the MOVER interval of θ₁ − R·θ₂ just reaches 0 from above (lower) or below (upper).
    const rLow = bisect((r) => 0.3 - r * 0.6 - Math.hypot(0.3 - 0.2, r * (0.7 - 0.6)), 0, 0.5);
    const rHigh = bisect((r) => 0.3 - r * 0.6 + Math.hypot(0.42 - 0.3, r * (0.6 - 0.48)), 0.5, 10);
    expect(b.estimate).toBeCloseTo(0.5, 12);
    expect(b.ci[0]).toBeCloseTo(1 - rHigh, 10);
    expect(b.ci[1]).toBeCloseTo(1 - rLow, 10);
    // Delta method: Var = SE₁²/θ₂² + θ₁²·SE₂²/θ₂⁴.
    expect(b.se).toBeCloseTo(Math.sqrt(0.05 ** 2 / 0.36 + (0.09 * 0.06 ** 2) / 0.6 ** 4), 12);
    expect(b.ci[1] - b.ci[0]).toBeGreaterThan(0.2);
    expect(oneMinusRatio(num, part(0.1, 0.06, 10, [0, 0.3], PROPORTION), BLIND_SPOT)).toBeNull();
  });
});
