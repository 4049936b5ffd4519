/**
 * Honest intervals on the judge pages (issue 15): the older judge table (judgeReport) and the
 * any-label-set table (taskJudgeAgreement) never show a kappa interval outside [−1, 1] or a
 * zero-width one. A perfect judge on 20 units has an asymptotic kappa SE of 0: not estimable,
 * with the reason, instead of [1, 1]. One disagreement in 25 units gives an upper bound above 1:
 * clipped to 1, and the table says so.
 *
 * The reference SE is written out here: Fleiss, Cohen & Everitt (1969), unweighted kappa,
 *   var = [Σ_i p_ii (1 − (p_i· + p_·i)(1 − κ))² + (1 − κ)² Σ_{i≠j} p_ij (p_·i + p_j·)² − (κ − pe(1 − κ))²] / (n (1 − pe)²).
 */
import { describe, expect, it } from "vitest";
import { finalLabels } from "../../../app/reports/finalLabels";
import type { JudgeInfo, Verdicts } from "../../../app/reports/judges";
import { judgeReport } from "../../../app/reports/judges";
import { judgeAgreementTables, taskJudgeAgreement } from "../../../app/reports/judgeAgreementReport";
import { buildTaskData, type RawAnnotation, type RawUnit } from "../../../app/reports/subjects";
import { judgesTable } from "../../../app/reports/tables";

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

/** Two annotators agreeing on every unit (the final label), and a judge's Yes/No verdict per unit. */
function setup(human: string[], judge: string[]) {
  const units = human.map((_, i) => unit(i + 1));
  const data = buildTaskData({
    task: { id: 1, name: "t", kind: "response-satisfaction", datasetId: 1, seed: 7, overlap: 2 },
    config: {},
    adjudications: {},
    units,
    responses: [],
    annotations: units.flatMap((u, i) => [ann(u.id, 1, human[i]), ann(u.id, 2, human[i])]),
    annotators: [
      { id: 1, name: "A1" },
      { id: 2, name: "A2" },
    ],
  });
  const n = judge.length;
  const verdicts: Verdicts = {
    length: n,
    judgeId: new Int32Array(n).fill(JUDGE.id),
    responseId: Int32Array.from(units, (u) => u.responseId!),
    checklistItemId: new Int32Array(n).fill(-1),
    value: judge,
    score: new Float64Array(n).fill(NaN),
    failed: new Uint8Array(n),
  };
  return { data, verdicts };
}

function kappaSE(a: string[], b: string[]): { kappa: number; se: number } {
  const cats = [...new Set([...a, ...b])];
  const n = a.length;
  const p = cats.map((x) => cats.map((y) => a.filter((v, i) => v === x && b[i] === y).length / n));
  const row = p.map((r) => r.reduce((s, v) => s + v, 0));
  const col = cats.map((_, j) => p.reduce((s, r) => s + r[j], 0));
  const po = cats.reduce((s, _, i) => s + p[i][i], 0);
  const pe = cats.reduce((s, _, i) => s + row[i] * col[i], 0);
  const k = (po - pe) / (1 - pe);
  let s = 0;
  for (let i = 0; i < cats.length; i++) s += p[i][i] * (1 - (row[i] + col[i]) * (1 - k)) ** 2;
  for (let i = 0; i < cats.length; i++)
    for (let j = 0; j < cats.length; j++) if (i !== j) s += (1 - k) ** 2 * p[i][j] * (col[i] + row[j]) ** 2;
  return { kappa: k, se: Math.sqrt((s - (k - pe * (1 - k)) ** 2) / (n * (1 - pe) ** 2)) };
}

describe("judge pages: honest kappa intervals", () => {
  it("a perfect judge on 20 units: kappa 1, its interval not estimable (not [1, 1]), the reason shown", () => {
    const human = Array.from({ length: 20 }, (_, i) => (i % 2 ? "Yes" : "No"));
    const { data, verdicts } = setup(human, human);
    const [row] = judgeReport(data, finalLabels(data, "majority"), [JUDGE], verdicts);
    expect(row.kappa!.value).toBe(1);
    expect(row.kappa!.ci).toBeNull();
    expect(row.kappa!.method).toMatch(/^not estimable: the asymptotic SE is 0/);
    expect(row.ac1!.ci).toBeNull();
    expect(row.ac1!.method).toMatch(/^not estimable: the analytic SE is 0/);
    const t = judgesTable([row], data);
    expect(t.rows[0].kappaCi).toBeNull();
    expect(t.rows[0].ciNotes).toMatch(/^kappa CI not estimable: the asymptotic SE is 0.*; AC1 CI not estimable/);

    const r = taskJudgeAgreement(data, [JUDGE], verdicts, { reference: "majority", unparsed: "count-as-wrong" });
    const j = r.judges[0];
    expect([j.n, j.cohenKappa, j.cohenKappaCI, j.ac1CI, j.macroF1, j.macroF1CI]).toEqual([20, 1, null, null, 1, null]);
    expect(j.intervalNotes.cohenKappaCI).toMatch(/^not estimable: the asymptotic SE is 0/);
    expect(j.intervalNotes.macroF1CI).toMatch(/^not estimable: every bootstrap resample gives the same value/);
    const summary = judgeAgreementTables(r)[0];
    expect(summary.rows[0].ciNotes).toMatch(/kappa CI not estimable: the asymptotic SE is 0/);
    // Accuracy keeps its Wilson interval (20/20: never zero-width).
    expect(j.accuracyCI![1]).toBe(1);
    expect(j.accuracyCI![0]).toBeLessThan(0.9);
  });

  it("one disagreement in 25 units: the upper bound (above 1 unclipped) is clipped to 1, and the table says so", () => {
    const human = Array.from({ length: 25 }, (_, i) => (i < 12 ? "Yes" : "No"));
    const judge = human.map((h, i) => (i === 24 ? "Yes" : h));
    const ref = kappaSE(human, judge);
    expect(ref.kappa + 1.96 * ref.se).toBeGreaterThan(1.05);
    const { data, verdicts } = setup(human, judge);
    const [row] = judgeReport(data, finalLabels(data, "majority"), [JUDGE], verdicts);
    expect(row.kappa!.value).toBeCloseTo(ref.kappa, 12);
    expect(row.kappa!.ci![0]).toBeCloseTo(ref.kappa - 1.96 * ref.se, 3);
    expect(row.kappa!.ci![1]).toBe(1);
    expect(row.kappa!.method).toBe("asymptotic SE; clipped to [-1, 1]");
    expect(judgesTable([row], data).rows[0].ciNotes).toMatch(/^kappa CI clipped to \[-1, 1\]/);

    const r = taskJudgeAgreement(data, [JUDGE], verdicts, { reference: "majority", unparsed: "count-as-wrong" });
    const j = r.judges[0];
    expect(j.cohenKappa).toBeCloseTo(ref.kappa, 12);
    expect(j.cohenKappaCI![0]).toBeCloseTo(ref.kappa - 1.96 * ref.se, 3);
    expect(j.cohenKappaCI![1]).toBe(1);
    expect(j.intervalNotes.cohenKappaCI).toBe("clipped to [-1, 1]");
    expect(judgeAgreementTables(r)[0].rows[0].ciNotes).toMatch(/^kappa CI clipped to \[-1, 1\]/);
  });
});
