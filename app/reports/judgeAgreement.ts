/**
 * Judge–human agreement on any label set (pure; no database, no files): the table every
 * judge-validation section prints — per judge n, unparsed outputs, accuracy (Wilson CI),
 * Cohen's kappa (asymptotic CI), weighted kappa on numeric scales, Gwet's AC1, macro
 * precision/recall/F1 (seeded unit bootstrap CI of macro F1), per-label figures and the
 * confusion matrix — against the human majority, against every annotator, or against
 * the adjudicated label.
 *
 * The command (`npm run judge-agreement`), the judge page and the `judge-agreement` /
 * `judge-confusion` exports all call {@link judgeAgreement}, so they give the same figures.
 *
 * Labels and verdicts are compared as text after trimming ({@link labelText}: a human `1`
 * equals a judge "1"; yes/no in any case are "Yes"/"No", as the import presets read them).
 * The label set is the set of human labels. A verdict outside it (an empty or unparseable
 * output, "Unsure", …) is *unparsed*; the policy decides what it counts as:
 *
 * - `count-as-wrong` (default): it stays in n as a class of its own, "(unparsed)" — exactly
 *   how scikit-learn counts an extra predicted label: it is never correct, it lowers kappa,
 *   and it enters the macro averages as a label with zero precision and recall.
 * - `exclude`: the unit is left out for that judge (its n drops).
 * - `as:LABEL`: it counts as LABEL (a label of the set).
 *
 * A verdict written as missing ({@link MISSING}: a CSV cell empty, `NA` or `N/A`; JSON `null`) is
 * not an unparsed one: under the missing policy `missing` (default) it is no verdict — counted in
 * `missing`, left out of n —; under `unparsed` it is an unparsed verdict.
 *
 * References: MT-Bench (Zheng et al. 2023, §4.2 and Table 2: agreement with the majority
 * vote and with each human, "S1 (w/ tie)"); J. Cohen (1960); Fleiss, Cohen & Everitt (1969)
 * for the kappa SE; E. B. Wilson (1927); K. Gwet (2008) for AC1; Y. Yang (1999) for
 * macro averaging.
 */
import { figures } from "./judgeAgreementFigures";
import { humanBaseline } from "./judgeAgreementHumans";
import {
  isNumberText,
  JudgeAgreementError,
  labelText,
  MISSING,
  sortLabels,
  strictMajority,
  UNPARSED,
  type UnparsedPolicy,
  type Verdict,
} from "./judgeAgreementLabels";
import type { JudgeAgreementInput, JudgeAgreementOptions, JudgeAgreementResult, JudgeAgreementRow } from "./judgeAgreementTypes";

export {
  CSV_MISSING_TOKENS,
  JudgeAgreementError,
  labelText,
  MISSING,
  MISSING_POLICIES,
  missingPolicyLabel,
  type MissingPolicy,
  parseMissingPolicy,
  parseReference,
  parseUnparsedPolicy,
  policyLabel,
  REFERENCES,
  type Reference,
  referenceLabel,
  sortLabels,
  strictMajority,
  UNPARSED,
  type UnparsedPolicy,
  type Verdict,
} from "./judgeAgreementLabels";
export type {
  JudgeAgreementInput,
  JudgeAgreementOptions,
  JudgeAgreementResult,
  JudgeAgreementRow,
  PerLabelFigures,
} from "./judgeAgreementTypes";

export function judgeAgreement(input: JudgeAgreementInput, options: JudgeAgreementOptions = {}): JudgeAgreementResult {
  const reference = options.reference ?? "majority";
  const policy = options.unparsed ?? "count-as-wrong";
  const missingPolicy = options.missing ?? "missing";
  const U = input.labels.length;
  const labelSet = new Set<string>();
  for (const row of input.labels) for (const l of row) if (l !== null) labelSet.add(l);
  for (const l of input.categories ?? []) labelSet.add(l);
  if (reference === "adjudicated") for (const l of input.adjudicated ?? []) if (l != null) labelSet.add(l);
  const labels = sortLabels(labelSet);
  let mapTo: string | null = null;
  if (policy.startsWith("as:")) {
    mapTo = labelText(policy.slice(3));
    if (mapTo === null || !labelSet.has(mapTo)) {
      throw new JudgeAgreementError(`--unparsed ${policy}: "${policy.slice(3)}" is not one of the human labels (${labels.join(", ")}).`);
    }
  }

  // The comparison pairs: (unit, reference label, annotator index or -1).
  const pairUnit: number[] = [];
  const pairRef: string[] = [];
  const pairAnn: number[] = [];
  let units = 0;
  let withoutMajority = 0;
  for (let u = 0; u < U; u++) {
    const row = input.labels[u];
    if (!row.some((l) => l !== null)) continue;
    units++;
    if (reference === "each") {
      row.forEach((l, a) => {
        if (l === null) return;
        pairUnit.push(u);
        pairRef.push(l);
        pairAnn.push(a);
      });
      continue;
    }
    const adj = reference === "adjudicated" ? (input.adjudicated?.[u] ?? null) : null;
    const ref = adj ?? strictMajority(row);
    if (ref === null) {
      withoutMajority++;
      continue;
    }
    pairUnit.push(u);
    pairRef.push(ref);
    pairAnn.push(-1);
  }

  /** A verdict as the label it counts as; undefined = no verdict; null = left out (exclude). */
  // Verdict texts repeat (a handful of labels): each distinct text is read once.
  const seen = new Map<string, { label: string | null; unparsed: boolean }>();
  const NONE = { label: undefined, unparsed: false };
  const judged = (v: Verdict): { label: string | null | undefined; unparsed: boolean } => {
    if (v === undefined) return NONE;
    if (v === MISSING) return missingPolicy === "missing" ? NONE : judgedText(null);
    if (v !== null) {
      let hit = seen.get(v);
      if (!hit) seen.set(v, (hit = judgedText(v)));
      return hit;
    }
    return judgedText(null);
  };
  const judgedText = (v: string | null): { label: string | null; unparsed: boolean } => {
    const t = v === null ? null : labelText(v);
    if (t !== null && labelSet.has(t)) return { label: t, unparsed: false };
    if (policy === "exclude") return { label: null, unparsed: true };
    return { label: mapTo ?? UNPARSED, unparsed: true };
  };

  const numericScale = options.ordinal === true && labels.length >= 3 && labels.every(isNumberText);
  const judges = [...input.judges].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rows: JudgeAgreementRow[] = judges.map((j) => {
    const ref: string[] = [];
    const jud: string[] = [];
    const unitOf: number[] = [];
    const ann: number[] = [];
    let unparsedCompared = 0;
    let missing = 0;
    for (let p = 0; p < pairUnit.length; p++) {
      // A unit's pairs are contiguous: its first pair counts the unit.
      const u = pairUnit[p];
      const first = p === 0 || pairUnit[p - 1] !== u;
      const { label, unparsed: bad } = judged(j.verdicts[u]);
      if (first && label === undefined) missing++;
      if (first && bad) unparsedCompared++;
      if (label == null) continue;
      ref.push(pairRef[p]);
      jud.push(label);
      unitOf.push(u);
      ann.push(pairAnn[p]);
    }
    // Every unparsed verdict of the judge, on units with a reference or not (a unit without a
    // majority, a unit nobody labelled): how often the judge's output could not be read.
    let unparsed = 0;
    let missingVerdicts = 0;
    for (let u = 0; u < U; u++) {
      const v = j.verdicts[u];
      if (v === MISSING) missingVerdicts++;
      if (judged(v).unparsed) unparsed++;
    }
    const counts = { unparsed, unparsedCompared, missing, missingVerdicts };
    return figures(j.name, ref, jud, unitOf, counts, input, judged, numericScale, labels, reference, options);
  });
  return {
    reference,
    unparsedPolicy: policy,
    missingPolicy,
    ac1Definition: ac1Definition(labels.length, input.categories !== undefined && input.categories.length > 0, reference, policy),
    labels,
    unitsWithoutMajority: withoutMajority,
    units,
    annotators: input.annotators,
    judges: rows,
    humans: humanBaseline(input, reference, options),
  };
}

/**
 * The AC1 of the judge rows in words. Gwet (2008, eqs. 20–30) on the compared pairs: each pair
 * is a unit rated twice (the reference, the judge), so a unit the judge has no verdict on (or,
 * under the missing policy "missing", one written as missing) adds nothing — neither to pa nor to
 * π_k — where `npm run agreement` counts a unit with one rating in π_k.
 */
export function ac1Definition(
  q: number,
  declaredScale: boolean,
  reference: JudgeAgreementResult["reference"],
  policy: UnparsedPolicy,
): string {
  return (
    "Gwet's AC1 (Gwet 2008, eqs. 20-30) on the compared (reference, judge) pairs, two ratings each; " +
    "a unit without a verdict is left out (not counted in the category shares pi_k); " +
    `q = ${q} (the label set: the human labels${declaredScale ? " and the task's scale" : ""})` +
    (policy === "count-as-wrong" ? "; an unparsed verdict is a rating in no category (it agrees with nothing)" : "") +
    (reference === "each" ? "; SE clustered by unit" : "")
  );
}
