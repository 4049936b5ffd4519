/**
 * A benchmark score corrected by a sample of human labels, from a team's own two files (`npm run corrected-score`):
 *
 *   - the judge file: one row per unit of the population (every model answer the judge scored) with its judge
 *     score (a number, or a label turned into one by `values`), and optionally its inclusion probability π (the
 *     probability the labelling plan chose it) and its stratum;
 *   - the labels file: the labelled units, with one human value, or several annotators' values reduced to their
 *     strict majority (a value more than half of the unit's non-missing annotators gave; a split unit is left
 *     out and counted).
 *
 * The estimators are app/stats's (classicalMean, ppiEstimate, stratifiedPpi, activePpi); `auto` picks active
 * when the judge file gives unequal π, stratified when it names strata, and PPI++ otherwise. Every refusal is a
 * CorrectedScoreError naming the file, the row and the column.
 */
import { activePpi, classicalMean, ppiEstimate, stratifiedPpi, type CorrectedResult, type CorrectedUnit } from "~/stats";
import { labelPlan, type LabelPlan, type PlanUnit, type Sampler } from "~/stats/labelPlan";
import type { Interval } from "~/stats/types";
import { CSV_MISSING_TOKENS } from "./judgeAgreementLabels";

export class CorrectedScoreError extends Error {}

export const CORRECTED_ESTIMATORS = ["auto", "classical", "ppi", "ppi++", "stratified", "active"] as const;
export type CorrectedEstimatorChoice = (typeof CORRECTED_ESTIMATORS)[number];

/** A table as app/formats/judgeFiles.server.ts readTable gives it. */
export type RowsTable = { header: string[]; rows: { record: Record<string, unknown>; row: number }[]; format: "csv" | "jsonl" | "json" };

export interface CorrectedScoreOptions {
  /** Column names: unit (both files), score (judge file), label (labels file; or `annotators`). */
  unit?: string;
  score?: string;
  label?: string;
  annotators?: string[];
  /** Label → number ("A=1,tie=0.5,B=0"), for scores and labels that are not numbers. */
  values?: Record<string, number>;
  pi?: string;
  stratum?: string;
  estimator?: CorrectedEstimatorChoice;
  /** 1 − confidence level (default 0.05). */
  alpha?: number;
  /** The values' range (default [0, 1]). */
  range?: Interval;
}

export interface CorrectedScoreReport extends CorrectedResult {
  /** Labelled units left out: split annotators, or no value. */
  excluded: { split: number; missing: number };
}

/** "A=1,tie=0.5,B=0" → {A: 1, tie: 0.5, B: 0}. */
export function parseValueMap(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(",")) {
    const eq = part.lastIndexOf("=");
    const key = part.slice(0, eq).trim();
    const v = Number(part.slice(eq + 1).trim());
    if (eq <= 0 || !key || part.slice(eq + 1).trim() === "" || !Number.isFinite(v))
      throw new CorrectedScoreError(`--values takes LABEL=NUMBER pairs separated by commas, not "${part.trim()}".`);
    if (key in out) throw new CorrectedScoreError(`--values gives ${key} twice.`);
    out[key] = v;
  }
  return out;
}

const isMissing = (v: unknown, format: RowsTable["format"]) =>
  v === undefined || v === null || (format === "csv" && (String(v).trim() === "" || CSV_MISSING_TOKENS.includes(String(v).trim())));

function column(t: RowsTable, name: string, where: string, what: string): string {
  if (t.header.includes(name)) return name;
  const ci = t.header.find((h) => h.toLowerCase() === name.toLowerCase());
  if (ci) return ci;
  throw new CorrectedScoreError(`${where}: no "${name}" column (${what}); the columns are: ${t.header.slice(0, 20).join(", ")}.`);
}

/** A value as a number: a number, a numeric text, or a label of `values`. */
function toNumber(v: unknown, values: Record<string, number> | undefined, where: string, field: string): number {
  if (typeof v === "boolean") return v ? 1 : 0;
  const text = String(v).trim();
  if (values && text in values) return values[text];
  const n = typeof v === "number" ? v : text === "" ? NaN : Number(text);
  if (Number.isFinite(n)) return n;
  const lower = text.toLowerCase();
  if (!values && (lower === "yes" || lower === "true")) return 1;
  if (!values && (lower === "no" || lower === "false")) return 0;
  throw new CorrectedScoreError(
    `${where}, ${field}: "${text.slice(0, 40)}" is not a number${values ? " nor a label of --values" : "; give --values LABEL=NUMBER,… for labels"}.`,
  );
}

export function correctedScoreFromTables(
  judge: RowsTable,
  labels: RowsTable,
  o: CorrectedScoreOptions & { judgeName?: string; labelsName?: string } = {},
): CorrectedScoreReport {
  const jn = o.judgeName ?? "judge file";
  const ln = o.labelsName ?? "labels file";
  const range = o.range ?? [0, 1];
  const alpha = o.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) throw new CorrectedScoreError(`--alpha must be between 0 and 1, not ${alpha}.`);
  const inRange = (v: number, where: string, field: string) => {
    if (v < range[0] || v > range[1])
      throw new CorrectedScoreError(`${where}, ${field}: ${v} is outside the range [${range[0]}, ${range[1]}]; give --range LOW,HIGH.`);
    return v;
  };

  const uj = column(judge, o.unit ?? "unit", jn, "the unit");
  const sj = column(judge, o.score ?? "score", jn, "the judge's score");
  const pj = o.pi ? column(judge, o.pi, jn, "the inclusion probability") : null;
  const hj = o.stratum ? column(judge, o.stratum, jn, "the stratum") : null;
  const units = new Map<string, CorrectedUnit & { row: number }>();
  for (const { record, row } of judge.rows) {
    const where = `${jn}: row ${row}`;
    if (isMissing(record[uj], judge.format)) throw new CorrectedScoreError(`${where}, ${uj}: the unit is missing.`);
    const id = String(record[uj]).trim();
    if (units.has(id))
      throw new CorrectedScoreError(`${where}, ${uj}: unit "${id.slice(0, 60)}" is listed twice (first on row ${units.get(id)!.row}).`);
    if (isMissing(record[sj], judge.format))
      throw new CorrectedScoreError(`${where}, ${sj}: the judge's score is missing; every unit of the population needs one.`);
    const u: CorrectedUnit & { row: number } = { row, f: inRange(toNumber(record[sj], o.values, where, sj), where, sj) };
    if (pj) {
      const pi = isMissing(record[pj], judge.format) ? NaN : Number(record[pj]);
      if (!(pi > 0 && pi <= 1)) throw new CorrectedScoreError(`${where}, ${pj}: the inclusion probability must be a number in (0, 1].`);
      u.pi = pi;
    }
    if (hj) u.stratum = isMissing(record[hj], judge.format) ? "" : String(record[hj]);
    units.set(id, u);
  }

  const ul = column(labels, o.unit ?? "unit", ln, "the unit");
  const cols = o.annotators?.length
    ? o.annotators.map((a) => column(labels, a, ln, "an annotator"))
    : [column(labels, o.label ?? "value", ln, "the human value")];
  const excluded = { split: 0, missing: 0 };
  const seen = new Map<string, number>();
  for (const { record, row } of labels.rows) {
    const where = `${ln}: row ${row}`;
    if (isMissing(record[ul], labels.format)) throw new CorrectedScoreError(`${where}, ${ul}: the unit is missing.`);
    const id = String(record[ul]).trim();
    const u = units.get(id);
    if (!u) throw new CorrectedScoreError(`${where}, ${ul}: unit "${id.slice(0, 60)}" is not in the ${jn} (the population).`);
    if (seen.has(id))
      throw new CorrectedScoreError(`${where}, ${ul}: unit "${id.slice(0, 60)}" is labelled twice (first on row ${seen.get(id)}).`);
    seen.set(id, row);
    const given = cols
      .filter((c) => !isMissing(record[c], labels.format))
      .map((c) => inRange(toNumber(record[c], o.values, where, c), where, c));
    if (given.length === 0) {
      excluded.missing++;
      continue;
    }
    const counts = new Map<number, number>();
    for (const v of given) counts.set(v, (counts.get(v) ?? 0) + 1);
    const top = [...counts.entries()].find(([, c]) => c * 2 > given.length);
    if (!top) {
      excluded.split++;
      continue;
    }
    u.y = top[0];
  }

  const population = [...units.values()].map(({ row: _row, ...u }) => u);
  const unequalPi = pj !== null && new Set(population.map((u) => u.pi)).size > 1;
  let choice = o.estimator ?? "auto";
  const notes: string[] = [];
  if (choice === "auto") {
    choice = unequalPi ? "active" : hj ? "stratified" : "ppi++";
    notes.push(`auto chose ${choice}${unequalPi ? " (the inclusion probabilities differ)" : hj ? " (the units have strata)" : ""}`);
  }
  if ((choice === "ppi" || choice === "ppi++" || choice === "stratified") && unequalPi)
    throw new CorrectedScoreError(
      `--estimator ${choice} assumes equally likely units (within strata); with unequal --pi use active or classical.`,
    );
  if (choice === "active" && !pj) throw new CorrectedScoreError("--estimator active needs --pi, each unit's inclusion probability.");
  if (choice === "stratified" && !hj) throw new CorrectedScoreError("--estimator stratified needs --stratum.");
  const options = { range, level: 1 - alpha };
  let result: CorrectedResult;
  try {
    result =
      choice === "classical"
        ? classicalMean(population, options)
        : choice === "ppi" || choice === "ppi++"
          ? ppiEstimate(population, { ...options, tuned: choice === "ppi++" })
          : choice === "stratified"
            ? stratifiedPpi(population, options)
            : activePpi(population, options);
  } catch (err) {
    throw new CorrectedScoreError((err as Error).message.replace(/^\w+: /, ""));
  }
  if (excluded.split) notes.push(`${excluded.split} labelled unit(s) left out: the annotators split (no strict majority)`);
  if (excluded.missing) notes.push(`${excluded.missing} labelled unit(s) left out: no value`);
  return { ...result, notes: [...notes, ...result.notes], excluded };
}

export const PLAN_SAMPLERS = ["uniform", "stratified", "proportional", "neyman", "active", "auto"] as const;
export type PlanSamplerChoice = (typeof PLAN_SAMPLERS)[number];

export interface PlanFromTables {
  plan: LabelPlan;
  /** The units in the judge file's order, with their π and whether drawn. */
  rows: { unit: string; pi: number; selected: boolean }[];
}

/**
 * `npm run label-plan`: which units of the judge file to label next (app/stats/labelPlan.ts), with the burn-in
 * labels so far from `labels` (optional; the same columns as corrected-score). `stratified` is Neyman allocation
 * when every stratum has 2 burn-in labels, proportional otherwise (and says so).
 */
export function labelPlanFromTables(
  judge: RowsTable,
  labels: RowsTable | null,
  o: CorrectedScoreOptions & {
    judgeName?: string;
    labelsName?: string;
    budget: number;
    sampler: PlanSamplerChoice;
    uncertainty?: string;
    seed: number;
    mix?: number;
  },
): PlanFromTables {
  const jn = o.judgeName ?? "judge file";
  const ln = o.labelsName ?? "labels file";
  const uj = column(judge, o.unit ?? "unit", jn, "the unit");
  const sj = column(judge, o.score ?? "score", jn, "the judge's score");
  const cj = o.uncertainty ? column(judge, o.uncertainty, jn, "the uncertainty score") : null;
  const hj = o.stratum ? column(judge, o.stratum, jn, "the stratum") : null;
  const range = o.range ?? [0, 1];
  const ids: string[] = [];
  const byId = new Map<string, PlanUnit & { row: number }>();
  for (const { record, row } of judge.rows) {
    const where = `${jn}: row ${row}`;
    if (isMissing(record[uj], judge.format)) throw new CorrectedScoreError(`${where}, ${uj}: the unit is missing.`);
    const id = String(record[uj]).trim();
    if (byId.has(id))
      throw new CorrectedScoreError(`${where}, ${uj}: unit "${id.slice(0, 60)}" is listed twice (first on row ${byId.get(id)!.row}).`);
    const u: PlanUnit & { row: number } = { row };
    if (!isMissing(record[sj], judge.format)) u.f = (toNumber(record[sj], o.values, where, sj) - range[0]) / (range[1] - range[0]);
    if (cj) {
      const v = isMissing(record[cj], judge.format) ? NaN : Number(record[cj]);
      if (!(v >= 0) || !Number.isFinite(v)) throw new CorrectedScoreError(`${where}, ${cj}: the uncertainty score must be a number ≥ 0.`);
      u.uncertainty = v;
    }
    if (hj) u.stratum = isMissing(record[hj], judge.format) ? "" : String(record[hj]);
    byId.set(id, u);
    ids.push(id);
  }
  if (labels) {
    const ul = column(labels, o.unit ?? "unit", ln, "the unit");
    const cols = o.annotators?.length
      ? o.annotators.map((a) => column(labels, a, ln, "an annotator"))
      : [column(labels, o.label ?? "value", ln, "the human value")];
    for (const { record, row } of labels.rows) {
      const where = `${ln}: row ${row}`;
      const id = String(record[ul] ?? "").trim();
      const u = byId.get(id);
      if (!u) throw new CorrectedScoreError(`${where}, ${ul}: unit "${id.slice(0, 60)}" is not in the ${jn}.`);
      const given = cols.filter((c) => !isMissing(record[c], labels.format)).map((c) => toNumber(record[c], o.values, where, c));
      const counts = new Map<number, number>();
      for (const v of given) counts.set(v, (counts.get(v) ?? 0) + 1);
      const top = [...counts.entries()].find(([, c]) => c * 2 > given.length);
      if (top) u.y = (top[0] - range[0]) / (range[1] - range[0]);
    }
  }
  const units = ids.map((id) => byId.get(id)!);
  let sampler: Sampler;
  const notes: string[] = [];
  if (o.sampler === "stratified") {
    if (!hj) throw new CorrectedScoreError("--sampler stratified needs --stratum.");
    const perStratum = new Map<string, number>();
    for (const u of units)
      if (u.y !== undefined && u.y !== null) perStratum.set(u.stratum ?? "", (perStratum.get(u.stratum ?? "") ?? 0) + 1);
    const strata = new Set(units.map((u) => u.stratum ?? ""));
    sampler = [...strata].every((h) => (perStratum.get(h) ?? 0) >= 2) ? "neyman" : "proportional";
    notes.push(
      sampler === "neyman"
        ? "stratified: Neyman allocation by the judge's error spread in each stratum's burn-in labels"
        : "stratified: proportional allocation (Neyman needs 2 burn-in labels in every stratum)",
    );
  } else sampler = o.sampler;
  let plan: LabelPlan;
  try {
    plan = labelPlan(units, { budget: o.budget, sampler, seed: o.seed, mix: o.mix });
  } catch (err) {
    throw new CorrectedScoreError((err as Error).message.replace(/^\w+: /, ""));
  }
  plan.notes.unshift(...notes);
  return { plan, rows: ids.map((unit, i) => ({ unit, pi: plan.pi[i], selected: plan.selected[i] })) };
}
