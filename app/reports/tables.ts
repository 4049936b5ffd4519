/**
 * Report tables: the one definition of every figure's row, shared by the pages
 * (rendered at fixed precision) and the CSV downloads (full precision).
 */
import {
  DIMENSION_LABELS,
  paperShare,
  type AnnotatorRow,
  type BiasRow,
  type BreakdownRow,
  type ChecklistReport,
  type IaaReport,
  type PlanRow,
} from "./agreement";
import { ablationGroups, type JudgeRow } from "./judges";
import { CONSISTENCY_DEFINITIONS, SCORE_INTERVAL_METHOD, SCORE_LABELS as L, type ScoreJudgeRow } from "./scoreJudgeAgreement";
import type { Column, Estimate, FinalLabels, ReportTable, Row, TaskData } from "./types";

const c = (key: string, label: string, kind: Column["kind"]): Column => ({ key, label, kind });
const ci = (e: Estimate | null | undefined): [number, number] | null => (e?.ci ? [e.ci[0], e.ci[1]] : null);

export function iaaTable(iaa: IaaReport): ReportTable {
  return {
    id: "iaa",
    title: "Inter-annotator agreement",
    note: [iaa.designNote, ...(iaa.warnings ?? []).map((w) => `Note: ${w}`)].join(" "),
    columns: [
      c("statistic", "Statistic", "text"),
      c("value", "Value", "coef"),
      c("ci", "95% CI", "ci"),
      c("n", "n", "int"),
      c("method", "CI method", "text"),
    ],
    rows: iaa.statistics.map((s) => ({
      statistic: s.label,
      value: s.estimate.value,
      ci: ci(s.estimate),
      n: s.estimate.n,
      method: s.estimate.method,
    })),
  };
}

export function pairsTable(iaa: IaaReport): ReportTable {
  const numeric = iaa.labelKind === "ordinal" || iaa.labelKind === "interval";
  const cols = [
    c("a", "Annotator A", "text"),
    c("b", "Annotator B", "text"),
    c("n", "n (shared)", "int"),
    c("percentAgreement", "Agreement", "pct"),
    c("kappa", numeric ? "Weighted kappa (quadratic)" : "Cohen's kappa", "coef"),
    c("kappaCi", "95% CI", "ci"),
  ];
  if (!numeric && iaa.pairs.some((p) => p.pabak !== null)) cols.push(c("pabak", "PABAK", "coef"));
  if (numeric)
    cols.push(
      c("pearson", "Pearson r", "coef"),
      c("pearsonCi", "95% CI (Fisher z)", "ci"),
      c("pearsonBootCi", "95% CI (unit bootstrap)", "ci"),
    );
  return {
    id: "pairs",
    title: "Pairwise agreement between annotators",
    note: `95% CIs: ${numeric ? "Fleiss-Cohen-Everitt SE for weighted kappa; for Pearson r Fisher's z and, beside it, a percentile bootstrap over the shared units (Fisher's z is too narrow on skewed scores)" : "Fleiss-Cohen-Everitt SE"}, treating the shared units as independent; clipped to [−1, 1]${iaa.pairs.some((p) => p.kappa.ci && (p.kappa.ci[0] === -1 || p.kappa.ci[1] === 1)) ? " (some are)" : ""}. "—": not estimable (e.g. perfect agreement gives a zero SE).`,
    columns: cols,
    rows: iaa.pairs.map((p) => ({
      a: p.aName,
      b: p.bName,
      n: p.n,
      percentAgreement: p.percentAgreement,
      kappa: p.kappa.value,
      kappaCi: ci(p.kappa),
      pabak: p.pabak,
      pearson: p.pearson?.value ?? null,
      pearsonCi: ci(p.pearson),
      pearsonBootCi: ci(p.pearsonBootstrap),
    })),
  };
}

/** The annotator × annotator matrix (kappa), symmetric, 1 on the diagonal. */
export function matrixTable(iaa: IaaReport, data: TaskData): ReportTable {
  const names = data.annotators.map((a) => a.name);
  const rows: Row[] = data.annotators.map((a) => {
    const row: Row = { annotator: a.name };
    for (const b of data.annotators) {
      if (a.id === b.id) row[b.name] = 1;
      else {
        const p = iaa.pairs.find((x) => (x.a === a.id && x.b === b.id) || (x.a === b.id && x.b === a.id));
        row[b.name] = p ? p.kappa.value : null;
      }
    }
    return row;
  });
  return {
    id: "matrix",
    title: "Annotator agreement matrix (kappa)",
    columns: [c("annotator", "Annotator", "text"), ...names.map((n) => c(n, n, "coef"))],
    rows,
  };
}

export function annotatorsTable(rows: AnnotatorRow[], data: TaskData): ReportTable {
  const cats = data.categories.map(String);
  return {
    id: "annotators",
    title: "Per annotator",
    note: "Leave-one-out: agreement with the majority of the other annotators on the same unit (units where the others tie are left out).",
    columns: [
      c("annotator", "Annotator", "text"),
      c("annotations", "Annotations", "int"),
      c("ratings", "Ratings", "int"),
      c("loo", "Agrees with others' majority", "pct"),
      c("looCi", "95% CI (Wilson)", "ci"),
      c("looN", "n", "int"),
      c("gold", "Gold accuracy", "pct"),
      c("goldCi", "95% CI (Wilson)", "ci"),
      c("goldN", "Gold n", "int"),
      c("medianMs", "Median time", "ms"),
      c("meanMs", "Mean time", "ms"),
      ...cats.map((k) => c(`dist:${k}`, `“${k}”`, "int")),
    ],
    rows: rows.map((r) => ({
      annotator: r.name,
      annotations: r.annotations,
      ratings: r.ratings,
      loo: r.looAgreement.value,
      looCi: ci(r.looAgreement),
      looN: r.looAgreement.n,
      gold: r.gold.n ? r.gold.value : null,
      goldCi: ci(r.gold),
      goldN: r.gold.n,
      medianMs: r.medianMs,
      meanMs: r.meanMs.n ? r.meanMs.value : null,
      ...Object.fromEntries(cats.map((k) => [`dist:${k}`, r.distribution[k] ?? 0])),
    })),
  };
}

export function breakdownTable(rows: BreakdownRow[], data: TaskData): ReportTable {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const summaryLabel = numeric ? "Mean final score" : data.positive != null ? `Share “${String(data.positive)}”` : "Share of modal label";
  return {
    id: "breakdowns",
    title: "Breakdowns",
    note: numeric
      ? "Small n (< 30) is flagged; its CI is wide. Mean scores: percentile bootstrap over the group's scores, which stays on the scale (all scores equal: the Wilson interval of the rescaled mean; one score: no interval). Agreement uses the Wilson score interval, which stays within 0–100%."
      : "Small n (< 30) is flagged; its CI is wide. Shares and agreement use the Wilson score interval, which stays within 0–100%.",
    columns: [
      c("dimension", "By", "text"),
      c("value", "Group", "text"),
      c("n", "n", "int"),
      c("summary", summaryLabel, numeric ? "num" : "pct"),
      c("summaryCi", numeric ? "95% CI (bootstrap, on the scale)" : "95% CI (Wilson)", "ci"),
      c("agreement", "Agreement", "pct"),
      c("agreementCi", "95% CI (Wilson)", "ci"),
      c("agreementN", "n (2+ labels)", "int"),
      c("small", "Small n", "flag"),
    ],
    rows: rows.map((r) => ({
      dimension: DIMENSION_LABELS[r.dimension],
      value: r.value,
      n: r.n,
      summary: r.summary.value,
      summaryCi: ci(r.summary),
      agreement: r.agreement.n ? r.agreement.value : null,
      agreementCi: ci(r.agreement),
      agreementN: r.agreement.n,
      small: r.small,
    })),
  };
}

export function finalTable(final: FinalLabels, data: TaskData): ReportTable {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const counts = new Map<string, number>();
  for (const v of final.values)
    if (v != null) {
      const k = numeric ? String(Math.round(Number(v) * 2) / 2) : String(v);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  const keys = [...counts.keys()].sort((a, b) => (numeric ? Number(a) - Number(b) : a.localeCompare(b)));
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return {
    id: "final",
    title: `Final labels (${final.rule})`,
    note:
      [
        final.note,
        final.ties ? `${final.ties} subject(s) tie under majority and have no final label.` : null,
        final.adjudicated ? `${final.adjudicated} adjudicated.` : null,
      ]
        .filter(Boolean)
        .join(" ") || undefined,
    columns: [c("label", numeric ? "Final score" : "Final label", "text"), c("n", "n", "int"), c("share", "Share", "pct")],
    rows: keys.map((k) => ({ label: k, n: counts.get(k)!, share: counts.get(k)! / total })),
  };
}

export function checklistTable(r: ChecklistReport): ReportTable {
  return {
    id: "checklist",
    title: "Checklist appropriateness",
    note: r.undecided ? `${r.undecided} checklist item(s) tie and are left out.` : undefined,
    columns: [
      c("group", "Group", "text"),
      c("paper", "Appropriate", "text"),
      c("yes", "Appropriate (n)", "int"),
      c("n", "n", "int"),
      c("share", "Share", "pct"),
      c("ci", "95% CI (Wilson)", "ci"),
      c("small", "Small n", "flag"),
    ],
    rows: [
      {
        group: "Overall",
        paper: paperShare(r.overall.yes, r.overall.n),
        yes: r.overall.yes,
        n: r.overall.n,
        share: r.overall.share.value,
        ci: ci(r.overall.share),
        small: r.overall.n < 30,
      },
      ...r.perDomain.map((d) => ({
        group: d.domain,
        paper: paperShare(d.yes, d.n),
        yes: d.yes,
        n: d.n,
        share: d.share.value,
        ci: ci(d.share),
        small: d.small,
      })),
    ],
  };
}

export function inappropriateTable(
  r: ChecklistReport,
  texts: { checklist: Map<number, string>; items: Map<number, { sourceId: string }> },
  slug: string,
  datasetId: number,
): ReportTable {
  return {
    id: "inappropriate",
    title: "Checklist items judged inappropriate",
    columns: [
      c("item", "Item", "text"),
      c("domain", "Domain", "text"),
      c("text", "Checklist item", "text"),
      c("votes", "Yes / No votes", "text"),
      c("link", "Fix", "link"),
    ],
    rows: r.inappropriate.map((x) => ({
      item: texts.items.get(x.itemId)?.sourceId ?? String(x.itemId),
      domain: x.domain,
      text: texts.checklist.get(x.checklistItemId) ?? "",
      votes: `${x.yesVotes} / ${x.noVotes}`,
      link: `/p/${slug}/datasets/${datasetId}/items/${x.itemId}`,
    })),
  };
}

export function biasTable(rows: BiasRow[]): ReportTable {
  return {
    id: "bias",
    title: "Annotator bias checks",
    note: `Two-sided p-values. Every row is one test of the same question (is this annotator biased?), so "p (Holm)" adjusts them for multiple comparisons (Holm 1979, over the ${rows.length} test${rows.length === 1 ? "" : "s"} in this table): read a bias as significant when p (Holm) < α.`,
    columns: [
      c("annotator", "Annotator", "text"),
      c("check", "Check", "text"),
      c("description", "What is tested", "text"),
      c("n", "n", "int"),
      c("effect", "Effect", "coef"),
      c("expected", "Expected if unbiased", "coef"),
      c("statistic", "Statistic", "coef"),
      c("statisticName", "Test", "text"),
      c("p", "p", "p"),
      c("pHolm", "p (Holm)", "p"),
    ],
    rows: rows.map((r) => ({
      annotator: r.name,
      check: r.check,
      description: r.description,
      n: r.n,
      effect: r.effect,
      expected: r.expected,
      statistic: r.statistic,
      statisticName: r.statisticName,
      p: r.p,
      pHolm: r.pHolm,
    })),
  };
}

export function planTable(rows: PlanRow[]): ReportTable {
  return {
    id: "planner",
    title: "Sample-size planner",
    note: "n needed: the 95% CI is about ±δ on average (wider about half the time). n for 80% assurance: the CI is ±δ or narrower with probability 0.8. Counted in units (or groups, for a consistency); see Basis.",
    columns: [
      c("target", "Figure", "text"),
      c("current", "Current", "coef"),
      c("n", "n now", "int"),
      c("halfWidth", "CI half-width now", "coef"),
      c("delta", "Target ±δ", "coef"),
      c("needed", "n needed", "int"),
      c("more", "More to label", "int"),
      c("neededAssured", "n for 80% assurance", "int"),
      c("moreAssured", "More (80% assurance)", "int"),
      c("basis", "Basis", "text"),
    ],
    rows: rows.map((r) => ({ ...r })),
  };
}

// ─── Judges ──────────────────────────────────────────────────────────────────

/**
 * The score-judge columns, named alike on the judges page, in its CSV (with "low"/"high" CI
 * columns) and in `npm run judge-agreement --level interval|ordinal`'s table.
 */
export const SCORE_COLUMNS: Column[] = [
  c("n", L.n, "int"),
  c("unparsed", L.unparsed, "int"),
  c("outOfScale", L.outOfScale, "int"),
  c("pearson", L.pearson, "coef"),
  c("pearsonCi", "95% CI", "ci"),
  c("spearman", L.spearman, "coef"),
  c("spearmanCi", "95% CI", "ci"),
  c("kendallTauB", L.kendallTauB, "coef"),
  c("kendallTauBCi", "95% CI", "ci"),
  c("consistencyTiesCounted", L.consistencyTiesCounted, "pct"),
  c("consistencyTiesCountedCi", "95% CI", "ci"),
  c("pairs", L.pairs, "int"),
  c("consistencyTiesExcluded", L.consistencyTiesExcluded, "pct"),
  c("consistencyTiesExcludedCi", "95% CI", "ci"),
  c("pairsTiesExcluded", L.pairsTiesExcluded, "int"),
  c("consistencyHumanDiffering", L.consistencyHumanDiffering, "pct"),
  c("consistencyHumanDifferingCi", "95% CI", "ci"),
  c("pairsHumanDiffering", L.pairsHumanDiffering, "int"),
  c("ciNotes", "CI notes", "text"),
];

const SCORE_CI_NAMES: Record<string, string> = {
  pearsonCI: "Pearson r",
  spearmanCI: "Spearman rho",
  kendallTauBCI: "Kendall tau-b",
  consistencyTiesCountedCI: "consistency (ties counted)",
  consistencyTiesExcludedCI: "consistency (ties excluded)",
  consistencyHumanDifferingCI: "consistency (humans differ)",
};

/** One score judge's cells of SCORE_COLUMNS (n and unparsed from the caller where there are no figures). */
export function scoreCells(s: ScoreJudgeRow | null, n = 0, unparsed = 0): Row {
  const notes = s ? Object.entries(s.intervalNotes).map(([k, v]) => `${SCORE_CI_NAMES[k] ?? k} CI ${v}`) : [];
  return {
    n: s?.n ?? n,
    unparsed: s?.unparsed ?? unparsed,
    outOfScale: s?.outOfScale ?? 0,
    pearson: s?.pearson ?? null,
    pearsonCi: s?.pearsonCI ?? null,
    spearman: s?.spearman ?? null,
    spearmanCi: s?.spearmanCI ?? null,
    kendallTauB: s?.kendallTauB ?? null,
    kendallTauBCi: s?.kendallTauBCI ?? null,
    consistencyTiesCounted: s?.consistencyTiesCounted ?? null,
    consistencyTiesCountedCi: s?.consistencyTiesCountedCI ?? null,
    pairs: s?.pairs ?? 0,
    consistencyTiesExcluded: s?.consistencyTiesExcluded ?? null,
    consistencyTiesExcludedCi: s?.consistencyTiesExcludedCI ?? null,
    pairsTiesExcluded: s?.pairsTiesExcluded ?? 0,
    consistencyHumanDiffering: s?.consistencyHumanDiffering ?? null,
    consistencyHumanDifferingCi: s?.consistencyHumanDifferingCI ?? null,
    pairsHumanDiffering: s?.pairsHumanDiffering ?? 0,
    ciNotes: notes.length ? notes.join("; ") : null,
  };
}

export function judgesTable(rows: JudgeRow[], data: TaskData): ReportTable {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  if (numeric) {
    return {
      id: "judges",
      title: "Judges ranked by Pearson r with the final human score",
      note: `Scores kept on the judge's own scale; "Out of scale" counts compared scores outside the human scale (kept in every figure). ${CONSISTENCY_DEFINITIONS} Groups: the items (instructions, prompts). ${SCORE_INTERVAL_METHOD}.`,
      columns: [c("rank", "#", "int"), c("judge", "Judge", "text"), c("model", "Model", "text"), ...SCORE_COLUMNS],
      rows: rows.map((r, i) => ({
        rank: i + 1,
        judge: r.judge.name,
        model: r.judge.model,
        ...scoreCells(r.scores, r.n, r.unparsed),
      })),
    };
  }
  return {
    id: "judges",
    title: "Judges ranked by accuracy against the final human label",
    note: "Unparsed verdicts (parse failures) are counted here and left out of every figure; they are never treated as “No”. CIs: accuracy, TPR and TNR by the Wilson score interval (never outside 0–100%); Cohen's kappa by its asymptotic SE; Gwet's AC1 by its analytic SE (Gwet 2008, irrCAC), clustered by item.",
    columns: [
      c("rank", "#", "int"),
      c("judge", "Judge", "text"),
      c("model", "Model", "text"),
      c("n", "n", "int"),
      c("unparsed", "Unparsed", "int"),
      c("accuracy", "Accuracy", "pct"),
      c("accuracyCi", "95% CI (Wilson)", "ci"),
      c("kappa", "Cohen's kappa", "coef"),
      c("kappaCi", "95% CI", "ci"),
      c("ac1", "Gwet's AC1", "coef"),
      c("ac1Ci", "95% CI (analytic SE)", "ci"),
      c("tpr", "TPR", "pct"),
      c("tprCi", "95% CI (Wilson)", "ci"),
      c("tnr", "TNR", "pct"),
      c("tnrCi", "95% CI (Wilson)", "ci"),
      c("yesRateDiff", "Yes-rate diff (judge − human)", "coef"),
      c("ciNotes", "CI notes", "text"),
    ],
    rows: rows.map((r, i) => ({
      rank: i + 1,
      judge: r.judge.name,
      model: r.judge.model,
      n: r.n,
      unparsed: r.unparsed,
      accuracy: r.accuracy?.value ?? null,
      accuracyCi: ci(r.accuracy),
      kappa: r.kappa?.value ?? null,
      kappaCi: ci(r.kappa),
      ac1: r.ac1?.value ?? null,
      ac1Ci: ci(r.ac1),
      tpr: r.tpr?.value ?? null,
      tprCi: ci(r.tpr),
      tnr: r.tnr?.value ?? null,
      tnrCi: ci(r.tnr),
      yesRateDiff: r.yesRateDiff,
      ciNotes: ciNotes([
        ["kappa", r.kappa],
        ["AC1", r.ac1],
      ]),
    })),
  };
}

/** What a reader needs beside an interval: "kappa CI clipped to [-1, 1]", "AC1 CI not estimable: …" (else null). */
function ciNotes(list: [string, Estimate | null][]): string | null {
  const notes: string[] = [];
  for (const [name, e] of list) {
    if (!e) continue;
    const m = e.method;
    if (m.startsWith("not estimable")) notes.push(`${name} CI ${m}`);
    else if (m.includes("clipped to")) notes.push(`${name} CI ${m.slice(m.indexOf("clipped to"))}`);
  }
  return notes.length ? notes.join("; ") : null;
}

export function confusionTable(r: JudgeRow): ReportTable | null {
  if (!r.confusion) return null;
  const labels = r.confusion.labels.map(String);
  return {
    id: `confusion-${r.judge.id}`,
    title: `Confusion matrix: ${r.judge.name} (rows human, columns judge)`,
    columns: [c("human", "Human \\ Judge", "text"), ...labels.map((l) => c(`judge:${l}`, l, "int")), c("total", "Total", "int")],
    rows: r.confusion.matrix.map((row, i) => ({
      human: labels[i],
      ...Object.fromEntries(row.map((v, j) => [`judge:${labels[j]}`, v])),
      total: row.reduce((a, b) => a + b, 0),
    })),
  };
}

export function labelMetricsTable(rows: JudgeRow[]): ReportTable {
  return {
    id: "label-metrics",
    title: "Precision, recall and F1 per label",
    note: "One label against the rest, the final human label as truth: precision = of the units the judge gave this label, the share the humans gave it too; recall = of the units the humans gave this label, the share the judge found. n/a where a ratio is undefined.",
    columns: [
      c("judge", "Judge", "text"),
      c("label", "Label", "text"),
      c("precision", "Precision", "pct"),
      c("recall", "Recall", "pct"),
      c("f1", "F1", "coef"),
      c("support", "Human support", "int"),
      c("predicted", "Judge gave it", "int"),
    ],
    rows: rows.flatMap((r) =>
      (r.perLabel ?? []).map((m) => ({
        judge: r.judge.name,
        label: String(m.label),
        precision: m.precision,
        recall: m.recall,
        f1: m.f1,
        support: m.support,
        predicted: m.predicted,
      })),
    ),
  };
}

export function judgeBreakdownTable(rows: JudgeRow[], data: TaskData, dims: string[] = ["domain", "model"]): ReportTable {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const cols = [c("judge", "Judge", "text"), c("dimension", "By", "text"), c("value", "Group", "text"), c("n", "n", "int")];
  if (numeric)
    cols.push(
      c("pearson", "Pearson r", "coef"),
      c("pearsonCi", "95% CI (Fisher z)", "ci"),
      c("pearsonBootCi", "95% CI (unit bootstrap)", "ci"),
    );
  else cols.push(c("accuracy", "Accuracy", "pct"), c("accuracyCi", "95% CI (Wilson)", "ci"), c("yesRateDiff", "Yes-rate diff", "coef"));
  cols.push(c("ownFamily", "Judge's own family", "flag"), c("small", "Small n", "flag"));
  return {
    id: "judge-breakdowns",
    title: "Judge agreement by domain and by judged model",
    note: "A judge that favours its own model family shows a higher Yes-rate difference (or accuracy gap) on rows flagged as its own family.",
    columns: cols,
    rows: rows.flatMap((r) =>
      r.breakdowns
        .filter((b) => dims.includes(b.dimension))
        .map((b) => ({
          judge: r.judge.name,
          dimension: DIMENSION_LABELS[b.dimension],
          value: b.value,
          n: b.n,
          accuracy: b.accuracy?.value ?? null,
          accuracyCi: ci(b.accuracy),
          yesRateDiff: b.yesRateDiff,
          pearson: b.pearson?.value ?? null,
          pearsonCi: ci(b.pearson),
          ownFamily: b.ownFamily,
          small: b.small,
        })),
    ),
  };
}

export function orderingTable(rows: JudgeRow[]): ReportTable {
  return {
    id: "ordering",
    title: "Pairwise ordering consistency per task type",
    note: `${CONSISTENCY_DEFINITIONS} Groups: the items.`,
    columns: [
      c("judge", "Judge", "text"),
      c("taskType", "Task type", "text"),
      c("withTies", "Consistency (ties counted)", "pct"),
      c("pairs", "Pairs", "int"),
      c("withoutTies", "Consistency (ties excluded)", "pct"),
      c("pairsWithoutTies", "Pairs (ties excluded)", "int"),
      c("humanDiffering", "Consistency (humans differ)", "pct"),
      c("pairsHumanDiffering", "Pairs (humans differ)", "int"),
      c("humanTies", "Human ties", "int"),
      c("judgeTies", "Judge ties", "int"),
    ],
    rows: rows.flatMap((r) =>
      r.orderingByTaskType.map((o) => ({
        judge: r.judge.name,
        taskType: o.taskType,
        withTies: o.result.withTies,
        pairs: o.result.pairs,
        withoutTies: o.result.withoutTies,
        pairsWithoutTies: o.result.pairsWithoutTies,
        humanDiffering: o.result.humanDiffering,
        pairsHumanDiffering: o.result.pairsHumanDiffering,
        humanTies: o.result.humanTies,
        judgeTies: o.result.judgeTies,
      })),
    ),
  };
}

export function ablationTable(rows: JudgeRow[], data: TaskData): ReportTable {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const groups = ablationGroups(rows);
  return {
    id: "ablation",
    title: "Judge variants (ablation)",
    note: groups.length
      ? undefined
      : "No judge is marked as a variant of another. Mark one below, or import verdicts with a variant_of column naming the base judge (npm run import -- --variant-of JUDGE=BASE does the same).",
    columns: numeric
      ? [
          c("base", "Base judge", "text"),
          c("variant", "Variant", "text"),
          c("judge", "Judge", "text"),
          c("n", "n", "int"),
          c("pearson", "Pearson r", "coef"),
          c("pearsonCi", "95% CI", "ci"),
          c("withTies", "Consistency (ties counted)", "pct"),
          c("withTiesCi", "95% CI", "ci"),
          c("withoutTies", "Consistency (ties excluded)", "pct"),
          c("withoutTiesCi", "95% CI", "ci"),
          c("humanDiffering", "Consistency (humans differ)", "pct"),
          c("humanDifferingCi", "95% CI", "ci"),
        ]
      : [
          c("base", "Base judge", "text"),
          c("variant", "Variant", "text"),
          c("judge", "Judge", "text"),
          c("n", "n", "int"),
          c("accuracy", "Accuracy", "pct"),
          c("accuracyCi", "95% CI (Wilson)", "ci"),
          c("kappa", "Cohen's kappa", "coef"),
          c("ac1", "Gwet's AC1", "coef"),
        ],
    rows: groups.flatMap((g) =>
      g.rows.map(({ variant, row }) => ({
        base: g.base,
        variant,
        judge: row.judge.name,
        n: row.n,
        pearson: row.scores?.pearson ?? row.pearson?.value ?? null,
        pearsonCi: row.scores ? row.scores.pearsonCI : ci(row.pearson),
        withTies: row.scores?.consistencyTiesCounted ?? null,
        withTiesCi: row.scores?.consistencyTiesCountedCI ?? null,
        withoutTies: row.scores?.consistencyTiesExcluded ?? null,
        withoutTiesCi: row.scores?.consistencyTiesExcludedCI ?? null,
        humanDiffering: row.scores?.consistencyHumanDiffering ?? null,
        humanDifferingCi: row.scores?.consistencyHumanDifferingCI ?? null,
        accuracy: row.accuracy?.value ?? null,
        accuracyCi: ci(row.accuracy),
        kappa: row.kappa?.value ?? null,
        ac1: row.ac1?.value ?? null,
      })),
    ),
  };
}
