/**
 * The corrected-score estimators of issue 38 (app/stats: classicalMean, ppiEstimate, stratifiedPpi, activePpi and
 * their shared interval, correctedCore.ts correctedInterval). Each point, λ and Wald SE is compared with its
 * paper's formula written out here; PPI and PPI++ with ppi_py's values from an independent numpy re-implementation
 * (the same data and figures as tests/unit/stats/bootstrapAndPpi.test.ts). The intervals: around the estimate,
 * never of zero width unless every unit is labelled, λ = 1 equal to the rectifier interval of the difference
 * estimator, the scale of the data kept. Coverage is measured by `npm run bench:corrected` (2,000 replicates).
 */
import { describe, expect, it } from "vitest";
import { activePpi } from "~/stats/activePpi";
import { classicalMean } from "~/stats/classicalMean";
import type { CorrectedUnit } from "~/stats/correctedCore";
import { ppiEstimate } from "~/stats/ppiEstimate";
import { rectifierCI } from "~/stats/rectifierCI";
import { stratifiedPpi } from "~/stats/stratifiedPpi";

const mean = (s: readonly number[]) => s.reduce((a, b) => a + b, 0) / s.length;
const sampleVar = (s: readonly number[]) => {
  const m = mean(s);
  return s.reduce((a, x) => a + (x - m) ** 2, 0) / (s.length - 1);
};

// ppi_py's data (see tests/unit/stats/bootstrapAndPpi.test.ts): 40 labelled units, 300 unlabelled.
const Y = Array.from({ length: 40 }, (_, i) => ((i * 7) % 3 === 0 ? 1 : 0));
const F = Array.from({ length: 40 }, (_, i) => (((i * 7) % 3 === 0) !== (i % 5 === 0) ? 1 : 0));
const U = Array.from({ length: 300 }, (_, i) => ((i * 11) % 4 !== 0 ? 1 : 0));
const population: CorrectedUnit[] = [...Y.map((y, i) => ({ f: F[i], y })), ...U.map((f) => ({ f }))];

describe("PPI and PPI++ (ppiEstimate)", () => {
  it("PPI++: point, λ̂ and SE equal ppi_py's (lam=None) to 1e-12", () => {
    const r = ppiEstimate(population);
    expect(r.estimator).toBe("ppi++");
    expect(r.lambda).toBeCloseTo(0.5754432289702, 12);
    expect(r.estimate).toBeCloseTo(0.5514051301395699, 12);
    expect(r.se).toBeCloseTo(0.06322204506073678, 12);
    expect([r.nLabeled, r.nTotal]).toEqual([40, 340]);
  });

  it("PPI (λ = 1): point and SE equal ppi_py's (lam=1)", () => {
    const r = ppiEstimate(population, { tuned: false });
    expect(r.lambda).toBe(1);
    expect(r.estimate).toBeCloseTo(0.7, 12);
    expect(r.se).toBeCloseTo(0.07458216945088147, 12);
  });

  it("the interval is the rectifier interval of the difference estimator at λ = 1, moved to ppi_py's point", () => {
    const r = ppiEstimate(population, { tuned: false });
    const N = population.length;
    const a = 1 / N;
    const pi = 40 / N;
    // θ̂_HT = Σ a·f + Σ_labelled a·(Y − f)/π; bounds of the correction Σ a·(Y − f) with Y at 0 or 1 (rectifierCI's definition).
    const judgeAll = population.reduce((t, u) => t + a * u.f, 0);
    const rc = rectifierCI(
      [
        {
          bounds: [-judgeAll, population.reduce((t, u) => t + a * (1 - u.f), 0)],
          clusters: Y.map((y, i) => ({ z: (a * (y - F[i])) / pi, pi })),
        },
      ],
      { z: 1.959963984540054 },
    );
    const ht = judgeAll + rc.estimate;
    // ppi_py's point uses the judge's mean over the unlabelled units only.
    const shift = 0.7 - ht;
    expect(r.ci![0]).toBeCloseTo(judgeAll + rc.ci[0] + shift, 12);
    expect(r.ci![1]).toBeCloseTo(judgeAll + rc.ci[1] + shift, 12);
    expect(r.ci![0]).toBeLessThan(r.estimate);
    expect(r.ci![1]).toBeGreaterThan(r.estimate);
  });

  it("PPI++'s interval is no wider than the wider of PPI's and the labels' alone (it mixes the two)", () => {
    const pp = ppiEstimate(population);
    const p1 = ppiEstimate(population, { tuned: false });
    const c = classicalMean(population);
    const w = (r: { ci: [number, number] | null }) => r.ci![1] - r.ci![0];
    expect(w(pp)).toBeLessThanOrEqual(Math.max(w(p1), w(c)) + 1e-12);
  });

  it("10 labelled units that all agree with the judge: the Wald SE is only the judge's spread (said), the interval is not of zero width", () => {
    const units: CorrectedUnit[] = Array.from({ length: 1000 }, (_, i) => ({ f: i < 980 ? 1 : 0 }));
    for (let i = 0; i < 10; i++) units[i * 50].y = units[i * 50].f; // 10 of the Yes units, each labelled Yes
    for (const r of [ppiEstimate(units), ppiEstimate(units, { tuned: false })]) {
      // ppi_py's SE keeps λ²·Var(f)/N of the judge's term: tiny, and θ̂ ± 1.96·SE would be nearly a point.
      expect(r.se ?? 0).toBeLessThan(0.01);
      expect(r.ci![1] - r.ci![0]).toBeGreaterThan(0.05);
      expect(r.notes.join(" ")).toMatch(/every labelled unit has the same Y − λf/);
    }
  });

  it("keeps the data's scale: scores 1–10 give the same point as on [0, 1], mapped", () => {
    const scaled = population.map((u) => ({ f: 1 + 9 * u.f, y: u.y == null ? undefined : 1 + 9 * u.y! }));
    const a = ppiEstimate(population);
    const b = ppiEstimate(scaled, { range: [1, 10] });
    expect(b.estimate).toBeCloseTo(1 + 9 * a.estimate, 12);
    expect(b.lambda).toBeCloseTo(a.lambda!, 12);
    expect(b.ci![0]).toBeCloseTo(1 + 9 * a.ci![0], 12);
    expect(b.ci![1]).toBeCloseTo(1 + 9 * a.ci![1], 12);
  });

  it("refuses unequal inclusion probabilities (that is the active estimator's case) and values outside the range", () => {
    expect(() =>
      ppiEstimate([
        { f: 1, y: 1, pi: 0.5 },
        { f: 0, pi: 0.2 },
      ]),
    ).toThrow(/activePpi/);
    expect(() => ppiEstimate([{ f: 2, y: 1 }])).toThrow(/outside the range/);
    expect(() =>
      ppiEstimate([
        { f: 1, y: 0.5 },
        { f: 1, y: Number.NaN },
      ]),
    ).toThrow(/human value/);
  });

  it("nothing labelled: no estimate, no interval, and the reason", () => {
    const r = ppiEstimate(U.map((f) => ({ f })));
    expect(r.ci).toBeNull();
    expect(r.notes[0]).toMatch(/no unit is labelled/);
  });
});

describe("classicalMean", () => {
  it("one stratum: the labels' mean, with SE √((1 − n/N)·s²/n) (Cochran 1977, eq. 2.19)", () => {
    const r = classicalMean(population);
    expect(r.estimate).toBeCloseTo(mean(Y), 14);
    expect(r.se).toBeCloseTo(Math.sqrt((1 - 40 / 340) * (sampleVar(Y) / 40)), 14);
    expect(r.lambda).toBeNull();
  });

  it("strata: Σ (N_h/N)·Ȳ_h with SE² = Σ (N_h/N)²(1 − n_h/N_h)s²_h/n_h (Cochran 1977, eqs. 5.1 and 5.6)", () => {
    const units: CorrectedUnit[] = [
      ...population.map((u) => ({ ...u, stratum: "A" })),
      ...Array.from({ length: 60 }, (_, i) => ({ f: i % 2, y: i < 12 ? (i % 3 === 0 ? 1 : 0) : undefined, stratum: "B" })),
    ];
    const yb = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const r = classicalMean(units);
    const wa = 340 / 400;
    const wb = 60 / 400;
    expect(r.estimate).toBeCloseTo(wa * mean(Y) + wb * mean(yb), 14);
    const v = wa ** 2 * (1 - 40 / 340) * (sampleVar(Y) / 40) + wb ** 2 * (1 - 12 / 60) * (sampleVar(yb) / 12);
    expect(r.se).toBeCloseTo(Math.sqrt(v), 14);
  });

  it("given π: the Horvitz–Thompson mean (1/N)Σ Y/π with the Poisson SE (1/N)√Σ(1 − π)Y²/π²", () => {
    const units: CorrectedUnit[] = Array.from({ length: 200 }, (_, i) => ({ f: i % 2, pi: i % 4 === 0 ? 0.5 : 0.1 }));
    const labelled = [0, 4, 8, 13, 21, 40, 44, 77, 101, 150];
    labelled.forEach((i, k) => (units[i].y = k % 3 === 0 ? 0 : 1));
    const r = classicalMean(units);
    const ht = labelled.reduce((t, i) => t + units[i].y! / units[i].pi!, 0) / 200;
    const v = labelled.reduce((t, i) => t + ((1 - units[i].pi!) * units[i].y! ** 2) / units[i].pi! ** 2, 0) / 200 ** 2;
    expect(r.estimate).toBeCloseTo(ht, 14);
    expect(r.se).toBeCloseTo(Math.sqrt(v), 14);
  });

  it("every label the same: a Wilson-type interval of positive width, and no Wald SE", () => {
    const units: CorrectedUnit[] = Array.from({ length: 1000 }, (_, i) => ({ f: 1, y: i < 10 ? 1 : undefined }));
    const r = classicalMean(units);
    expect(r.estimate).toBeCloseTo(1, 14);
    expect(r.se).toBeNull();
    expect(r.ci![1]).toBeCloseTo(1, 12);
    // Wilson's lower bound for 10 of 10, z = 1.96, at n* = 10/(1 − 0.01): 1/(1 + z²/n*).
    const nStar = 10 / (1 - 0.01);
    expect(r.ci![0]).toBeCloseTo(nStar / (nStar + 1.959963984540054 ** 2), 10);
  });

  it("a census: the value is exact, and says so", () => {
    const r = classicalMean(Y.map((y, i) => ({ f: F[i], y })));
    expect(r.exact).toBe(true);
    expect(r.ci![0]).toBeCloseTo(mean(Y), 14);
    expect(r.ci![1]).toBeCloseTo(mean(Y), 14);
    expect(r.notes[0]).toMatch(/known exactly/);
  });
});

describe("stratifiedPpi", () => {
  // Two strata: A is ppi_py's data, B a second set built by formula.
  const Yb = Array.from({ length: 20 }, (_, i) => (i % 4 === 0 ? 0 : 1));
  const Fb = Array.from({ length: 20 }, (_, i) => (i % 4 === 0 || i % 7 === 0 ? 0 : 1));
  const Ub = Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? 0 : 1));
  const units: CorrectedUnit[] = [
    ...population.map((u) => ({ ...u, stratum: "A" })),
    ...Yb.map((y, i) => ({ f: Fb[i], y, stratum: "B" })),
    ...Ub.map((f) => ({ f, stratum: "B" })),
  ];

  /** ppi_py's PPI++ written out (lam=None, "overall"). */
  function ppiPlusPlus(y: number[], f: number[], u: number[]) {
    const n = y.length;
    const N = u.length;
    const my = mean(y);
    const mf = mean(f);
    const cov = y.reduce((t, yi, i) => t + (yi - my) * (f[i] - mf), 0) / n;
    const all = [...f, ...u];
    const lam = Math.min(1, Math.max(0, cov / ((1 + n / N) * sampleVar(all))));
    const d = y.map((yi, i) => yi - lam * f[i]);
    const md = mean(d);
    const mu = mean(u);
    const est = lam * mu + md;
    const vu = u.reduce((t, x) => t + (x - mu) ** 2, 0) / N;
    const vd = d.reduce((t, x) => t + (x - md) ** 2, 0) / n;
    return { lam, est, se: Math.sqrt((lam * lam * vu) / N + vd / n) };
  }

  it("Σ_h (N_h/N)·θ̂_h with each stratum's own λ̂_h, and se² = Σ (N_h/N)²·se_h² (Fisch et al. 2024, eqs. 7–9)", () => {
    const r = stratifiedPpi(units);
    const a = ppiPlusPlus(Y, F, U);
    const b = ppiPlusPlus(Yb, Fb, Ub);
    const wa = 340 / 460;
    const wb = 120 / 460;
    expect(r.lambdas!.A).toBeCloseTo(a.lam, 12);
    expect(r.lambdas!.B).toBeCloseTo(b.lam, 12);
    expect(r.estimate).toBeCloseTo(wa * a.est + wb * b.est, 12);
    expect(r.se).toBeCloseTo(Math.sqrt(wa ** 2 * a.se ** 2 + wb ** 2 * b.se ** 2), 12);
    expect(r.ci![0]).toBeLessThan(r.estimate);
    expect(r.ci![1]).toBeGreaterThan(r.estimate);
  });

  it("a stratum without labels: its judge mean enters, its whole range is in the interval, and no Wald SE", () => {
    const some = [...population.map((u) => ({ ...u, stratum: "A" })), ...Ub.map((f) => ({ f, stratum: "C" }))];
    const r = stratifiedPpi(some);
    const a = ppiPlusPlus(Y, F, U);
    expect(r.estimate).toBeCloseTo((340 / 440) * a.est + (100 / 440) * mean(Ub), 12);
    expect(r.se).toBeNull();
    expect(r.notes.join(" ")).toMatch(/fewer than 2 labelled units \(C: 0\)/);
    // C's correction can be anything from −(its Yes share) to +(its No share), times its weight 100/440.
    expect(r.ci![1] - r.ci![0]).toBeGreaterThan((100 / 440) * 0.99);
  });
});

describe("activePpi", () => {
  // 400 units; the judge's uncertainty decides π (0.5 for uncertain units, 0.05 for the others).
  const units: CorrectedUnit[] = Array.from({ length: 400 }, (_, i) => ({
    f: i % 3 === 0 ? 0 : 1,
    pi: i % 10 === 0 ? 0.5 : 0.05,
  }));
  const labelled = Array.from({ length: 400 }, (_, i) => i).filter((i) => (i % 10 === 0 && i % 20 !== 0) || i % 37 === 0);
  for (const i of labelled) units[i].y = i % 3 === 0 ? (i % 4 === 0 ? 1 : 0) : i % 9 === 1 ? 0 : 1;

  it("θ̂ = (1/N)Σ[λf + (Y − λf)ξ/π] with λ̂ = Σ w·Y·f/π / Σ w·f²/π, w = (1 − π)/π (Zrnic & Candès 2024, §3)", () => {
    const r = activePpi(units);
    const lab = labelled.map((i) => units[i]);
    const w = (u: CorrectedUnit) => (1 - u.pi!) / u.pi!;
    const lam = Math.min(
      1,
      Math.max(0, lab.reduce((t, u) => t + (w(u) * u.y! * u.f) / u.pi!, 0) / lab.reduce((t, u) => t + (w(u) * u.f * u.f) / u.pi!, 0)),
    );
    const est = (units.reduce((t, u) => t + lam * u.f, 0) + lab.reduce((t, u) => t + (u.y! - lam * u.f) / u.pi!, 0)) / 400;
    const v = lab.reduce((t, u) => t + ((1 - u.pi!) * (u.y! - lam * u.f) ** 2) / u.pi! ** 2, 0) / 400 ** 2;
    expect(r.lambda).toBeCloseTo(lam, 12);
    expect(r.estimate).toBeCloseTo(est, 12);
    expect(r.se).toBeCloseTo(Math.sqrt(v), 12);
    expect(r.ci![0]).toBeLessThan(r.estimate);
    expect(r.ci![1]).toBeGreaterThan(r.estimate);
  });

  it("needs every unit's π", () => {
    expect(() => activePpi(population)).toThrow(/inclusion probability/);
  });
});
