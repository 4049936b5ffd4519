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
 * References: MT-Bench (Zheng et al. 2023, §4.2 and Table 2: agreement with the majority
 * vote and with each human, "S1 (w/ tie)"); J. Cohen (1960); Fleiss, Cohen & Everitt (1969)
 * for the kappa SE; E. B. Wilson (1927); K. Gwet (2008) for AC1; Y. Yang (1999) for
 * macro averaging.
 */
// Each statistic from its own file (not the ~/stats index): the command line loads only what it uses.
import { countsBootstrapCIs } from "~/stats/countsBootstrapCI";
import { cohenKappa } from "~/stats/cohenKappa";
import { cohenKappaFromTable } from "~/stats/cohenKappaFromTable";
import { gwetSE } from "~/stats/gwetSE";
import { macroPrecisionRecallF1 } from "~/stats/macroPrecisionRecallF1";
import { wilsonCI } from "~/stats/wilsonCI";
import { parseLabel } from "~/formats/labels";
import { constantRaterReason, honestInterval } from "./honest";

export const REFERENCES = ["majority", "each", "adjudicated"] as const;
export type Reference = (typeof REFERENCES)[number];
export type UnparsedPolicy = "count-as-wrong" | "exclude" | `as:${string}`;
/** The class an unparsed verdict counts as under `count-as-wrong`. */
export const UNPARSED = "(unparsed)";

export class JudgeAgreementError extends Error {}

/**
 * A label or verdict as the text it is compared by: trimmed; yes/no (any case, 是/否,
 * booleans) → "Yes"/"No"; a number → its shortest decimal form (1, "1", "1.0" → "1").
 * Blank → null.
 */
export function labelText(v: unknown): string | null {
  const l = parseLabel(v);
  return l === null ? null : String(l);
}

/** `count-as-wrong`, `exclude` or `as:LABEL`; null for anything else. */
export function parseUnparsedPolicy(raw: string | null | undefined): UnparsedPolicy | null {
  if (raw === "count-as-wrong" || raw === "exclude") return raw;
  if (typeof raw === "string" && raw.startsWith("as:") && raw.length > 3) return raw as UnparsedPolicy;
  return null;
}

export function parseReference(raw: string | null | undefined): Reference | null {
  return (REFERENCES as readonly string[]).includes(raw ?? "") ? (raw as Reference) : null;
}

/**
 * The words of each unparsed policy, the one definition the command, the judge page (its
 * select and its notes) and the tables use: `effect` completes "unparsed verdicts are …",
 * `choice` names the policy as an option to pick.
 */
export function policyLabel(p: UnparsedPolicy, form: "effect" | "choice" = "effect"): string {
  if (p === "count-as-wrong") return form === "effect" ? `counted as wrong (class "${UNPARSED}")` : "Count as wrong (a class of their own)";
  if (p === "exclude") return form === "effect" ? "left out (those units are not compared for that judge)" : "Leave those units out";
  return form === "effect" ? `counted as "${p.slice(3)}"` : `Count as “${p.slice(3)}”`;
}

/** The words of each reference, for the command, the judge page's select and its notes. */
export function referenceLabel(r: Reference, form: "effect" | "choice" = "effect"): string {
  if (form === "choice")
    return r === "majority" ? "Majority of the annotators" : r === "each" ? "Each annotator (pooled)" : "Adjudicated final label";
  return r === "majority"
    ? "the strict majority of the annotators"
    : r === "each"
      ? "each annotator (every annotator × unit pair, pooled)"
      : "the adjudicated label (the strict majority where a unit was not adjudicated)";
}

export interface JudgeAgreementInput {
  /** Annotator names, in column order. */
  annotators: string[];
  /** Per unit, per annotator: the label ({@link labelText}) or null (not labelled). */
  labels: (string | null)[][];
  /** Per unit: the adjudicated label, or null (reference "adjudicated" uses the majority there). */
  adjudicated?: (string | null)[];
  /** Per judge, per unit: the verdict text; null = an empty or unparseable output; undefined = no verdict. */
  judges: { name: string; verdicts: (string | null | undefined)[] }[];
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
  /** Compared units the judge has no verdict on. */
  missing: number;
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

const isNumberText = (s: string) => s.trim() !== "" && Number.isFinite(Number(s));

/** Numbers by value when every label is a number, else code-unit order (scikit-learn's sort of strings). */
export function sortLabels(labels: Iterable<string>): string[] {
  const list = [...new Set(labels)];
  if (list.length > 0 && list.every(isNumberText)) return list.sort((a, b) => Number(a) - Number(b));
  return list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The label more than half of the unit's annotators gave, or null. */
export function strictMajority(labels: readonly (string | null)[], skip = -1): string | null {
  // A unit has a few annotators: count by scanning (no map per unit). `skip`: leave that annotator out.
  let total = 0;
  for (let i = 0; i < labels.length; i++) if (i !== skip && labels[i] !== null) total++;
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i];
    if (i === skip || l === null) continue;
    let n = 0;
    for (let k = i; k < labels.length; k++) if (k !== skip && labels[k] === l) n++;
    if (2 * n > total) return l;
  }
  return null;
}

const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);
const interval = (ci: readonly number[] | null | undefined): [number, number] | null =>
  ci && Number.isFinite(ci[0]) && Number.isFinite(ci[1]) ? [ci[0], ci[1]] : null;

export function judgeAgreement(input: JudgeAgreementInput, options: JudgeAgreementOptions = {}): JudgeAgreementResult {
  const reference = options.reference ?? "majority";
  const policy = options.unparsed ?? "count-as-wrong";
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
  const judged = (v: string | null | undefined): { label: string | null | undefined; unparsed: boolean } => {
    if (v === undefined) return NONE;
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
    for (let u = 0; u < U; u++) if (judged(j.verdicts[u]).unparsed) unparsed++;
    const counts = { unparsed, unparsedCompared, missing };
    return figures(j.name, ref, jud, unitOf, counts, input, judged, numericScale, labels, reference, options);
  });
  return {
    reference,
    unparsedPolicy: policy,
    labels,
    unitsWithoutMajority: withoutMajority,
    units,
    annotators: input.annotators,
    judges: rows,
    humans: humanBaseline(input, reference, options),
  };
}

function figures(
  judge: string,
  ref: string[],
  jud: string[],
  unitOf: number[],
  counts: { unparsed: number; unparsedCompared: number; missing: number },
  input: JudgeAgreementInput,
  judged: (v: string | null | undefined) => { label: string | null | undefined },
  numericScale: boolean,
  labelSet: string[],
  reference: Reference,
  options: JudgeAgreementOptions,
): JudgeAgreementRow {
  const n = ref.length;
  const row: JudgeAgreementRow = {
    judge,
    n,
    unparsed: counts.unparsed,
    unparsedCompared: counts.unparsedCompared,
    missing: counts.missing,
    accuracy: null,
    accuracyCI: null,
    cohenKappa: null,
    cohenKappaCI: null,
    weightedKappa: null,
    weightedKappaCI: null,
    ac1: null,
    ac1CI: null,
    macroPrecision: null,
    macroPrecisionCI: null,
    macroRecall: null,
    macroRecallCI: null,
    macroF1: null,
    macroF1CI: null,
    intervalNotes: {},
    perLabel: {},
    confusion: {},
    perAnnotator: [],
  };
  // The judge against each annotator alone, on the units that annotator labelled.
  const jv = input.judges.find((x) => x.name === judge)!.verdicts;
  row.perAnnotator = input.annotators.map((name, a) => {
    const h: string[] = [];
    const v: string[] = [];
    input.labels.forEach((r, u) => {
      const l = r[a];
      if (l === null) return;
      const { label } = judged(jv[u]);
      if (label == null) return;
      h.push(l);
      v.push(label);
    });
    return {
      annotator: name,
      n: h.length,
      accuracy: h.length ? h.filter((x, i) => x === v[i]).length / h.length : null,
      cohenKappa: h.length ? finiteOrNull(cohenKappa(h, v).kappa) : null,
    };
  });
  if (n === 0) return row;
  let hits = 0;
  for (let i = 0; i < n; i++) if (ref[i] === jud[i]) hits++;
  row.accuracy = hits / n;
  row.accuracyCI = interval(wilsonCI(hits, n));
  const k = cohenKappa(ref, jud);
  row.cohenKappa = finiteOrNull(k.kappa);
  row.cohenKappaCI = row.cohenKappa === null || !Number.isFinite(k.se) ? null : interval(k.ci);
  // One side with a single category (a judge that always says "A", or a reference with one label):
  // kappa is 0 by construction (p_e = p_o), so its interval is not estimable — found from the
  // margins (cohenKappaFromTable constantRater), not from the width of a rounded interval.
  const constantNote = (side: "a" | "b" | "both" | null) =>
    side === null
      ? null
      : `not estimable: ${constantRaterReason(side === "a" ? "the reference" : side === "b" ? "the judge" : "the judge and the reference each")}`;
  const kappaConstant = row.cohenKappa === null ? null : constantNote(k.constantRater);
  let weightedConstant: string | null = null;
  if (numericScale) {
    // Weighted kappa needs the verdict on the scale: pairs with an unparsed verdict are left out of it.
    const hs: number[] = [];
    const vs: number[] = [];
    for (let i = 0; i < n; i++)
      if (jud[i] !== UNPARSED) {
        hs.push(Number(ref[i]));
        vs.push(Number(jud[i]));
      }
    if (hs.length) {
      const wk = cohenKappa(hs, vs, { weights: "quadratic", categories: labelSet.map(Number) });
      row.weightedKappa = finiteOrNull(wk.kappa);
      row.weightedKappaCI = row.weightedKappa === null || !Number.isFinite(wk.se) ? null : interval(wk.ci);
      weightedConstant = row.weightedKappa === null ? null : constantNote(wk.constantRater);
    }
  }
  if (n > 1) {
    // Gwet (2008, eqs. 20–30): q is the number of categories of the scale — the label set, the
    // reference's categories — not the categories in use, and never the "(unparsed)" class. The
    // pairs go to gwetSE already counted (r_ik), one row per pair with r_i = 2: an unparsed
    // verdict is a rating in no category, so pa_i = 0 (it agrees with nothing) and it adds to no
    // π_k. The SE is clustered by unit (a unit's pairs under reference "each").
    const q = labelSet.length;
    const code = new Map(labelSet.map((l, k) => [l, k]));
    const cells = new Int32Array(n * q);
    for (let i = 0; i < n; i++) {
      cells[i * q + code.get(ref[i])!]++;
      const k = code.get(jud[i]);
      if (k !== undefined) cells[i * q + k]++;
    }
    const counted = { counts: cells, ratingsPerUnit: new Int32Array(n).fill(2), units: n, raters: 2, q, categories: labelSet };
    const g = gwetSE(counted, { cluster: unitOf });
    row.ac1 = finiteOrNull(g.value);
    row.ac1CI = row.ac1 === null || !Number.isFinite(g.se) ? null : interval(g.ci);
  }
  // The union of the labels present on either side, in label-set order, the unparsed class last.
  const present = new Set<string>([...ref, ...jud]);
  const order = [...labelSet.filter((l) => present.has(l)), ...[...present].filter((l) => !labelSet.includes(l))];
  const m = macroPrecisionRecallF1(ref, jud, order);
  row.macroPrecision = finiteOrNull(m.precision);
  row.macroRecall = finiteOrNull(m.recall);
  row.macroF1 = finiteOrNull(m.f1);
  const union = m.perLabel.map((x) => String(x.label));
  for (const x of m.perLabel) row.perLabel[String(x.label)] = { precision: x.precision, recall: x.recall, f1: x.f1, support: x.support };
  const index = new Map(union.map((l, i) => [l, i]));
  for (const h of union) row.confusion[h] = Object.fromEntries(union.map((l) => [l, 0]));
  for (let i = 0; i < n; i++) row.confusion[ref[i]][jud[i]]++;
  const B = options.resamples ?? 1000;
  // Reference "each": a unit's (annotator, judge) pairs share the unit and the judge's one verdict,
  // so they are not independent; Wilson's and the asymptotic kappa intervals would treat them as
  // n independent pairs. Their intervals come from the same unit bootstrap as the macro ones.
  const clustered = reference === "each";
  if (clustered) {
    row.accuracyCI = null;
    row.cohenKappaCI = null;
    row.weightedKappaCI = null;
  }
  if (B > 0 && n > 1) {
    const wk = clustered && row.weightedKappa !== null ? labelSet : null;
    const ci = unitBootstrap(ref, jud, unitOf, index, B, options.seed ?? 1, clustered, wk);
    row.macroPrecisionCI = ci.precision;
    row.macroRecallCI = ci.recall;
    row.macroF1CI = ci.f1;
    if (clustered) {
      row.accuracyCI = ci.accuracy;
      row.cohenKappaCI = row.cohenKappa === null ? null : ci.kappa;
      row.weightedKappaCI = row.weightedKappa === null ? null : ci.weightedKappa;
    }
  }
  // No interval leaves its statistic's range, and none is zero-width (see ./honest).
  const SE0 = "the asymptotic SE is 0 (e.g. the judge agrees with the reference on every unit)";
  const BOOT0 = "every bootstrap resample gives the same value (e.g. the judge agrees with the reference on every unit)";
  const honest = (
    key: "accuracyCI" | "cohenKappaCI" | "weightedKappaCI" | "ac1CI" | "macroPrecisionCI" | "macroRecallCI" | "macroF1CI",
    value: number | null,
    range: [number, number],
    reason: string,
  ) => {
    const h = honestInterval(value, row[key], range, reason);
    row[key] = h.ci;
    if (h.note) row.intervalNotes[key] = h.note;
  };
  honest("accuracyCI", row.accuracy, [0, 1], clustered ? BOOT0 : "no pairs");
  for (const [key, note] of [
    ["cohenKappaCI", kappaConstant],
    ["weightedKappaCI", weightedConstant],
  ] as const)
    if (note) {
      row[key] = null;
      row.intervalNotes[key] = note;
    }
  honest("cohenKappaCI", row.cohenKappa, [-1, 1], clustered ? BOOT0 : SE0);
  honest("weightedKappaCI", row.weightedKappa, [-1, 1], clustered ? BOOT0 : SE0);
  honest("ac1CI", row.ac1, [-1, 1], "the analytic SE is 0 (e.g. the judge agrees with the reference on every unit)");
  honest("macroPrecisionCI", row.macroPrecision, [0, 1], BOOT0);
  honest("macroRecallCI", row.macroRecall, [0, 1], BOOT0);
  honest("macroF1CI", row.macroF1, [0, 1], BOOT0);
  return row;
}

function humanBaseline(input: JudgeAgreementInput, reference: Reference, options: JudgeAgreementOptions): JudgeAgreementResult["humans"] {
  const a: string[] = [];
  const b: string[] = [];
  // Per unit with pairs: its agreeing pairs and its pairs (each pair once), for the interval.
  const unitHits: number[] = [];
  const unitPairs: number[] = [];
  for (const row of input.labels) {
    const start = a.length;
    if (reference === "each") {
      for (let x = 0; x < row.length; x++) {
        const lx = row[x];
        if (lx === null) continue;
        for (let y = x + 1; y < row.length; y++) {
          const ly = row[y];
          if (ly === null) continue;
          a.push(lx, ly);
          b.push(ly, lx);
        }
      }
    } else {
      for (let i = 0; i < row.length; i++) {
        const l = row[i];
        if (l === null) continue;
        const others = strictMajority(row, i);
        if (others === null) continue;
        a.push(others);
        b.push(l);
      }
    }
    if (a.length === start) continue;
    let h = 0;
    for (let i = start; i < a.length; i++) if (a[i] === b[i]) h++;
    const per = reference === "each" ? 2 : 1;
    unitHits.push(h / per);
    unitPairs.push((a.length - start) / per);
  }
  if (a.length === 0) return null;
  let hits = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) hits++;
  // Each annotator–unit pair counts once (in "each", every pair twice: n is the number of label pairs).
  const n = reference === "each" ? a.length / 2 : a.length;
  // A unit's pairs share its annotators' labels, so they are not independent: where a unit gives
  // more than one pair, the interval is a seeded percentile bootstrap over units (as the judges'
  // under reference "each"); with one pair per unit, Wilson's.
  let accuracyCI = interval(wilsonCI(reference === "each" ? hits / 2 : hits, n));
  const B = options.resamples ?? 1000;
  if (unitPairs.some((x) => x > 1)) {
    accuracyCI = null;
    if (B > 0 && unitPairs.length > 1) {
      // Units with the same (agreeing, pairs) are interchangeable: one pattern each.
      const patternIndex = new Map<string, number>();
      const hitsOf: number[] = [];
      const pairsOf: number[] = [];
      const counts: number[] = [];
      const patternOfUnit = new Int32Array(unitPairs.length);
      unitPairs.forEach((m, u) => {
        const key = `${unitHits[u]}/${m}`;
        let p = patternIndex.get(key);
        if (p === undefined) {
          p = counts.length;
          patternIndex.set(key, p);
          hitsOf.push(unitHits[u]);
          pairsOf.push(m);
          counts.push(0);
        }
        counts[p]++;
        patternOfUnit[u] = p;
      });
      const [acc] = countsBootstrapCIs({
        counts,
        patternOfUnit,
        resamples: B,
        seed: options.seed ?? 1,
        statistics: [
          (w) => {
            let h = 0;
            let m = 0;
            for (let p = 0; p < w.length; p++) {
              h += w[p] * hitsOf[p];
              m += w[p] * pairsOf[p];
            }
            return m ? h / m : NaN;
          },
        ],
      });
      accuracyCI = honestInterval(hits / a.length, interval(acc.ci), [0, 1]).ci;
    }
  }
  return {
    n,
    accuracy: hits / a.length,
    accuracyCI,
    cohenKappa: finiteOrNull(cohenKappa(a, b).kappa),
  };
}

/**
 * Percentile bootstraps over units of macro precision, recall and F1 and, with `clustered`
 * (reference "each"), of accuracy, Cohen's kappa and (given the scale, `weightedScale`) the
 * quadratic-weighted kappa: units are resampled, a unit's pairs together (a cluster bootstrap:
 * Davison & Hinkley 1997, §3.8; Field & Welsh 2007 for the cluster case). Every one of these
 * depends only on the confusion table, so units with the same pairs (the same pattern) are
 * interchangeable: countsBootstrapCI draws the units per pattern (the units themselves on small
 * data, with the row bootstrap's draws; one multinomial draw over the few patterns on large data),
 * and each resample's table is the patterns' tables weighted by their draws. All the statistics
 * share the resamples (the macro ones are the same whether or not the others are drawn).
 */
function unitBootstrap(
  ref: string[],
  jud: string[],
  unitOf: number[],
  index: Map<string, number>,
  B: number,
  seed: number,
  clustered: boolean,
  weightedScale: string[] | null,
): Record<"precision" | "recall" | "f1" | "accuracy" | "kappa" | "weightedKappa", [number, number] | null> {
  const q = index.size;
  const n = ref.length;
  // Units in order of first appearance, each with its pattern (the sorted cells of its pairs).
  const patternIndex = new Map<string | number, number>();
  const patternCells: number[][] = [];
  const counts: number[] = [];
  const unitPattern: number[] = [];
  let i = 0;
  while (i < n) {
    const u = unitOf[i];
    const cells: number[] = [];
    for (; i < n && unitOf[i] === u; i++) cells.push(index.get(ref[i])! * q + index.get(jud[i])!);
    if (cells.length > 1) cells.sort((x, y) => x - y);
    const key = cells.length === 1 ? cells[0] : cells.join(",");
    let p = patternIndex.get(key);
    if (p === undefined) {
      p = patternCells.length;
      patternIndex.set(key, p);
      patternCells.push(cells);
      counts.push(0);
    }
    counts[p]++;
    unitPattern.push(p);
  }
  const table = new Float64Array(q * q);
  const patternOfUnit = Int32Array.from(unitPattern);
  // Macro precision (0), recall (1) or F1 (2) over the labels present in the resample (either side),
  // undefined ratios 0: as on the full data (scikit-learn average="macro", zero_division=0).
  const macro = (w: Float64Array, which: 0 | 1 | 2, build: boolean) => {
    if (build) {
      table.fill(0);
      for (let p = 0; p < w.length; p++) {
        if (w[p] === 0) continue;
        for (const c of patternCells[p]) table[c] += w[p];
      }
    }
    let sum = 0;
    let labels = 0;
    for (let k = 0; k < q; k++) {
      let support = 0;
      let predicted = 0;
      for (let x = 0; x < q; x++) {
        support += table[k * q + x];
        predicted += table[x * q + k];
      }
      if (support === 0 && predicted === 0) continue;
      labels++;
      const tp = table[k * q + k];
      sum += which === 0 ? (predicted ? tp / predicted : 0) : which === 1 ? (support ? tp / support : 0) : (2 * tp) / (support + predicted);
    }
    return labels ? sum / labels : NaN;
  };
  // Accuracy and Cohen's kappa of the resample's table (J. Cohen 1960: (p_o − p_e)/(1 − p_e)).
  const accuracyOf = () => {
    let total = 0;
    let hits = 0;
    for (let c = 0; c < q * q; c++) total += table[c];
    for (let k = 0; k < q; k++) hits += table[k * q + k];
    return total ? hits / total : NaN;
  };
  const kappaOf = () => cohenKappaFromTable({ counts: table, q }).kappa;
  // The weighted kappa's table: the scale's categories in order, pairs with an unparsed verdict left out (as on the full data).
  const scaleOf = weightedScale ? [...index.keys()].map((l) => weightedScale.indexOf(l)) : [];
  const S = weightedScale?.length ?? 0;
  const scaled = new Float64Array(S * S);
  const weightedOf = () => {
    scaled.fill(0);
    for (let a = 0; a < q; a++)
      for (let b = 0; b < q; b++) if (scaleOf[a] >= 0 && scaleOf[b] >= 0) scaled[scaleOf[a] * S + scaleOf[b]] += table[a * q + b];
    return cohenKappaFromTable({ counts: scaled, q: S }, { weights: "quadratic" }).kappa;
  };
  // One set of draws for all; countsBootstrapCIs calls them in order on each resample, so the
  // first (F1) builds the resample's table and the others read it.
  const statistics = [
    (w: Float64Array) => macro(w, 2, true),
    (w: Float64Array) => macro(w, 0, false),
    (w: Float64Array) => macro(w, 1, false),
  ];
  if (clustered) statistics.push(accuracyOf, kappaOf);
  if (clustered && weightedScale) statistics.push(weightedOf);
  const [f1, precision, recall, accuracy, kappa, weightedKappa] = countsBootstrapCIs({
    counts,
    patternOfUnit,
    resamples: B,
    seed,
    statistics,
  });
  return {
    precision: interval(precision.ci),
    recall: interval(recall.ci),
    f1: interval(f1.ci),
    accuracy: accuracy ? interval(accuracy.ci) : null,
    kappa: kappa ? interval(kappa.ci) : null,
    weightedKappa: weightedKappa ? interval(weightedKappa.ci) : null,
  };
}
