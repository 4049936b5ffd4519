import { describe, expect, it } from "vitest";
import { agreementWeights, cohenKappa, cohenKappaFromTable, pabak, pabakFromTable } from "~/stats";
import { anxietyRater2, anxietyRater3, cont3x3abstractors, tableToPairs } from "./referenceData";

// SAS PROC FREQ / AGREE printout quoted in statsmodels/stats/tests/test_inter_rater.py
// (class UnweightedCohens / TestWeightedCohens) for the table [[0,4,1],[0,8,0],[0,1,5]].
const sasTable = [
  [0, 4, 1],
  [0, 8, 0],
  [0, 1, 5],
];

describe("cohenKappaFromTable", () => {
  it("matches SAS PROC FREQ simple kappa: 0.4842, ASE 0.1380, 95% CI (0.2137, 0.7547), ASE under H0 0.1484", () => {
    const r = cohenKappaFromTable(sasTable);
    expect(r.kappa).toBeCloseTo(0.4842, 4);
    expect(r.se).toBeCloseTo(0.138, 4);
    expect(r.ci[0]).toBeCloseTo(0.2137, 4);
    expect(r.ci[1]).toBeCloseTo(0.7547, 4);
    expect(r.seNull).toBeCloseTo(0.1484, 4);
    expect(r.n).toBe(19);
    // the @example value
    expect(r.kappa).toBe(0.4841628959276017);
  });

  it("matches SAS PROC FREQ weighted kappa (Cicchetti-Allison = linear): 0.4701, ASE 0.1457, CI (0.1845, 0.7558), H0 ASE 0.1426", () => {
    const r = cohenKappaFromTable(sasTable, { weights: "linear" });
    expect(r.kappa).toBeCloseTo(0.4701, 4);
    expect(r.se).toBeCloseTo(0.1457, 4);
    expect(r.ci[0]).toBeCloseTo(0.1845, 4);
    expect(r.ci[1]).toBeCloseTo(0.7558, 4);
    expect(r.seNull).toBeCloseTo(0.1426, 4);
  });

  it("matches irrCAC kappa2.table(cont3x3abstractors): kappa 0.7964094, se 0.05891072 (irrCAC README)", () => {
    const r = cohenKappaFromTable(cont3x3abstractors);
    expect(r.kappa).toBeCloseTo(0.7964094, 7);
    expect(r.se).toBeCloseTo(0.05891072, 8);
    expect(r.po).toBeCloseTo(0.89, 12);
    // CI is kappa ± 1.959964·se (irrCAC prints a t-based (0.68, 0.913); we use the normal quantile like SAS).
    expect(r.ci[0]).toBeCloseTo(0.7964094 - 1.959963984540054 * 0.05891072, 6);
  });

  it("accepts a flat counts object and an explicit weight matrix equal to the linear scheme", () => {
    const w = Array.from(agreementWeights(3, "linear"));
    const m = [w.slice(0, 3), w.slice(3, 6), w.slice(6, 9)];
    const a = cohenKappaFromTable(sasTable, { weights: m });
    const b = cohenKappaFromTable({ counts: sasTable.flat(), q: 3 }, { weights: "linear" });
    expect(a.kappa).toBe(b.kappa);
    expect(a.se).toBe(b.se);
  });

  it("returns NaN (not a throw) when chance agreement is 1 and for an empty table", () => {
    const one = cohenKappaFromTable([[10]]);
    expect(one.kappa).toBeNaN();
    expect(one.se).toBeNaN();
    expect(one.pe).toBe(1);
    const empty = cohenKappaFromTable([
      [0, 0],
      [0, 0],
    ]);
    expect(empty.kappa).toBeNaN();
    expect(empty.n).toBe(0);
  });

  it("throws errors naming the function", () => {
    expect(() => cohenKappaFromTable([[1, 2], [3]])).toThrow(/^cohenKappaFromTable: table must be square/);
    expect(() =>
      cohenKappaFromTable([
        [1, -2],
        [3, 4],
      ]),
    ).toThrow(/^cohenKappaFromTable: counts must be finite/);
    expect(() =>
      cohenKappaFromTable([
        [1, NaN],
        [3, 4],
      ]),
    ).toThrow(/^cohenKappaFromTable:/);
    expect(() =>
      cohenKappaFromTable(
        [
          [1, 2],
          [3, 4],
        ],
        { weights: "cubic" as never },
      ),
    ).toThrow(/^cohenKappaFromTable: unknown weights/);
    expect(() =>
      cohenKappaFromTable(
        [
          [1, 2],
          [3, 4],
        ],
        {
          weights: [
            [1, 0.5],
            [0.5, 0.9],
          ],
        },
      ),
    ).toThrow(/^cohenKappaFromTable: agreement weights need w\[i\]\[i\] = 1/);
    expect(() =>
      cohenKappaFromTable(
        [
          [1, 2],
          [3, 4],
        ],
        { level: 1 },
      ),
    ).toThrow(/^cohenKappaFromTable: level/);
  });
});

describe("cohenKappa (raw labels)", () => {
  it("equals the table version on the expanded irrCAC cont3x3abstractors data", () => {
    const { a, b } = tableToPairs(cont3x3abstractors);
    const r = cohenKappa(a, b);
    expect(r.kappa).toBeCloseTo(0.7964094, 7);
    expect(r.se).toBeCloseTo(0.05891072, 8);
    expect(r.categories).toEqual([1, 2, 3]);
  });

  // R irr::kappa2 on anxiety[,2:3], quoted in statsmodels test_inter_rater.py (test_cohens_kappa_irr):
  // unweighted -0.006289308, "equal" (linear) 0.1459075, "squared" (quadratic) 0.2520325.
  // irr uses the levels present (1,2,3,4,6) at equally spaced positions, as we do.
  it("matches R irr::kappa2(anxiety[,2:3]) unweighted, equal and squared weights", () => {
    expect(cohenKappa(anxietyRater2, anxietyRater3).kappa).toBeCloseTo(-0.006289308, 8);
    expect(cohenKappa(anxietyRater2, anxietyRater3, { weights: "linear" }).kappa).toBeCloseTo(0.1459075, 7);
    expect(cohenKappa(anxietyRater2, anxietyRater3, { weights: "quadratic" }).kappa).toBeCloseTo(0.2520325, 7);
  });

  it("declaring the full scale changes the weight positions (category 5 kept)", () => {
    const full = cohenKappa(anxietyRater2, anxietyRater3, { weights: "linear", categories: [1, 2, 3, 4, 5, 6] });
    const present = cohenKappa(anxietyRater2, anxietyRater3, { weights: "linear" });
    expect(full.categories).toHaveLength(6);
    expect(full.kappa).not.toBeCloseTo(present.kappa, 6);
    // Unweighted kappa does not depend on unused categories.
    expect(cohenKappa(anxietyRater2, anxietyRater3, { categories: [1, 2, 3, 4, 5, 6] }).kappa).toBeCloseTo(-0.006289308, 8);
  });

  it("@example: 0.5", () => {
    expect(cohenKappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]).kappa).toBeCloseTo(0.5, 15);
  });

  it("drops pairs with a missing rating", () => {
    const r = cohenKappa(["y", null, "y", "n", "n", undefined], ["y", "y", "n", "n", "n", "n"]);
    expect(r.n).toBe(4);
    expect(r.kappa).toBeCloseTo(0.5, 15);
  });

  it("edge cases: one category in use -> NaN; a rater who always says the same label -> kappa 0; n = 1", () => {
    expect(cohenKappa(["Yes", "Yes", "Yes"], ["Yes", "Yes", "Yes"]).kappa).toBeNaN();
    // Rater B always "Yes": pe = po for every table, so kappa = 0 whatever A says.
    const constant = cohenKappa(["Yes", "No", "Yes", "No", "Yes"], ["Yes", "Yes", "Yes", "Yes", "Yes"]);
    expect(constant.kappa).toBeCloseTo(0, 15);
    // n = 1: agreement -> pe = 1 -> NaN; disagreement -> po = 0, pe = 0 -> 0.
    expect(cohenKappa(["a"], ["a"]).kappa).toBeNaN();
    expect(cohenKappa(["a"], ["b"]).kappa).toBe(0);
    expect(cohenKappa([], []).kappa).toBeNaN();
    expect(cohenKappa([null], ["a"]).n).toBe(0);
  });

  it("throws on a length mismatch and on non-finite input, naming the function", () => {
    expect(() => cohenKappa(["a", "b"], ["a"])).toThrow(/^cohenKappa: a and b must have the same length \(got 2 and 1\)/);
    expect(() => cohenKappa([1, NaN], [1, 2])).toThrow(/^cohenKappa: non-finite value NaN/);
    expect(() => cohenKappa([1, Infinity], [1, 2])).toThrow(/^cohenKappa: non-finite value Infinity/);
    expect(() => cohenKappa(["a", "c"], ["a", "b"], { categories: ["a", "b"] })).toThrow(
      /^cohenKappa: value "c" .* not one of the given categories/,
    );
    expect(() => cohenKappa([{} as never], ["a"])).toThrow(/^cohenKappa: unsupported value/);
  });
});

describe("pabak", () => {
  it("is 2·po - 1 (Byrt, Bishop & Carlin 1993); kappa paradox: 96% Yes, kappa low, PABAK high", () => {
    // 100 items: both Yes 94, A Yes/B No 2, A No/B Yes 2, both No 2. po = 0.96.
    const a = [...Array(94).fill("Yes"), "Yes", "Yes", "No", "No", "No", "No"];
    const b = [...Array(94).fill("Yes"), "No", "No", "Yes", "Yes", "No", "No"];
    expect(pabak(a, b)).toBeCloseTo(0.92, 14);
    // Cohen's kappa on the same table by hand: pe = 0.96² + 0.04² = 0.9232, kappa = (0.96 - 0.9232)/(1 - 0.9232) = 0.4791666…
    expect(cohenKappa(a, b).kappa).toBeCloseTo((0.96 - 0.9232) / (1 - 0.9232), 12);
  });

  it("@example, one category in use, n = 1, missing values", () => {
    expect(pabak(["y", "y", "y", "n"], ["y", "y", "y", "y"])).toBe(0.5);
    expect(pabak(["y", "y"], ["y", "y"])).toBe(1);
    expect(pabak(["y"], ["n"])).toBe(-1);
    expect(pabak([null, "y"], ["n", "y"])).toBe(1);
    expect(pabak([null], ["n"])).toBeNaN();
  });

  it("pabakFromTable gives pabak's figure from the 2×2 table, and the @example", () => {
    // rows: first rater y/n, columns: second rater y/n, for the @example pairs of pabak
    expect(pabakFromTable({ counts: [3, 0, 1, 0], q: 2 })).toBe(pabak(["y", "y", "y", "n"], ["y", "y", "y", "y"]));
    let seed = 3;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const a = Array.from({ length: 997 }, () => (next() < 0.8 ? "y" : "n"));
    const b = a.map((x) => (next() < 0.9 ? x : x === "y" ? "n" : "y"));
    const t = [0, 0, 0, 0];
    a.forEach((x, i) => t[(x === "y" ? 0 : 2) + (b[i] === "y" ? 0 : 1)]++);
    expect(pabakFromTable({ counts: t, q: 2 })).toBe(pabak(a, b, { categories: ["y", "n"] }));
    expect(pabakFromTable({ counts: [0, 0, 0, 0], q: 2 })).toBeNaN();
    expect(() => pabakFromTable({ counts: new Array(9).fill(1), q: 3 })).toThrow(/^pabakFromTable: PABAK is defined for two categories/);
    expect(() => pabakFromTable({ counts: [1, -1, 0, 0], q: 2 })).toThrow(/^pabakFromTable: counts must be finite and non-negative/);
  });

  it("throws for more than two categories, a length mismatch and non-finite input", () => {
    expect(() => pabak(["a", "b", "c"], ["a", "b", "c"])).toThrow(/^pabak: PABAK is defined for two categories; found 3/);
    expect(() => pabak(["a"], ["a", "b"])).toThrow(/^pabak: a and b must have the same length/);
    expect(() => pabak([NaN], [1])).toThrow(/^pabak: non-finite/);
  });
});
