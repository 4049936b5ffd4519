/**
 * Labelling plans with known inclusion probabilities (app/stats/labelPlan.ts): every plan draws exactly the budget
 * and its π sum to it; proportional and Neyman allocations follow their formulas (Cochran 1977, eqs. 5.26 and the
 * proportional n_h = B·N_h/N) written out here; the active plan's π keep the uniform floor, and over many seeds
 * each unit is drawn with its π (randomised systematic πps is exact in its first-order π); auto keeps to uniform
 * without burn-in or when the uncertainty says nothing about the judge's errors, and takes active when it does.
 */
import { describe, expect, it } from "vitest";
import { labelPlan, type PlanUnit } from "~/stats/labelPlan";
import { seededRandom } from "~/stats/seededRandom";

const count = (xs: boolean[]) => xs.filter(Boolean).length;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("labelPlan", () => {
  const units: PlanUnit[] = Array.from({ length: 600 }, (_, i) => ({
    f: i % 4 === 0 ? 0 : 1,
    stratum: i < 400 ? "law" : "chem",
    uncertainty: (i % 10) / 10,
  }));

  it("uniform: π = B/N for all, exactly B drawn, the same draw for the same seed and another for another", () => {
    const a = labelPlan(units, { budget: 60, sampler: "uniform", seed: 1 });
    expect(a.pi.every((p) => p === 0.1)).toBe(true);
    expect(count(a.selected)).toBe(60);
    expect(labelPlan(units, { budget: 60, sampler: "uniform", seed: 1 }).selected).toEqual(a.selected);
    expect(labelPlan(units, { budget: 60, sampler: "uniform", seed: 2 }).selected).not.toEqual(a.selected);
  });

  it("proportional: n_h = B·N_h/N (40 and 20 of 60), π = n_h/N_h, exactly n_h drawn in each stratum", () => {
    const p = labelPlan(units, { budget: 60, sampler: "proportional", seed: 1 });
    expect(p.pi[0]).toBeCloseTo(40 / 400, 15);
    expect(p.pi[599]).toBeCloseTo(20 / 200, 15);
    expect(count(p.selected.slice(0, 400))).toBe(40);
    expect(count(p.selected.slice(400))).toBe(20);
    expect(sum(p.pi)).toBeCloseTo(60, 10);
  });

  it("neyman: n_h ∝ N_h·S_h with S_h the burn-in spread of Y − f (pseudo-count floor where no error was seen)", () => {
    // Burn-in: 20 labels in law with 8 errors; 20 in chem with none.
    const burn = units.map((u, i) => ({ ...u, y: i < 20 ? (i < 8 ? 1 - u.f! : u.f!) : i >= 400 && i < 420 ? u.f! : null }));
    const p = labelPlan(burn, { budget: 60, sampler: "neyman", seed: 1 });
    const sLaw = Math.sqrt(8 / 20); // mean of (Y − f)² over law's burn-in: 8 errors of 20
    const pc = (0 + 0.5) / (20 + 1);
    const sChem = Math.sqrt(pc * (1 - pc)); // no error seen: the pseudo-count's spread
    const wLaw = 400 * sLaw;
    const wChem = 200 * sChem;
    // One label each first, then the remaining 58 by largest remainders: floors 51 and 6, the 58th to law (.76 > .24).
    const ideal = [(58 * wLaw) / (wLaw + wChem), (58 * wChem) / (wLaw + wChem)];
    const floors = ideal.map(Math.floor);
    const lawGetsRest = ideal[0] - floors[0] > ideal[1] - floors[1];
    const nLaw = 1 + floors[0] + (lawGetsRest ? 58 - floors[0] - floors[1] : 0);
    const nChem = 60 - nLaw;
    expect(count(p.selected.slice(0, 400))).toBe(nLaw);
    expect(count(p.selected.slice(400))).toBe(nChem);
    expect(p.pi[0]).toBeCloseTo(nLaw / 400, 15);
    expect(nLaw).toBeGreaterThan(40); // more than proportional, where the judge errs
  });

  it("active: π ≥ the uniform floor (mix·B/N), sum to B, exactly B drawn; over 4,000 seeds each unit is drawn with its π", () => {
    const small: PlanUnit[] = Array.from({ length: 40 }, (_, i) => ({ uncertainty: i < 5 ? 5 : 0.2 }));
    const p = labelPlan(small, { budget: 8, sampler: "active", seed: 1 });
    expect(sum(p.pi)).toBeCloseTo(8, 10);
    for (const pi of p.pi) expect(pi).toBeGreaterThanOrEqual((0.5 * 8) / 40 - 1e-12);
    expect(p.pi[0]).toBeGreaterThan(p.pi[39]);
    const hits = new Array(40).fill(0);
    const R = 4000;
    for (let s = 0; s < R; s++) {
      const d = labelPlan(small, { budget: 8, sampler: "active", seed: 100 + s });
      expect(count(d.selected)).toBe(8);
      d.selected.forEach((x, i) => x && hits[i]++);
    }
    // Binomial SE of a rate near 0.4 over 4,000 draws is under 0.008: within 4 SE.
    hits.forEach((h, i) => expect(Math.abs(h / R - p.pi[i])).toBeLessThan(0.032));
  });

  it("active caps π at 1 and gives the excess to the others", () => {
    const u: PlanUnit[] = Array.from({ length: 20 }, (_, i) => ({ uncertainty: i === 0 ? 1000 : 1 }));
    const p = labelPlan(u, { budget: 5, sampler: "active", seed: 3 });
    expect(p.pi[0]).toBe(1);
    expect(sum(p.pi)).toBeCloseTo(5, 10);
    expect(p.selected[0]).toBe(true);
  });

  it("auto: without burn-in, uniform (proportional with strata) and says so", () => {
    const noStrata = units.map(({ stratum: _s, ...u }) => u);
    expect(labelPlan(noStrata, { budget: 50, sampler: "auto", seed: 1 })).toMatchObject({ sampler: "uniform" });
    const p = labelPlan(units, { budget: 50, sampler: "auto", seed: 1 });
    expect(p.sampler).toBe("proportional");
    expect(p.notes[0]).toMatch(/no burn-in labels/);
  });

  it("auto: active when the uncertainty points at the judge's errors, uniform when it is noise", () => {
    const rand = seededRandom(5);
    const pop = Array.from({ length: 1000 }, () => {
      const y = rand() < 0.6 ? 1 : 0;
      const f = rand() < 0.85 ? y : 1 - y;
      return { y, f };
    });
    const burn = new Set(Array.from({ length: 1000 }, (_, i) => i).filter((i) => i % 25 === 0)); // 40 labels
    const informative: PlanUnit[] = pop.map((u, i) => ({ f: u.f, uncertainty: u.f !== u.y ? 0.9 : 0.1, y: burn.has(i) ? u.y : null }));
    const noise: PlanUnit[] = pop.map((u, i) => ({ f: u.f, uncertainty: rand(), y: burn.has(i) ? u.y : null }));
    const a = labelPlan(informative, { budget: 100, sampler: "auto", seed: 1 });
    const b = labelPlan(noise, { budget: 100, sampler: "auto", seed: 1 });
    expect(a.sampler).toBe("active");
    expect(a.variances!.active!).toBeLessThan(0.9 * a.variances!.uniform!);
    expect(b.sampler).toBe("uniform");
    expect(b.notes[0]).toMatch(/auto chose uniform/);
  });

  it("refuses a budget above the units, a plan needing strata without them, and active without uncertainty", () => {
    expect(() => labelPlan(units, { budget: 601, sampler: "uniform", seed: 1 })).toThrow(/larger than the 600 units/);
    expect(() => labelPlan([{ f: 1 }, { f: 0 }], { budget: 1, sampler: "neyman", seed: 1 })).toThrow(/needs strata/);
    expect(() => labelPlan([{ f: 1 }, { f: 0 }], { budget: 1, sampler: "active", seed: 1 })).toThrow(/uncertainty/);
  });
});
