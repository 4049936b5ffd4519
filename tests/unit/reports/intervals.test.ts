/**
 * Report intervals that mean what they say (issues 14 and 15): inside the
 * statistic's range, never zero-width, pooled pairs resampled by unit, means of
 * scores on the scale. Built with the report engine's own buildTaskData.
 */
import { describe, expect, it } from "vitest";
import { breakdowns, honestEstimate, interAnnotatorAgreement, scaleMeanEstimate } from "../../../app/reports/agreement";
import { finalLabels } from "../../../app/reports/finalLabels";
import { buildTaskData, type RawAnnotation, type RawUnit } from "../../../app/reports/subjects";
import { cohenKappa, gwetAC1, wilsonCI } from "../../../app/stats";

const unit = (id: number, extra: Partial<RawUnit> = {}): RawUnit => ({
  id,
  itemId: id,
  checklistItemId: null,
  responseId: null,
  responseIds: null,
  isGold: false,
  goldLabel: null,
  domain: "D",
  subject: null,
  taskType: null,
  ...extra,
});
const task = (kind: string, units: RawUnit[], annotations: RawAnnotation[], annotators = 3, config: Record<string, unknown> = {}) =>
  buildTaskData({
    task: { id: 1, name: "t", kind, datasetId: 1, seed: 7, overlap: 2 },
    config,
    adjudications: {},
    units,
    responses: [],
    annotations,
    annotators: Array.from({ length: annotators }, (_, i) => ({ id: i + 1, name: `A${i + 1}` })),
  });
const ann = (unitId: number, annotatorId: number, label: unknown): RawAnnotation => ({
  unitId,
  annotatorId,
  label,
  durationMs: 1000,
  shownOrder: null,
});
const stat = (iaa: ReturnType<typeof interAnnotatorAgreement>, key: string) => iaa.statistics.find((s) => s.key === key)!.estimate;

describe("report intervals", () => {
  it("perfect agreement of two annotators on 20 units: kappa, Fleiss, alpha and AC1 are not estimable (no [1, 1]); percent agreement and PABAK get Wilson intervals", () => {
    const units = Array.from({ length: 20 }, (_, i) => unit(i + 1));
    const anns = units.flatMap((u) => [ann(u.id, 1, u.id % 2 ? "Yes" : "No"), ann(u.id, 2, u.id % 2 ? "Yes" : "No")]);
    const iaa = interAnnotatorAgreement(task("response-satisfaction", units, anns, 2));
    for (const key of ["cohenKappa", "fleissKappa", "krippendorffAlpha", "gwetAC1"]) {
      const e = stat(iaa, key);
      expect(e.value, key).toBe(1);
      expect(e.ci, key).toBeNull();
      expect(e.method, key).toMatch(/^not estimable: /);
    }
    // Below ROUGH_INTERVAL_UNITS (60; 30 before issue 36, item 8, whose coverage scan set it).
    expect(iaa.warnings.some((w) => w.startsWith("Only 20 units have two or more labels (fewer than 60): every interval is rough."))).toBe(
      true,
    );
    expect(iaa.warnings).toContain("A1 and A2 gave identical labels on all 20 units both labelled.");
    // Wilson 20/20 (Newcombe 1998, method 3): [0.8389, 1].
    expect(stat(iaa, "percentAgreement").ci).toEqual(wilsonCI(20, 20));
    expect(stat(iaa, "pabak").ci![0]).toBeCloseTo(2 * wilsonCI(20, 20)[0] - 1, 12);
  });

  it("an analytic kappa interval crossing 1 is clipped and says so", () => {
    // 300 units (from SMALL_SAMPLE_UNITS up the default is the analytic interval), one disagreement:
    // kappa 0.9933, Fleiss-Cohen-Everitt interval up to about 1.006.
    const units = Array.from({ length: 300 }, (_, i) => unit(i + 1));
    const anns = units.flatMap((u, i) => [ann(u.id, 1, i < 150 ? "Yes" : "No"), ann(u.id, 2, i < 150 || i === 299 ? "Yes" : "No")]);
    const iaa = interAnnotatorAgreement(task("response-satisfaction", units, anns, 2));
    const a = anns.filter((x) => x.annotatorId === 1).map((x) => x.label as string);
    const b = anns.filter((x) => x.annotatorId === 2).map((x) => x.label as string);
    const ref = cohenKappa(a, b, { categories: ["No", "Yes"] });
    expect(ref.ci[1]).toBeGreaterThan(1);
    const e = stat(iaa, "cohenKappa");
    expect(e.value).toBeCloseTo(ref.kappa, 12);
    expect(e.ci).toEqual([ref.ci[0], 1]);
    expect(e.method).toMatch(/Fleiss, Cohen & Everitt 1969\); clipped to \[-1, 1\]$/);
    // With 25 units (one disagreement) the default is the expanded BCa bootstrap: its limits are resample
    // values, inside [−1, 1] without clipping.
    const small = units.slice(0, 25);
    const few = small.flatMap((u, i) => [ann(u.id, 1, i < 12 ? "Yes" : "No"), ann(u.id, 2, i < 12 || i === 24 ? "Yes" : "No")]);
    const k25 = stat(interAnnotatorAgreement(task("response-satisfaction", small, few, 2)), "cohenKappa");
    expect(k25.method).toBe(
      "BCa bootstrap over item clusters (B=2000, 25 items, seed 7; expanded for 25 units: limits at the 0.9648 level)",
    );
    expect(k25.ci![1]).toBeLessThanOrEqual(1);
    expect(k25.ci![0]).toBeLessThan(k25.value);
  });

  it("two and three doubly-labelled units: the expanded BCa level is capped (0.999), the report is built, the note says rough", () => {
    for (const n of [2, 3]) {
      const units = Array.from({ length: n }, (_, i) => unit(i + 1));
      const anns = units.flatMap((u, i) => [ann(u.id, 1, i % 2 ? "Yes" : "No"), ann(u.id, 2, i === 0 ? "Yes" : i % 2 ? "Yes" : "No")]);
      const iaa = interAnnotatorAgreement(task("response-satisfaction", units, anns, 2));
      expect(iaa.warnings.some((w) => w.startsWith(`Only ${n} units have two or more labels (fewer than 60)`))).toBe(true);
      const k = stat(iaa, "fleissKappa");
      expect(k.method).toMatch(
        /^(BCa bootstrap over item clusters \(B=2000, \d items, seed 7; expanded for \d units: limits at the 0\.9990 level\)|not estimable)/,
      );
    }
  });

  it("three annotators: pooled-pairs kappa resamples units; the planner's n counts units, not pairs", () => {
    const units = Array.from({ length: 40 }, (_, i) => unit(i + 1));
    const anns = units.flatMap((u, i) => [1, 2, 3].map((a) => ann(u.id, a, (i + (a === 3 && i % 4 === 0 ? 1 : 0)) % 2 ? "Yes" : "No")));
    const iaa = interAnnotatorAgreement(task("response-satisfaction", units, anns, 3));
    const k = stat(iaa, "cohenKappa");
    expect(k.n).toBe(120); // 3 pairs per unit
    // 40 units: the default small-sample interval, BCa over item clusters at the expanded level
    // 2·Φ(√(40/39)·t(0.975, 39)) − 1 = 0.95948 (scipy 1.17.1).
    expect(k.method).toBe(
      "BCa bootstrap over item clusters (B=2000, 40 items, seed 7; expanded for 40 units: limits at the 0.9595 level): a unit's pairs move together",
    );
    expect(iaa.planner.find((p) => p.label === "Cohen's kappa (pooled pairs)")).toMatchObject({ n: 40, se: k.se });
    expect(stat(iaa, "percentAgreement").method).toMatch(/^BCa bootstrap over item clusters \(B=2000, 40 items/);
  });

  it("mean scores stay on the 1-5 scale: a bootstrap inside it, all-equal scores a Wilson bound, one score no interval", () => {
    const units = [1, 2, 3, 4, 5, 6, 7].map((id) =>
      unit(id, { responseIds: [10 * id], domain: id <= 5 ? "top" : id === 6 ? "single" : "mixed" }),
    );
    const anns: RawAnnotation[] = [];
    for (const u of units) {
      if (u.domain === "top") anns.push(ann(u.id, 1, { scores: { [10 * u.id]: 5 } }), ann(u.id, 2, { scores: { [10 * u.id]: 5 } }));
      else if (u.domain === "single") anns.push(ann(u.id, 1, { scores: { [10 * u.id]: 3 } }));
      else anns.push(ann(u.id, 1, { scores: { [10 * u.id]: 1 } }), ann(u.id, 2, { scores: { [10 * u.id]: 2 } }));
    }
    const d = task("writing-quality", units, anns, 2);
    const rows = breakdowns(d, finalLabels(d, "mean")).filter((r) => r.dimension === "domain");
    const top = rows.find((r) => r.value === "top")!.summary;
    expect(top.value).toBe(5);
    expect(top.ci![1]).toBeLessThanOrEqual(5);
    expect(top.ci![0]).toBeLessThan(5);
    expect(top.ci![0]).toBeGreaterThanOrEqual(1);
    expect(top.method).toMatch(/all 5 scores equal: Wilson/);
    const single = rows.find((r) => r.value === "single")!.summary;
    expect(single.ci).toBeNull();
    expect(single.method).toBe("not estimable: one label");
  });

  it("warns about an annotator who gave one label to every unit and about labels that usually mean missing", () => {
    const units = Array.from({ length: 6 }, (_, i) => unit(i + 1));
    const anns = units.flatMap((u, i) => [ann(u.id, 1, "Yes"), ann(u.id, 2, i % 3 === 0 ? "NA" : i % 2 ? "Yes" : "No")]);
    // An imported label set (free categories, nominal): "NA" arrives as a label.
    const iaa = interAnnotatorAgreement(task("imported-labels", units, anns, 2));
    expect(iaa.warnings).toContain("A1 gave the same label (Yes) to all 6 units they labelled.");
    expect(iaa.warnings.some((w) => w.startsWith('The label "NA" is counted as a category'))).toBe(true);
  });

  it("Gwet's AC1 and its interval count the task's declared scale (config.categories), used or not", () => {
    // 300 units: from SMALL_SAMPLE_UNITS up the interval is the analytic one written out below.
    const units = Array.from({ length: 300 }, (_, i) => unit(i + 1));
    const labels = ["low", "mid", "high"];
    const anns = units.flatMap((u, i) => [ann(u.id, 1, labels[i % 3]), ann(u.id, 2, labels[(i + (i % 4 === 0 ? 1 : 0)) % 3])]);
    const M = units.map((_, i) => [labels[i % 3], labels[(i + (i % 4 === 0 ? 1 : 0)) % 3]]);
    const declared = task("imported-labels", units, anns, 2, { level: "nominal", categories: ["low", "mid", "high", "extreme"] });
    expect(declared.categories).toEqual(["low", "mid", "high", "extreme"]);
    expect(stat(interAnnotatorAgreement(declared), "gwetAC1").value).toBeCloseTo(
      gwetAC1(M, { categories: ["low", "mid", "high", "extreme"] }).value,
      12,
    );
    const inferred = task("imported-labels", units, anns, 2, { level: "nominal" });
    expect(stat(interAnnotatorAgreement(inferred), "gwetAC1").value).toBeCloseTo(gwetAC1(M).value, 12);
    // The interval keeps q of the declared scale too: Gwet's (2008, eqs. 20-30) linearised variance, written
    // here for two annotators who rated every unit (each unit its own item, so no clustering):
    //   π_k = mean of r_ik/2, pe = Σ π_k(1 − π_k)/(q − 1), AC1_i = (pa_i − pe)/(1 − pe),
    //   pe_i = Σ_k (r_ik/2)(1 − π_k)/(q − 1), AC1*_i = AC1_i − 2(1 − AC1)(pe_i − pe)/(1 − pe),
    //   Var = Σ (AC1*_i − AC1)² / (n(n − 1)); interval AC1 ± 1.96·SE.
    const gwetInterval = (scale: string[]) => {
      const q = scale.length;
      const n = M.length;
      const r = M.map((row) => scale.map((k) => row.filter((v) => v === k).length));
      const pi = scale.map((_, k) => r.reduce((s, rk) => s + rk[k] / 2, 0) / n);
      const pe = pi.reduce((s, p) => s + p * (1 - p), 0) / (q - 1);
      const paI = M.map((row): number => (row[0] === row[1] ? 1 : 0));
      const pa = paI.reduce((s, x) => s + x, 0) / n;
      const ac1 = (pa - pe) / (1 - pe);
      const star = r.map((rk, i) => {
        const peI = rk.reduce((s, c, k) => s + (c / 2) * (1 - pi[k]), 0) / (q - 1);
        return (paI[i] - pe) / (1 - pe) - (2 * (1 - ac1) * (peI - pe)) / (1 - pe);
      });
      const se = Math.sqrt(star.reduce((s, x) => s + (x - ac1) ** 2, 0) / (n * (n - 1)));
      return [ac1 - 1.96 * se, ac1 + 1.96 * se];
    };
    const declaredCI = stat(interAnnotatorAgreement(declared), "gwetAC1").ci!;
    const inferredCI = stat(interAnnotatorAgreement(inferred), "gwetAC1").ci!;
    const expected4 = gwetInterval(["low", "mid", "high", "extreme"]);
    const expected3 = gwetInterval(labels);
    expect(declaredCI[0]).toBeCloseTo(expected4[0], 12);
    expect(declaredCI[1]).toBeCloseTo(expected4[1], 12);
    expect(inferredCI[0]).toBeCloseTo(expected3[0], 12);
    expect(inferredCI[1]).toBeCloseTo(expected3[1], 12);
    expect(Math.abs(declaredCI[0] - inferredCI[0])).toBeGreaterThan(1e-3);
    // Below 300 units the BCa bootstrap's resamples keep the declared q too: its interval differs from the inferred one.
    const few = units.slice(0, 30);
    const fewAnns = anns.filter((x) => x.unitId <= 30);
    const declared30 = stat(
      interAnnotatorAgreement(
        task("imported-labels", few, fewAnns, 2, { level: "nominal", categories: ["low", "mid", "high", "extreme"] }),
      ),
      "gwetAC1",
    );
    const inferred30 = stat(interAnnotatorAgreement(task("imported-labels", few, fewAnns, 2, { level: "nominal" })), "gwetAC1");
    expect(declared30.method).toMatch(/^BCa bootstrap/);
    expect(Math.abs(declared30.ci![0] - inferred30.ci![0])).toBeGreaterThan(1e-3);
  });

  it("scaleMeanEstimate's bootstrap never leaves [min, max] of the scores; honestEstimate clips and flags zero width", () => {
    const xs = [1, 1, 1, 1, 2, 1, 1, 1, 1, 1];
    const e = scaleMeanEstimate(xs, 1, 5, 3);
    expect(e.ci![0]).toBeGreaterThanOrEqual(1);
    expect(e.ci![1]).toBeLessThanOrEqual(2);
    // 2,000 resamples on the report pages (issue 36, item 10).
    expect(e.method).toBe("percentile bootstrap (B=2000, seed 3)");
    expect(honestEstimate({ value: 0.99, ci: [0.95, 1.03], n: 10, method: "m" })).toMatchObject({
      ci: [0.95, 1],
      method: "m; clipped to [-1, 1]",
    });
    expect(honestEstimate({ value: 1, ci: [1, 1], n: 10, method: "m" })).toMatchObject({
      ci: null,
      method: expect.stringMatching(/^not estimable/),
    });
  });
});
