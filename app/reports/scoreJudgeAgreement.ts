/**
 * Score judges against human scores on their own scale (pure; no database, no files): per judge
 * n, scores outside the human scale, Pearson r, Spearman's rho and Kendall's tau-b, and pairwise
 * ordering consistency in its three definitions — ties counted (MT-Bench "w/ tie"), ties excluded
 * (MT-Bench "w/o tie"), humans differing (RAVEL/C3EBench §5.5) — each with its pair count and a
 * seeded percentile bootstrap interval over the groups that form the pairs (instructions,
 * prompts): responses to one instruction share it, and pairs share responses, so neither are
 * independent (Davison & Hinkley 1997, §3.8).
 *
 * The judges page (through app/reports/judges.ts), its CSV, `npm run export -- --what
 * judge-agreement` and `npm run judge-agreement --level interval|ordinal` all call
 * {@link scoreJudgeFigures}, so they give the same figures.
 *
 * References: K. Pearson (1895); C. Spearman (1904); M. G. Kendall (1945) for tau-b;
 * L. Zheng et al. (2023) "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", §4.2;
 * RAVEL/C3EBench §5.5 (pairs of human-scored responses to one instruction).
 */
// Each statistic from its own file (not the ~/stats index): the command line loads only what it uses.
import { clusterBootstrapCIs } from "~/stats/clusterBootstrapCIs";
import { kendallTauB } from "~/stats/kendallTauB";
import { pairwiseOrderingConsistency } from "~/stats/pairwiseOrderingConsistency";
import { pearson } from "~/stats/pearson";
import { spearman } from "~/stats/spearman";
import { honestInterval } from "./honest";
import { JudgeAgreementError, MISSING, type MissingPolicy, type Verdict } from "./judgeAgreementLabels";

export const SCORE_REFERENCES = ["mean", "median", "each"] as const;
/** What a judge's score is compared with: the mean or median of the unit's annotators, or each annotator (pooled). */
export type ScoreReference = (typeof SCORE_REFERENCES)[number];

export function parseScoreReference(raw: string | null | undefined): ScoreReference | null {
  return (SCORE_REFERENCES as readonly string[]).includes(raw ?? "") ? (raw as ScoreReference) : null;
}

/** One compared score: its group (pairs form within a group), the human score, the judge's. */
export interface ScoredPair {
  /** The bootstrap's cluster: the group pairs form in (or the unit, for a unit without one); null = a cluster of its own. */
  cluster: string | null;
  /** Pairs form between records with the same key (the group; under reference "each", group and annotator). */
  pairKey: string | null;
  human: number;
  judge: number;
}

export interface ScoreJudgeRow {
  judge: string;
  /** Compared (human, judge) pairs of scores: units (reference "each": annotator × unit). */
  n: number;
  /** Verdicts that are not a number, on the compared units (left out of n). */
  unparsed: number;
  /** Units with a human score and no verdict from this judge. */
  missing: number;
  /** Compared judge scores outside the human scale's range (kept in every figure). */
  outOfScale: number;
  pearson: number | null;
  pearsonCI: [number, number] | null;
  spearman: number | null;
  spearmanCI: [number, number] | null;
  kendallTauB: number | null;
  kendallTauBCI: [number, number] | null;
  /** Ties counted: all pairs, consistent iff sign(judge diff) = sign(human diff), a tie on both sides consistent (MT-Bench "w/ tie"). */
  consistencyTiesCounted: number | null;
  consistencyTiesCountedCI: [number, number] | null;
  /** Ties excluded: pairs with no tie on either side (MT-Bench "w/o tie"). */
  consistencyTiesExcluded: number | null;
  consistencyTiesExcludedCI: [number, number] | null;
  /** Humans differing: pairs the humans order, a judge tie counted as inconsistent (RAVEL §5.5). */
  consistencyHumanDiffering: number | null;
  consistencyHumanDifferingCI: [number, number] | null;
  /** Pairs of the ties-counted figure (all pairs within a group). */
  pairs: number;
  pairsTiesExcluded: number;
  pairsHumanDiffering: number;
  humanTies: number;
  judgeTies: number;
  /** Groups with at least one pair; clusters = the groups resampled (every group of a compared unit). */
  groupsWithPairs: number;
  clusters: number;
  /** Why an interval is not shown as computed, by its key ("pearsonCI", …): "clipped to …" or "not estimable: …". */
  intervalNotes: Record<string, string>;
}

export interface ScoreJudgeOptions {
  /** Seed of the cluster bootstrap (default 1). */
  seed?: number;
  /** Bootstrap resamples (default 1000; 0 = no intervals). */
  resamples?: number;
  /** The human scale's range [min, max]: judge scores outside it are counted in outOfScale. */
  scale?: [number, number];
}

/** The names of the figures, alike on the judges page, in its CSV and in the command's table. */
export const SCORE_LABELS = {
  n: "n",
  unparsed: "Unparsed",
  outOfScale: "Out of scale",
  pearson: "Pearson r",
  spearman: "Spearman rho",
  kendallTauB: "Kendall tau-b",
  consistencyTiesCounted: "Consistency (ties counted)",
  pairs: "Pairs",
  consistencyTiesExcluded: "Consistency (ties excluded)",
  pairsTiesExcluded: "Pairs (ties excluded)",
  consistencyHumanDiffering: "Consistency (humans differ)",
  pairsHumanDiffering: "Pairs (humans differ)",
} as const;

/** The words of the interval method, for every page, CSV note and the command. */
export const SCORE_INTERVAL_METHOD =
  "95% CIs: seeded percentile bootstrap over groups (the instructions or prompts that form the pairs; a group's responses and pairs resampled together, every statistic recomputed on the resampled groups; without groups, over units)";

/** The three consistency definitions in words, as the page, the CSV note and the command print them. */
export const CONSISTENCY_DEFINITIONS =
  'Pairs of responses in one group (sign of the human difference against the sign of the judge difference): "ties counted" = share of all pairs with equal signs, a tie on both sides consistent (MT-Bench w/ tie); "ties excluded" = the same share over pairs tied on neither side (MT-Bench w/o tie); "humans differ" = share over the pairs the humans order, a judge tie counted as inconsistent (RAVEL §5.5).';

const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);

/**
 * One judge's figures on its compared pairs. `counts` are the unit counts the caller found
 * (unparsed, missing). Intervals: one seeded cluster bootstrap (B resamples over the groups of the
 * records; a record without a group is its own cluster) shared by every statistic.
 */
export function scoreJudgeFigures(
  judge: string,
  records: readonly ScoredPair[],
  counts: { unparsed: number; missing: number },
  options: ScoreJudgeOptions = {},
): ScoreJudgeRow {
  const n = records.length;
  const h = new Float64Array(n);
  const j = new Float64Array(n);
  records.forEach((r, i) => {
    h[i] = r.human;
    j[i] = r.judge;
  });
  let outOfScale = 0;
  if (options.scale) for (const x of j) if (x < options.scale[0] || x > options.scale[1]) outOfScale++;
  const row: ScoreJudgeRow = {
    judge,
    n,
    unparsed: counts.unparsed,
    missing: counts.missing,
    outOfScale,
    pearson: null,
    pearsonCI: null,
    spearman: null,
    spearmanCI: null,
    kendallTauB: null,
    kendallTauBCI: null,
    consistencyTiesCounted: null,
    consistencyTiesCountedCI: null,
    consistencyTiesExcluded: null,
    consistencyTiesExcludedCI: null,
    consistencyHumanDiffering: null,
    consistencyHumanDifferingCI: null,
    pairs: 0,
    pairsTiesExcluded: 0,
    pairsHumanDiffering: 0,
    humanTies: 0,
    judgeTies: 0,
    groupsWithPairs: 0,
    clusters: 0,
    intervalNotes: {},
  };
  if (n === 0) return row;
  // Clusters: the records' groups in order of appearance (a record without a group alone).
  const clusterIndex = new Map<string, number>();
  const clusterOf = new Int32Array(n);
  const members: number[][] = [];
  records.forEach((r, i) => {
    const key = r.cluster === null ? `\u0000${i}` : `c${r.cluster}`;
    let c = clusterIndex.get(key);
    if (c === undefined) {
      c = members.length;
      clusterIndex.set(key, c);
      members.push([]);
    }
    clusterOf[i] = c;
    members[c].push(i);
  });
  const G = members.length;
  row.clusters = G;
  // Consistency per cluster (its pairs are within its pair keys): the counts a resample sums.
  const per = members.map((idx) =>
    pairwiseOrderingConsistency(
      idx.filter((i) => records[i].pairKey !== null).map((i) => ({ itemId: records[i].pairKey!, human: h[i], judge: j[i] })),
    ),
  );
  const sum = (
    k:
      | "pairs"
      | "consistentWithTies"
      | "pairsWithoutTies"
      | "consistentWithoutTies"
      | "pairsHumanDiffering"
      | "consistentHumanDiffering"
      | "humanTies"
      | "judgeTies",
  ) => per.reduce((s, p) => s + p[k], 0);
  row.pairs = sum("pairs");
  row.pairsTiesExcluded = sum("pairsWithoutTies");
  row.pairsHumanDiffering = sum("pairsHumanDiffering");
  row.humanTies = sum("humanTies");
  row.judgeTies = sum("judgeTies");
  row.groupsWithPairs = per.filter((p) => p.pairs > 0).length;
  const ratio = (a: number, b: number) => (b > 0 ? a / b : null);
  row.consistencyTiesCounted = ratio(sum("consistentWithTies"), row.pairs);
  row.consistencyTiesExcluded = ratio(sum("consistentWithoutTies"), row.pairsTiesExcluded);
  row.consistencyHumanDiffering = ratio(sum("consistentHumanDiffering"), row.pairsHumanDiffering);
  if (n >= 3) {
    row.pearson = finiteOrNull(pearson(j, h).r);
    row.spearman = finiteOrNull(spearman(j, h).rho);
    row.kendallTauB = finiteOrNull(kendallTauB(j, h).tau);
  }
  const B = options.resamples ?? 1000;
  if (B > 0 && G > 1) {
    // The records of a resample: each drawn cluster's records, as many times as it was drawn.
    const xs = new Float64Array(n * 2);
    const ys = new Float64Array(n * 2);
    let bx = xs;
    let by = ys;
    let len = 0;
    const build = (w: Int32Array) => {
      len = 0;
      for (let c = 0; c < G; c++)
        for (let t = 0; t < w[c]; t++)
          for (const i of members[c]) {
            if (len === bx.length) {
              const nx = new Float64Array(bx.length * 2);
              nx.set(bx);
              bx = nx;
              const ny = new Float64Array(by.length * 2);
              ny.set(by);
              by = ny;
            }
            bx[len] = j[i];
            by[len++] = h[i];
          }
      return len;
    };
    const ratioOf = (num: (p: (typeof per)[number]) => number, den: (p: (typeof per)[number]) => number) => (w: Int32Array) => {
      let a = 0;
      let b = 0;
      for (let c = 0; c < G; c++) {
        if (w[c] === 0) continue;
        a += w[c] * num(per[c]);
        b += w[c] * den(per[c]);
      }
      return b > 0 ? a / b : NaN;
    };
    const correlations = row.pearson !== null || row.spearman !== null || row.kendallTauB !== null;
    const statistics: ((w: Int32Array) => number)[] = [
      ratioOf(
        (p) => p.consistentWithTies,
        (p) => p.pairs,
      ),
      ratioOf(
        (p) => p.consistentWithoutTies,
        (p) => p.pairsWithoutTies,
      ),
      ratioOf(
        (p) => p.consistentHumanDiffering,
        (p) => p.pairsHumanDiffering,
      ),
    ];
    if (correlations)
      statistics.push(
        (w) => {
          const m = build(w);
          return m >= 3 ? pearson(bx.subarray(0, m), by.subarray(0, m)).r : NaN;
        },
        () => (len >= 3 ? spearman(bx.subarray(0, len), by.subarray(0, len)).rho : NaN),
        () => (len >= 3 ? kendallTauB(bx.subarray(0, len), by.subarray(0, len)).tau : NaN),
      );
    const [c1, c2, c3, pr, sp, kt] = clusterBootstrapCIs({ clusters: G, resamples: B, seed: options.seed ?? 1, statistics });
    const set = (
      key:
        | "consistencyTiesCountedCI"
        | "consistencyTiesExcludedCI"
        | "consistencyHumanDifferingCI"
        | "pearsonCI"
        | "spearmanCI"
        | "kendallTauBCI",
      value: number | null,
      ci: readonly number[] | undefined,
      range: [number, number],
    ) => {
      if (value === null || !ci) return;
      const hi = honestInterval(
        value,
        ci,
        range,
        "every bootstrap resample gives the same value (e.g. one group, or a judge that orders every pair as the humans do)",
      );
      row[key] = hi.ci;
      if (hi.note) row.intervalNotes[key] = hi.note;
    };
    set("consistencyTiesCountedCI", row.consistencyTiesCounted, c1.ci, [0, 1]);
    set("consistencyTiesExcludedCI", row.consistencyTiesExcluded, c2.ci, [0, 1]);
    set("consistencyHumanDifferingCI", row.consistencyHumanDiffering, c3.ci, [0, 1]);
    if (correlations) {
      set("pearsonCI", row.pearson, pr.ci, [-1, 1]);
      set("spearmanCI", row.spearman, sp.ci, [-1, 1]);
      set("kendallTauBCI", row.kendallTauB, kt.ci, [-1, 1]);
    }
  } else if (B > 0) {
    for (const [key, v] of [
      ["pearsonCI", row.pearson],
      ["spearmanCI", row.spearman],
      ["kendallTauBCI", row.kendallTauB],
      ["consistencyTiesCountedCI", row.consistencyTiesCounted],
      ["consistencyTiesExcludedCI", row.consistencyTiesExcluded],
      ["consistencyHumanDifferingCI", row.consistencyHumanDiffering],
    ] as const)
      if (v !== null) row.intervalNotes[key] = "not estimable: one group only (the bootstrap resamples groups)";
  }
  return row;
}

export interface ScoreJudgeInput {
  /** Annotator names, in column order. */
  annotators: string[];
  /** Per unit, per annotator: the score, or null (not scored). */
  scores: (number | null)[][];
  /** Per unit: its group (the instruction or prompt pairs form within), or null. Absent: no pairs. */
  groups?: (string | null)[];
  /** Per judge, per unit: the score; null = a verdict that is not a number; undefined = none. */
  judges: { name: string; scores: (number | null | undefined)[] }[];
  /** The human scale's range; default: the smallest and largest human score. */
  scale?: [number, number];
}

export interface ScoreJudgeResult {
  reference: ScoreReference;
  /** Units with at least one human score. */
  units: number;
  /** Groups among them (units with a group). */
  groups: number;
  scale: [number, number] | null;
  judges: ScoreJudgeRow[];
  intervalMethod: string;
  consistencyDefinitions: string;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Every judge against the human scores: the reference is the mean or the median of the unit's
 * annotators (one annotator: that annotator), or each annotator (every annotator × unit pair,
 * pooled; pairs then form between two units of one group scored by the same annotator).
 */
export function scoreJudgeAgreement(
  input: ScoreJudgeInput,
  options: ScoreJudgeOptions & { reference?: ScoreReference } = {},
): ScoreJudgeResult {
  const reference = options.reference ?? "mean";
  const U = input.scores.length;
  let lo = Infinity;
  let hi = -Infinity;
  let units = 0;
  const groupSet = new Set<string>();
  for (let u = 0; u < U; u++) {
    const row = input.scores[u];
    let any = false;
    for (const x of row)
      if (x !== null) {
        any = true;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
    if (any) {
      units++;
      const g = input.groups?.[u];
      if (g != null) groupSet.add(g);
    }
  }
  const scale = input.scale ?? (Number.isFinite(lo) ? ([lo, hi] as [number, number]) : null);
  const judges = [...input.judges].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rows = judges.map((jd) => {
    const records: ScoredPair[] = [];
    let unparsed = 0;
    let missing = 0;
    for (let u = 0; u < U; u++) {
      const row = input.scores[u];
      const given = row.filter((x): x is number => x !== null);
      if (given.length === 0) continue;
      const v = jd.scores[u];
      if (v === undefined) {
        missing++;
        continue;
      }
      if (v === null) {
        unparsed++;
        continue;
      }
      const group = input.groups?.[u] ?? null;
      // A unit's records (its annotators, under "each") resample together: its group's, or its own.
      const cluster = group === null ? `\u0001unit ${u}` : `group ${group}`;
      if (reference === "each") {
        row.forEach((x, a) => {
          if (x !== null) records.push({ cluster, pairKey: group === null ? null : `${group}\u0000${a}`, human: x, judge: v });
        });
      } else {
        const human = reference === "mean" ? given.reduce((s, x) => s + x, 0) / given.length : median(given);
        records.push({ cluster, pairKey: group, human, judge: v });
      }
    }
    return scoreJudgeFigures(jd.name, records, { unparsed, missing }, { ...options, scale: scale ?? undefined });
  });
  return {
    reference,
    units,
    groups: groupSet.size,
    scale,
    judges: rows,
    intervalMethod: SCORE_INTERVAL_METHOD,
    consistencyDefinitions: CONSISTENCY_DEFINITIONS,
  };
}

/**
 * The score input from what the judge files give (labels and verdicts as text, the groups): a
 * label must be a number (else JudgeAgreementError naming it); a verdict that is a number is a
 * score, whatever its value; one that is not (an empty answer, "Unsure") is unparsed; one written
 * as missing is no verdict (missing policy "missing") or unparsed ("unparsed").
 */
export function scoreInputFromText(
  input: { annotators: string[]; labels: (string | null)[][]; judges: { name: string; verdicts: Verdict[] }[] },
  units: readonly string[],
  groups: (string | null)[] | undefined,
  missing: MissingPolicy,
): ScoreJudgeInput {
  const scores = input.labels.map((row, u) =>
    row.map((l, a) => {
      if (l === null) return null;
      const x = Number(l);
      if (l.trim() === "" || !Number.isFinite(x))
        throw new JudgeAgreementError(
          `LABELS: unit "${units[u]}", annotator "${input.annotators[a]}": "${l.length > 40 ? `${l.slice(0, 40)}…` : l}" is not a number; --level interval and ordinal compare numeric scores (use --level nominal for categories).`,
        );
      return x;
    }),
  );
  const judges = input.judges.map((j) => ({
    name: j.name,
    scores: j.verdicts.map((v): number | null | undefined => {
      if (v === undefined) return undefined;
      if (v === MISSING) return missing === "missing" ? undefined : null;
      if (v === null || v.trim() === "") return null;
      const x = Number(v);
      return Number.isFinite(x) ? x : null;
    }),
  }));
  return { annotators: input.annotators, scores, groups, judges };
}
