import { describe, expect, it } from "vitest";
import { holmAdjust } from "~/stats";

// Expected values follow R's definition of p.adjust(p, "holm"):
//   pmin(1, cummax((m - i + 1) * p[o]))[order(o)], NA removed from m.
describe("holmAdjust", () => {
  it("matches R p.adjust(method = 'holm') and the @example", () => {
    // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") -> 0.03 0.06 0.06 0.02
    expect(holmAdjust([0.01, 0.04, 0.03, 0.005])).toEqual([0.03, 0.06, 0.06, 0.02]);
    // R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") -> 0.05 0.08 0.09 0.09 0.09
    const r = holmAdjust([0.01, 0.02, 0.03, 0.04, 0.05]);
    [0.05, 0.08, 0.09, 0.09, 0.09].forEach((x, i) => expect(r[i]).toBeCloseTo(x, 15));
    // R: p.adjust(c(0.5, 0.9), "holm") -> 1 1 (capped at 1)
    expect(holmAdjust([0.5, 0.9])).toEqual([1, 1]);
  });

  it("leaves NaN out of m, as R does with NA", () => {
    // R: p.adjust(c(0.01, NA, 0.02), "holm") -> 0.02 NA 0.02
    const r = holmAdjust([0.01, NaN, 0.02]);
    expect(r[0]).toBeCloseTo(0.02, 15);
    expect(r[1]).toBeNaN();
    expect(r[2]).toBeCloseTo(0.02, 15);
    expect(holmAdjust([])).toEqual([]);
    expect(holmAdjust([0.2])).toEqual([0.2]); // one test: nothing to adjust
  });

  it("is never below the raw p, never above Bonferroni, and keeps the order of the raw p-values", () => {
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const p = Array.from({ length: 40 }, () => (next() < 0.3 ? next() * 0.01 : next()));
    const adj = holmAdjust(p);
    p.forEach((x, i) => {
      expect(adj[i]).toBeGreaterThanOrEqual(x);
      expect(adj[i]).toBeLessThanOrEqual(Math.min(1, p.length * x));
    });
    for (let i = 0; i < p.length; i++) for (let j = 0; j < p.length; j++) if (p[i] < p[j]) expect(adj[i]).toBeLessThanOrEqual(adj[j]);
  });

  it("rejects values that are not probabilities", () => {
    expect(() => holmAdjust([0.1, 1.5])).toThrow(/^holmAdjust: p\[1\] = 1.5 is not a probability/);
    expect(() => holmAdjust([-0.1])).toThrow(/^holmAdjust: p\[0\]/);
  });
});
