import { describe, expect, it } from "vitest";
import { bootstrapCI, cohenKappa, cohenKappaFromTable, encodeLabels, ppiMean, quantileSorted, seededRandom } from "~/stats";

const mean = (s: number[]) => s.reduce((a, b) => a + b, 0) / s.length;

describe("bootstrapCI", () => {
  const data = Array.from({ length: 30 }, (_, i) => ((i * 7919) % 101) / 10);

  it("is reproducible for a seed, and `random: seededRandom(s)` equals `seed: s`", () => {
    const a = bootstrapCI({ data, statistic: mean, seed: 11, resamples: 500 });
    const b = bootstrapCI({ data, statistic: mean, seed: 11, resamples: 500 });
    const c = bootstrapCI({ data, statistic: mean, random: seededRandom(11), resamples: 500 });
    const d = bootstrapCI({ data, statistic: mean, seed: 12, resamples: 500 });
    expect(a).toEqual(b);
    expect(a).toEqual(c);
    expect(d.ci).not.toEqual(a.ci);
    expect(a.estimate).toBeCloseTo(mean(data), 14);
    // @example
    expect(bootstrapCI({ data: [1, 2, 3, 4, 5, 6, 7, 8], statistic: mean, seed: 1 }).ci).toEqual([2.875, 6.125]);
  });

  it("the interval is the (B+1)α-th order statistic of the resample statistics (numpy.percentile(method='weibull'))", () => {
    const seen: number[] = [];
    const r = bootstrapCI({
      data,
      statistic: (s) => {
        const m = mean(s);
        seen.push(m);
        return m;
      },
      seed: 3,
      resamples: 999,
      level: 0.9,
    });
    const reps = seen.slice(1).sort((x, y) => x - y); // the first call is the estimate on the original data
    expect(reps).toHaveLength(999);
    // B = 999, level 0.9: (B+1)·0.05 = 50 and (B+1)·0.95 = 950 are whole order statistics.
    expect(r.ci[0]).toBe(reps[49]);
    expect(r.ci[1]).toBe(reps[949]);
    expect(r.ci[0]).toBe(quantileSorted(reps, 0.05, 6));
  });

  it("bootstrap SE of a mean ≈ the plug-in SE sd₀/√n (Efron & Tibshirani 1993, §5.2)", () => {
    const r = bootstrapCI({ data, statistic: mean, seed: 5, resamples: 4000 });
    const m = mean(data);
    const sd0 = Math.sqrt(data.reduce((a, x) => a + (x - m) ** 2, 0) / data.length);
    // Monte Carlo error of a bootstrap SE with B = 4000 is about 1/√(2B) ≈ 1.1% relative; allow 5%.
    expect(Math.abs(r.se / (sd0 / Math.sqrt(data.length)) - 1)).toBeLessThan(0.05);
  });

  it("resamples whole clusters: every cluster appears with all its rows", () => {
    const rows = Array.from({ length: 24 }, (_, i) => ({ item: `item${i % 6}`, v: i }));
    let checked = 0;
    const r = bootstrapCI({
      data: rows,
      cluster: (row) => row.item,
      seed: 9,
      resamples: 200,
      statistic: (sample) => {
        const counts = new Map<string, number>();
        for (const row of sample) counts.set(row.item, (counts.get(row.item) ?? 0) + 1);
        for (const c of counts.values()) expect(c % 4).toBe(0);
        checked++;
        return mean(sample.map((s) => s.v));
      },
    });
    expect(checked).toBe(201);
    expect(r.clusters).toBe(6);
  });

  it("passes indices so a statistic can use precomputed typed arrays (fast kappa)", () => {
    const a = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? "x" : i % 3 === 1 ? "y" : "z"));
    const b = a.map((v, i) => (i % 7 === 0 ? "x" : v));
    const { codes, categories } = encodeLabels("test", [a, b]);
    const q = categories.length;
    const counts = new Float64Array(q * q);
    const fast = (_s: unknown[], idx: Int32Array) => {
      counts.fill(0);
      for (let k = 0; k < idx.length; k++) counts[codes[0][idx[k]] * q + codes[1][idx[k]]]++;
      return cohenKappaFromTable({ counts, q }).kappa;
    };
    const slow = (s: number[]) =>
      cohenKappa(
        s.map((i) => a[i]),
        s.map((i) => b[i]),
      ).kappa;
    const rows = a.map((_, i) => i);
    const r1 = bootstrapCI({ data: rows, statistic: fast, seed: 4, resamples: 300 });
    const r2 = bootstrapCI({ data: rows, statistic: slow, seed: 4, resamples: 300 });
    expect(r1.ci[0]).toBeCloseTo(r2.ci[0], 12);
    expect(r1.ci[1]).toBeCloseTo(r2.ci[1], 12);
    expect(r1.estimate).toBeCloseTo(cohenKappa(a, b).kappa, 14);
  });

  it("indicesOnly: the statistic gets the indices alone (no resampled rows) and the same interval", () => {
    const data = Array.from({ length: 200 }, (_, i) => Math.sin(i) * 10);
    const mean = (xs: ArrayLike<number>) => Array.from(xs).reduce((x, y) => x + y, 0) / xs.length;
    const seen: number[] = [];
    const byIndex = bootstrapCI({
      data,
      indicesOnly: true,
      statistic: (sample, ix) => (seen.push(sample.length), mean(Array.from(ix, (i) => data[i]))),
      seed: 9,
      resamples: 200,
      cluster: (_r, i) => Math.floor(i / 4),
    });
    const byRows = bootstrapCI({
      data,
      statistic: (sample) => mean(sample),
      seed: 9,
      resamples: 200,
      cluster: (_r, i) => Math.floor(i / 4),
    });
    expect(byIndex.ci).toEqual(byRows.ci);
    expect(seen.slice(1).every((len) => len === 0)).toBe(true); // the first call is the estimate on all rows
  });

  it("excludes and counts resamples where the statistic is undefined (NaN)", () => {
    const r = bootstrapCI({ data: ["a", "a", "a", "b"], statistic: (s) => (s.includes("b") ? s.length : NaN), seed: 1, resamples: 400 });
    // P(no "b" in a resample of 4) = (3/4)^4 ≈ 0.316
    expect(r.undefinedResamples).toBeGreaterThan(80);
    expect(r.undefinedResamples).toBeLessThan(180);
    expect(r.ci).toEqual([4, 4]);
    const none = bootstrapCI({ data: [1], statistic: () => NaN, seed: 1, resamples: 10 });
    expect(none.ci[0]).toBeNaN();
    // n = 1: every resample is the same row
    expect(bootstrapCI({ data: [5], statistic: mean, seed: 1, resamples: 10 }).ci).toEqual([5, 5]);
  });

  it("throws errors naming the function", () => {
    expect(() => bootstrapCI({ data: [], statistic: mean, seed: 1 })).toThrow(/^bootstrapCI: data must be a non-empty array/);
    expect(() => bootstrapCI({ data: [1], statistic: mean })).toThrow(/^bootstrapCI: pass a seeded generator/);
    expect(() => bootstrapCI({ data: [1], statistic: mean, seed: 1, resamples: 0 })).toThrow(
      /^bootstrapCI: resamples must be a positive integer/,
    );
    expect(() => bootstrapCI({ data: [1], statistic: mean, seed: 1, level: 95 })).toThrow(/^bootstrapCI: level/);
    expect(() => bootstrapCI({ data: [1], statistic: mean, seed: Infinity })).toThrow(/^bootstrapCI: seed must be a finite number/);
    expect(() => bootstrapCI({ data: [1], statistic: mean, seed: 1, cluster: () => ({}) as never })).toThrow(
      /^bootstrapCI: cluster key of row 0/,
    );
  });
});

describe("ppiMean", () => {
  // Original data built by formula. Expected values from an independent numpy re-implementation of
  // ppi_py.ppi_mean_ci / ppi_mean_pointestimate (lam=None, "overall"; 1-D, no weights; alpha=0.05):
  //   lam = clip(mean((Y-Ȳ)(Ŷ-Ŷ̄)) / ((1+n/N)·var(concat(Ŷ, Ŷu), ddof=1)), 0, 1)
  //   est = lam·mean(Ŷu) + mean(Y - lam·Ŷ); se = sqrt((lam·Ŷu).std()²/N + (Y - lam·Ŷ).std()²/n)
  // with Y = [1 if (i*7)%3==0 else 0 for i in range(40)],
  //      Ŷ = [1 if ((i*7)%3==0) != (i%5==0) else 0 for i in range(40)],
  //      Ŷu = [1 if (i*11)%4 != 0 else 0 for i in range(300)]:
  //   lam=None -> (0.5754432289702, 0.5514051301395699, se 0.06322204506073678, CI 0.4274921987915574, 0.6753180614875824)
  //   lam=1    -> (1, 0.7, se 0.07458216945088147, CI 0.5538216339874088, 0.8461783660125911)
  //   lam=0    -> (0, 0.35, se 0.07541551564499178); lam=0.5 -> (0.525, se 0.06299801584177077)
  const Y = Array.from({ length: 40 }, (_, i) => ((i * 7) % 3 === 0 ? 1 : 0));
  const F = Array.from({ length: 40 }, (_, i) => (((i * 7) % 3 === 0) !== (i % 5 === 0) ? 1 : 0));
  const U = Array.from({ length: 300 }, (_, i) => ((i * 11) % 4 !== 0 ? 1 : 0));
  const input = { labelledHuman: Y, labelledJudge: F, unlabelledJudge: U };

  it("PPI++ (power-tuned λ) matches ppi_py's formulas", () => {
    const r = ppiMean(input);
    expect(r.lambda).toBeCloseTo(0.5754432289702, 13);
    expect(r.estimate).toBeCloseTo(0.5514051301395699, 14);
    expect(r.se).toBeCloseTo(0.06322204506073678, 14);
    expect(r.ci[0]).toBeCloseTo(0.4274921987915574, 13);
    expect(r.ci[1]).toBeCloseTo(0.6753180614875824, 13);
    expect(r.naiveHuman).toBe(0.35);
    expect(r.naiveJudge).toBe(0.75);
  });

  it("classic PPI (λ = 1), λ = 0 (human-only classical interval) and a fixed λ", () => {
    const p = ppiMean({ ...input, lambda: "ppi" });
    expect(p.estimate).toBeCloseTo(0.7, 14);
    expect(p.se).toBeCloseTo(0.07458216945088147, 14);
    expect(p.ci[0]).toBeCloseTo(0.5538216339874088, 13);
    const zero = ppiMean({ ...input, lambda: 0 });
    expect(zero.estimate).toBeCloseTo(0.35, 14);
    expect(zero.se).toBeCloseTo(0.07541551564499178, 14);
    expect(zero.ci).toEqual(zero.naiveHumanCI);
    const half = ppiMean({ ...input, lambda: 0.5 });
    expect(half.estimate).toBeCloseTo(0.525, 14);
    expect(half.se).toBeCloseTo(0.06299801584177077, 14);
  });

  it("@example: 4/6 + 1/4", () => {
    expect(
      ppiMean({ labelledHuman: [1, 0, 1, 1], labelledJudge: [1, 0, 1, 0], unlabelledJudge: [1, 1, 0, 1, 0, 1], lambda: "ppi" }).estimate,
    ).toBeCloseTo(4 / 6 + 1 / 4, 15);
  });

  it("edge cases: constant predictions -> λ = 0; n = 1; a perfect judge", () => {
    const flat = ppiMean({ labelledHuman: [1, 0, 1], labelledJudge: [1, 1, 1], unlabelledJudge: [1, 1, 1, 1] });
    expect(flat.lambda).toBe(0);
    expect(flat.estimate).toBeCloseTo(2 / 3, 15);
    const one = ppiMean({ labelledHuman: [1], labelledJudge: [1], unlabelledJudge: [0, 1], lambda: "ppi" });
    expect(one.estimate).toBe(0.5);
    const perfect = ppiMean({
      labelledHuman: [1, 0, 1, 0],
      labelledJudge: [1, 0, 1, 0],
      unlabelledJudge: [1, 0, 0, 0, 1, 0, 0, 0],
      lambda: "ppi",
    });
    expect(perfect.estimate).toBe(0.25);
  });

  it("throws errors naming the function", () => {
    expect(() => ppiMean({ ...input, labelledJudge: F.slice(1) })).toThrow(
      /^ppiMean: labelledHuman and labelledJudge must have the same length \(got 40 and 39\)/,
    );
    expect(() => ppiMean({ labelledHuman: [], labelledJudge: [], unlabelledJudge: [1] })).toThrow(
      /^ppiMean: labelledHuman must not be empty/,
    );
    expect(() => ppiMean({ labelledHuman: [1], labelledJudge: [1], unlabelledJudge: [] })).toThrow(
      /^ppiMean: unlabelledJudge must not be empty/,
    );
    expect(() => ppiMean({ labelledHuman: [NaN], labelledJudge: [1], unlabelledJudge: [1] })).toThrow(
      /^ppiMean: labelledHuman\[0\] is not a finite number/,
    );
    expect(() => ppiMean({ ...input, lambda: Infinity })).toThrow(/^ppiMean: lambda must be/);
    expect(() => ppiMean({ ...input, lambda: "ppi+" as never })).toThrow(/^ppiMean: lambda must be/);
  });
});
