/**
 * Analytic standard errors of multi-rater agreement coefficients (Gwet 2014 /
 * irrCAC), the cluster-robust linearised variance, the Wilson score interval
 * and the normal CDF.
 */
import { describe, expect, it } from "vitest";
import {
  bootstrapCI,
  fleissKappa,
  fleissKappaSE,
  gwetAC1,
  gwetAC2,
  gwetSE,
  krippendorffAlpha,
  krippendorffAlphaSE,
  linearizedSE,
  normalCDF,
  normalQuantile,
  seededRandom,
  wilsonCI,
  wilsonEffectiveCI,
  percentAgreement,
  unitCategoryCounts,
  coincidenceMatrix,
  krippendorffAlphaFromCoincidences,
  type Rating,
} from "~/stats";
import { krippendorff2011 } from "./referenceData";

// cac.raw4raters (= krippendorff2011 here, Gwet 2014 p. 120). Published figures, irrCAC README
// (github.com/kgwet/irrCAC, "Computing agreement coefficients from raw ratings"):
//   gwet.ac1.raw:      AC1 0.77544, se 0.14295, pa 0.8181818, pe 0.1903212
//   fleiss.kappa.raw:  kappa 0.76117, se 0.15302, pa 0.8181818, pe 0.2387153
//   krippen.alpha.raw: alpha 0.74342, se 0.14557, pa 0.805, pe 0.24
describe("counted once, used by every multi-rater coefficient", () => {
  it("gives results identical to the rows (cac.raw4raters, same categories)", () => {
    const counted = unitCategoryCounts("test", krippendorff2011);
    expect(percentAgreement(counted)).toBe(percentAgreement(krippendorff2011));
    expect(fleissKappa(counted)).toEqual(fleissKappa(krippendorff2011));
    expect(gwetAC1(counted)).toEqual(gwetAC1(krippendorff2011));
    expect(gwetAC2(counted, { weights: "quadratic" })).toEqual(gwetAC2(krippendorff2011, { weights: "quadratic" }));
    const cluster = krippendorff2011.map((_, i) => Math.floor(i / 3));
    expect(fleissKappaSE(counted, { cluster })).toEqual(fleissKappaSE(krippendorff2011, { cluster }));
    expect(gwetSE(counted, { cluster })).toEqual(gwetSE(krippendorff2011, { cluster }));
    expect(krippendorffAlphaSE(counted, { cluster })).toEqual(krippendorffAlphaSE(krippendorff2011, { cluster }));
    expect(() => fleissKappaSE(counted, { categories: [4, 3, 2, 1] })).toThrow(/^fleissKappaSE: the counted data has categories/);
    // Krippendorff's alpha from the counts: every level (the categories are the values), the
    // published Krippendorff (2011) figures: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
    for (const [level, published] of [
      ["nominal", 0.743],
      ["ordinal", 0.815],
      ["interval", 0.849],
      ["ratio", 0.797],
    ] as const) {
      const fromCounts = krippendorffAlpha(counted, { level }).alpha;
      expect(fromCounts, level).toBeCloseTo(krippendorffAlpha(krippendorff2011, { level }).alpha, 12);
      expect(fromCounts, level).toBeCloseTo(published, 3);
    }
    expect(krippendorffAlpha(counted).alpha).toBe(krippendorffAlpha(krippendorff2011).alpha); // nominal: the same arithmetic
    // From the coincidence matrix (what a bootstrap sums): the same alpha at every level, and
    // a matrix over listed units (one twice) is the matrix of those rows.
    const o = coincidenceMatrix(counted);
    for (const level of ["nominal", "ordinal", "interval", "ratio"] as const) {
      expect(krippendorffAlphaFromCoincidences(o, counted.categories, level), level).toBeCloseTo(
        krippendorffAlpha(counted, { level }).alpha,
        12,
      );
    }
    const listed = [0, 3, 3, 7];
    const rows = listed.map((u) => krippendorff2011[u]);
    expect(Array.from(coincidenceMatrix(counted, listed))).toEqual(
      Array.from(coincidenceMatrix(unitCategoryCounts("t", rows, counted.categories))),
    );
    expect(
      Array.from(
        coincidenceMatrix(
          unitCategoryCounts("demo", [
            ["a", "a"],
            ["a", "b"],
          ]),
        ),
      ),
    ).toEqual([2, 1, 1, 0]);
  });
});

describe("analytic SEs reproduce irrCAC on cac.raw4raters", () => {
  it("fleissKappaSE: se 0.15302, value = fleissKappa", () => {
    const r = fleissKappaSE(krippendorff2011);
    expect(r.se).toBeCloseTo(0.15302, 5);
    expect(r.value).toBe(fleissKappa(krippendorff2011).kappa);
    expect(r.pa).toBeCloseTo(0.8181818, 7);
    expect(r.pe).toBeCloseTo(0.2387153, 7);
    expect(r.n).toBe(12);
    expect(r.ci[0]).toBeCloseTo(r.value - 1.96 * r.se, 14);
    expect(r.ci[1]).toBe(1); // clipped, as irrCAC's (0.424, 1)
  });

  it("gwetSE: AC1 se 0.14295, value = gwetAC1", () => {
    const r = gwetSE(krippendorff2011);
    expect(r.se).toBeCloseTo(0.14295, 5);
    expect(r.value).toBe(gwetAC1(krippendorff2011).value);
    expect(r.pe).toBeCloseTo(0.1903212, 7);
  });

  it("krippendorffAlphaSE: se 0.14557, pa 0.805, pe 0.24, value = krippendorffAlpha", () => {
    const r = krippendorffAlphaSE(krippendorff2011);
    expect(r.se).toBeCloseTo(0.14557, 5);
    expect(r.pa).toBeCloseTo(0.805, 12);
    expect(r.pe).toBeCloseTo(0.24, 12);
    expect(r.value).toBeCloseTo(krippendorffAlpha(krippendorff2011).alpha, 14);
    expect(r.n).toBe(11); // unit 12 has a single rating
  });

  // Weighted forms: the Python port of irrCAC (github.com/afergadis/irrCAC, test/unit/irrCAC/raw/
  // test_fleiss.py, test_gwet.py, test_krippendorff.py, raw_4raters, digits=3) publishes
  //   fleiss: linear se 0.149, quadratic 0.146;  gwet: linear 0.117, quadratic 0.104;
  //   krippendorff: linear 0.135 (alpha 0.800), quadratic 0.129 (alpha 0.849).
  it("weighted (linear/quadratic) SEs match the irrCAC Python port's published 3-d.p. values", () => {
    const d = krippendorff2011;
    expect(fleissKappaSE(d, { weights: "linear" }).se).toBeCloseTo(0.149, 3);
    expect(fleissKappaSE(d, { weights: "quadratic" }).se).toBeCloseTo(0.146, 3);
    expect(gwetSE(d, { weights: "linear" }).se).toBeCloseTo(0.117, 3);
    expect(gwetSE(d, { weights: "quadratic" }).se).toBeCloseTo(0.104, 3);
    expect(gwetSE(d, { weights: "linear" }).value).toBeCloseTo(gwetAC2(d, { weights: "linear" }).value, 12);
    const kl = krippendorffAlphaSE(d, { weights: "linear" });
    expect(kl.se).toBeCloseTo(0.135, 3);
    expect(kl.value).toBeCloseTo(0.8, 3);
    const kq = krippendorffAlphaSE(d, { weights: "quadratic" });
    expect(kq.se).toBeCloseTo(0.129, 3);
    // Quadratic weights on equally spaced categories = interval alpha (Krippendorff 2011: 0.849).
    expect(kq.value).toBeCloseTo(krippendorffAlpha(d, { level: "interval" }).alpha, 12);
  });

  it("@examples", () => {
    expect(
      fleissKappaSE([
        ["a", "a", "a"],
        ["b", "b", "a"],
        ["b", "b", "b"],
      ]).se,
    ).toBeCloseTo(0.464939512194866, 12);
    expect(
      gwetSE([
        ["y", "y"],
        ["y", "y"],
        ["y", "n"],
        ["n", "n"],
      ]).se,
    ).toBeCloseTo(0.5000608592328204, 12);
    expect(
      krippendorffAlphaSE([
        ["a", "a", "a"],
        ["b", "b", "a"],
        ["b", "b", "b"],
      ]).value,
    ).toBeCloseTo(0.6, 12);
  });

  it("edge cases: undefined coefficients give NaN; errors name the function", () => {
    expect(
      fleissKappaSE([
        ["a", "a"],
        ["a", "a"],
      ]).value,
    ).toBeNaN();
    expect(gwetSE([["a", null]]).se).toBeNaN();
    expect(
      krippendorffAlphaSE([
        ["a", null],
        [null, "b"],
      ]).value,
    ).toBeNaN();
    expect(() => fleissKappaSE([["a"], ["a", "b"]])).toThrow(/^fleissKappaSE: row 1/);
    expect(() => gwetSE([["a", "b"]], { weights: "cubic" as never })).toThrow(/^gwetSE: unknown weights/);
    expect(() => krippendorffAlphaSE([["a", "b"]], { cluster: [1, 2] })).toThrow(/^krippendorffAlphaSE: cluster has 2 keys for 1 rows/);
  });
});

/** Synthetic two-of-three-raters Yes/No data in item clusters of 8 units with an item effect. */
function clusteredData(items: number, seed: number) {
  const rnd = seededRandom(seed);
  const rows: Rating[][] = [];
  const cluster: number[] = [];
  for (let it = 0; it < items; it++) {
    const pYes = rnd() < 0.5 ? 0.9 : 0.35; // items differ: units of one item are correlated
    for (let u = 0; u < 8; u++) {
      const truth = rnd() < pYes;
      const row: Rating[] = [null, null, null];
      const first = (it + u) % 3;
      for (const a of [first, (first + 1) % 3]) row[a] = rnd() < 0.85 ? (truth ? "Yes" : "No") : truth ? "No" : "Yes";
      rows.push(row);
      cluster.push(it);
    }
  }
  return { rows, cluster };
}

describe("cluster-robust linearised SE", () => {
  it("linearizedSE: without clusters it is sd/√n; singleton clusters give the same", () => {
    expect(linearizedSE([1, 2, 3, 4], 2.5)).toBeCloseTo(Math.sqrt(5 / 3) / 2, 14);
    expect(linearizedSE([1, 2, 3, 4], 2.5, { cluster: ["a", "b", "c", "d"] })).toBeCloseTo(Math.sqrt(5 / 3) / 2, 14);
    expect(linearizedSE([1], 1)).toBeNaN();
    expect(linearizedSE([1, 2], 1.5, { cluster: [7, 7] })).toBeNaN();
    expect(() => linearizedSE([1, 2], 1.5, { cluster: [1] })).toThrow(/^linearizedSE: cluster has 1 keys for 2 values/);
  });

  it("one key per unit reproduces the unclustered SE exactly", () => {
    const keys = krippendorff2011.map((_, i) => `u${i}`);
    expect(fleissKappaSE(krippendorff2011, { cluster: keys }).se).toBeCloseTo(fleissKappaSE(krippendorff2011).se, 14);
    expect(gwetSE(krippendorff2011, { cluster: keys }).se).toBeCloseTo(gwetSE(krippendorff2011).se, 14);
    expect(krippendorffAlphaSE(krippendorff2011, { cluster: keys }).se).toBeCloseTo(krippendorffAlphaSE(krippendorff2011).se, 14);
  });

  // Cross-check (no published value exists for clustered SEs): the linearised clustered SE against
  // the standard deviation of a seeded cluster (item) bootstrap of the same statistic on the same
  // data (Davison & Hinkley 1997 §3.8). Both estimate the same sampling SD; B = 2000 resamples
  // leave ~2% Monte Carlo error on the bootstrap SD, so agreement within 12% is required.
  it.each([
    ["fleiss", (rows: Rating[][]) => fleissKappa(rows, { categories: ["Yes", "No"] }).kappa, fleissKappaSE],
    ["gwet", (rows: Rating[][]) => gwetAC1(rows, { categories: ["Yes", "No"] }).value, gwetSE],
    ["krippendorff", (rows: Rating[][]) => krippendorffAlpha(rows, { categories: ["Yes", "No"] }).alpha, krippendorffAlphaSE],
  ] as const)("%s: clustered SE ≈ cluster-bootstrap SD, and exceeds the unclustered SE", (_name, stat, seFn) => {
    const { rows, cluster } = clusteredData(150, 11);
    const boot = bootstrapCI({ data: rows, statistic: (s) => stat(s), seed: 3, resamples: 2000, cluster: (_r, i) => cluster[i] });
    const clustered = seFn(rows, { categories: ["Yes", "No"], cluster });
    expect(clustered.clusters).toBe(150);
    expect(clustered.se / boot.se).toBeGreaterThan(0.88);
    expect(clustered.se / boot.se).toBeLessThan(1.12);
    expect(clustered.se).toBeGreaterThan(seFn(rows, { categories: ["Yes", "No"] }).se);
  });
});

describe("wilsonCI", () => {
  // Newcombe (1998) Stat. Med. 17:857-872, Table II, method 3 (Wilson score, no continuity correction).
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])("reproduces Newcombe (1998): %i/%i → %f–%f", (x, n, lo, hi) => {
    const [l, h] = wilsonCI(x, n);
    expect(l).toBeCloseTo(lo, 4);
    expect(h).toBeCloseTo(hi, 4);
  });

  it("stays inside [0, 1] where mean ± 1.96·SEM does not; @example; errors", () => {
    const [l, h] = wilsonCI(20, 20);
    expect(h).toBe(1);
    expect(l).toBeGreaterThan(0.8);
    expect(wilsonCI(81, 263)).toEqual([0.2552876130636696, 0.36621068405342155]);
    expect(wilsonCI(0, 0)).toEqual([NaN, NaN]);
    expect(wilsonCI(1, 2, { z: normalQuantile(0.975) })[0]).toBeGreaterThan(0);
    expect(() => wilsonCI(3, 2)).toThrow(/^wilsonCI: successes must be in \[0, n\]/);
    expect(() => wilsonCI(1, -1)).toThrow(/^wilsonCI: n must be/);
    expect(() => wilsonCI(1, 2, { z: 0 })).toThrow(/^wilsonCI: z must be/);
  });
});

describe("wilsonEffectiveCI", () => {
  // The Wilson score interval written out (Wilson 1927, eq. for the roots of |p − p̂| = z·sqrt(p(1 − p)/n)),
  // independent of wilsonCI's code, at the effective sample size n* = p̂(1 − p̂)/SE² (Korn & Graubard 1998, §2).
  const wilson = (p: number, n: number, z = 1.96) => {
    const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
    return [centre - half, centre + half];
  };

  it("with the simple-random-sampling SE it is the ordinary Wilson interval", () => {
    const [l, h] = wilsonEffectiveCI(0.3, Math.sqrt((0.3 * 0.7) / 100), 40);
    const [el, eh] = wilsonCI(30, 100);
    expect(l).toBeCloseTo(el, 12);
    expect(h).toBeCloseTo(eh, 12);
  });

  it("a design SE larger than the binomial one shrinks n* (design effect) and widens the interval, inside [0, 1]", () => {
    // p̂ = 0.2, SE = 0.05 → n* = 0.16 / 0.0025 = 64.
    const [l, h] = wilsonEffectiveCI(0.2, 0.05, 200);
    const [el, eh] = wilson(0.2, 64);
    expect(l).toBeCloseTo(el, 12);
    expect(h).toBeCloseTo(eh, 12);
    // Near the edge the Wald interval leaves the range; this one does not.
    const [l2, h2] = wilsonEffectiveCI(0.97, 0.03, 50);
    expect(0.97 + 1.96 * 0.03).toBeGreaterThan(1);
    expect(h2).toBeLessThanOrEqual(1);
    expect(l2).toBeGreaterThan(0.8);
  });

  it("p̂ of 0 or 1 uses the sampled n; SE 0 gives the exact point; p̂ outside [0, 1] is refused", () => {
    const [l, h] = wilsonEffectiveCI(1, 0.01, 25);
    const [el, eh] = wilson(1, 25);
    expect(l).toBeCloseTo(el, 12);
    expect(h).toBeCloseTo(eh, 12);
    expect(wilsonEffectiveCI(0.4, 0, 10)).toEqual([0.4, 0.4]);
    expect(() => wilsonEffectiveCI(1.2, 0.1, 10)).toThrow(/^wilsonEffectiveCI: p must be in \[0, 1\]/);
  });
});

describe("normalCDF", () => {
  // Abramowitz & Stegun (1964) Table 26.1 / scipy.stats.norm.cdf to double precision.
  it.each([
    [0, 0.5],
    [1, 0.8413447460685429],
    [1.96, 0.9750021048517795],
    [3, 0.9986501019683699],
    [-1, 0.15865525393145707],
    [-5, 2.866515718791939e-7],
  ])("Φ(%f) = %f", (z, p) => {
    expect(normalCDF(z)).toBeCloseTo(p, 14);
    if (z < -2) expect(Math.abs(normalCDF(z) / p - 1)).toBeLessThan(1e-12);
  });

  it("tails, inverse of normalQuantile, special values, errors", () => {
    expect(normalCDF(-10)).toBeGreaterThan(7.61e-24);
    expect(normalCDF(-10)).toBeLessThan(7.63e-24);
    for (const p of [0.001, 0.025, 0.3, 0.5, 0.9, 0.999]) expect(normalCDF(normalQuantile(p))).toBeCloseTo(p, 14);
    expect(normalCDF(Infinity)).toBe(1);
    expect(normalCDF(-Infinity)).toBe(0);
    expect(normalCDF(NaN)).toBeNaN();
    expect(() => normalCDF("1" as never)).toThrow(/^normalCDF: z must be a number/);
  });
});
