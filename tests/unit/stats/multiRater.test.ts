import { describe, expect, it } from "vitest";
import { fleissKappa, gwetAC1, gwetAC2, gwetCoefficient, krippendorffAlpha, percentAgreement } from "~/stats";
import {
  cont3x3abstractors,
  countsToRaw,
  fleiss1971Diagnoses,
  gwetDistrib6Raters,
  krippendorff2011,
  tableToPairs,
  wikipediaFleissCounts,
} from "./referenceData";

describe("krippendorffAlpha", () => {
  // Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability": the 4 observers × 12 units
  // example with missing values; published alpha: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
  it.each([
    ["nominal", 0.743],
    ["ordinal", 0.815],
    ["interval", 0.849],
    ["ratio", 0.797],
  ] as const)("reproduces Krippendorff (2011) %s alpha = %s", (level, published) => {
    const r = krippendorffAlpha(krippendorff2011, { level });
    expect(r.alpha).toBeCloseTo(published, 3);
    expect(r.pairableValues).toBe(40); // Krippendorff (2011): n.. = 40 pairable values
    expect(r.pairableUnits).toBe(11); // unit 12 has one value only
  });

  it("nominal matches irrCAC krippen.alpha.raw(cac.raw4raters) = 0.74342 and the exact fraction", () => {
    const r = krippendorffAlpha(krippendorff2011);
    expect(r.alpha).toBeCloseTo(0.74342, 5);
    // Krippendorff (2011) nominal worked computation: coincidence margins n_c = (9, 13, 10, 5, 3), n = 40,
    // Σ_c o_cc = 32, so alpha = 1 - (n-1)(n - Σo_cc)/(n² - Σn_c²) = 1 - 39·8/(1600 - 384) = 0.743421…
    expect(9 ** 2 + 13 ** 2 + 10 ** 2 + 5 ** 2 + 3 ** 2).toBe(384);
    expect(r.alpha).toBeCloseTo(1 - (39 * 8) / (1600 - 384), 14);
    expect(r.observedDisagreement).toBeCloseTo(8 / 40, 14);
  });

  it("interval via the pairable-values identity agrees with the ordered-category path on integers", () => {
    // ratio on values shifted far from 0 approaches interval-like behaviour only loosely, so check
    // internal consistency instead: interval alpha is invariant to shifting and scaling the values.
    const shifted = krippendorff2011.map((row) => row.map((v) => (v === null ? null : 1000 + 3 * v)));
    expect(krippendorffAlpha(shifted, { level: "interval" }).alpha).toBeCloseTo(0.8491071428571428, 12);
    expect(krippendorffAlpha(shifted, { level: "ordinal" }).alpha).toBeCloseTo(0.8153875037548813, 12);
  });

  it("two raters nominal matches irrCAC krippen2.table(cont3x3abstractors) = 0.7972585", () => {
    const { a, b } = tableToPairs(cont3x3abstractors);
    expect(krippendorffAlpha(a.map((x, i) => [x, b[i]])).alpha).toBeCloseTo(0.7972585, 7);
  });

  it("6 raters nominal matches irrCAC krippen.alpha.dist(distrib.6raters) = 0.4204384", () => {
    expect(krippendorffAlpha(countsToRaw(gwetDistrib6Raters)).alpha).toBeCloseTo(0.4204384, 7);
  });

  it("@example and string labels at nominal level", () => {
    expect(
      krippendorffAlpha(
        [
          [1, 1],
          [2, 2],
          [3, 2],
        ],
        { level: "interval" },
      ).alpha,
    ).toBeCloseTo(0.7058823529411764, 14);
    const s = krippendorff2011.map((row) => row.map((v) => (v === null ? null : `c${v}`)));
    expect(krippendorffAlpha(s).alpha).toBeCloseTo(0.743421052631579, 14);
  });

  it("edge cases: one value in use -> NaN; no pairable unit -> NaN; n = 1 unit", () => {
    expect(
      krippendorffAlpha([
        ["a", "a"],
        ["a", "a"],
      ]).alpha,
    ).toBeNaN();
    expect(
      krippendorffAlpha(
        [
          [3, 3],
          [3, null],
        ],
        { level: "interval" },
      ).alpha,
    ).toBeNaN();
    expect(
      krippendorffAlpha([
        ["a", null],
        [null, "b"],
      ]).alpha,
    ).toBeNaN();
    expect(
      krippendorffAlpha([
        ["a", null],
        [null, "b"],
      ]).pairableValues,
    ).toBe(0);
    // a single unit with two different values: Do = De·(n-1)/n... alpha = 1 - (n-1)·2/ (n²-Σn²) = 1 - 1·2/2 = 0
    expect(krippendorffAlpha([["a", "b"]]).alpha).toBe(0);
    expect(krippendorffAlpha([]).alpha).toBeNaN();
    // A rater who always gives the same label still contributes pairable values.
    const r = krippendorffAlpha([
      ["a", "x"],
      ["b", "x"],
      ["a", "x"],
    ]);
    expect(r.alpha).toBeLessThan(0);
  });

  it("throws errors naming the function", () => {
    expect(() => krippendorffAlpha([[1, 2], [3]])).toThrow(/^krippendorffAlpha: row 1 has 1 ratings but row 0 has 2/);
    expect(() => krippendorffAlpha([[1, "x"]], { level: "interval" })).toThrow(
      /^krippendorffAlpha: interval level needs numbers; unit 0, rater 1 is "x"/,
    );
    expect(() => krippendorffAlpha([[1, NaN]], { level: "interval" })).toThrow(/^krippendorffAlpha: non-finite value NaN/);
    expect(() => krippendorffAlpha([[1, Infinity]])).toThrow(/^krippendorffAlpha: non-finite value Infinity/);
    expect(() => krippendorffAlpha([[1, -2]], { level: "ratio" })).toThrow(/^krippendorffAlpha: ratio level needs values ≥ 0/);
    expect(() => krippendorffAlpha([[1, 2]], { level: "cardinal" as never })).toThrow(/^krippendorffAlpha: unknown level/);
    expect(() => krippendorffAlpha("x" as never)).toThrow(/^krippendorffAlpha: data must be an array/);
  });
});

describe("fleissKappa", () => {
  it("reproduces Fleiss (1971) Table 1: kappa = 0.430 (R irr::kappam.fleiss(diagnoses) = 0.4302445)", () => {
    const r = fleissKappa(fleiss1971Diagnoses);
    expect(r.kappa).toBeCloseTo(0.4302445, 7);
    expect(r.n).toBe(30);
  });

  it("reproduces the Wikipedia worked example: P̄ = 0.378, P̄e = 0.213, kappa = 0.210", () => {
    const r = fleissKappa(countsToRaw(wikipediaFleissCounts));
    expect(r.po).toBeCloseTo(0.378, 3);
    expect(r.pe).toBeCloseTo(0.213, 3);
    expect(r.kappa).toBeCloseTo(0.21, 3);
  });

  it("matches irrCAC fleiss.kappa.dist(distrib.6raters): 0.4139265, pa 0.5511111, pe 0.2340741", () => {
    const r = fleissKappa(countsToRaw(gwetDistrib6Raters));
    expect(r.kappa).toBeCloseTo(0.4139265, 7);
    expect(r.po).toBeCloseTo(0.5511111, 7);
    expect(r.pe).toBeCloseTo(0.2340741, 7);
  });

  it("with missing values matches irrCAC fleiss.kappa.raw(cac.raw4raters): 0.76117, pe 0.2387153", () => {
    const r = fleissKappa(krippendorff2011);
    expect(r.kappa).toBeCloseTo(0.76117, 5);
    expect(r.po).toBeCloseTo(0.8181818, 7);
    expect(r.pe).toBeCloseTo(0.2387153, 7);
    expect(r.n).toBe(12);
  });

  it("@example; edge cases: one category -> NaN; units nobody rated ignored; n = 1", () => {
    expect(
      fleissKappa([
        ["a", "a", "a"],
        ["b", "b", "a"],
        ["b", "b", "b"],
      ]).kappa,
    ).toBeCloseTo(0.55, 14);
    expect(
      fleissKappa([
        ["a", "a"],
        ["a", "a"],
      ]).kappa,
    ).toBeNaN();
    const withEmpty = fleissKappa([
      ["a", "a", "a"],
      [null, null, null],
      ["b", "b", "a"],
      ["b", "b", "b"],
    ]);
    expect(withEmpty.kappa).toBeCloseTo(0.55, 14);
    expect(withEmpty.n).toBe(3);
    expect(fleissKappa([["a", "b"]]).kappa).toBe(-1);
    expect(fleissKappa([]).kappa).toBeNaN();
  });

  it("throws errors naming the function", () => {
    expect(() => fleissKappa([["a"], ["a", "b"]])).toThrow(/^fleissKappa: row 1/);
    expect(() => fleissKappa([[NaN, 1]])).toThrow(/^fleissKappa: non-finite value NaN/);
  });
});

describe("gwetAC1 / gwetAC2", () => {
  it("AC1 matches irrCAC gwet.ac1.raw(cac.raw4raters): 0.77544, pa 0.8181818, pe 0.1903212", () => {
    const r = gwetAC1(krippendorff2011);
    expect(r.value).toBeCloseTo(0.77544, 5);
    expect(r.pa).toBeCloseTo(0.8181818, 7);
    expect(r.pe).toBeCloseTo(0.1903212, 7);
  });

  it("AC1 matches irrCAC gwet.ac1.dist(distrib.6raters) = 0.4448007 (pe 0.1914815)", () => {
    const r = gwetAC1(countsToRaw(gwetDistrib6Raters));
    expect(r.value).toBeCloseTo(0.4448007, 7);
    expect(r.pe).toBeCloseTo(0.1914815, 7);
  });

  it("AC1 for two raters matches irrCAC gwet.ac1.table(cont3x3abstractors) = 0.8493305", () => {
    const { a, b } = tableToPairs(cont3x3abstractors);
    expect(gwetAC1(a.map((x, i) => [x, b[i]])).value).toBeCloseTo(0.8493305, 7);
  });

  // Cross-check: an independent numpy implementation of irrCAC's gwet.ac1.raw formula with weights
  // (agree.mat, agree.mat.w = A @ W.T, pa over r_i >= 2, pi = mean(A / r_i), pe = sum(W)·Σπ(1-π)/(q(q-1))),
  // run as  ac2(kd, 'linear') / ac2(kd, 'quadratic')  on the cac.raw4raters data. The same code gives
  // 0.775444068126995 for identity weights, i.e. irrCAC's published AC1 0.77544, which validates it.
  it("AC2 matches the numpy re-implementation of irrCAC weighted AC1 (linear 0.85874, quadratic 0.91400)", () => {
    const lin = gwetAC2(krippendorff2011, { weights: "linear" });
    expect(lin.value).toBeCloseTo(0.8587391364326115, 12);
    expect(lin.pa).toBeCloseTo(0.9393939393939394, 12);
    expect(lin.pe).toBeCloseTo(0.5709635416666667, 12);
    expect(gwetAC2(krippendorff2011, { weights: "quadratic" }).value).toBeCloseTo(0.9140007235516047, 12);
    expect(
      gwetAC2(
        [
          [1, 1],
          [1, 2],
          [2, 2],
          [3, 3],
          [3, 2],
        ],
        { weights: "quadratic" },
      ).value,
    ).toBeCloseTo(0.7058823529411766, 12);
  });

  it("AC2 with identity weights (as a scheme or a matrix) is AC1", () => {
    const ac1 = gwetAC1(krippendorff2011).value;
    expect(gwetAC2(krippendorff2011, { weights: "none" }).value).toBeCloseTo(ac1, 14);
    const eye = [0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].map((j) => (i === j ? 1 : 0)));
    expect(gwetAC2(krippendorff2011, { weights: eye }).value).toBeCloseTo(ac1, 14);
    expect(
      gwetCoefficient(
        "gwetAC1",
        [
          ["y", "y"],
          ["y", "y"],
          ["y", "n"],
          ["n", "n"],
        ],
        "none",
      ).value,
    ).toBeCloseTo(0.5294117647058824, 14);
  });

  it("kappa paradox: with 96% Yes, AC1 stays high where kappa collapses", () => {
    const rows = [
      ...Array(94).fill(["Yes", "Yes"]),
      ["Yes", "No"],
      ["Yes", "No"],
      ["No", "Yes"],
      ["No", "Yes"],
      ["No", "No"],
      ["No", "No"],
    ];
    // Hand computation: pa = 0.96, π_Yes = 0.96, pe = 2·0.96·0.04 = 0.0768, AC1 = (0.96-0.0768)/(1-0.0768)
    expect(gwetAC1(rows).value).toBeCloseTo((0.96 - 0.0768) / (1 - 0.0768), 12);
    expect(fleissKappa(rows).kappa).toBeLessThan(0.5);
  });

  it("edge cases: one category in use -> NaN unless the scale is declared; @example", () => {
    expect(
      gwetAC1([
        ["Yes", "Yes"],
        ["Yes", "Yes"],
      ]).value,
    ).toBeNaN();
    expect(
      gwetAC1(
        [
          ["Yes", "Yes"],
          ["Yes", "Yes"],
        ],
        { categories: ["No", "Yes"] },
      ).value,
    ).toBe(1);
    expect(
      gwetAC1([
        ["y", "y"],
        ["y", "y"],
        ["y", "n"],
        ["n", "n"],
      ]).value,
    ).toBeCloseTo(0.5294117647058824, 14);
    expect(gwetAC1([["a", null]]).value).toBeNaN();
  });

  it("throws errors naming the function", () => {
    expect(() => gwetAC1([["a"], ["a", "b"]])).toThrow(/^gwetAC1: row 1/);
    expect(() => gwetAC2([[1, 2]], { weights: [[1]] })).toThrow(/^gwetAC2: a weight matrix must be 2×2/);
    expect(() => gwetAC2([[1, 2]], { weights: "cubic" as never })).toThrow(/^gwetAC2: unknown weights/);
    expect(() => gwetAC2([[1, Infinity]])).toThrow(/^gwetAC2: non-finite/);
  });
});

describe("percentAgreement", () => {
  it("matches irrCAC pa.coeff.raw(cac.raw4raters) = 0.8181818 and pa2.table(cont3x3abstractors) = 0.89", () => {
    expect(percentAgreement(krippendorff2011)).toBeCloseTo(0.8181818, 7);
    const { a, b } = tableToPairs(cont3x3abstractors);
    expect(percentAgreement(a.map((x, i) => [x, b[i]]))).toBeCloseTo(0.89, 14);
  });

  it("matches the Wikipedia Fleiss example P̄ = 0.378 (mean per-subject agreement)", () => {
    expect(percentAgreement(countsToRaw(wikipediaFleissCounts))).toBeCloseTo(0.378, 3);
  });

  it("@example, one category, n = 1, all missing", () => {
    expect(
      percentAgreement([
        ["y", "y"],
        ["y", "n"],
        ["n", "n"],
        ["n", null],
      ]),
    ).toBeCloseTo(2 / 3, 15);
    expect(percentAgreement([["y", "y"]])).toBe(1);
    expect(percentAgreement([["y", "n"]])).toBe(0);
    expect(percentAgreement([["y", null]])).toBeNaN();
  });

  it("throws errors naming the function", () => {
    expect(() => percentAgreement([["y"], ["y", "n"]])).toThrow(/^percentAgreement: row 1/);
    expect(() => percentAgreement([[NaN, 1]])).toThrow(/^percentAgreement: non-finite/);
    expect(() => percentAgreement(null as never)).toThrow(/^percentAgreement: data must be an array/);
  });
});
