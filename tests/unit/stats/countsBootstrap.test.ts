/**
 * Resampling from counts: the binomial/multinomial sampler, the counts-based
 * bootstrap (same draws as the row bootstrap on small data, the same
 * distribution on large data), and the weighted pattern statistics, each checked
 * against the row-based app/stats function it replaces.
 */
import { describe, expect, it } from "vitest";
import {
  binomialSample,
  bootstrapCI,
  cohenKappa,
  cohenKappaClusteredSE,
  cohenKappaFromTable,
  countsBootstrapCI,
  fleissKappa,
  fleissKappaSE,
  gwetAC1,
  gwetSE,
  kendallTauB,
  kendallTauBFromTable,
  krippendorffAlpha,
  krippendorffAlphaSE,
  multinomialSample,
  patternStatistics,
  pearson,
  pooledKappa,
  pearsonFromTable,
  percentAgreement,
  ratingPatterns,
  seededRandom,
  type Rating,
} from "~/stats";
import { stirlingTail } from "~/stats/binomialSample";

/** log C(n, k) + k log p + (n − k) log(1 − p), summing logs (independent of the sampler's arithmetic). */
function binomPmf(n: number, p: number): Float64Array {
  const logFact = new Float64Array(n + 1);
  for (let i = 1; i <= n; i++) logFact[i] = logFact[i - 1] + Math.log(i);
  const out = new Float64Array(n + 1);
  for (let k = 0; k <= n; k++) out[k] = Math.exp(logFact[n] - logFact[k] - logFact[n - k] + k * Math.log(p) + (n - k) * Math.log1p(-p));
  return out;
}

/** Pearson chi-square of observed counts against expected probabilities, pooling cells with expectation < 5. */
function chiSquare(observed: Float64Array, probs: Float64Array, draws: number): { stat: number; df: number } {
  let stat = 0;
  let df = -1;
  let eAcc = 0;
  let oAcc = 0;
  for (let k = 0; k < probs.length; k++) {
    eAcc += probs[k] * draws;
    oAcc += observed[k];
    if (eAcc >= 5) {
      stat += (oAcc - eAcc) ** 2 / eAcc;
      df++;
      eAcc = 0;
      oAcc = 0;
    }
  }
  if (eAcc > 0) stat += (oAcc - eAcc) ** 2 / Math.max(eAcc, 1e-9);
  return { stat, df };
}

describe("binomialSample", () => {
  it("Stirling tail f_c(k) equals log k! − [(k + ½) log(k + 1) − (k + 1) + ½ log 2π] (table k ≤ 9, series beyond)", () => {
    let logFact = 0;
    for (let k = 0; k <= 40; k++) {
      if (k > 0) logFact += Math.log(k);
      const exact = logFact - ((k + 0.5) * Math.log(k + 1) - (k + 1) + 0.5 * Math.log(2 * Math.PI));
      // k ≤ 9 from the table; beyond, the three-term series, whose error is below the next term 1/(1680 (k + 1)⁷).
      if (k <= 9) expect(stirlingTail(k), `k = ${k}`).toBeCloseTo(exact, 12);
      else expect(Math.abs(stirlingTail(k) - exact), `k = ${k}`).toBeLessThan(1 / (1680 * (k + 1) ** 7) + 1e-13); // + rounding of the summed logs
    }
  });

  it.each([
    [100, 0.3, 200_000], // BTRD (n·p = 30)
    [1000, 0.02, 200_000], // BTRD (n·p = 20)
    [40, 0.1, 200_000], // inversion (n·p = 4)
    [25, 0.8, 200_000], // p > ½: n − Binomial(n, 0.2), inversion
    [5000, 0.6, 100_000], // p > ½ through BTRD
  ])("Binomial(%i, %f): %i draws fit the exact pmf (chi-square, p > 0.001)", (n, p, draws) => {
    const random = seededRandom(12345);
    const observed = new Float64Array(n + 1);
    for (let i = 0; i < draws; i++) observed[binomialSample(n, p, random)]++;
    const { stat, df } = chiSquare(observed, binomPmf(n, p), draws);
    // Chi-square critical value at 0.001 by the Wilson-Hilferty approximation: df (1 − 2/(9df) + 3.09·√(2/(9df)))³.
    const crit = df * (1 - 2 / (9 * df) + 3.09 * Math.sqrt(2 / (9 * df))) ** 3;
    expect(stat, `chi-square ${stat.toFixed(1)} on ${df} df`).toBeLessThan(crit);
  });

  it("Binomial(1,000,000, 0.3): mean and variance within Monte Carlo error", () => {
    const random = seededRandom(7);
    const R = 20_000;
    let s = 0;
    let ss = 0;
    for (let i = 0; i < R; i++) {
      const x = binomialSample(1_000_000, 0.3, random);
      s += x;
      ss += x * x;
    }
    const mean = s / R;
    const variance = ss / R - mean * mean;
    expect(Math.abs(mean - 300_000)).toBeLessThan(5 * Math.sqrt(210_000 / R));
    expect(variance / 210_000).toBeGreaterThan(0.95);
    expect(variance / 210_000).toBeLessThan(1.05);
  });

  it("multinomialSample keeps the total and each margin is binomial in mean", () => {
    const random = seededRandom(3);
    const counts = [500, 0, 300, 200];
    const out = new Float64Array(4);
    const sums = new Float64Array(4);
    for (let b = 0; b < 5000; b++) {
      multinomialSample(1000, counts, random, out);
      expect(out[0] + out[1] + out[2] + out[3]).toBe(1000);
      expect(out[1]).toBe(0);
      for (let k = 0; k < 4; k++) sums[k] += out[k];
    }
    expect(sums[0] / 5000).toBeCloseTo(500, 0);
    expect(sums[2] / 5000).toBeCloseTo(300, 0);
  });
});

// Three raters, four categories, missing ratings: 60 units drawn from a seeded generator.
function threeRaterRows(n: number, seed: number): Rating[][] {
  const random = seededRandom(seed);
  const cats = ["a", "b", "c", "d"];
  return Array.from({ length: n }, () => {
    const truth = Math.floor(random() * 4);
    return [0, 1, 2].map(() => (random() < 0.1 ? null : random() < 0.7 ? cats[truth] : cats[Math.floor(random() * 4)]));
  });
}

describe("pattern statistics equal the row statistics", () => {
  const rows = threeRaterRows(60, 11);
  const { patterns } = ratingPatterns(rows);
  const stats = patternStatistics(patterns);
  const w = patterns.counts;

  it("percent agreement, Fleiss' kappa, Gwet's AC1, Krippendorff's alpha (nominal, ordinal)", () => {
    expect(stats.percentAgreement(w)).toBeCloseTo(percentAgreement(rows), 13);
    expect(stats.fleissKappa(w)).toBeCloseTo(fleissKappa(rows).kappa, 13);
    expect(stats.gwetAC1(w)).toBeCloseTo(gwetAC1(rows).value, 13);
    expect(stats.krippendorffAlpha(w, "nominal")).toBeCloseTo(krippendorffAlpha(rows, { level: "nominal" }).alpha, 13);
    expect(stats.krippendorffAlpha(w, "ordinal")).toBeCloseTo(krippendorffAlpha(rows, { level: "ordinal" }).alpha, 13);
  });

  it("AC1 keeps q of the declared scale: with a fifth, unused category it equals gwetAC1 with that scale", () => {
    const declared = ratingPatterns(rows, ["a", "b", "c", "d", "e"]).patterns;
    expect(patternStatistics(declared).gwetAC1(declared.counts)).toBeCloseTo(
      gwetAC1(rows, { categories: ["a", "b", "c", "d", "e"] }).value,
      13,
    );
  });

  it("the analytic SEs with unitWeights equal the SEs of the expanded rows", () => {
    const uw = { unitWeights: w };
    for (const [name, weighted, plain] of [
      ["fleiss", fleissKappaSE(stats.unitCounts, uw), fleissKappaSE(rows)],
      ["ac1", gwetSE(stats.unitCounts, uw), gwetSE(rows)],
      ["alpha", krippendorffAlphaSE(stats.unitCounts, uw), krippendorffAlphaSE(rows)],
    ] as const) {
      expect(weighted.value, name).toBeCloseTo(plain.value, 13);
      expect(weighted.se, name).toBeCloseTo(plain.se, 13);
      expect(weighted.n, name).toBe(plain.n);
    }
    const scores: Rating[][] = rows.map((r) => r.map((v) => (v == null ? null : "abcd".indexOf(v as string) + 1)));
    const sp = ratingPatterns(scores).patterns;
    const sps = patternStatistics(sp);
    expect(krippendorffAlphaSE(sps.unitCounts, { weights: "quadratic", unitWeights: sp.counts }).se).toBeCloseTo(
      krippendorffAlphaSE(scores, { weights: "quadratic" }).se,
      13,
    );
    expect(sps.krippendorffAlpha(sp.counts, "interval")).toBeCloseTo(krippendorffAlpha(scores, { level: "interval" }).alpha, 13);
  });

  it("pair tables give Cohen's kappa, Pearson and Kendall's tau-b of the pairs", () => {
    const a = rows.map((r) => r[0]);
    const b = rows.map((r) => r[2]);
    const t = stats.pairTable(w, 0, 2);
    expect(cohenKappaFromTable({ counts: t, q: patterns.q }).kappa).toBeCloseTo(cohenKappa(a, b).kappa, 13);
    const x = a.map((v) => (v == null ? null : "abcd".indexOf(v as string) * 1.5));
    const y = b.map((v) => (v == null ? null : "abcd".indexOf(v as string) * 1.5));
    const values = [0, 1.5, 3, 4.5];
    const pr = pearsonFromTable({ counts: t, q: 4 }, values);
    const ref = pearson(x, y);
    expect(pr.r).toBeCloseTo(ref.r, 13);
    expect(pr.ci[0]).toBeCloseTo(ref.ci[0], 13);
    expect(pr.ci[1]).toBeCloseTo(ref.ci[1], 13);
    expect(kendallTauBFromTable({ counts: t, q: 4 }).tau).toBeCloseTo(kendallTauB(x, y).tau, 13);
  });
});

describe("countsBootstrapCI", () => {
  it("on small data it draws the units as bootstrapCI draws rows with the same seed: the same interval", () => {
    const rows = threeRaterRows(80, 5);
    const { patterns, patternOfUnit } = ratingPatterns(rows);
    const stats = patternStatistics(patterns);
    for (const seed of [1, 42]) {
      const viaRows = bootstrapCI({ data: rows, statistic: (s) => fleissKappa(s).kappa, seed, resamples: 300 });
      const viaCounts = countsBootstrapCI({
        counts: patterns.counts,
        patternOfUnit,
        statistic: (w) => stats.fleissKappa(w),
        seed,
        resamples: 300,
      });
      expect(viaCounts.draws).toBe("units");
      expect(viaCounts.ci[0]).toBeCloseTo(viaRows.ci[0], 12);
      expect(viaCounts.ci[1]).toBeCloseTo(viaRows.ci[1], 12);
      expect(viaCounts.se).toBeCloseTo(viaRows.se, 12);
    }
  });

  it("multinomial draws have the distribution of unit draws (quantiles agree within Monte Carlo error; two-sample KS)", () => {
    const rows = threeRaterRows(200, 9);
    const { patterns, patternOfUnit } = ratingPatterns(rows);
    const stats = patternStatistics(patterns);
    const B = 4000;
    const collect = (rowDrawLimit: number, seed: number) => {
      const values: number[] = [];
      const r = countsBootstrapCI({
        counts: patterns.counts,
        patternOfUnit,
        rowDrawLimit,
        statistic: (w) => {
          const v = stats.gwetAC1(w);
          values.push(v);
          return v;
        },
        seed,
        resamples: B,
      });
      values.shift(); // the estimate on the original counts
      return { r, values: Float64Array.from(values).sort() };
    };
    const units = collect(Infinity, 1);
    const multi = collect(0, 2);
    expect(units.r.draws).toBe("units");
    expect(multi.r.draws).toBe("multinomial");
    // Two-sample Kolmogorov-Smirnov: D < 1.95·√(2/B) is the 0.001 critical value.
    let i = 0;
    let j = 0;
    let D = 0;
    while (i < B && j < B) {
      const x = Math.min(units.values[i], multi.values[j]);
      while (i < B && units.values[i] <= x) i++;
      while (j < B && multi.values[j] <= x) j++;
      D = Math.max(D, Math.abs(i / B - j / B));
    }
    expect(D).toBeLessThan(1.95 * Math.sqrt(2 / B));
    // The interval limits differ by less than a fifth of the bootstrap SE.
    expect(Math.abs(units.r.ci[0] - multi.r.ci[0])).toBeLessThan(0.2 * units.r.se);
    expect(Math.abs(units.r.ci[1] - multi.r.ci[1])).toBeLessThan(0.2 * units.r.se);
    expect(multi.r.se / units.r.se).toBeGreaterThan(0.95);
    expect(multi.r.se / units.r.se).toBeLessThan(1.05);
  });

  it("a million units cost as little as a hundred: 1000 resamples over 16 patterns", () => {
    const counts = Float64Array.from({ length: 16 }, (_, k) => 62_500 + (k % 3));
    const N = counts.reduce((a, b) => a + b, 0);
    const r = countsBootstrapCI({ counts, statistic: (w) => w[0] / N, seed: 1, resamples: 1000 });
    expect(r.draws).toBe("multinomial");
    const p = counts[0] / N;
    // The bootstrap SE of a share is √(p(1 − p)/N).
    expect(r.se / Math.sqrt((p * (1 - p)) / N)).toBeGreaterThan(0.9);
    expect(r.se / Math.sqrt((p * (1 - p)) / N)).toBeLessThan(1.1);
  });
});

describe("cohenKappaClusteredSE", () => {
  it("with every pair its own cluster it is the Fleiss-Cohen-Everitt SE times √(n/(n − 1)); copies within a cluster do not shrink it", () => {
    const random = seededRandom(21);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 90; i++) {
      const x = Math.floor(random() * 3);
      a.push(x);
      b.push(random() < 0.6 ? x : Math.floor(random() * 3));
    }
    const own = a.map((_, i) => i);
    for (const weights of ["none", "quadratic"] as const) {
      const r = cohenKappaClusteredSE(a, b, own, 3, { weights });
      const fce = cohenKappa(a, b, { weights, categories: [0, 1, 2] });
      expect(r.kappa).toBeCloseTo(fce.kappa, 14);
      expect(r.se).toBeCloseTo(fce.se * Math.sqrt(90 / 89), 12);
    }
    // Each pair copied three times into one cluster: the same kappa and the same SE — copies inside a
    // cluster add no information (the pairs-as-independent FCE SE would shrink by √3).
    const a3 = a.flatMap((x) => [x, x, x]);
    const b3 = b.flatMap((x) => [x, x, x]);
    const c3 = own.flatMap((i) => [i, i, i]);
    const r3 = cohenKappaClusteredSE(a3, b3, c3, 3);
    const r1 = cohenKappaClusteredSE(a, b, own, 3);
    expect(r3.kappa).toBeCloseTo(r1.kappa, 14);
    expect(r3.se).toBeCloseTo(r1.se, 12);
    expect(r3.clusters).toBe(90);
  });
});

describe("pooledKappa (from patterns)", () => {
  it("equals cohenKappaClusteredSE on the units' expanded pairs (unit = cluster), unweighted and quadratic", () => {
    const rows = threeRaterRows(70, 17);
    const { patterns, patternOfUnit } = ratingPatterns(rows);
    const a: number[] = [];
    const b: number[] = [];
    const unit: number[] = [];
    patternOfUnit.forEach((p, u) => {
      for (let g = 0; g < 3; g++)
        for (let h = g + 1; h < 3; h++) {
          const x = patterns.codes[p * 3 + g];
          const y = patterns.codes[p * 3 + h];
          if (x >= 0 && y >= 0) {
            a.push(x);
            b.push(y);
            unit.push(u);
          }
        }
    });
    for (const weights of ["none", "quadratic"] as const) {
      const viaPatterns = pooledKappa(patterns, patterns.counts, { weights });
      const viaPairs = cohenKappaClusteredSE(a, b, unit, patterns.q, { weights });
      expect(viaPatterns.kappa).toBeCloseTo(viaPairs.kappa, 13);
      expect(viaPatterns.se).toBeCloseTo(viaPairs.se, 13);
      expect(viaPatterns.pairs).toBe(a.length);
      expect(viaPatterns.units).toBe(viaPairs.clusters);
    }
    // The doc example: po = 7/9, pe = 39/81.
    const ex = ratingPatterns([
      ["a", "a", "a"],
      ["a", "b", "b"],
      ["b", "b", "b"],
    ]).patterns;
    expect(pooledKappa(ex, ex.counts).kappa).toBeCloseTo((7 / 9 - 39 / 81) / (1 - 39 / 81), 14);
  });
});
