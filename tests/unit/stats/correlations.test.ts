import { describe, expect, it } from "vitest";
import { kendallTauB, pearson, rankAverage, spearman, spearmanFromTable } from "~/stats";
import { anxietyRater2, anxietyRater3 } from "./referenceData";

// Scores with many ties (original data). Reference values from scipy 1.17.1:
//   from scipy import stats
//   stats.pearsonr(x, y).statistic                      -> 0.9127536516599075
//   stats.pearsonr(x, y).confidence_interval(0.95)      -> (0.788865456549363, 0.9653553712044333)
//   stats.pearsonr(x, y).confidence_interval(0.9).low   -> 0.8160395039198312
//   stats.spearmanr(x, y).statistic                     -> 0.9214037634181818
//   stats.kendalltau(x, y, variant='b').statistic       -> 0.8385827985953987
const x = [4, 5, 3, 3, 2, 5, 1, 4, 4, 2, 3, 5, 1, 2, 4, 3, 5, 2, 4, 3];
const y = [3.5, 5, 3, 2.5, 2, 4.5, 1.5, 4, 3.5, 3, 3, 4, 1, 2.5, 4.5, 2, 5, 1.5, 3.5, 3.5];

// A longer tied sample (n = 200) built by formula; scipy 1.17.1 on
//   i = np.arange(200); u = (i*37) % 11; v = (i*53 + (i*i) % 7) % 9; w = u + ((i*13) % 5 - 2)
//   kendalltau(u, v, variant='b') -> -0.10875707226346086; spearmanr(u, v) -> -0.13387763337198696
//   pearsonr(u, v) -> -0.13361383393801646
//   kendalltau(u, w, variant='b') -> 0.7913964225161912; spearmanr(u, w) -> 0.9183856752896781
//   pearsonr(u, w) -> 0.9120415465745118, CI95 (0.8853277540965656, 0.9327541217335726)
const idx = Array.from({ length: 200 }, (_, i) => i);
const u = idx.map((i) => (i * 37) % 11);
const v = idx.map((i) => (i * 53 + ((i * i) % 7)) % 9);
const w = idx.map((i) => ((i * 37) % 11) + (((i * 13) % 5) - 2));

describe("pearson", () => {
  it("matches scipy.stats.pearsonr and its Fisher-z confidence_interval", () => {
    const r = pearson(x, y);
    expect(r.r).toBeCloseTo(0.9127536516599075, 13);
    expect(r.ci[0]).toBeCloseTo(0.788865456549363, 12);
    expect(r.ci[1]).toBeCloseTo(0.9653553712044333, 12);
    expect(r.n).toBe(20);
    expect(pearson(x, y, { level: 0.9 }).ci[0]).toBeCloseTo(0.8160395039198312, 12);
    const big = pearson(u, w);
    expect(big.r).toBeCloseTo(0.9120415465745118, 13);
    expect(big.ci[0]).toBeCloseTo(0.8853277540965656, 12);
    expect(big.ci[1]).toBeCloseTo(0.9327541217335726, 12);
    expect(pearson(u, v).r).toBeCloseTo(-0.13361383393801646, 13);
  });

  it("matches scipy on R irr anxiety raters 2 and 3: pearsonr -> 0.28152873700982844", () => {
    expect(pearson(anxietyRater2, anxietyRater3).r).toBeCloseTo(0.28152873700982844, 13);
  });

  it("@example: 0.8 (by hand: Sxy = 8, Sxx = Syy = 10)", () => {
    expect(pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]).r).toBeCloseTo(0.8, 15);
  });

  it("edge cases: missing pairs dropped, constant variable -> NaN, n = 1 and n = 2, perfect correlation", () => {
    expect(pearson([1, null, 3, 4], [2, 5, undefined, 8]).n).toBe(2);
    expect(pearson([1, 1, 1], [1, 2, 3]).r).toBeNaN();
    expect(pearson([1], [2]).r).toBeNaN();
    const two = pearson([1, 2], [3, 5]);
    expect(two.r).toBe(1);
    expect(two.ci[0]).toBeNaN();
    const perfect = pearson([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]);
    expect(perfect.r).toBe(1);
    expect(perfect.ci).toEqual([1, 1]);
  });

  it("throws on length mismatch and non-finite input, naming the function", () => {
    expect(() => pearson([1, 2], [1])).toThrow(/^pearson: x and y must have the same length \(got 2 and 1\)/);
    expect(() => pearson([1, NaN], [1, 2])).toThrow(/^pearson: x\[1\] is not finite/);
    expect(() => pearson([1, 2], [1, Infinity])).toThrow(/^pearson: y\[1\] is not finite/);
    expect(() => pearson([1, "2" as never], [1, 2])).toThrow(/^pearson: x\[1\] is not a number/);
  });
});

describe("spearman", () => {
  it("matches scipy.stats.spearmanr (average ranks for ties)", () => {
    expect(spearman(x, y).rho).toBeCloseTo(0.9214037634181818, 13);
    expect(spearman(u, v).rho).toBeCloseTo(-0.13387763337198696, 13);
    expect(spearman(u, w).rho).toBeCloseTo(0.9183856752896781, 13);
    // scipy.stats.spearmanr(anxiety[:,1], anxiety[:,2]).statistic -> 0.3423295157129656
    expect(spearman(anxietyRater2, anxietyRater3).rho).toBeCloseTo(0.3423295157129656, 13);
    // @example: scipy.stats.spearmanr([1,2,3,4,5],[5,6,7,8,7]).statistic -> 0.8207826816681233
    expect(spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]).rho).toBeCloseTo(0.8207826816681233, 14);
  });

  it("edge cases and errors", () => {
    expect(spearman([1], [1]).rho).toBeNaN();
    expect(spearman([2, 2, 2], [1, 2, 3]).rho).toBeNaN();
    expect(() => spearman([1, 2, 3], [1, 2])).toThrow(/^spearman: x and y must have the same length/);
    expect(() => spearman([NaN], [1])).toThrow(/^spearman: x\[0\] is not finite/);
  });
});

describe("kendallTauB", () => {
  it("matches scipy.stats.kendalltau(x, y, variant='b') with ties", () => {
    expect(kendallTauB(x, y).tau).toBeCloseTo(0.8385827985953987, 13);
    expect(kendallTauB(u, v).tau).toBeCloseTo(-0.10875707226346086, 13);
    expect(kendallTauB(u, w).tau).toBeCloseTo(0.7913964225161912, 13);
    // scipy.stats.kendalltau(anxiety[:,1], anxiety[:,2], variant='b').statistic -> 0.2935307449472095
    expect(kendallTauB(anxietyRater2, anxietyRater3).tau).toBeCloseTo(0.2935307449472095, 13);
  });

  it("agrees with the O(n²) textbook definition on random tied data (independent check)", () => {
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let rep = 0; rep < 20; rep++) {
      const n = 5 + Math.floor(rnd() * 60);
      const a = Array.from({ length: n }, () => Math.floor(rnd() * 6));
      const b = Array.from({ length: n }, () => Math.floor(rnd() * 4));
      let s = 0;
      let tx = 0;
      let ty = 0;
      const n0 = (n * (n - 1)) / 2;
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const dx = Math.sign(a[i] - a[j]);
          const dy = Math.sign(b[i] - b[j]);
          s += dx * dy;
          if (dx === 0) tx++;
          if (dy === 0) ty++;
        }
      }
      const expected = s / Math.sqrt((n0 - tx) * (n0 - ty));
      const got = kendallTauB(a, b).tau;
      if (Number.isNaN(expected)) expect(got).toBeNaN();
      else expect(got).toBeCloseTo(expected, 12);
    }
  });

  it("@example, edge cases and errors", () => {
    expect(kendallTauB([1, 2, 3, 4, 5], [3, 1, 2, 5, 4]).tau).toBeCloseTo(0.4, 15);
    expect(kendallTauB([1], [1]).tau).toBeNaN();
    expect(kendallTauB([1, 1, 1], [1, 2, 3]).tau).toBeNaN();
    expect(kendallTauB([1, 2, null], [2, 1, 5]).tau).toBe(-1);
    expect(() => kendallTauB([1, 2], [1])).toThrow(/^kendallTauB: x and y must have the same length/);
    expect(() => kendallTauB([Infinity], [1])).toThrow(/^kendallTauB: x\[0\] is not finite/);
  });
});

describe("rankAverage", () => {
  it("matches scipy.stats.rankdata(method='average') and the @example", () => {
    expect(Array.from(rankAverage([10, 20, 10, 30]))).toEqual([1.5, 3, 1.5, 4]);
    // scipy.stats.rankdata([3, 1, 4, 1, 5, 9, 2, 6, 5]) -> [4, 1.5, 5, 1.5, 6.5, 9, 3, 8, 6.5]
    expect(Array.from(rankAverage([3, 1, 4, 1, 5, 9, 2, 6, 5]))).toEqual([4, 1.5, 5, 1.5, 6.5, 9, 3, 8, 6.5]);
    expect(() => rankAverage([1, NaN])).toThrow(/^rankAverage: values\[1\] is not a number/);
  });
  it("handles negatives, -0 = 0, runs of ties and an empty input like scipy", () => {
    // scipy.stats.rankdata([-2, 0, -0.0, 5, -2, 5, 5]) -> [1.5, 3.5, 3.5, 6, 1.5, 6, 6]
    expect(Array.from(rankAverage([-2, 0, -0, 5, -2, 5, 5]))).toEqual([1.5, 3.5, 3.5, 6, 1.5, 6, 6]);
    // every value tied: every rank is (n + 1) / 2
    expect(Array.from(rankAverage([7, 7, 7, 7]))).toEqual([2.5, 2.5, 2.5, 2.5]);
    expect(Array.from(rankAverage([]))).toEqual([]);
  });
  it("agrees with the definition 1 + #{x_j < x_i} + (#{x_j = x_i} - 1)/2 on 2,000 random values with many ties", () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const xs = Array.from({ length: 2000 }, () => Math.floor(next() * 60) - 30 + (next() < 0.1 ? 0.5 : 0));
    const ranks = rankAverage(xs);
    for (let i = 0; i < xs.length; i += 97) {
      let less = 0;
      let equal = 0;
      for (const x of xs) {
        if (x < xs[i]) less++;
        else if (x === xs[i]) equal++;
      }
      expect(ranks[i]).toBe(1 + less + (equal - 1) / 2);
    }
  });
});

describe("spearmanFromTable", () => {
  it("is spearman's rho of the pairs the table counts (midranks for ties), and the @example", () => {
    // pairs (0,0), (0,0), (1,0), (1,1): scipy.stats.spearmanr([0,0,1,1], [0,0,0,1]).statistic = 0.5773502691896258
    expect(spearmanFromTable({ counts: [2, 0, 1, 1], q: 2 }).rho).toBeCloseTo(0.5773502691896258, 15);
    expect(spearmanFromTable({ counts: [2, 0, 1, 1], q: 2 }).rho).toBeCloseTo(spearman([0, 0, 1, 1], [0, 0, 0, 1]).rho, 15);
    let seed = 5;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const [q, n] of [
      [5, 3000],
      [3, 40],
      [7, 900],
    ]) {
      const x: number[] = [];
      const y: number[] = [];
      const t = new Array(q * q).fill(0);
      for (let i = 0; i < n; i++) {
        const a = Math.floor(next() * q);
        const b = Math.min(q - 1, Math.max(0, a + Math.floor(next() * 3) - 1));
        x.push(a);
        y.push(b);
        t[a * q + b]++;
      }
      expect(spearmanFromTable({ counts: t, q }).rho, `q=${q}`).toBeCloseTo(spearman(x, y).rho, 12);
      expect(spearmanFromTable({ counts: t, q }).n).toBe(n);
    }
    expect(spearmanFromTable({ counts: [3, 0, 0, 0], q: 2 }).rho).toBeNaN(); // both constant
    expect(spearmanFromTable({ counts: [1, 0, 0, 0], q: 2 }).rho).toBeNaN(); // n < 2
    expect(() => spearmanFromTable({ counts: [1, 2, 3], q: 2 })).toThrow(/^spearmanFromTable: counts must have q\*q entries/);
  });
});
