/** One judge's row of the judge–human table: every figure and interval on its compared pairs. */
// Each statistic from its own file (not the ~/stats index): the command line loads only what it uses.
import { cohenKappa } from "~/stats/cohenKappa";
import { gwetSE } from "~/stats/gwetSE";
import { macroPrecisionRecallF1 } from "~/stats/macroPrecisionRecallF1";
import { wilsonCI } from "~/stats/wilsonCI";
import { constantRaterReason, honestInterval } from "./honest";
import { finiteOrNull, interval, unitBootstrap } from "./judgeAgreementIntervals";
import { UNPARSED, type Reference, type Verdict } from "./judgeAgreementLabels";
import type { JudgeAgreementInput, JudgeAgreementOptions, JudgeAgreementRow } from "./judgeAgreementTypes";

export function figures(
  judge: string,
  ref: string[],
  jud: string[],
  unitOf: number[],
  counts: { unparsed: number; unparsedCompared: number; missing: number; missingVerdicts: number },
  input: JudgeAgreementInput,
  judged: (v: Verdict) => { label: string | null | undefined },
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
    missingVerdicts: counts.missingVerdicts,
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
  // The judge's label of each unit, read once for all annotators.
  const judgedLabel = input.labels.map((_, u) => judged(jv[u]).label);
  row.perAnnotator = input.annotators.map((name, a) => {
    const h: string[] = [];
    const v: string[] = [];
    for (let u = 0; u < input.labels.length; u++) {
      const l = input.labels[u][a];
      if (l === null) continue;
      const label = judgedLabel[u];
      if (label == null) continue;
      h.push(l);
      v.push(label);
    }
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
