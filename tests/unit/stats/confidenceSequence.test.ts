/**
 * The anytime-valid confidence sequence of a corrected score (app/stats/confidenceSequence.ts): its first steps
 * equal Waudby-Smith & Ramdas's PrPl-EB formulas written out here, and by simulation it holds at 20 looks at once
 * (labels drawn without replacement from finite populations of 1,000 units, 2,000 replicates), where the fixed-n
 * Wald interval of PPI looked at after every wave does not.
 */
import { describe, expect, it } from "vitest";
import { bettingConfidenceSequence, labelsForHalfWidth, ppiConfidenceSequence } from "~/stats/confidenceSequence";
import { seededRandom } from "~/stats/seededRandom";

describe("bettingConfidenceSequence", () => {
  it("the first two looks equal PrPl-EB written out (Waudby-Smith & Ramdas 2023, §3.1)", () => {
    const alpha = 0.05;
    const L = Math.log(2 / alpha);
    const [a, b] = bettingConfidenceSequence([1, 0.25], { alpha });
    // t = 1: σ̂²_0 = 1/4, μ̂_0 = 1/2; λ_1 = min(√(2L/(¼·1·ln 2)), ½) = ½.
    const l1 = Math.min(Math.sqrt((2 * L) / (0.25 * 1 * Math.log(2))), 0.5);
    const psi = (l: number) => (-Math.log(1 - l) - l) / 4;
    const v1 = 4 * (1 - 0.5) ** 2;
    expect(a[0]).toBeCloseTo(Math.max(0, 1 - (L + v1 * psi(l1)) / l1), 14);
    expect(a[1]).toBeCloseTo(1, 14);
    // t = 2: μ̂_1 = (½ + 1)/2 = ¾; σ̂²_1 = (¼ + (1 − ¾)²)/2 = 5/32.
    const l2 = Math.min(Math.sqrt((2 * L) / ((5 / 32) * 2 * Math.log(3))), 0.5);
    const v2 = 4 * (0.25 - 0.75) ** 2;
    const centre = (l1 * 1 + l2 * 0.25) / (l1 + l2);
    const margin = (L + v1 * psi(l1) + v2 * psi(l2)) / (l1 + l2);
    expect(b[0]).toBeCloseTo(Math.max(a[0], centre - margin), 14);
    expect(b[1]).toBeCloseTo(Math.min(a[1], centre + margin), 14);
  });

  it("is nested (a running intersection) and never of zero width on varied data", () => {
    const rand = seededRandom(3);
    const xs = Array.from({ length: 500 }, () => (rand() < 0.3 ? 1 : 0));
    const cs = bettingConfidenceSequence(xs);
    for (let t = 1; t < cs.length; t++) {
      expect(cs[t][0]).toBeGreaterThanOrEqual(cs[t - 1][0]);
      expect(cs[t][1]).toBeLessThanOrEqual(cs[t - 1][1]);
      expect(cs[t][1] - cs[t][0]).toBeGreaterThan(0);
    }
    expect(cs[499][1] - cs[499][0]).toBeLessThan(0.2);
  });

  it("forecasts the labels needed for a half-width: the margin with that spread reaches it there and not before", () => {
    const t = labelsForHalfWidth(0.1, 0.05)!;
    expect(t).toBeGreaterThan(50);
    expect(labelsForHalfWidth(0.1, 0.05, { max: t - 1 })).toBeNull();
    expect(labelsForHalfWidth(0.2, 0.05)!).toBeGreaterThan(t);
  });
});

describe("simultaneous coverage over 20 looks (simulation)", () => {
  const N = 1000;
  const LOOKS = 20;
  const PER_WAVE = 10;
  const REPLICATES = 2000;

  function simulate(kind: "balanced" | "skewed", seed: number) {
    const rand = seededRandom(seed);
    let csHeld = 0;
    let waldHeld = 0;
    for (let r = 0; r < REPLICATES; r++) {
      const y = new Uint8Array(N);
      const f = new Uint8Array(N);
      for (let i = 0; i < N; i++) {
        if (kind === "skewed") {
          y[i] = rand() < 0.8 ? 1 : 0;
          f[i] = y[i] === 1 || rand() < 0.9 ? 1 : 0;
        } else {
          y[i] = rand() < 0.52 ? 1 : 0;
          f[i] = rand() < 0.85 ? y[i] : 1 - y[i];
        }
      }
      const truth = y.reduce((t, v) => t + v, 0) / N;
      const judgeMean = f.reduce((t, v) => t + v, 0) / N;
      // Labels in random order, without replacement: the waves' units.
      const order = Array.from({ length: N }, (_, i) => i);
      for (let i = 0; i < LOOKS * PER_WAVE; i++) {
        const j = i + Math.floor(rand() * (N - i));
        [order[i], order[j]] = [order[j], order[i]];
      }
      const labelled = order.slice(0, LOOKS * PER_WAVE).map((i) => ({ y: y[i], f: f[i] }));
      const cs = ppiConfidenceSequence(labelled, judgeMean);
      let csOk = true;
      let waldOk = true;
      for (let look = 1; look <= LOOKS; look++) {
        const n = look * PER_WAVE;
        const [lo, hi] = cs[n - 1];
        if (truth < lo - 1e-12 || truth > hi + 1e-12) csOk = false;
        // PPI (λ = 1) with its Wald interval at this look, as a fixed-n interval would be read.
        const d = labelled.slice(0, n).map((u) => u.y - u.f);
        const md = d.reduce((t, v) => t + v, 0) / n;
        const sd = Math.sqrt(d.reduce((t, v) => t + (v - md) ** 2, 0) / n);
        const est = judgeMean + md;
        if (Math.abs(est - truth) > 1.959964 * (sd / Math.sqrt(n)) + 1e-12) waldOk = false;
      }
      if (csOk) csHeld++;
      if (waldOk) waldHeld++;
    }
    return { cs: csHeld / REPLICATES, wald: waldHeld / REPLICATES };
  }

  it("balanced judge (truth 0.52, 85% right): the sequence holds at every look in ≥ 95%; the repeated Wald interval does not", () => {
    const r = simulate("balanced", 11);
    expect(r.cs).toBeGreaterThanOrEqual(0.95);
    expect(r.wald).toBeLessThan(0.95);
    expect(r.wald).toBeLessThan(r.cs);
  });

  it("skewed judge (Yes 98%, truth 0.80): the same", () => {
    const r = simulate("skewed", 12);
    expect(r.cs).toBeGreaterThanOrEqual(0.95);
    expect(r.wald).toBeLessThan(0.95);
  });
});
