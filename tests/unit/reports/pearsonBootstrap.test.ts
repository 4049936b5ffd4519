/**
 * Two annotators on a 1–5 scale: beside Pearson's r with Fisher's z interval, the report offers
 * a bootstrap over the units (issue 15: Fisher's z is too narrow on skewed Likert scores), in the
 * agreement statistics and in the pairwise table, each labelled with its method. With 40 units
 * (fewer than 300) the bootstrap is the default small-sample one (issue 36, item 8): BCa with
 * Hesterberg's expanded levels, 2,000 resamples.
 *
 * The expected interval is computed here: the units resampled with replacement by the seeded
 * generator the report uses (seed = the task's seed, 2,000 resamples), Pearson's r of each
 * resample written out; the BCa limits by their definition (Efron & Tibshirani 1993, §14.3:
 * ẑ0 from the share of resamples below r, ties counted half; â from the leave-one-unit-out
 * jackknife), read at the expanded level 2·Φ(√(40/39)·t(0.975, 39)) − 1 = 0.9594849272743122
 * (scipy 1.17.1), Hyndman & Fan (1996) type-6 quantiles.
 */
import { describe, expect, it } from "vitest";
import { interAnnotatorAgreement } from "../../../app/reports/agreement";
import { buildTaskData, type RawAnnotation, type RawUnit } from "../../../app/reports/subjects";
import { iaaTable, pairsTable } from "../../../app/reports/tables";
import { normalCDF } from "../../../app/stats/normalCDF";
import { normalQuantile } from "../../../app/stats/normalQuantile";
import { seededRandom } from "../../../app/stats/seededRandom";

const unit = (id: number): RawUnit => ({
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
});
const ann = (unitId: number, annotatorId: number, label: unknown): RawAnnotation => ({
  unitId,
  annotatorId,
  label,
  durationMs: 1000,
  shownOrder: null,
});

function pearsonR(x: number[], y: number[]): number {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}
function q6(x: number[], p: number): number {
  const h = (x.length + 1) * p;
  if (h < 1) return x[0];
  if (h >= x.length) return x[x.length - 1];
  const f = Math.floor(h);
  return x[f - 1] + (h - f) * (x[f] - x[f - 1]);
}

describe("Pearson r of two annotators: Fisher's z and the unit bootstrap side by side", () => {
  it("the bootstrap interval is the units' BCa bootstrap at the expanded level, labelled with its method, in both tables", () => {
    // Skewed 1–5 scores: mostly 5s and 4s, a few low ones.
    const a = [5, 5, 4, 5, 5, 3, 5, 4, 5, 5, 1, 5, 4, 5, 5, 5, 2, 5, 4, 5, 5, 5, 4, 5, 3, 5, 5, 4, 5, 5, 5, 4, 5, 2, 5, 5, 4, 5, 5, 5];
    const b = [5, 4, 4, 5, 5, 4, 5, 5, 5, 4, 2, 5, 3, 5, 5, 4, 1, 5, 5, 5, 4, 5, 4, 5, 4, 5, 5, 5, 5, 4, 5, 4, 5, 3, 5, 5, 5, 5, 4, 5];
    const units = a.map((_, i) => unit(i + 1));
    const data = buildTaskData({
      task: { id: 1, name: "t", kind: "imported-labels", datasetId: 1, seed: 7, overlap: 2 },
      config: { level: "ordinal" },
      adjudications: {},
      units,
      responses: [],
      annotations: units.flatMap((u, i) => [ann(u.id, 1, a[i]), ann(u.id, 2, b[i])]),
      annotators: [
        { id: 1, name: "A1" },
        { id: 2, name: "A2" },
      ],
    });
    const iaa = interAnnotatorAgreement(data);
    const fisher = iaa.statistics.find((s) => s.key === "pearson")!.estimate;
    const boot = iaa.statistics.find((s) => s.key === "pearsonBootstrap")!;
    const r = pearsonR(a, b);
    expect(fisher.value).toBeCloseTo(r, 12);
    expect(fisher.method).toBe("Fisher z");
    expect(boot.label).toBe("Pearson r (unit bootstrap)");
    expect(boot.estimate.value).toBeCloseTo(r, 12);
    const METHOD = "BCa bootstrap over units (B=2000, 40 units, seed 7; expanded for 40 units: limits at the 0.9595 level)";
    expect(boot.estimate.method).toBe(METHOD);

    const random = seededRandom(7);
    const rs: number[] = [];
    for (let k = 0; k < 2000; k++) {
      const x: number[] = [];
      const y: number[] = [];
      for (let i = 0; i < a.length; i++) {
        const j = Math.floor(random() * a.length);
        x.push(a[j]);
        y.push(b[j]);
      }
      const v = pearsonR(x, y);
      if (Number.isFinite(v)) rs.push(v);
    }
    rs.sort((p, q) => p - q);
    let below = 0;
    let ties = 0;
    for (const v of rs) {
      if (Math.abs(v - r) <= 1e-12) ties++;
      else if (v < r) below++;
    }
    const z0 = normalQuantile((below + ties / 2) / rs.length);
    const jack = a.map((_, i) =>
      pearsonR(
        a.filter((_x, j) => j !== i),
        b.filter((_x, j) => j !== i),
      ),
    );
    const jm = jack.reduce((p, q) => p + q, 0) / jack.length;
    const acc = jack.reduce((p, v) => p + (jm - v) ** 3, 0) / (6 * jack.reduce((p, v) => p + (jm - v) ** 2, 0) ** 1.5);
    const level = 0.9594849272743122;
    const at = (p: number) => {
      const z = normalQuantile(p);
      return normalCDF(z0 + (z0 + z) / (1 - acc * (z0 + z)));
    };
    const expected = [q6(rs, at((1 - level) / 2)), q6(rs, at(1 - (1 - level) / 2))];
    expect(boot.estimate.ci![0]).toBeCloseTo(expected[0], 10);
    expect(boot.estimate.ci![1]).toBeCloseTo(expected[1], 10);
    // Different intervals: the bootstrap is not Fisher's z relabelled.
    expect(boot.estimate.ci![0]).not.toBeCloseTo(fisher.ci![0], 3);
    // The statistics table lists both rows, each with its method.
    const rows = iaaTable(iaa).rows.filter((x) => String(x.statistic).startsWith("Pearson"));
    expect(rows.map((x) => [x.statistic, x.method])).toEqual([
      ["Pearson r", "Fisher z"],
      ["Pearson r (unit bootstrap)", METHOD],
    ]);
    // The pairwise table: Fisher's z and the bootstrap in their own labelled columns, the same intervals.
    const pt = pairsTable(iaa);
    expect(pt.columns.filter((c) => c.key.startsWith("pearson")).map((c) => c.label)).toEqual([
      "Pearson r",
      "95% CI (Fisher z)",
      "95% CI (unit bootstrap)",
    ]);
    const pair = pt.rows[0] as unknown as { pearsonCi: number[]; pearsonBootCi: number[] };
    expect(pair.pearsonCi).toEqual(fisher.ci);
    expect(pair.pearsonBootCi[0]).toBeCloseTo(expected[0], 10);
    expect(pair.pearsonBootCi[1]).toBeCloseTo(expected[1], 10);
    // The planner does not list the second Pearson interval as a statistic of its own.
    expect(iaa.planner.some((p) => p.label === "Pearson r (unit bootstrap)")).toBe(false);
  });
});
