import { describe, expect, it } from "vitest";
import { agreementWeights, encodeLabels, normalQuantile, pairedNumbers, quantileSorted, seededRandom, unitCategoryCounts } from "~/stats";

describe("seededRandom", () => {
  it("is reproducible, in [0, 1), and differs between seeds (@example 0.6011037519201636)", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = a();
    expect(first).toBe(0.6011037519201636);
    expect(b()).toBe(first);
    const c = seededRandom(43);
    expect(c()).not.toBe(first);
    let sum = 0;
    const r = seededRandom(7);
    for (let i = 0; i < 100000; i++) {
      const x = r();
      expect(x >= 0 && x < 1).toBe(true);
      sum += x;
    }
    // mean of 1e5 uniforms: sd 0.000913, so |mean - 0.5| < 0.004 is a > 4 sd band
    expect(Math.abs(sum / 100000 - 0.5)).toBeLessThan(0.004);
  });
  it("throws for a non-finite seed", () => {
    expect(() => seededRandom(NaN)).toThrow(/^seededRandom: seed must be a finite number/);
  });
});

describe("normalQuantile", () => {
  it("matches scipy.stats.norm.ppf to 1e-14", () => {
    // scipy 1.17.1: norm.ppf(0.975) = 1.959963984540054, norm.ppf(0.995) = 2.5758293035489004,
    // norm.ppf(0.001) = -3.090232306167813, norm.ppf(1e-10) = -6.361340902404056, norm.ppf(0.3) = -0.5244005127080409
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 14);
    expect(normalQuantile(0.995)).toBeCloseTo(2.5758293035489004, 14);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232306167813, 14);
    expect(normalQuantile(1e-10)).toBeCloseTo(-6.361340902404056, 13);
    expect(normalQuantile(0.3)).toBeCloseTo(-0.5244005127080409, 14);
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(1)).toBe(Infinity);
    expect(() => normalQuantile(1.5)).toThrow(/^normalQuantile: p must be a probability/);
  });
});

describe("quantileSorted", () => {
  it("matches numpy.percentile (linear, type 7)", () => {
    // numpy.percentile([1, 2, 3, 4], [25, 50, 2.5, 97.5]) -> [1.75, 2.5, 1.075, 3.925]
    expect(quantileSorted([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4], 0.025)).toBeCloseTo(1.075, 14);
    expect(quantileSorted([1, 2, 3, 4], 0.975)).toBeCloseTo(3.925, 14);
    expect(quantileSorted([7], 0.3)).toBe(7);
    // numpy.percentile([1, 2, 3, 4], [25, 2.5, 97.5], method='weibull') -> [1.25, 1.0, 4.0]
    expect(quantileSorted([1, 2, 3, 4], 0.25, 6)).toBe(1.25);
    expect(quantileSorted([1, 2, 3, 4], 0.025, 6)).toBe(1);
    expect(quantileSorted([1, 2, 3, 4], 0.975, 6)).toBe(4);
    expect(() => quantileSorted([1], 0.5, 5 as never)).toThrow(/^quantileSorted: type must be 6 or 7/);
    expect(() => quantileSorted([], 0.5)).toThrow(/^quantileSorted: the sample is empty/);
  });
});

describe("encodeLabels", () => {
  it("sorts numbers numerically, then booleans, then strings; 1 and '1' differ (@example)", () => {
    const e = encodeLabels("demo", [
      ["b", "a", null],
      ["a", "a", "b"],
    ]);
    expect(e.categories).toEqual(["a", "b"]);
    expect(Array.from(e.codes[0])).toEqual([1, 0, -1]);
    expect(encodeLabels("demo", [[10, 9, "1", 1, true]]).categories).toEqual([1, 9, 10, true, "1"]);
  });
  it("throws with the caller's name", () => {
    expect(() => encodeLabels("caller", [[NaN]])).toThrow(/^caller: non-finite value NaN/);
    expect(() => encodeLabels("caller", [["a"]], ["a", "a"])).toThrow(/^caller: duplicate category "a"/);
    expect(() => encodeLabels("caller", [[[1] as never]])).toThrow(/^caller: unsupported value/);
  });
});

describe("unitCategoryCounts / agreementWeights / pairedNumbers", () => {
  it("@examples", () => {
    expect(
      Array.from(
        unitCategoryCounts("demo", [
          ["a", "a"],
          ["a", "b"],
        ]).counts,
      ),
    ).toEqual([2, 0, 1, 1]);
    expect(Array.from(agreementWeights(3, "linear"))).toEqual([1, 0.5, 0, 0.5, 1, 0.5, 0, 0.5, 1]);
    expect(Array.from(agreementWeights(3, "quadratic"))).toEqual([1, 0.75, 0, 0.75, 1, 0.75, 0, 0.75, 1]);
    expect(Array.from(agreementWeights(1, "linear"))).toEqual([1]);
    const p = pairedNumbers("demo", [1, null, 3], [4, 5, 6]);
    expect(Array.from(p.x)).toEqual([1, 3]);
    expect(Array.from(p.y)).toEqual([4, 6]);
  });
  it("throw naming the function", () => {
    expect(() => agreementWeights(0, "linear")).toThrow(/^agreementWeights: q must be a positive integer/);
    expect(() => agreementWeights(2, "cubic" as never)).toThrow(/^agreementWeights: unknown weights/);
    expect(() => unitCategoryCounts("caller", [[1], [1, 2]])).toThrow(/^caller: row 1 has 2 ratings/);
  });
  it("passes counted data through, checking the categories asked for", () => {
    const counted = unitCategoryCounts("demo", [
      ["a", "a"],
      ["a", "b"],
    ]);
    expect(unitCategoryCounts("again", counted)).toBe(counted);
    expect(unitCategoryCounts("again", counted, ["a", "b"])).toBe(counted);
    expect(() => unitCategoryCounts("caller", counted, ["b", "a"])).toThrow(
      /^caller: the counted data has categories \["a","b"\], not \["b","a"\]/,
    );
    expect(() => unitCategoryCounts("caller", counted, ["a", "b", "c"])).toThrow(/^caller: the counted data has categories/);
  });
});
