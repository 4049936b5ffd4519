/**
 * The any-label-set judge–human table of a task (./judgeAgreement) from what the reports
 * load: the task's subjects and ratings, the project's judges and their verdicts. Pure.
 * The judge page, its CSV downloads and the `judge-agreement` / `judge-confusion` exports
 * all go through {@link taskJudgeAgreement}, and the command line reads the same input
 * from files, so every one of them prints the same figures.
 */
import type { JudgeInfo, Verdicts } from "./judges";
import {
  judgeAgreement,
  labelText,
  MISSING,
  missingPolicyLabel,
  type MissingPolicy,
  policyLabel,
  referenceLabel,
  UNPARSED,
  type JudgeAgreementResult,
  type Reference,
  type UnparsedPolicy,
  type JudgeAgreementInput,
  type Verdict,
} from "./judgeAgreement";
import type { Column, ReportTable, TaskData } from "./types";
import type { PickCandidates } from "./judgeUnits.server";
import { kindsWhere } from "~/task-kinds/registry";

/**
 * The kinds whose subjects each carry one scalar label a judge also gives, and so get the
 * any-label-set table: imported labels, and every kind that declares TaskKind.judgeAgreement
 * (the Yes/No kinds: a verdict on the unit's response and checklist item; Likert 1–7: a verdict
 * on the unit's response, a point 1–7; writing quality: a verdict on each scored response, a
 * score on the task's 1–N scale; best-of-N: a verdict naming the picked response, or "tie", see
 * ./judgeUnits.server).
 */
export const JUDGE_AGREEMENT_KINDS: string[] = ["imported-labels", ...kindsWhere((k) => k.judgeAgreement === true)];

export interface TaskJudgeAgreement extends JudgeAgreementResult {
  /** judge name → judge id. */
  judgeIds: Record<string, number>;
  /** The task's label kind: weighted kappa only on an ordinal scale. */
  ordinal: boolean;
}

/**
 * The task's labels and verdicts as the input of `judgeAgreement`: verdicts matched by response
 * and checklist item; on the units of a kind that picks one of several responses (`picks`,
 * best-of-N), the judge's verdict on any of the unit's responses, its value naming the picked
 * one (model name or response key) read as that response's slot, "tie" and "reference" as they
 * are, anything else unparsed. The task's scale (data.categories) is the label set.
 *
 * An imported verdict stored without a value and without a raw output (verdicts.failed 3: the
 * import read a CSV cell empty, NA or N/A, or a JSON null) is MISSING, as the command reads those
 * files; an empty answer (JSON "", or no value beside a raw output) and a reply a run could not
 * parse (parse status "failed") are unparsed (null).
 */
export function taskJudgeInput(
  data: TaskData,
  judges: JudgeInfo[],
  verdicts: Verdicts,
  picks?: PickCandidates,
): { input: JudgeAgreementInput; judgeIds: Record<string, number> } {
  const S = data.subjects.length;
  const annotatorIndex = new Map(data.annotators.map((a, i) => [a.id, i]));
  const A = data.annotators.length;
  const labels: (string | null)[][] = new Array(S);
  for (let s = 0; s < S; s++) labels[s] = new Array<string | null>(A).fill(null);
  // Labels repeat (a handful of values): each distinct one is read once.
  const text = new Map<unknown, string | null>();
  const textOf = (v: unknown) => {
    let t = text.get(v);
    if (t === undefined && !text.has(v)) text.set(v, (t = labelText(v)));
    return t ?? null;
  };
  for (let i = 0; i < data.ratings.length; i++) {
    const a = annotatorIndex.get(data.ratings.annotator[i]);
    if (a !== undefined) labels[data.ratings.s[i]][a] = textOf(data.ratings.value[i]);
  }
  const adjudicated = data.subjects.map((s) => (s.adjudicated === null ? null : textOf(s.adjudicated)));
  // Subjects by response, then checklist item (-1 for none): the pair a verdict names, without a string per row.
  const subjectOf = new Map<number, Map<number, number[]>>();
  data.subjects.forEach((s, i) => {
    if (s.responseId == null) return;
    let byCk = subjectOf.get(s.responseId);
    if (!byCk) subjectOf.set(s.responseId, (byCk = new Map()));
    const ck = s.checklistItemId ?? -1;
    const list = byCk.get(ck);
    if (list) list.push(i);
    else byCk.set(ck, [i]);
  });
  // Picking kinds: a candidate response → the subjects (units) it is a candidate of, with its slot and names there.
  const pickOf = new Map<number, { s: number; slots: Map<string, string> }[]>();
  if (picks)
    data.subjects.forEach((sub, i) => {
      const list = sub.responseId == null ? picks.get(sub.unitId) : undefined;
      if (!list) return;
      // Every name of every candidate of the unit → its slot (a verdict names the pick, wherever it is stored).
      const slots = new Map<string, string>();
      for (const c of list) for (const n of c.names) slots.set(n, c.slot);
      for (const c of list) {
        const at = pickOf.get(c.responseId);
        const entry = { s: i, slots };
        if (at) at.push(entry);
        else pickOf.set(c.responseId, [entry]);
      }
    });
  const byId = new Map(judges.map((j) => [j.id, j]));
  // A score's text, made once per distinct score (a 1–10 scale has ten), not once per verdict.
  const scoreTexts = new Map<number, string>();
  const scoreText = (x: number) => {
    let t = scoreTexts.get(x);
    if (t === undefined) scoreTexts.set(x, (t = String(x)));
    return t;
  };
  const perJudge = new Map<number, Verdict[]>();
  const arrOf = (judgeId: number) => {
    let arr = perJudge.get(judgeId);
    if (!arr) perJudge.set(judgeId, (arr = new Array(S).fill(undefined)));
    return arr;
  };
  for (let i = 0; i < verdicts.length; i++) {
    if (!byId.has(verdicts.judgeId[i])) continue;
    const score = verdicts.score[i];
    const failed = verdicts.failed[i];
    const text: Verdict = failed === 3 ? MISSING : failed ? null : (verdicts.value[i] ?? (Number.isNaN(score) ? null : scoreText(score)));
    const subs = subjectOf.get(verdicts.responseId[i])?.get(verdicts.checklistItemId[i]);
    if (subs) {
      const arr = arrOf(verdicts.judgeId[i]);
      for (const s of subs) arr[s] = text;
    }
    const picked = verdicts.checklistItemId[i] === -1 ? pickOf.get(verdicts.responseId[i]) : undefined;
    if (!picked) continue;
    const arr = arrOf(verdicts.judgeId[i]);
    for (const p of picked) {
      const t = text === null || text === MISSING ? text : text.trim();
      const pick = t === null || t === MISSING ? t : t === "tie" || t === "reference" ? t : (p.slots.get(t) ?? null);
      // Two verdicts of one judge on the same unit (on two of its responses) that disagree: unparsed.
      // A verdict written as missing gives way to the judge's other verdict on the unit.
      const had = arr[p.s];
      arr[p.s] = had === undefined || had === MISSING || had === pick ? pick : pick === MISSING ? had : null;
    }
  }
  const judgeIds: Record<string, number> = {};
  const list = [...perJudge].map(([id, v]) => {
    const name = byId.get(id)!.name;
    judgeIds[name] = id;
    return { name, verdicts: v };
  });
  const categories = data.categories.map((c) => textOf(c)).filter((c): c is string => c !== null);
  return { input: { annotators: data.annotators.map((a) => a.name), labels, adjudicated, judges: list, categories }, judgeIds };
}

export function taskJudgeAgreement(
  data: TaskData,
  judges: JudgeInfo[],
  verdicts: Verdicts,
  opts: { reference: Reference; unparsed: UnparsedPolicy; missing?: MissingPolicy },
  picks?: PickCandidates,
): TaskJudgeAgreement {
  const { input, judgeIds } = taskJudgeInput(data, judges, verdicts, picks);
  const ordinal = data.labelKind === "ordinal";
  const r = judgeAgreement(input, {
    reference: opts.reference,
    unparsed: opts.unparsed,
    missing: opts.missing ?? "missing",
    seed: data.task.seed,
    ordinal,
  });
  return { ...r, judgeIds, ordinal };
}

const c = (key: string, label: string, kind: Column["kind"]): Column => ({ key, label, kind });

const INTERVAL_NAMES: Record<string, string> = {
  accuracyCI: "accuracy",
  cohenKappaCI: "kappa",
  weightedKappaCI: "weighted kappa",
  ac1CI: "AC1",
  macroPrecisionCI: "macro precision",
  macroRecallCI: "macro recall",
  macroF1CI: "macro F1",
};

/** A row's interval notes in words ("kappa CI clipped to [-1, 1]; macro F1 CI not estimable: …"), or null. */
export function intervalNotesText(notes: Record<string, string>): string | null {
  const parts = Object.entries(notes).map(([k, v]) => `${INTERVAL_NAMES[k] ?? k} CI ${v}`);
  return parts.length ? parts.join("; ") : null;
}

/** The tables of the any-label-set section: summary, per label, per annotator, one confusion matrix per judge. */
export function judgeAgreementTables(r: TaskJudgeAgreement): ReportTable[] {
  const note =
    `Against ${referenceLabel(r.reference)}; label set: ${r.labels.join(", ") || "(none)"}; ` +
    (r.reference === "each" ? "" : `${r.unitsWithoutMajority} of ${r.units} labelled units have no majority and are left out; `) +
    `verdicts outside the label set are unparsed, ${policyLabel(r.unparsedPolicy)}; "Unparsed" counts them on all the judge's units, "on compared" on the units with a reference (those n holds). ` +
    `Verdicts imported without a value (or as NA, N/A) are missing, ${missingPolicyLabel(r.missingPolicy)}. ` +
    (r.reference === "each"
      ? "Accuracy and kappa CIs" +
        (r.ordinal ? " (and weighted kappa CI)" : "") +
        ": percentile bootstrap over units (a unit's annotator pairs resampled together; seeded, the macro CIs' resamples)"
      : "Accuracy CI: Wilson score; kappa CI" + (r.ordinal ? " and weighted kappa CI" : "") + ": asymptotic SE") +
    `; AC1: ${r.ac1Definition}; its CI: Gwet's analytic SE, clustered by unit;` +
    " macro precision, recall and F1 CIs: percentile bootstrap over units (seeded, the same resamples). Macro averages are unweighted means over the labels either side used (scikit-learn average=\"macro\"; undefined ratios count 0). The humans row's accuracy CI: percentile bootstrap over units (a unit's annotator pairs together). No interval leaves its statistic's range (clipped where it would, and CI notes say so); a zero-width interval is not shown and CI notes give the reason.";
  const summary: ReportTable = {
    id: "agreement-judges",
    title: "Judges against humans, any label set",
    note,
    columns: [
      c("judge", "Judge", "text"),
      c("n", "n", "int"),
      c("unparsed", "Unparsed", "int"),
      c("unparsedCompared", "Unparsed on compared", "int"),
      c("missing", "No verdict", "int"),
      c("accuracy", "Accuracy", "pct"),
      c("accuracyCi", "95% CI", "ci"),
      c("kappa", "Cohen's kappa", "coef"),
      c("kappaCi", "95% CI", "ci"),
      ...(r.ordinal ? [c("weightedKappa", "Weighted kappa (quadratic)", "coef"), c("weightedKappaCi", "95% CI", "ci")] : []),
      c("ac1", "Gwet's AC1", "coef"),
      c("ac1Ci", "95% CI", "ci"),
      c("macroPrecision", "Macro precision", "coef"),
      c("macroPrecisionCi", "95% CI", "ci"),
      c("macroRecall", "Macro recall", "coef"),
      c("macroRecallCi", "95% CI", "ci"),
      c("macroF1", "Macro F1", "coef"),
      c("macroF1Ci", "95% CI", "ci"),
      c("ciNotes", "CI notes", "text"),
    ],
    rows: r.judges.map((j) => ({
      judge: j.judge,
      n: j.n,
      unparsed: j.unparsed,
      unparsedCompared: j.unparsedCompared,
      missing: j.missing,
      accuracy: j.accuracy,
      accuracyCi: j.accuracyCI,
      kappa: j.cohenKappa,
      kappaCi: j.cohenKappaCI,
      ...(r.ordinal ? { weightedKappa: j.weightedKappa, weightedKappaCi: j.weightedKappaCI } : {}),
      ac1: j.ac1,
      ac1Ci: j.ac1CI,
      macroPrecision: j.macroPrecision,
      macroPrecisionCi: j.macroPrecisionCI,
      macroRecall: j.macroRecall,
      macroRecallCi: j.macroRecallCI,
      macroF1: j.macroF1,
      macroF1Ci: j.macroF1CI,
      ciNotes: intervalNotesText(j.intervalNotes),
    })),
  };
  if (r.humans) {
    // The human ceiling, on the same footing (see JudgeAgreementResult.humans).
    summary.rows.push({
      judge: r.reference === "each" ? "Humans (every two annotators)" : "Humans (each annotator vs the others' majority)",
      n: r.humans.n,
      accuracy: r.humans.accuracy,
      accuracyCi: r.humans.accuracyCI,
      kappa: r.humans.cohenKappa,
    });
  }
  const perLabel: ReportTable = {
    id: "agreement-per-label",
    title: "Per label: precision, recall and F1 of each judge",
    note: "One label against the rest, the reference label as truth; 0 where a ratio is undefined (as scikit-learn).",
    columns: [
      c("judge", "Judge", "text"),
      c("label", "Label", "text"),
      c("precision", "Precision", "coef"),
      c("recall", "Recall", "coef"),
      c("f1", "F1", "coef"),
      c("support", "Support", "int"),
    ],
    rows: r.judges.flatMap((j) =>
      Object.entries(j.perLabel).map(([label, m]) => ({
        judge: j.judge,
        label,
        precision: m.precision,
        recall: m.recall,
        f1: m.f1,
        support: m.support,
      })),
    ),
  };
  const annotators: ReportTable = {
    id: "agreement-annotators",
    title: "Each judge against each annotator",
    columns: [
      c("judge", "Judge", "text"),
      c("annotator", "Annotator", "text"),
      c("n", "n", "int"),
      c("accuracy", "Accuracy", "pct"),
      c("kappa", "Cohen's kappa", "coef"),
    ],
    rows: r.judges.flatMap((j) =>
      j.perAnnotator.map((a) => ({ judge: j.judge, annotator: a.annotator, n: a.n, accuracy: a.accuracy, kappa: a.cohenKappa })),
    ),
  };
  const confusions: ReportTable[] = r.judges.map((j, i) => {
    const labels = Object.keys(j.confusion);
    return {
      id: `agreement-confusion-${i}`,
      title: `Confusion matrix: ${j.judge} (rows reference, columns judge)`,
      columns: [c("human", "Reference \\ Judge", "text"), ...labels.map((l) => c(`judge:${l}`, l, "int")), c("total", "Total", "int")],
      rows: labels
        .filter((h) => h !== UNPARSED)
        .map((h) => ({
          human: h,
          ...Object.fromEntries(labels.map((l) => [`judge:${l}`, j.confusion[h][l]])),
          total: labels.reduce((s, l) => s + j.confusion[h][l], 0),
        })),
    };
  });
  return [summary, perLabel, annotators, ...confusions];
}
