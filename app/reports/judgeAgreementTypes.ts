/** The input, options and result of {@link judgeAgreement} (./judgeAgreement). */
import type { MissingPolicy, Reference, UnparsedPolicy, Verdict } from "./judgeAgreementLabels";

export interface JudgeAgreementInput {
  /** Annotator names, in column order. */
  annotators: string[];
  /** Per unit, per annotator: the label ({@link labelText}) or null (not labelled). */
  labels: (string | null)[][];
  /** Per unit: the adjudicated label, or null (reference "adjudicated" uses the majority there). */
  adjudicated?: (string | null)[];
  /**
   * Per judge, per unit: the verdict text; null = an empty or unparseable output; MISSING = a
   * verdict written as missing (options.missing says what it counts as); undefined = no verdict.
   */
  judges: { name: string; verdicts: Verdict[] }[];
  /**
   * The task's declared scale ({@link labelText} of each category: a Likert 1–7, a writing
   * score 1–N), kept whole: the label set is these and every human label, so a verdict on an
   * unused point of the scale is parsed, and AC1's q is the scale's size. Absent (the command,
   * imported labels): the label set is the human labels.
   */
  categories?: string[];
}

export interface JudgeAgreementOptions {
  reference?: Reference;
  unparsed?: UnparsedPolicy;
  /** What a verdict written as missing (MISSING) counts as: "missing" (default; no verdict, out of n) or "unparsed". */
  missing?: MissingPolicy;
  /** Seed of the bootstrap CI of macro F1 (default 1). */
  seed?: number;
  /** Bootstrap resamples (default 1000; 0 = no bootstrap). */
  resamples?: number;
  /**
   * The labels are an ordered rating scale (numbers): adds quadratic-weighted kappa. Never
   * guessed from the labels (codes 0/1/2 are often nominal): the caller states it.
   */
  ordinal?: boolean;
}

export interface PerLabelFigures {
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

export interface JudgeAgreementRow {
  judge: string;
  /** Pairs compared (units; under reference "each", (annotator, unit) pairs). */
  n: number;
  /**
   * Unparsed verdicts of the judge on all the units (an empty output or one outside the label
   * set), counted under every policy, whether or not the unit has a reference.
   */
  unparsed: number;
  /** Of those, the ones on compared units (units with a reference): what n and the confusion matrix hold under count-as-wrong. */
  unparsedCompared: number;
  /**
   * Compared units the judge has no verdict on: none given, or (missing policy "missing") one
   * written as missing. Not in n.
   */
  missing: number;
  /**
   * Verdicts of the judge written as missing (a CSV cell empty, NA or N/A; JSON null), on all the
   * units, under either missing policy (under "unparsed" they are also counted in `unparsed`).
   */
  missingVerdicts: number;
  accuracy: number | null;
  /**
   * Wilson score 95% interval (one pair per unit). Reference "each": a seeded percentile
   * bootstrap over units (a unit's (annotator, judge) pairs move together: they are not
   * independent), the same resamples as the macro intervals.
   */
  accuracyCI: [number, number] | null;
  cohenKappa: number | null;
  /** kappa ± 1.96·SE, the asymptotic SE of Fleiss, Cohen & Everitt (1969); reference "each": the unit bootstrap. */
  cohenKappaCI: [number, number] | null;
  /** Quadratic-weighted kappa on an ordinal scale of numbers (options.ordinal), on the parsed verdicts; else null. */
  weightedKappa: number | null;
  /** weighted kappa ± 1.96·SE, the asymptotic SE of Fleiss, Cohen & Everitt (1969) with the quadratic weights; reference "each": the unit bootstrap. */
  weightedKappaCI: [number, number] | null;
  /**
   * Gwet's AC1 on the same pairs as kappa, q = the size of the label set (the reference's
   * categories, Gwet 2008 eq. 20); an unparsed verdict is a rating in none of them (it agrees
   * with nothing and adds to no category's π).
   */
  ac1: number | null;
  /** AC1 ± 1.96·SE, Gwet's (2008) analytic SE, clustered by unit (a unit's pairs under reference "each"). */
  ac1CI: [number, number] | null;
  macroPrecision: number | null;
  /** Seeded percentile bootstrap over units, the same draws as macroF1CI. */
  macroPrecisionCI: [number, number] | null;
  macroRecall: number | null;
  /** Seeded percentile bootstrap over units, the same draws as macroF1CI. */
  macroRecallCI: [number, number] | null;
  macroF1: number | null;
  /** Seeded percentile bootstrap over units (all of a unit's pairs move together). */
  macroF1CI: [number, number] | null;
  /**
   * Why an interval is not shown as computed, by its key ("cohenKappaCI", "macroF1CI", …):
   * "clipped to [-1, 1]" (the interval left the statistic's range and was clipped), or
   * "not estimable: REASON" (a zero-width interval, e.g. a perfect judge: the interval is null).
   */
  intervalNotes: Record<string, string>;
  /** Per label of the union of reference and judge labels (zero where undefined, as scikit-learn). */
  perLabel: Record<string, PerLabelFigures>;
  /** Reference label (rows) → judge label (columns) → count, over the same union. */
  confusion: Record<string, Record<string, number>>;
  /** The judge against each annotator alone (same unparsed policy). */
  perAnnotator: { annotator: string; n: number; accuracy: number | null; cohenKappa: number | null }[];
}

export interface JudgeAgreementResult {
  reference: Reference;
  unparsedPolicy: UnparsedPolicy;
  missingPolicy: MissingPolicy;
  /**
   * Which Gwet's AC1 the `ac1` figures are, in words (Gwet 2008 eqs. 20–30 on the compared
   * (reference, judge) pairs, q = the label set): `npm run agreement` prints its own (all the
   * ratings of a unit, a one-rating unit in π_k), and on complete two-rater data with the same q
   * the two are equal.
   */
  ac1Definition: string;
  /** The label set: every human label (and every category of a declared scale), in order (numbers by value, text in code-unit order). */
  labels: string[];
  /** Labelled units with no strict majority (reference majority/adjudicated); 0 under "each". */
  unitsWithoutMajority: number;
  /** Units with at least one human label. */
  units: number;
  annotators: string[];
  judges: JudgeAgreementRow[];
  /**
   * The human ceiling a judge is read against (MT-Bench Table 2 sets judge–human beside
   * human–human agreement). Reference majority/adjudicated: each annotator against the strict
   * majority of the *other* annotators of the unit (units where they have one), pooled.
   * Reference each: every two annotators of a unit, pooled, each pair counted in both orders
   * (so kappa does not depend on which annotator is called first). Null with fewer than two
   * annotators on any unit. accuracyCI: a seeded percentile bootstrap over units where a unit
   * gives more than one pair (its pairs are not independent), else Wilson's.
   */
  humans: { n: number; accuracy: number; accuracyCI: [number, number] | null; cohenKappa: number | null } | null;
}
