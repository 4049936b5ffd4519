/**
 * The adjudicated reference with real adjudicated labels: three annotators on ten units of a
 * pairwise task with ties; three units split among the annotators (no strict majority) are
 * resolved by an adjudicator, one unit with a 2–1 majority is overruled by the adjudicator,
 * and one split unit is left unadjudicated (so it has no reference and is counted).
 *
 * The expected figures are computed in this file from the definitions, not by the app:
 * the reference is the adjudicated label where there is one, else the strict majority;
 * accuracy = agreeing pairs / pairs; Cohen's (1960) kappa = (po − pe)/(1 − pe) with pe from
 * the two marginals; macro precision / recall / F1 as scikit-learn's average="macro" with
 * zero_division=0 over the labels either side used (Yang 1999).
 */
import { describe, expect, it } from "vitest";
import { judgeAgreement } from "~/reports/judgeAgreement";

// unit: [ann_1, ann_2, ann_3], adjudicated label (null = not adjudicated), judge verdict.
const UNITS: [(string | null)[], string | null, string][] = [
  [["A", "A", "A"], null, "A"], // u1 unanimous
  [["B", "B", "A"], null, "B"], // u2 majority B
  [["A", "B", "tie"], "tie", "tie"], // u3 split, adjudicated tie
  [["A", "B", null], "A", "B"], // u4 split (1–1), adjudicated A
  [["tie", "tie", "B"], null, "tie"], // u5 majority tie
  [["A", "A", "B"], "B", "B"], // u6 majority A overruled: adjudicated B
  [["B", "tie", "A"], "B", "B"], // u7 split, adjudicated B
  [["A", "B", "tie"], null, "A"], // u8 split, not adjudicated: no reference
  [["B", "B", "B"], null, "A"], // u9 unanimous
  [["A", "A", null], null, "A"], // u10 majority A
];

function strictMajority(labels: (string | null)[]): string | null {
  const given = labels.filter((l): l is string => l !== null);
  for (const l of new Set(given)) if (2 * given.filter((x) => x === l).length > given.length) return l;
  return null;
}

function expected(ref: string[], jud: string[]) {
  const n = ref.length;
  const labels = [...new Set([...ref, ...jud])];
  const po = ref.filter((r, i) => r === jud[i]).length / n;
  const pe = labels.reduce((s, l) => s + (ref.filter((r) => r === l).length / n) * (jud.filter((j) => j === l).length / n), 0);
  let p = 0;
  let r = 0;
  let f = 0;
  for (const l of labels) {
    const tp = ref.filter((x, i) => x === l && jud[i] === l).length;
    const pred = jud.filter((x) => x === l).length;
    const sup = ref.filter((x) => x === l).length;
    const pl = pred ? tp / pred : 0;
    const rl = sup ? tp / sup : 0;
    p += pl;
    r += rl;
    f += pl + rl ? (2 * pl * rl) / (pl + rl) : 0;
  }
  return { n, accuracy: po, kappa: (po - pe) / (1 - pe), precision: p / labels.length, recall: r / labels.length, f1: f / labels.length };
}

const input = {
  annotators: ["ann_1", "ann_2", "ann_3"],
  labels: UNITS.map((u) => u[0]),
  adjudicated: UNITS.map((u) => u[1]),
  judges: [{ name: "judge-x", verdicts: UNITS.map((u) => u[2]) }],
};

describe("reference adjudicated, with adjudicated labels", () => {
  it("uses the adjudicated label where there is one (also over a majority), else the strict majority", () => {
    const ref: string[] = [];
    const jud: string[] = [];
    let without = 0;
    for (const [labels, adj, verdict] of UNITS) {
      const r = adj ?? strictMajority(labels);
      if (r === null) {
        without++;
        continue;
      }
      ref.push(r);
      jud.push(verdict);
    }
    expect([ref.length, without]).toEqual([9, 1]);
    const e = expected(ref, jud);
    const result = judgeAgreement(input, { reference: "adjudicated", resamples: 0 });
    expect(result.unitsWithoutMajority).toBe(1); // u8 only: u3, u4 and u7 are resolved by adjudication
    const row = result.judges[0];
    expect(row.n).toBe(9);
    expect(row.accuracy).toBeCloseTo(e.accuracy, 12);
    expect(row.cohenKappa).toBeCloseTo(e.kappa, 12);
    expect(row.macroPrecision).toBeCloseTo(e.precision, 12);
    expect(row.macroRecall).toBeCloseTo(e.recall, 12);
    expect(row.macroF1).toBeCloseTo(e.f1, 12);
    // u6: the majority says A, the adjudicator B, the judge B — a hit against the adjudicated reference.
    expect(row.confusion.B.B).toBe(ref.filter((r, i) => r === "B" && jud[i] === "B").length);
    expect(row.confusion).toEqual({
      A: { A: 2, B: 1, tie: 0 },
      B: { A: 1, B: 3, tie: 0 },
      tie: { A: 0, B: 0, tie: 2 },
    });
  });

  it("differs from the majority reference exactly on the adjudicated units", () => {
    const maj = judgeAgreement(input, { reference: "majority", resamples: 0 });
    const adj = judgeAgreement(input, { reference: "adjudicated", resamples: 0 });
    // Majority: u3, u4, u7, u8 have no strict majority (4 left out); u6's reference is A, so the judge's B misses.
    expect(maj.unitsWithoutMajority).toBe(4);
    expect(maj.judges[0].n).toBe(6);
    const majRef = UNITS.map((u) => strictMajority(u[0]));
    const e = expected(
      majRef.filter((r): r is string => r !== null),
      UNITS.filter((_, i) => majRef[i] !== null).map((u) => u[2]),
    );
    expect(maj.judges[0].accuracy).toBeCloseTo(e.accuracy, 12);
    expect(maj.judges[0].cohenKappa).toBeCloseTo(e.kappa, 12);
    expect(adj.judges[0].accuracy).not.toBeCloseTo(maj.judges[0].accuracy!, 6);
  });
});
