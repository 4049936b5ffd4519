/** Breakdowns of agreement by dimension (domain, subject, task type, model, turn). */
import { majority } from "../finalLabels";
import type { Estimate, FinalLabels, TaskData } from "../types";
import { finite, meanEstimate, proportionEstimate, proportionOf, scaleMeanEstimate, SMALL_N } from "./intervals";
import { countedMatrix, perUnitAgreement, reliabilityMatrix } from "./matrix";

export const DIMENSIONS = ["domain", "subject", "taskType", "model", "turn"] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export const DIMENSION_LABELS: Record<Dimension, string> = {
  domain: "Domain",
  subject: "Subject",
  taskType: "Task type",
  model: "Model",
  turn: "Turn",
};

export interface BreakdownRow {
  dimension: Dimension;
  value: string;
  n: number;
  /** Binary: share of the positive label; numeric: mean final score; nominal: share of the modal label. */
  summary: Estimate;
  agreement: Estimate;
  small: boolean;
}

export function breakdowns(data: TaskData, final: FinalLabels): BreakdownRow[] {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const m = reliabilityMatrix(data, numeric);
  // Per-subject agreement (NaN: fewer than two ratings), indexed by subject.
  const rowAgreement = new Float64Array(data.subjects.length).fill(NaN);
  const perRow = perUnitAgreement(countedMatrix(m));
  for (let i = 0; i < m.rows.length; i++) if (finite(perRow[i])) rowAgreement[m.subjectOf[i]] = perRow[i];
  const out: BreakdownRow[] = [];
  const finalOf = final.values;
  // Means of final scores stay on the task's scale (e.g. 1–5).
  const scale = numeric ? data.categories.map(Number).filter(finite) : [];
  const scaleLo = scale.length ? Math.min(...scale) : NaN;
  const scaleHi = scale.length ? Math.max(...scale) : NaN;
  for (const dim of DIMENSIONS) {
    // Grouped by the raw value (strings are shared by every subject of an item), named at the end.
    const groups = new Map<string | number, number[]>();
    for (let i = 0; i < data.subjects.length; i++) {
      const v = data.subjects[i][dim];
      if (v == null || finalOf[i] == null) continue;
      const members = groups.get(v);
      if (members) members.push(i);
      else groups.set(v, [i]);
    }
    if (groups.size === 0) continue;
    for (const [value, members] of [...groups].map(([k, v]) => [String(k), v] as const).sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
      let summary: Estimate;
      if (numeric) {
        const xs = members.map((i) => Number(finalOf[i]));
        // Final scores can be averages (e.g. 3.5) between the scale's points: the scale's ends still bound them.
        let lo = scaleLo;
        let hi = scaleHi;
        for (const x of xs) {
          lo = Math.min(lo, x);
          hi = Math.max(hi, x);
        }
        summary = finite(scaleLo) ? scaleMeanEstimate(xs, lo, hi, data.task.seed) : meanEstimate(xs);
      } else if (data.positive !== null) {
        let hits = 0;
        for (const i of members) if (finalOf[i] === data.positive) hits++;
        summary = proportionOf(hits, members.length);
      } else {
        const finals = members.map((i) => finalOf[i]!);
        const target = majority(finals) ?? finals[0];
        summary = proportionEstimate(finals.map((f) => (f === target ? 1 : 0)));
      }
      let agSum = 0;
      let agN = 0;
      for (const i of members) {
        if (Number.isNaN(rowAgreement[i])) continue;
        agSum += rowAgreement[i];
        agN++;
      }
      out.push({ dimension: dim, value, n: members.length, summary, agreement: proportionOf(agSum, agN), small: members.length < SMALL_N });
    }
  }
  return out;
}
