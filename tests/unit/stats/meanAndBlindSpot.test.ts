import { describe, expect, it } from "vitest";
import { blindSpot, meanCI, normalQuantile } from "~/stats";

describe("meanCI", () => {
  it("mean ± 1.96·s/√N with the sample sd (numpy reference)", () => {
    // numpy: x = np.array([0.2, 0.9, 0.4, 0.7, 1.0, 0.0, 0.55]); m = x.mean() -> 0.5357142857142857
    //   x.std(ddof=1) -> 0.3636782984478243; sem = x.std(ddof=1)/np.sqrt(7) -> 0.13745747641772435
    //   m - 1.96*sem -> 0.26629763193554595; m + 1.96*sem -> 0.8051309394930255
    const r = meanCI([0.2, 0.9, 0.4, 0.7, 1.0, 0.0, 0.55]);
    expect(r.mean).toBeCloseTo(0.5357142857142857, 15);
    expect(r.sd).toBeCloseTo(0.3636782984478243, 15);
    expect(r.sem).toBeCloseTo(0.13745747641772435, 15);
    expect(r.ci[0]).toBeCloseTo(0.26629763193554595, 15);
    expect(r.ci[1]).toBeCloseTo(0.8051309394930255, 15);
    expect(r.n).toBe(7);
  });

  it("reproduces the half-width Self-Correction Bench prints (Table 9: SCLI5, N = 286, 0.954 ± 0.024)", () => {
    // The table gives only rounded accuracies, so take 273/286 = 0.9545 (the count nearest 0.954)
    // and check the published half-width 1.96·SEM = 0.024 (to 3 d.p.).
    const x = [...Array(273).fill(1), ...Array(13).fill(0)];
    expect(1.96 * meanCI(x).sem).toBeCloseTo(0.024, 3);
  });

  it("@example; missing values skipped; n = 1 gives NaN spread; custom z", () => {
    const r = meanCI([1, 0, 1, 1]);
    expect(r).toMatchObject({ mean: 0.75, sd: 0.5, sem: 0.25 });
    expect(r.ci[0]).toBeCloseTo(0.26, 15);
    expect(meanCI([1, null, 0, undefined]).n).toBe(2);
    const one = meanCI([0.5]);
    expect(one.mean).toBe(0.5);
    expect(one.sem).toBeNaN();
    expect(one.ci[0]).toBeNaN();
    expect(meanCI([0, 1], { z: normalQuantile(0.975) }).ci[1]).toBeCloseTo(0.5 + 1.959963984540054 * 0.5, 14);
  });

  it("throws errors naming the function", () => {
    expect(() => meanCI([])).toThrow(/^meanCI: needs at least one value/);
    expect(() => meanCI([1, NaN])).toThrow(/^meanCI: values\[1\] is not a finite number/);
    expect(() => meanCI([1, Infinity])).toThrow(/^meanCI: values\[1\]/);
    expect(() => meanCI([1], { z: -1 })).toThrow(/^meanCI: z must be/);
  });
});

describe("blindSpot", () => {
  it("1 - pI/pE with a delta-method CI (numpy reference from 0/1 outcome vectors)", () => {
    // numpy: xi = [1]*30 + [0]*70; xe = [1]*80 + [0]*20; pi, pe = xi.mean(), xe.mean()
    //   semi = xi.std(ddof=1)/sqrt(100); seme = xe.std(ddof=1)/sqrt(100)
    //   b = 1 - pi/pe -> 0.625; se = sqrt((semi/pe)**2 + (pi*seme/pe**2)**2) -> 0.06057646057469497
    //   b ± 1.96*se -> (0.5062701372735978, 0.7437298627264022)
    const r = blindSpot({ internalCorrect: 30, internalN: 100, externalCorrect: 80, externalN: 100 });
    expect(r.value).toBe(0.625);
    expect(r.se).toBeCloseTo(0.06057646057469497, 15);
    expect(r.ci[0]).toBeCloseTo(0.5062701372735978, 14);
    expect(r.ci[1]).toBeCloseTo(0.7437298627264022, 14);
  });

  it("is 0 by definition when P(correct|external) = 0 (CI undefined); negative when internal is better", () => {
    const zero = blindSpot({ internalCorrect: 3, internalN: 10, externalCorrect: 0, externalN: 10 });
    expect(zero.value).toBe(0);
    expect(zero.se).toBeNaN();
    expect(zero.ci[0]).toBeNaN();
    expect(blindSpot({ internalCorrect: 9, internalN: 10, externalCorrect: 6, externalN: 10 }).value).toBeCloseTo(-0.5, 15);
    expect(blindSpot({ internalCorrect: 1, internalN: 1, externalCorrect: 1, externalN: 1 }).se).toBeNaN();
  });

  it("throws errors naming the function", () => {
    expect(() => blindSpot({ internalCorrect: 11, internalN: 10, externalCorrect: 1, externalN: 10 })).toThrow(
      /^blindSpot: internalCorrect \(11\) exceeds internalN/,
    );
    expect(() => blindSpot({ internalCorrect: 1.5, internalN: 10, externalCorrect: 1, externalN: 10 })).toThrow(
      /^blindSpot: internalCorrect must be a non-negative integer/,
    );
    expect(() => blindSpot({ internalCorrect: 0, internalN: 0, externalCorrect: 1, externalN: 10 })).toThrow(
      /^blindSpot: internalN and externalN must be at least 1/,
    );
    expect(() => blindSpot({ internalCorrect: NaN, internalN: 10, externalCorrect: 1, externalN: 10 })).toThrow(/^blindSpot:/);
  });
});
