/** Pure pieces of the report engine: final-label rules, formatting, CSV, p-values, planner, kappa paradox. */
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { fleissKappa, gwetAC1 } from "../../../app/stats";
import { interAnnotatorAgreement, paperShare, planAccuracy, planKappa } from "../../../app/reports/agreement";
import { finalLabels, majority } from "../../../app/reports/finalLabels";
import { formatCell, latexEscape, tableToCsv, tableToLatex } from "../../../app/reports/format";
import { normalTwoSidedP } from "../../../app/reports/pvalue";
import { buildTaskData, type RawAnnotation, type RawUnit } from "../../../app/reports/subjects";

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
const task = (kind: string, units: RawUnit[], annotations: RawAnnotation[], adjudications: Record<string, unknown> = {}) =>
  buildTaskData({
    task: { id: 1, name: "t", kind, datasetId: 1, seed: 1, overlap: 2 },
    config: {},
    adjudications,
    units,
    responses: [],
    annotations,
    annotators: [1, 2, 3].map((id) => ({ id, name: `A${id}` })),
  });
const ann = (unitId: number, annotatorId: number, label: unknown): RawAnnotation => ({
  unitId,
  annotatorId,
  label,
  durationMs: 1000,
  shownOrder: null,
});

describe("final-label rules", () => {
  it("majority leaves ties without a label; mean averages scores; adjudication overrides", () => {
    expect(majority(["Yes", "No"])).toBeNull();
    expect(majority(["Yes", "No", "Yes"])).toBe("Yes");
    const d = task("response-satisfaction", [unit(1), unit(2)], [ann(1, 1, "Yes"), ann(1, 2, "No"), ann(2, 1, "No"), ann(2, 2, "No")], {
      "1": "No",
    });
    expect(finalLabels(d, "majority")).toMatchObject({ values: [null, "No"], ties: 1 });
    expect(finalLabels(d, "adjudication")).toMatchObject({ values: ["No", "No"], adjudicated: 1 });
    expect(finalLabels(d, "mean").note).toMatch(/majority rule is used/);
    const w = task(
      "writing-quality",
      [unit(1, { responseIds: [10, 11] })],
      [ann(1, 1, { scores: { "10": 4, "11": 2 } }), ann(1, 2, { scores: { "10": 5, "11": 2 } })],
    );
    expect(finalLabels(w, "mean").values).toEqual([4.5, 2]);
    expect(w.labelKind).toBe("ordinal");
  });
});

describe("best-of-N picks", () => {
  it("are coded by slot in the unit's own order: same agreement as comparing ids, a handful of categories", () => {
    const units: RawUnit[] = [];
    const anns: RawAnnotation[] = [];
    // 5,000 units, each with its own three responses and the reference: 15,000 distinct response ids.
    for (let i = 1; i <= 5000; i++) {
      const ids = [3 * i, 3 * i + 1, 3 * i + 2];
      units.push(unit(i, { responseIds: [...ids, "reference"] }));
      const pick = (a: number) => (i % 7 === 0 ? "tie" : i % 5 === a ? "reference" : ids[(i + (i % 4 === 0 ? a : 0)) % 3]);
      anns.push(ann(i, 1, { best: pick(1) }), ann(i, 2, { best: pick(2) }));
    }
    const d = task("best-of-n", units, anns);
    expect(d.labelKind).toBe("nominal");
    expect(d.categories.every((c) => ["A", "B", "C", "reference", "tie"].includes(c as string))).toBe(true);
    // Percent agreement is the share of units where both annotators made the same pick (compared by id).
    const same = units.filter((_, t) => JSON.stringify(anns[2 * t].label) === JSON.stringify(anns[2 * t + 1].label)).length;
    const iaa = interAnnotatorAgreement(d);
    expect(iaa.statistics.find((x) => x.key === "percentAgreement")!.estimate.value).toBeCloseTo(same / units.length, 12);
    // The other coefficients are app/stats on the slot-coded matrix.
    const M = units.map((_, t) => [t, t].map((_, a) => d.ratings.value[2 * t + a]));
    expect(iaa.statistics.find((x) => x.key === "fleissKappa")!.estimate.value).toBe(fleissKappa(M, { categories: d.categories }).kappa);
  });
});

describe("kappa paradox", () => {
  it("is called out when one label dominates: high raw agreement, low kappa, AC1 beside it", () => {
    const units: RawUnit[] = [];
    const anns: RawAnnotation[] = [];
    for (let i = 1; i <= 50; i++) {
      units.push(unit(i));
      const a = i === 1 ? "No" : "Yes";
      const b = i === 2 ? "No" : "Yes";
      anns.push(ann(i, 1, a), ann(i, 2, b));
    }
    const d = task("response-satisfaction", units, anns);
    const iaa = interAnnotatorAgreement(d);
    const rows = anns.reduce<string[][]>((m, x) => (((m[x.unitId - 1] ??= [])[x.annotatorId - 1] = x.label as string), m), []);
    expect(iaa.statistics.find((s) => s.key === "fleissKappa")!.estimate.value).toBe(
      fleissKappa(rows.map((r) => [r[0], r[1], null])).kappa,
    );
    expect(iaa.statistics.find((s) => s.key === "gwetAC1")!.estimate.value).toBe(gwetAC1(rows).value);
    expect(iaa.paradox).toMatch(/kappa paradox/);
    expect(iaa.paradox).toMatch(/AC1/);
  });
});

describe("presentation", () => {
  it("formats figures at fixed precision and CIs in their figure's unit", () => {
    const cols = [
      { key: "a", label: "Acc", kind: "pct" as const },
      { key: "ci", label: "95% CI", kind: "ci" as const },
      { key: "k", label: "Kappa", kind: "coef" as const },
      { key: "p", label: "p", kind: "p" as const },
    ];
    const row = { a: 0.96135, ci: [0.9, 0.99] as [number, number], k: NaN, p: 0.0004 };
    expect(cols.map((_, i) => formatCell(cols, i, row))).toEqual(["96.1%", "[90.0%, 99.0%]", "n/a", "<0.001"]);
    expect(paperShare(821, 854)).toBe("821 of 854 (96.1%)");
  });

  it("CSV keeps full precision and names each CI after its figure", () => {
    const csv = tableToCsv({
      id: "x",
      title: "x",
      columns: [
        { key: "v", label: "Value", kind: "coef" },
        { key: "ci", label: "95% CI", kind: "ci" },
      ],
      rows: [{ v: 1 / 3, ci: [0.1, 0.5] }],
    });
    const [row] = Papa.parse<Record<string, string>>(csv, { header: true }).data;
    expect(Number(row.Value)).toBe(1 / 3);
    expect(row["Value 95% CI low"]).toBe("0.1");
  });

  it("LaTeX: a booktabs table at display precision, special characters escaped, link columns left out", () => {
    const tex = tableToLatex(
      {
        id: "iaa",
        title: "Agreement & bias_checks (k ≥ 2)",
        note: "Two-sided p-values.",
        columns: [
          { key: "s", label: "Statistic", kind: "text" },
          { key: "v", label: "Value", kind: "coef" },
          { key: "ci", label: "95% CI", kind: "ci" },
          { key: "p", label: "p", kind: "p" },
          { key: "fix", label: "Fix", kind: "link" },
        ],
        rows: [{ s: "Gwet's AC1 — pooled", v: 0.81234, ci: [0.7, 0.9], p: 0.0002, fix: "/p/x" }],
      },
      "project demo, task 1",
    );
    const lines = tex.split("\n");
    expect(lines[0]).toBe("% Agreement & bias_checks (k ≥ 2): from Concord (project demo, task 1). Needs \\usepackage{booktabs}.");
    expect(lines[1]).toBe("% Two-sided p-values.");
    expect(tex).toContain("\\caption{Agreement \\& bias\\_checks (k $\\geq$ 2)}");
    expect(tex).toContain("\\begin{tabular}{lrrr}");
    expect(tex).toContain("Statistic & Value & 95\\% CI & p \\\\");
    expect(tex).toContain("Gwet's AC1 --- pooled & 0.812 & [0.700, 0.900] & \\textless{}0.001 \\\\");
    expect(tex).not.toContain("/p/x");
    expect(tex.trimEnd().endsWith("\\end{table}")).toBe(true);
    expect(latexEscape("50% of $x_1 {a} #2 ~ ^ \\")).toBe(
      "50\\% of \\$x\\_1 \\{a\\} \\#2 \\textasciitilde{} \\textasciicircum{} \\textbackslash{}",
    );
  });

  it("two-sided normal p-values", () => {
    expect(normalTwoSidedP(1.959964)).toBeCloseTo(0.05, 6);
    expect(normalTwoSidedP(0)).toBeCloseTo(1, 6);
    expect(normalTwoSidedP(3.290527)).toBeCloseTo(0.001, 6);
  });

  it("sample-size planner", () => {
    // Accuracy 0.9 to ±0.05: 1.96² · 0.09 / 0.0025 = 138.3 → 139.
    expect(planAccuracy("acc", 0.9, 100, 0.05)).toMatchObject({ needed: 139, more: 39 });
    // SE 0.1 at n = 100; ±0.05 needs n · (1.96 · 0.1 / 0.05)² = 1536.64 → 1537.
    expect(planKappa("k", 0.6, 0.1, 100, 0.05)).toMatchObject({ needed: 1537, more: 1437 });
  });
});
