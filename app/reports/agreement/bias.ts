/** Annotator bias checks: position and length bias per annotator (Spearman rho or a binomial z-test), Holm-adjusted over the table. */
import { holmAdjust, type Label, spearman } from "~/stats";
import { findKind } from "~/task-kinds/registry";
import { ratingsBySubject } from "../finalLabels";
import { normalTwoSidedP } from "../pvalue";
import type { TaskData } from "../types";
import { finite } from "./intervals";

export interface BiasRow {
  annotator: number;
  name: string;
  check: "position" | "length";
  description: string;
  n: number;
  /** The effect: Spearman rho, or the observed share of picks. */
  effect: number;
  /** The expected value under no bias (0 for rho, 1/m for picks). */
  expected: number;
  statistic: number;
  statisticName: string;
  p: number;
  /** p adjusted by Holm's step-down method over every check in the table (the family of tests). */
  pHolm: number;
}

/**
 * Position and length bias per annotator.
 * - Scores (writing quality, numeric labels with shown order): Spearman rho
 *   between the shown position (or response length) and the annotator's score
 *   minus the mean of the other annotators' scores for the same response, so
 *   response quality cancels out; z = rho·√(n − 1), two-sided normal p.
 * - Best-of-N picks: share of picks at the first shown position (and of picks
 *   that were the longest response) against 1/m; binomial z-test.
 * - Yes/No on one response: Spearman rho between response length and Yes (1/0)
 *   minus the others' mean.
 */
export function biasChecks(data: TaskData): BiasRow[] {
  // One family of tests per task: every annotator × check. Holm's adjustment keeps the
  // chance of any false alarm at the nominal level however many annotators there are.
  const rows = rawBiasChecks(data);
  const adjusted = holmAdjust(rows.map((r) => (Number.isFinite(r.p) ? r.p : NaN)));
  return rows.map((r, i) => ({ ...r, pHolm: adjusted[i] }));
}

function rawBiasChecks(data: TaskData): Omit<BiasRow, "pHolm">[] {
  const names = new Map(data.annotators.map((a) => [a.id, a.name]));
  const out: Omit<BiasRow, "pHolm">[] = [];
  const zRho = (rho: number, n: number) => rho * Math.sqrt(n - 1);
  // Kinds that pick one of the shown responses (best-of-N): picks by position and by length.
  if (findKind(data.task.kind)?.coding.pick) {
    const an = data.annotations;
    for (const a of data.annotators) {
      // This annotator's picks with a known shown order (ties and unknown orders are left out).
      const mine: number[] = [];
      for (let i = 0; i < an.length; i++) if (an.annotator[i] === a.id && an.pickPosition[i] >= 0 && an.shownCount[i] > 0) mine.push(i);
      for (const check of ["position", "length"] as const) {
        const rows = check === "position" ? mine : mine.filter((i) => an.pickedLongest[i] >= 0);
        const n = rows.length;
        if (n < 3) continue;
        const hits = rows.filter((i) => (check === "position" ? an.pickPosition[i] === 0 : an.pickedLongest[i] === 1)).length;
        const p0 = rows.reduce((s, i) => s + 1 / an.shownCount[i], 0) / n;
        const z = (hits - n * p0) / Math.sqrt(n * p0 * (1 - p0));
        out.push({
          annotator: a.id,
          name: names.get(a.id)!,
          check,
          description: check === "position" ? "Picks the first shown response" : "Picks the longest response",
          n,
          effect: hits / n,
          expected: p0,
          statistic: z,
          statisticName: "z (binomial)",
          p: normalTwoSidedP(z),
        });
      }
    }
    return out;
  }
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const binary = data.labelKind === "binary";
  if (!numeric && !binary) return out;
  const { start, idx } = ratingsBySubject(data);
  const toNum = (v: Label) => (binary ? (v === data.positive ? 1 : 0) : Number(v));
  const { annotator, value, position } = data.ratings;
  const rel = new Map<number, { pos: number[]; posY: number[]; len: number[]; lenY: number[] }>();
  for (const a of data.annotators) rel.set(a.id, { pos: [], posY: [], len: [], lenY: [] });
  for (let s = 0; s < data.subjects.length; s++) {
    const n = start[s + 1] - start[s];
    if (n < 2) continue;
    let total = 0;
    for (let k = start[s]; k < start[s + 1]; k++) total += toNum(value[idx[k]]);
    for (let k = start[s]; k < start[s + 1]; k++) {
      const i = idx[k];
      const own = toNum(value[i]);
      const centred = own - (total - own) / (n - 1);
      const e = rel.get(annotator[i])!;
      if (position[i] >= 0) {
        e.pos.push(position[i]);
        e.posY.push(centred);
      }
      const len = data.subjects[s].length;
      if (len != null) {
        e.len.push(len);
        e.lenY.push(centred);
      }
    }
  }
  for (const a of data.annotators) {
    const e = rel.get(a.id)!;
    for (const check of ["position", "length"] as const) {
      const x = check === "position" ? e.pos : e.len;
      const y = check === "position" ? e.posY : e.lenY;
      if (x.length < 3) continue;
      const rho = spearman(x, y).rho;
      if (!finite(rho)) continue;
      const z = zRho(rho, x.length);
      out.push({
        annotator: a.id,
        name: names.get(a.id)!,
        check,
        description:
          check === "position"
            ? "Scores later-shown responses higher (rho > 0) or earlier ones (rho < 0), relative to the other annotators"
            : `${binary ? "Says Yes more" : "Scores higher"} for longer responses (rho > 0), relative to the other annotators`,
        n: x.length,
        effect: rho,
        expected: 0,
        statistic: z,
        statisticName: "z = rho·√(n−1)",
        p: normalTwoSidedP(z),
      });
    }
  }
  return out;
}
