/**
 * The 95% intervals of the judge–human table beyond accuracy and kappa: weighted kappa
 * (ordinal), Gwet's AC1, macro precision and macro recall. Every expected interval is
 * computed here, independently of app/stats, from the figures the row itself reports
 * (its confusion matrix) or from the fixture files:
 *
 * - weighted kappa: the asymptotic variance of Fleiss, Cohen & Everitt (1969, eq. 13) with
 *   quadratic agreement weights, written out below;
 * - AC1: Gwet's (2008, eqs. 20–30) linearised variance for two raters, written out below;
 * - macro precision / recall: a percentile bootstrap over units written out below (the
 *   units drawn with the same seeded generator as the app, Hyndman & Fan type-6 quantiles),
 *   the macro averages as scikit-learn's average="macro" with zero_division=0.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readJudgeFiles } from "~/formats/judgeFiles.server";
import { judgeAgreement, labelText, strictMajority, UNPARSED, type JudgeAgreementRow } from "~/reports/judgeAgreement";
import { seededRandom } from "~/stats/seededRandom";

const FX = path.resolve(__dirname, "../../fixtures/judge");
/**
 * judge-wobbly's empty verdict (u02, an empty CSV cell) counted as an unparsed output, as the
 * expected values below (scikit-learn's, and the hand computations) take it; by default an empty
 * CSV cell is a missing verdict, left out of n (tests/integration/judge-agreement-missing.test.ts).
 */
const AS_BEFORE = { missing: "unparsed" } as const;
const Z = 1.96;

/** Fleiss, Cohen & Everitt (1969): weighted kappa and its asymptotic SE from a q × q table of counts. */
function weightedKappaSE(t: number[][]): { kappa: number; se: number } {
  const q = t.length;
  const n = t.flat().reduce((a, b) => a + b, 0);
  const p = t.map((r) => r.map((x) => x / n));
  const row = p.map((r) => r.reduce((a, b) => a + b, 0));
  const col = p[0].map((_, j) => p.reduce((a, r) => a + r[j], 0));
  const w = (i: number, j: number) => 1 - (i - j) ** 2 / (q - 1) ** 2;
  let po = 0;
  let pe = 0;
  for (let i = 0; i < q; i++)
    for (let j = 0; j < q; j++) {
      po += w(i, j) * p[i][j];
      pe += w(i, j) * row[i] * col[j];
    }
  const kappa = (po - pe) / (1 - pe);
  const wi = row.map((_, i) => col.reduce((a, c, j) => a + c * w(i, j), 0));
  const wj = col.map((_, j) => row.reduce((a, r, i) => a + r * w(i, j), 0));
  let s = 0;
  for (let i = 0; i < q; i++) for (let j = 0; j < q; j++) s += p[i][j] * (w(i, j) - (wi[i] + wj[j]) * (1 - kappa)) ** 2;
  const v = (s - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2);
  return { kappa, se: Math.sqrt(v) };
}

/**
 * Gwet (2008, eqs. 20–30): AC1 of two raters on every unit and its linearised SE, from pairs of
 * labels, q = the number of categories of the scale `cats`. A label outside the scale (the
 * "(unparsed)" class) is a rating in none of the categories: it agrees with nothing and adds to no π_k.
 */
function ac1SE(pairs: [string, string][], cats: string[]): { ac1: number; se: number } {
  const n = pairs.length;
  const q = cats.length;
  const pi = cats.map((c) => pairs.reduce((a, [x, y]) => a + ((x === c ? 1 : 0) + (y === c ? 1 : 0)) / 2, 0) / n);
  const pa = pairs.filter(([x, y]) => x === y && cats.includes(x)).length / n;
  const pe = pi.reduce((a, p) => a + p * (1 - p), 0) / (q - 1);
  const ac1 = (pa - pe) / (1 - pe);
  let ss = 0;
  for (const [x, y] of pairs) {
    const paI = x === y && cats.includes(x) ? 1 : 0;
    const acI = (paI - pe) / (1 - pe);
    const peI = cats.reduce((a, c, k) => a + ((x === c ? 1 : 0) + (y === c ? 1 : 0)) * (1 - pi[k]), 0) / (2 * (q - 1));
    const star = acI - (2 * (1 - ac1) * (peI - pe)) / (1 - pe);
    ss += (star - ac1) ** 2;
  }
  return { ac1, se: Math.sqrt(ss / (n * (n - 1))) };
}

/** scikit-learn's macro precision and recall (average="macro", zero_division=0) over the labels either side used. */
function macroPR(y: string[], p: string[]): [number, number] {
  const labels = [...new Set([...y, ...p])];
  let sp = 0;
  let sr = 0;
  for (const l of labels) {
    let tp = 0;
    let pred = 0;
    let sup = 0;
    for (let i = 0; i < y.length; i++) {
      if (p[i] === l) pred++;
      if (y[i] === l) sup++;
      if (p[i] === l && y[i] === l) tp++;
    }
    sp += pred ? tp / pred : 0;
    sr += sup ? tp / sup : 0;
  }
  return [sp / labels.length, sr / labels.length];
}

/** Hyndman & Fan (1996) type-6 quantile of a sorted sample. */
function q6(x: number[], prob: number): number {
  const h = (x.length + 1) * prob;
  if (h < 1) return x[0];
  if (h >= x.length) return x[x.length - 1];
  const f = Math.floor(h);
  return x[f - 1] + (h - f) * (x[f] - x[f - 1]);
}

const tableOf = (row: JudgeAgreementRow, labels: string[]) => labels.map((h) => labels.map((v) => row.confusion[h][v]));

describe("intervals of weighted kappa, AC1, macro precision and macro recall", () => {
  it("weighted kappa (ordinal): kappa_w ± 1.96·SE of Fleiss, Cohen & Everitt (1969)", async () => {
    const { input } = await readJudgeFiles({
      labels: path.join(FX, "labels-numeric.json"),
      verdicts: path.join(FX, "verdicts-numeric.jsonl"),
    });
    const rows = judgeAgreement(input, { ...AS_BEFORE, ordinal: true }).judges;
    for (const row of rows) {
      // The weighted kappa leaves pairs with an unparsed verdict out: the table over the scale 0, 1, 2.
      const ref = weightedKappaSE(tableOf(row, ["0", "1", "2"]));
      expect(row.weightedKappa).toBeCloseTo(ref.kappa, 12);
      // Clipped to [−1, 1] (judge-wobbly's upper bound is 1.026 unclipped), and the row says so.
      expect(row.weightedKappaCI![0]).toBeCloseTo(Math.max(-1, ref.kappa - Z * ref.se), 3);
      expect(row.weightedKappaCI![1]).toBeCloseTo(Math.min(1, ref.kappa + Z * ref.se), 3);
      expect(row.intervalNotes.weightedKappaCI).toBe(ref.kappa + Z * ref.se > 1 ? "clipped to [-1, 1]" : undefined);
    }
    // Not ordinal: no weighted kappa, no interval.
    expect(judgeAgreement(input, AS_BEFORE).judges[0].weightedKappaCI).toBeNull();
  });

  it("AC1: q is the label set (the reference's categories), not the categories in use with the unparsed class; Gwet's analytic SE", async () => {
    const { input } = await readJudgeFiles({
      labels: path.join(FX, "labels-wide.csv"),
      annotators: ["ann_1", "ann_2", "ann_3"],
      verdicts: path.join(FX, "verdicts.csv"),
    });
    const r = judgeAgreement(input, AS_BEFORE);
    expect(r.labels).toEqual(["A", "B", "tie"]);
    for (const row of r.judges) {
      const pairs: [string, string][] = [];
      for (const [h, byJudge] of Object.entries(row.confusion))
        for (const [v, k] of Object.entries(byJudge)) for (let i = 0; i < k; i++) pairs.push([h, v]);
      expect(pairs.length).toBe(row.n);
      const ref = ac1SE(pairs, r.labels);
      expect(row.ac1).toBeCloseTo(ref.ac1, 12);
      expect(row.ac1CI![0]).toBeCloseTo(Math.max(-1, ref.ac1 - Z * ref.se), 3);
      expect(row.ac1CI![1]).toBeCloseTo(Math.min(1, ref.ac1 + Z * ref.se), 3);
    }
    // judge-wobbly's 3 unparsed verdicts: by hand, its 10 pairs (confusion A→A 2, A→(u) 1, B→B 2, B→(u) 2,
    // tie→A 1, tie→tie 2): pa = 6/10; π_A = (3 + 3)/20, π_B = (4 + 2)/20, π_tie = (3 + 2)/20 (the
    // unparsed ratings in no category); pe = (0.3·0.7 + 0.3·0.7 + 0.25·0.75)/(3 − 1) = 0.30375;
    // AC1 = (0.6 − 0.30375)/(1 − 0.30375) = 0.42549… — not the 0.4702 of q = 4 with "(unparsed)" a category.
    const wobbly = r.judges.find((j) => j.judge === "judge-wobbly")!;
    expect(wobbly.ac1).toBeCloseTo((0.6 - 0.30375) / (1 - 0.30375), 12);
    // A declared scale with an unused category (here "skip") makes q = 4: AC1 counts the scale.
    const s = 0.3 * 0.7 + 0.3 * 0.7 + 0.25 * 0.75;
    const scaled = judgeAgreement({ ...input, categories: ["A", "B", "skip", "tie"] }, AS_BEFORE).judges.find(
      (j) => j.judge === "judge-wobbly",
    )!;
    expect(scaled.ac1).toBeCloseTo((0.6 - s / 3) / (1 - s / 3), 12);
  });

  it("macro precision and recall: a seeded percentile bootstrap over units, the same resamples as macro F1", async () => {
    const { input } = await readJudgeFiles({
      labels: path.join(FX, "labels-wide.csv"),
      annotators: ["ann_1", "ann_2", "ann_3"],
      verdicts: path.join(FX, "verdicts.csv"),
    });
    const B = 400;
    const seed = 7;
    const r = judgeAgreement(input, { ...AS_BEFORE, resamples: B, seed });
    const labelSet = new Set(r.labels);
    for (const row of r.judges) {
      const j = input.judges.find((x) => x.name === row.judge)!;
      // The compared pairs in unit order: the strict majority, the verdict as its label (out of set: unparsed).
      const y: string[] = [];
      const p: string[] = [];
      input.labels.forEach((labels, u) => {
        const ref = strictMajority(labels);
        const v = j.verdicts[u];
        if (ref === null || v === undefined) return;
        const t = v === null ? null : labelText(v);
        y.push(ref);
        p.push(t !== null && labelSet.has(t) ? t : UNPARSED);
      });
      expect(y.length).toBe(row.n);
      const [mp, mr] = macroPR(y, p);
      expect(row.macroPrecision).toBeCloseTo(mp, 12);
      expect(row.macroRecall).toBeCloseTo(mr, 12);
      const random = seededRandom(seed);
      const ps: number[] = [];
      const rs: number[] = [];
      for (let b = 0; b < B; b++) {
        const yy: string[] = [];
        const pp: string[] = [];
        for (let i = 0; i < y.length; i++) {
          const k = Math.floor(random() * y.length);
          yy.push(y[k]);
          pp.push(p[k]);
        }
        const [bp, br] = macroPR(yy, pp);
        ps.push(bp);
        rs.push(br);
      }
      ps.sort((a, b) => a - b);
      rs.sort((a, b) => a - b);
      expect(row.macroPrecisionCI![0]).toBeCloseTo(q6(ps, 0.025), 12);
      expect(row.macroPrecisionCI![1]).toBeCloseTo(q6(ps, 0.975), 12);
      expect(row.macroRecallCI![0]).toBeCloseTo(q6(rs, 0.025), 12);
      expect(row.macroRecallCI![1]).toBeCloseTo(q6(rs, 0.975), 12);
      expect(row.macroPrecisionCI![0]).toBeLessThan(row.macroPrecision!);
      expect(row.macroRecallCI![1]).toBeGreaterThan(row.macroRecall!);
    }
  });

  it("reference each: accuracy and kappa intervals from a seeded bootstrap over units (a unit's annotator pairs together)", async () => {
    const { input } = await readJudgeFiles({
      labels: path.join(FX, "labels-wide.csv"),
      annotators: ["ann_1", "ann_2", "ann_3"],
      verdicts: path.join(FX, "verdicts.csv"),
    });
    const B = 500;
    const seed = 11;
    const r = judgeAgreement(input, { ...AS_BEFORE, reference: "each", resamples: B, seed });
    const labelSet = new Set(r.labels);
    /** J. Cohen (1960): (p_o − p_e)/(1 − p_e) from the pairs. */
    const kappa = (y: string[], p: string[]) => {
      const n = y.length;
      const cats = [...new Set([...y, ...p])];
      const po = y.filter((x, i) => x === p[i]).length / n;
      const pe = cats.reduce((a, c) => a + (y.filter((x) => x === c).length / n) * (p.filter((x) => x === c).length / n), 0);
      return (po - pe) / (1 - pe);
    };
    for (const row of r.judges) {
      const j = input.judges.find((x) => x.name === row.judge)!;
      // Per unit with a verdict (in unit order): its (annotator label, verdict) pairs.
      const units: [string, string][][] = [];
      input.labels.forEach((labels, u) => {
        const v = j.verdicts[u];
        if (v === undefined || labels.every((l) => l === null)) return;
        const t = v === null ? null : labelText(v);
        const verdict = t !== null && labelSet.has(t) ? t : UNPARSED;
        units.push(labels.filter((l): l is string => l !== null).map((l) => [l, verdict]));
      });
      expect(units.flat().length).toBe(row.n);
      const random = seededRandom(seed);
      const accs: number[] = [];
      const kappas: number[] = [];
      for (let b = 0; b < B; b++) {
        const y: string[] = [];
        const p: string[] = [];
        for (let i = 0; i < units.length; i++)
          for (const [h, v] of units[Math.floor(random() * units.length)]) {
            y.push(h);
            p.push(v);
          }
        accs.push(y.filter((x, i) => x === p[i]).length / y.length);
        const k = kappa(y, p);
        if (Number.isFinite(k)) kappas.push(k);
      }
      accs.sort((a, b) => a - b);
      kappas.sort((a, b) => a - b);
      expect(row.accuracyCI![0]).toBeCloseTo(q6(accs, 0.025), 12);
      expect(row.accuracyCI![1]).toBeCloseTo(q6(accs, 0.975), 12);
      expect(row.cohenKappaCI![0]).toBeCloseTo(q6(kappas, 0.025), 12);
      expect(row.cohenKappaCI![1]).toBeCloseTo(q6(kappas, 0.975), 12);
      // Wider than Wilson's on the n pooled pairs, which takes them as independent.
      const pooled = units.flat();
      const wilsonWidth = (() => {
        const n = pooled.length;
        const ph = row.accuracy!;
        const z = 1.96;
        return (2 * z * Math.sqrt((ph * (1 - ph)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
      })();
      expect(row.accuracyCI![1] - row.accuracyCI![0]).toBeGreaterThan(wilsonWidth);
    }
    // The same seed gives the same intervals; another seed other ones.
    expect(judgeAgreement(input, { ...AS_BEFORE, reference: "each", resamples: B, seed }).judges[0].accuracyCI).toEqual(
      r.judges[0].accuracyCI,
    );
    expect(judgeAgreement(input, { ...AS_BEFORE, reference: "each", resamples: B, seed: seed + 1 }).judges[0].accuracyCI).not.toEqual(
      r.judges[0].accuracyCI,
    );
  });

  it("unparsed counts every unparsed verdict of the judge, on units with a reference or not; unparsedCompared those in n", () => {
    // u1, u2: a majority; u3: a 1–1 split (no majority); u4: labelled by nobody.
    const input = {
      annotators: ["a", "b"],
      labels: [
        ["Yes", "Yes"],
        ["No", "No"],
        ["Yes", "No"],
        [null, null],
      ],
      judges: [{ name: "j", verdicts: ["Yes", "Maybe", null, "?"] }],
    };
    for (const unparsed of ["count-as-wrong", "exclude", "as:No"] as const) {
      const row = judgeAgreement(input, { ...AS_BEFORE, unparsed }).judges[0];
      expect([row.unparsed, row.unparsedCompared]).toEqual([3, 1]);
      expect(row.n).toBe(unparsed === "exclude" ? 1 : 2);
    }
    // Reference each: the split unit is compared (its two pairs), so two of the three are on compared units.
    const each = judgeAgreement(input, { ...AS_BEFORE, reference: "each" }).judges[0];
    expect([each.unparsed, each.unparsedCompared, each.n]).toEqual([3, 2, 6]);
  });

  it("the human ceiling's accuracy interval: a seeded bootstrap over units, a unit's annotator pairs together", async () => {
    const { input } = await readJudgeFiles({
      labels: path.join(FX, "labels-wide.csv"),
      annotators: ["ann_1", "ann_2", "ann_3"],
      verdicts: path.join(FX, "verdicts.csv"),
    });
    const B = 400;
    const seed = 3;
    for (const reference of ["majority", "each"] as const) {
      const h = judgeAgreement(input, { ...AS_BEFORE, reference, resamples: B, seed }).humans!;
      // Per unit: its pairs (majority: each annotator against the strict majority of the others;
      // each: every two annotators), as (agreeing, pairs).
      const units: [number, number][] = [];
      for (const row of input.labels) {
        let agree = 0;
        let pairs = 0;
        row.forEach((l, i) => {
          if (l === null) return;
          if (reference === "majority") {
            const others = strictMajority(row, i);
            if (others === null) return;
            pairs++;
            if (others === l) agree++;
          } else
            row.forEach((m, k) => {
              if (k <= i || m === null) return;
              pairs++;
              if (m === l) agree++;
            });
        });
        if (pairs) units.push([agree, pairs]);
      }
      const total = units.reduce((a, [, m]) => a + m, 0);
      expect(h.n).toBe(total);
      expect(h.accuracy).toBeCloseTo(units.reduce((a, [x]) => a + x, 0) / total, 12);
      const random = seededRandom(seed);
      const accs: number[] = [];
      for (let b = 0; b < B; b++) {
        let x = 0;
        let m = 0;
        for (let i = 0; i < units.length; i++) {
          const [ax, am] = units[Math.floor(random() * units.length)];
          x += ax;
          m += am;
        }
        accs.push(x / m);
      }
      accs.sort((p, q) => p - q);
      expect(h.accuracyCI![0]).toBeCloseTo(q6(accs, 0.025), 12);
      expect(h.accuracyCI![1]).toBeCloseTo(q6(accs, 0.975), 12);
    }
  });
});
