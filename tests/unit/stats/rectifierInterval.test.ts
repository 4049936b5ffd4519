/**
 * The interval of the calibration's corrected scores and its building blocks: MOVER for sums, differences and
 * ratios, and rectifierCI. Where each expected value comes from is said next to it.
 */
import { describe, expect, it } from "vitest";
import { moverDifference, moverRatio, moverSum, rectifierCI, wilsonCI } from "~/stats";

const Z = 1.96;
/** Wilson's score interval written out (Wilson 1927), k of n, n possibly fractional. */
const wilson = (k: number, n: number, z = Z): [number, number] => {
  const p = k / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
};

describe("moverDifference", () => {
  it("with Wilson intervals and r = 0 gives Newcombe's (1998) method 10 for two independent proportions", () => {
    // R. G. Newcombe (1998) Statistics in Medicine 17, 873-890, Table II, method 10 (z = 1.959964):
    // (a) 56/70 − 48/80: 0.0524 to 0.3339; (b) 9/10 − 3/10: 0.1705 to 0.8090; (e) 5/56 − 0/29: −0.0381 to 0.1926;
    // (g) 0/10 − 0/20: −0.1611 to 0.2775; (h) 10/10 − 0/20: 0.6791 to 1.0000.
    const z = 1.959964;
    const cases: [number, number, number, number, number, number][] = [
      [56, 70, 48, 80, 0.0524, 0.3339],
      [9, 10, 3, 10, 0.1705, 0.809],
      [5, 56, 0, 29, -0.0381, 0.1926],
      [0, 10, 0, 20, -0.1611, 0.2775],
      [10, 10, 0, 20, 0.6791, 1],
    ];
    for (const [a, m, b, n, lo, hi] of cases) {
      const ci = moverDifference(a / m, wilsonCI(a, m, { z }), b / n, wilsonCI(b, n, { z }), 0);
      expect(ci[0]).toBeCloseTo(lo, 4);
      expect(ci[1]).toBeCloseTo(hi, 4);
    }
  });

  it("a negative correlation widens the interval; bad input throws naming the function", () => {
    const a = moverDifference(0.3, [0.2, 0.45], 0.1, [0.05, 0.2], 0);
    // Zou & Donner (2008) eqs. 7-8 by hand: L = 0.2 − √(0.1² + 0.1²), U = 0.2 + √(0.15² + 0.05²).
    expect(a[0]).toBeCloseTo(0.2 - Math.sqrt(0.02), 12);
    expect(a[1]).toBeCloseTo(0.2 + Math.sqrt(0.025), 12);
    const b = moverDifference(0.3, [0.2, 0.45], 0.1, [0.05, 0.2], -0.5);
    expect(b[0]).toBeCloseTo(0.2 - Math.sqrt(0.02 + 0.01), 12);
    expect(b[1]).toBeCloseTo(0.2 + Math.sqrt(0.025 + 0.0075), 12);
    expect(() => moverDifference(0.3, [0.35, 0.4], 0.1, [0, 0.2])).toThrow(/^moverDifference: /);
    expect(() => moverDifference(0.3, [0.2, 0.4], 0.1, [0, 0.2], 1.5)).toThrow(/^moverDifference: /);
  });
});

describe("moverSum", () => {
  it("reduces to Σ c·θ ± z·√(Σ c²·SE²) for symmetric intervals, and keeps asymmetric ones asymmetric", () => {
    const se = [0.05, 0.08, 0.02];
    const est = [0.4, 0.7, 0.1];
    const c = [0.5, 0.5, -1];
    const m = moverSum(est.map((e, k) => ({ estimate: e, ci: [e - Z * se[k], e + Z * se[k]] as [number, number], weight: c[k] })));
    const centre = 0.5 * 0.4 + 0.5 * 0.7 - 0.1;
    const half = Z * Math.sqrt(0.25 * 0.05 ** 2 + 0.25 * 0.08 ** 2 + 0.02 ** 2);
    expect(m.estimate).toBeCloseTo(centre, 12);
    expect(m.ci[0]).toBeCloseTo(centre - half, 12);
    expect(m.ci[1]).toBeCloseTo(centre + half, 12);
    // The JSDoc example: 0.5 [0.3, 0.6] minus 0.2 [0.1, 0.5] → [0.3 − √(0.2² + 0.3²), 0.3 + √(0.1² + 0.1²)].
    const d = moverSum([
      { estimate: 0.5, ci: [0.3, 0.6] },
      { estimate: 0.2, ci: [0.1, 0.5], weight: -1 },
    ]);
    expect(d.ci[0]).toBeCloseTo(0.3 - Math.sqrt(0.13), 12);
    expect(d.ci[1]).toBeCloseTo(0.3 + Math.sqrt(0.02), 12);
    expect(() => moverSum([])).toThrow(/^moverSum: /);
    expect(() => moverSum([{ estimate: 1, ci: [2, 3] }])).toThrow(/^moverSum: /);
  });
});

describe("moverRatio", () => {
  it("its limits are where the MOVER interval of θ₁ − R·θ₂ just reaches 0 (found here by bisection)", () => {
    const bisect = (g: (r: number) => number, lo: number, hi: number) => {
      for (let i = 0; i < 200; i++) {
        const mid = (lo + hi) / 2;
        if (g(lo) * g(mid) <= 0) hi = mid;
        else lo = mid;
      }
      return (lo + hi) / 2;
    };
    const cases: [number, [number, number], number, [number, number]][] = [
      [0.4, [0.3, 0.5], 0.8, [0.7, 0.9]],
      [0.1, [0.02, 0.3], 0.1, [0.03, 0.4]], // the denominator's upper limit beyond twice its estimate
      [0.55, [0.35, 0.72], 0.62, [0.41, 0.79]],
    ];
    for (const [e1, [l1, u1], e2, [l2, u2]] of cases) {
      // Lower limit: the lower MOVER limit of θ₁ − Rθ₂ is 0; upper limit: its upper MOVER limit is 0.
      const low = (r: number) => e1 - r * e2 - Math.sqrt((e1 - l1) ** 2 + r * r * (u2 - e2) ** 2);
      const high = (r: number) => e1 - r * e2 + Math.sqrt((u1 - e1) ** 2 + r * r * (e2 - l2) ** 2);
      const ci = moverRatio(e1, [l1, u1], e2, [l2, u2])!;
      expect(ci[0]).toBeCloseTo(bisect(low, 0, e1 / e2), 10);
      expect(ci[1]).toBeCloseTo(bisect(high, e1 / e2, 1e3), 10);
      expect(ci[0]).toBeLessThanOrEqual(e1 / e2);
      expect(ci[1]).toBeGreaterThanOrEqual(e1 / e2);
    }
    // Exact inputs give the exact ratio; a denominator whose interval reaches 0 gives no interval.
    expect(moverRatio(0.4, [0.4, 0.4], 0.8, [0.8, 0.8])).toEqual([0.5, 0.5]);
    expect(moverRatio(0.4, [0.3, 0.5], 0.1, [0, 0.3])).toBeNull();
    expect(() => moverRatio(0.4, [0.3, 0.5], 0, [0, 0])).toThrow(/^moverRatio: /);
  });
});

describe("rectifierCI", () => {
  // One stratum of N = 1,000 binary units, a = 1/N, n labelled by simple random sampling (π = n/N); the judge says
  // Yes to `yes` of them. z_c = a·(y − f)/π for each labelled unit.
  const stratum = (n: number, errors: number[], yes = 980) => {
    const pi = n / 1000;
    const a = 1 / 1000;
    return {
      bounds: [-a * yes, a * (1000 - yes)] as [number, number],
      clusters: Array.from({ length: n }, (_, i) => ({ z: (a * (errors[i] ?? 0)) / pi, pi })),
    };
  };

  it("ten labelled units that all agree with the judge: not zero width, but Wilson's bound for 0 errors", () => {
    const r = rectifierCI([stratum(10, [])]);
    expect(r.estimate).toBe(0);
    // Lenient share: 0 of n* = n/(1 − f) = 10/0.99, Wilson's upper limit z²/(n* + z²); harsh share likewise, but the
    // stratum's correction cannot exceed its room Σ a·(1 − f) = 0.02.
    const nStar = 10 / 0.99;
    expect(r.ci[0]).toBeCloseTo(-(Z * Z) / (nStar + Z * Z), 12);
    expect(r.ci[1]).toBeCloseTo(0.02, 12);
    expect(r.exact).toBe(false);
    expect(r.bounded).toBe(0);
  });

  it("errors both ways: Wilson per direction at n* = p(1 − p)/V (n − 1 for 0/1 errors, with the FPC), MOVER with their correlation", () => {
    // 20 labelled units: 3 where the judge was too lenient (y − f = −1), 2 too harsh (+1).
    const errors = [-1, -1, -1, 1, 1];
    const n = 20;
    const f = n / 1000;
    const r = rectifierCI([stratum(n, errors, 500)]);
    // By hand: S = 1 (bounds width), shares p⁻ = 3/20, p⁺ = 2/20; for 0/1 values the design variance is
    // (1 − f)·p(1 − p)/(n − 1), so n* = (n − 1)/(1 − f). Correlation of the two shares of one multinomial sample,
    // design form: Σ(x⁺ − x̄⁺)(x⁻ − x̄⁻) = −n·x̄⁺x̄⁻ → r = −√(p⁺p⁻/((1 − p⁺)(1 − p⁻))).
    const pp = 2 / n;
    const pm = 3 / n;
    const nStar = (n - 1) / (1 - f);
    const [lp, up] = wilson(pp * nStar, nStar);
    const [lm, um] = wilson(pm * nStar, nStar);
    const rho = -Math.sqrt((pp * pm) / ((1 - pp) * (1 - pm)));
    const d = pp - pm;
    const L = d - Math.sqrt((pp - lp) ** 2 + (um - pm) ** 2 - 2 * rho * (pp - lp) * (um - pm));
    const U = d + Math.sqrt((up - pp) ** 2 + (pm - lm) ** 2 - 2 * rho * (up - pp) * (pm - lm));
    expect(r.estimate).toBeCloseTo(d, 12);
    expect(r.ci[0]).toBeCloseTo(L, 12);
    expect(r.ci[1]).toBeCloseTo(U, 12);
  });

  it("strata add by MOVER; a stratum with fewer than 2 labelled units adds its whole range; a census adds nothing", () => {
    const s1 = stratum(10, [-1]);
    const s2 = stratum(20, [1, -1], 500);
    const one = rectifierCI([s1]);
    const two = rectifierCI([s2]);
    const both = rectifierCI([s1, s2]);
    expect(both.estimate).toBeCloseTo(one.estimate + two.estimate, 12);
    expect(both.ci[0]).toBeCloseTo(both.estimate - Math.hypot(one.estimate - one.ci[0], two.estimate - two.ci[0]), 12);
    expect(both.ci[1]).toBeCloseTo(both.estimate + Math.hypot(one.ci[1] - one.estimate, two.ci[1] - two.estimate), 12);
    // One labelled unit (an error of −1 at π = 1/1000): its stratum's bounds [−0.98, 0.02] around its estimate −1.
    const thin = { bounds: [-0.98, 0.02] as [number, number], clusters: [{ z: -1, pi: 0.001 }] };
    const withThin = rectifierCI([s2, thin]);
    expect(withThin.bounded).toBe(1);
    expect(withThin.estimate).toBeCloseTo(two.estimate - 1, 12);
    expect(withThin.ci[0]).toBeCloseTo(two.ci[0] - 1 + 0, 12); // −1 is already below −0.98: nothing more below
    expect(withThin.ci[1]).toBeCloseTo(two.ci[1] - 1 + (0.02 - -1), 12);
    // No labelled unit at all: the whole range.
    const none = rectifierCI([{ bounds: [-0.3, 0.7], clusters: [] }]);
    expect(none).toEqual({ estimate: 0, ci: [-0.3, 0.7], exact: false, bounded: 1 });
    // A census (π = 1): the correction is known; zero width, flagged exact.
    const census = rectifierCI([{ bounds: [-0.5, 0.5], clusters: [0.25, -0.1, 0].map((z) => ({ z, pi: 1 })) }]);
    expect(census).toEqual({
      estimate: expect.closeTo(0.15, 12),
      ci: [expect.closeTo(0.15, 12), expect.closeTo(0.15, 12)],
      exact: true,
      bounded: 0,
    });
  });

  it("never has zero width outside a census, whatever the labels", () => {
    for (const n of [2, 3, 10, 40])
      for (const errs of [[], Array(n).fill(-1), Array(n).fill(1), [1, -1]]) {
        const r = rectifierCI([stratum(n, errs.slice(0, n), 500)]);
        expect(r.ci[1] - r.ci[0], `${n}: ${errs.join(",")}`).toBeGreaterThan(0.01);
        expect(r.ci[0]).toBeLessThanOrEqual(r.estimate);
        expect(r.ci[1]).toBeGreaterThanOrEqual(r.estimate);
      }
    expect(() => rectifierCI([{ bounds: [1, 0], clusters: [] }])).toThrow(/^rectifierCI: /);
    expect(() => rectifierCI([{ bounds: [0, 1], clusters: [{ z: 0, pi: 0 }] }])).toThrow(/^rectifierCI: /);
  });
});
