/**
 * A rater (or judge) who gave one category to every unit (issue 15): kappa is 0 by
 * construction — with rater A always on x, p_e = Σ_k p_A,k p_B,k = p_B,x = p_o — in the
 * sample and in every resample, so its interval is "not estimable" with that reason, found
 * from the margins (app/stats cohenKappaFromTable constantRater). Before, rounding left an SE
 * of ~1.35e-9 and the report engine, the judge page and the command showed [−2.65e-9, 2.65e-9].
 *
 * Data: the auditor's samples, written here — 38 units, A always "x", B from x/y/z
 * ("zxyx…"); 40 Yes/No units, A always "Yes". Expected kappa 0: by the derivation above, and
 * scikit-learn 1.2.1 cohen_kappa_score gives 0.0 on both.
 */
import { describe, expect, it } from "vitest";
import { interAnnotatorAgreement } from "../../../app/reports/agreement";
import { finalLabels } from "../../../app/reports/finalLabels";
import { honestInterval } from "../../../app/reports/honest";
import { judgeAgreement } from "../../../app/reports/judgeAgreement";
import { judgeAgreementTables, taskJudgeAgreement } from "../../../app/reports/judgeAgreementReport";
import type { JudgeInfo, Verdicts } from "../../../app/reports/judges";
import { judgeReport } from "../../../app/reports/judges";
import { buildTaskData, type RawAnnotation, type RawUnit } from "../../../app/reports/subjects";
import { cohenKappa, cohenKappaClusteredSE, cohenKappaFromTable, pooledKappa, ratingPatterns } from "../../../app/stats";

const XYZ = "zxyxyyyzyxxyxyyzxzyyzxzxyxxxzzxyzxyzxz";
const YN = "yynnyynnyynnnyyynyyyynynnnnnnynyyynynnnn";
const REASON =
  /^not estimable: (.+) gave one category to every unit, so kappa's chance agreement equals its observed agreement \(p_e = p_o\) and kappa is 0 by construction/;

const unit = (id: number): RawUnit => ({
  id,
  itemId: id,
  checklistItemId: null,
  responseId: 100 + id,
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
const JUDGE: JudgeInfo = { id: 9, name: "judge-x", model: "m", promptVersion: "1", settings: {} };

function task(a: string[], b: string[]) {
  const units = a.map((_, i) => unit(i + 1));
  return buildTaskData({
    task: { id: 1, name: "t", kind: "response-satisfaction", datasetId: 1, seed: 7, overlap: 2 },
    config: {},
    adjudications: {},
    units,
    responses: [],
    annotations: units.flatMap((u, i) => [ann(u.id, 1, a[i]), ann(u.id, 2, b[i])]),
    annotators: [
      { id: 1, name: "A1" },
      { id: 2, name: "A2" },
    ],
  });
}

describe("app/stats: a constant rater is found from the margins", () => {
  it("kappa exactly 0 with an SE of exactly 0 (not ~1e-9), and constantRater names the side", () => {
    const b = [...XYZ];
    const a = b.map(() => "x");
    for (const weights of ["none", "linear", "quadratic"] as const) {
      const k = cohenKappa(a, b, { weights, categories: ["x", "y", "z"] });
      expect([k.kappa, k.se, k.constantRater], weights).toEqual([0, 0, "a"]);
      expect(cohenKappa(b, a, { weights, categories: ["x", "y", "z"] }).constantRater).toBe("b");
    }
    // Both constant on different categories: po = pe = 0, kappa 0; on the same one: pe = 1, undefined.
    expect(
      cohenKappaFromTable([
        [0, 5],
        [0, 0],
      ]).constantRater,
    ).toBe("both");
    expect(
      cohenKappaFromTable([
        [5, 0],
        [0, 0],
      ]).kappa,
    ).toBeNaN();
    // A non-degenerate table keeps its SE and no flag.
    const ok = cohenKappaFromTable([
      [4, 1],
      [2, 3],
    ]);
    expect(ok.constantRater).toBeNull();
    expect(ok.se).toBeGreaterThan(0.1);
    const codes = b.map((x) => "xyz".indexOf(x));
    const cl = cohenKappaClusteredSE(
      new Array(38).fill(0),
      codes,
      codes.map((_, i) => i),
      3,
    );
    expect([cl.kappa, cl.se, cl.constantRater]).toEqual([0, 0, "a"]);
    const { patterns } = ratingPatterns(b.map((x, i) => ["x", "x", i % 2 ? x : "x"]));
    const pk = pooledKappa(patterns, patterns.counts);
    expect([pk.kappa, pk.se, pk.constantRater]).toEqual([0, 0, "a"]);
  });

  it("honestInterval: a width of 5.3e-9 on [−1, 1] (rounding of an SE that is 0) is zero-width", () => {
    expect(honestInterval(0, [-2.65e-9, 2.65e-9])).toEqual({
      ci: null,
      note: "not estimable: the standard error is 0 (e.g. perfect agreement or a single value in use)",
    });
    // A real narrow interval (width 2e-4, n ≈ 10⁸ units) stays.
    expect(honestInterval(0.5, [0.4999, 0.5001]).ci).toEqual([0.4999, 0.5001]);
  });
});

describe("report page: inter-annotator kappa with a constant annotator", () => {
  it("kappa 0, not estimable with the annotator named; the pair row too; AC1 and PABAK keep intervals", () => {
    const b = [...YN].map((v) => (v === "y" ? "Yes" : "No"));
    const iaa = interAnnotatorAgreement(
      task(
        b.map(() => "Yes"),
        b,
      ),
    );
    const k = iaa.statistics.find((s) => s.key === "cohenKappa")!.estimate;
    expect(k.value).toBe(0);
    expect(k.ci).toBeNull();
    expect(k.method).toMatch(REASON);
    expect(k.method.match(REASON)![1]).toBe("A1");
    expect(iaa.pairs[0].kappa.ci).toBeNull();
    expect(iaa.pairs[0].kappa.method.match(REASON)![1]).toBe("A1");
    expect(iaa.kappaForPlanner).toBeNull();
    expect(iaa.statistics.find((s) => s.key === "gwetAC1")!.estimate.ci).not.toBeNull();
    expect(iaa.statistics.find((s) => s.key === "pabak")!.estimate.ci).not.toBeNull();
  });
});

describe("judge pages: a judge (or a reference) with one category", () => {
  it("a judge that always says Yes: kappa 0, interval not estimable, the reason in the CI notes", () => {
    const human = [...YN].map((v) => (v === "y" ? "Yes" : "No"));
    const data = task(human, human);
    const n = human.length;
    const verdicts: Verdicts = {
      length: n,
      judgeId: new Int32Array(n).fill(JUDGE.id),
      responseId: Int32Array.from(human, (_, i) => 101 + i),
      checklistItemId: new Int32Array(n).fill(-1),
      value: human.map(() => "Yes"),
      score: new Float64Array(n).fill(NaN),
      failed: new Uint8Array(n),
    };
    const r = taskJudgeAgreement(data, [JUDGE], verdicts, { reference: "majority", unparsed: "count-as-wrong" });
    const j = r.judges[0];
    expect([j.n, j.cohenKappa, j.cohenKappaCI]).toEqual([40, 0, null]);
    expect(j.intervalNotes.cohenKappaCI).toMatch(REASON);
    expect(j.intervalNotes.cohenKappaCI.match(REASON)![1]).toBe("the judge");
    expect(judgeAgreementTables(r)[0].rows[0].ciNotes).toMatch(/^kappa CI not estimable: the judge gave one category/);
    // The accuracy (19/40) keeps its Wilson interval; AC1 is not degenerate.
    expect(j.accuracyCI).not.toBeNull();
    expect(j.ac1CI).not.toBeNull();
    const [row] = judgeReport(data, finalLabels(data, "majority"), [JUDGE], verdicts);
    expect([row.kappa!.value, row.kappa!.ci]).toEqual([0, null]);
    expect(row.kappa!.method.match(REASON)![1]).toBe("the judge");
  });

  it("a reference with one label, and weighted kappa on a 1–5 scale with a constant judge", () => {
    const scores = "3145251324225144135312544352114352513254";
    const labels = [...scores].map((s) => [s, s]);
    const r = judgeAgreement(
      { annotators: ["h1", "h2"], labels, judges: [{ name: "flat", verdicts: labels.map(() => "3") }] },
      { ordinal: true },
    );
    const j = r.judges[0];
    expect([j.cohenKappa, j.cohenKappaCI, j.weightedKappa, j.weightedKappaCI]).toEqual([0, null, 0, null]);
    expect(j.intervalNotes.weightedKappaCI.match(REASON)![1]).toBe("the judge");
    const ref = judgeAgreement({
      annotators: ["h1"],
      labels: [...XYZ].map(() => ["x"]),
      judges: [{ name: "j", verdicts: [...XYZ] }],
    });
    expect(ref.judges[0].cohenKappaCI).toBeNull();
    expect(ref.judges[0].intervalNotes.cohenKappaCI.match(REASON)![1]).toBe("the reference");
  });
});
