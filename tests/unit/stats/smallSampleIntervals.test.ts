/**
 * The small-sample default intervals of the agreement coefficients (issue 36, item 8):
 * Student's t quantiles, Hesterberg's expanded levels, the BCa bootstrap of
 * countsBootstrapCI, and the rule agreementInterval that the command line and the
 * report pages share. Expected values: scipy 1.17.1 (stats.t.ppf, stats.norm.cdf) for
 * the quantiles and levels; the BCa interval against an independent computation in
 * this file (the resamples drawn by hand with the same seeded generator, the
 * jackknife by leaving each unit out, Efron & Tibshirani 1993, eqs. 14.10–14.15).
 */
import { describe, expect, it } from "vitest";
import {
  agreementInterval,
  countsBootstrapCI,
  defaultIntervalMethod,
  expandedLevel,
  normalCDF,
  normalQuantile,
  quantileSorted,
  seededRandom,
  SMALL_SAMPLE_UNITS,
  studentTQuantile,
} from "~/stats";

describe("studentTQuantile", () => {
  // scipy.stats.t.ppf(p, df), scipy 1.17.1.
  it.each([
    [0.975, 1, 12.706204736174694],
    [0.995, 1, 63.656741162871526],
    [0.975, 2, 4.302652729749462],
    [0.6, 3, 0.2766706623326898],
    [0.975, 5, 2.5705818356363146],
    [0.975, 29, 2.045229642132703],
    [0.995, 59, 2.6617587521629673],
    [0.975, 299, 1.9679296690656698],
    [0.975, 1000, 1.9623390808264083],
    [0.975, 1001, 1.9623367052808798],
    [0.975, 5000, 1.9604385517065073],
  ])("t(%f, df = %i) = %f", (p, df, expected) => {
    expect(studentTQuantile(p, df)).toBeCloseTo(expected, 11);
    expect(studentTQuantile(1 - p, df)).toBeCloseTo(-expected, 11);
  });
  it("rejects a p outside (0, 1) and a df that is not a positive integer", () => {
    expect(() => studentTQuantile(1, 5)).toThrow(/^studentTQuantile: p must be in \(0, 1\)/);
    expect(() => studentTQuantile(0.5, 2.5)).toThrow(/^studentTQuantile: df must be a positive integer/);
  });
});

describe("expandedLevel (Hesterberg 2015)", () => {
  it("is 2·Φ(√(n/(n − 1))·t(0.975, n − 1)) − 1 and tends to 0.95", () => {
    // scipy: 2*norm.cdf(sqrt(n/(n-1))*t.ppf(0.975, n-1)) - 1
    expect(expandedLevel(50)).toBeCloseTo(0.9576411775772449, 12);
    expect(expandedLevel(30)).toBeCloseTo(0.9624921994435589, 12);
    expect(expandedLevel(100_000)).toBeCloseTo(0.95, 4);
    expect(() => expandedLevel(1)).toThrow(/^expandedLevel: n must be an integer of at least 2/);
  });
  it("is capped at 0.999 (at 2 units the expansion reaches 1 in floating point, which no bootstrap can read)", () => {
    expect(expandedLevel(2)).toBe(0.999);
    expect(expandedLevel(3)).toBe(0.999);
    expect(expandedLevel(5)).toBeLessThan(0.999);
    const r = countsBootstrapCI({
      counts: [1, 1],
      statistic: (w) => w[0] / (w[0] + w[1]),
      seed: 1,
      resamples: 200,
      method: "bca",
      level: expandedLevel(2),
    });
    expect(r.ci[0]).toBeLessThan(r.ci[1]);
  });
});

/** The BCa interval by its definition, from resamples drawn here (independent of countsBootstrapCI's code). */
function bcaByHand(x: number[], stat: (xs: number[]) => number, seed: number, B: number, level: number): [number, number] {
  const n = x.length;
  const random = seededRandom(seed);
  const theta = stat(x);
  const boot: number[] = [];
  for (let b = 0; b < B; b++) {
    // One unit index per draw, as bootstrapCI draws rows (Math.floor(random() * n)).
    const s = Array.from({ length: n }, () => x[Math.floor(random() * n)]);
    boot.push(stat(s));
  }
  boot.sort((a, b) => a - b);
  let below = 0;
  let ties = 0;
  for (const v of boot) {
    if (Math.abs(v - theta) <= 1e-12) ties++;
    else if (v < theta) below++;
  }
  const z0 = normalQuantile((below + ties / 2) / B);
  const jack = x.map((_, i) => stat(x.filter((__, j) => j !== i)));
  const mean = jack.reduce((a, b) => a + b, 0) / n;
  const s2 = jack.reduce((a, v) => a + (mean - v) ** 2, 0);
  const s3 = jack.reduce((a, v) => a + (mean - v) ** 3, 0);
  const acc = s3 / (6 * s2 ** 1.5);
  const at = (p: number) => {
    const z = normalQuantile(p);
    return normalCDF(z0 + (z0 + z) / (1 - acc * (z0 + z)));
  };
  const alpha = 1 - level;
  return [quantileSorted(boot, at(alpha / 2), 6), quantileSorted(boot, at(1 - alpha / 2), 6)];
}

describe("countsBootstrapCI, method: bca", () => {
  // 20 units on a 1–4 scale, skewed (most units at 4): the mean of the values.
  const values = [4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 4, 4, 3, 4, 2, 4, 4, 1, 4, 3];
  const distinct = [1, 2, 3, 4];
  const counts = distinct.map((v) => values.filter((x) => x === v).length);
  const patternOfUnit = Int32Array.from(values, (v) => distinct.indexOf(v));
  const mean = (w: Float64Array) => {
    let s = 0;
    let m = 0;
    for (let k = 0; k < w.length; k++) {
      s += w[k] * distinct[k];
      m += w[k];
    }
    return s / m;
  };
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

  it("is the BCa interval of Efron & Tibshirani (1993, §14.3) computed from the same resamples", () => {
    for (const level of [0.95, expandedLevel(20)]) {
      const r = countsBootstrapCI({ counts, patternOfUnit, statistic: mean, seed: 11, resamples: 2000, method: "bca", level });
      expect(r.draws).toBe("units");
      expect(r.method).toBe("bca");
      const ref = bcaByHand(values, avg, 11, 2000, level);
      expect(r.ci[0]).toBeCloseTo(ref[0], 12);
      expect(r.ci[1]).toBeCloseTo(ref[1], 12);
      // The percentile interval of the same resamples comes along.
      const pct = countsBootstrapCI({ counts, patternOfUnit, statistic: mean, seed: 11, resamples: 2000, level });
      expect(r.percentileCI).toEqual(pct.ci);
    }
  });

  it("the jackknife acceleration of a mean is the skewness over 6√n: Σ(x − x̄)³ / (6 (Σ(x − x̄)²)^{3/2})", () => {
    const r = countsBootstrapCI({ counts, patternOfUnit, statistic: mean, seed: 3, resamples: 500, method: "bca" });
    const m = avg(values);
    const s2 = values.reduce((a, v) => a + (v - m) ** 2, 0);
    const s3 = values.reduce((a, v) => a + (v - m) ** 3, 0);
    expect(r.acceleration).toBeCloseTo(s3 / (6 * s2 ** 1.5), 12);
    // Skewed to the left (a long tail of low values): â < 0, and the interval reaches further down than up.
    expect(r.acceleration).toBeLessThan(0);
    expect(m - r.ci[0]).toBeGreaterThan(r.ci[1] - m);
  });

  it("perfect agreement: every resample equals the estimate, so the BCa interval has zero width (not estimable), not NaN", () => {
    const r = countsBootstrapCI({ counts: [10, 0], statistic: (w) => w[0] / (w[0] + w[1]), seed: 1, resamples: 200, method: "bca" });
    expect(r.ci).toEqual([1, 1]);
    expect(r.z0).toBe(0);
  });

  it("rejects an unknown method", () => {
    expect(() => countsBootstrapCI({ counts: [1, 2], statistic: mean, seed: 1, method: "bc" as "bca" })).toThrow(
      /^countsBootstrapCI: method must be "percentile" or "bca"/,
    );
  });
});

describe("agreementInterval: the rule shared by npm run agreement and the report pages", () => {
  const fail = () => {
    throw new Error("the bootstrap must not run");
  };
  const fake = (ci: [number, number]) => ({
    estimate: 0.4,
    ci,
    se: 0.1,
    resamples: 2000,
    undefinedResamples: 0,
    clusters: 50,
    draws: "units" as const,
    method: "bca" as const,
    z0: 0,
    acceleration: 0,
    percentileCI: ci,
  });

  it(`from ${SMALL_SAMPLE_UNITS} units: the analytic interval as given, no bootstrap`, () => {
    const r = agreementInterval({ units: SMALL_SAMPLE_UNITS, analytic: { se: 0.05, ci: [0.3, 0.5] }, bootstrap: fail });
    expect(r).toEqual({ ci: [0.3, 0.5], se: 0.05, method: "analytic", level: 0.95, bootstrap: null });
    expect(defaultIntervalMethod(SMALL_SAMPLE_UNITS, false)).toBe("percentile");
  });

  it(`below ${SMALL_SAMPLE_UNITS} units: the BCa bootstrap at the expanded level of the units`, () => {
    const calls: [string, number][] = [];
    const r = agreementInterval({
      units: 50,
      analytic: { se: 0.05, ci: [0.3, 0.5] },
      bootstrap: (method, level) => {
        calls.push([method, level]);
        return fake([0.25, 0.52]);
      },
    });
    expect(calls).toEqual([["bca", expandedLevel(50)]]);
    expect(r.method).toBe("bca");
    expect(r.ci).toEqual([0.25, 0.52]);
    expect(r.level).toBeCloseTo(0.9576411775772449, 12);
  });

  it("a statistic without an SE: the percentile bootstrap from 300 units; fewer than 2 units: no interval", () => {
    const calls: [string, number][] = [];
    agreementInterval({
      units: 1000,
      bootstrap: (method, level) => {
        calls.push([method, level]);
        return fake([0.3, 0.5]);
      },
    });
    expect(calls).toEqual([["percentile", 0.95]]);
    const one = agreementInterval({ units: 1, analytic: { se: NaN, ci: [NaN, NaN] }, bootstrap: fail });
    expect(one.ci.every(Number.isNaN)).toBe(true);
  });
});
