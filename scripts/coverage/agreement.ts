/**
 * Coverage of the agreement intervals (issue 36, item 8): simulated designs A–D, the
 * true value of every statistic from the exact distribution of rating patterns, and
 * for each statistic × interval method the share of replicates whose 95% interval
 * holds the true value, the median width and the misses on each side.
 *
 * Designs (the rater model: a unit's true category t is drawn from the prevalences;
 * each rater reports it correctly with their accuracy, else one of the other
 * categories uniformly — D: a true 1–5 score plus the rater's normal noise, rounded
 * and kept on the scale):
 *   A  2 raters, binary, prevalence 0.90, accuracies 0.92 / 0.85, n = 50;
 *   B  3 raters, 3 categories with prevalences 0.6 / 0.3 / 0.1, accuracy 0.8 each, n = 40;
 *   C  4 raters, binary, prevalence 0.93, accuracies 0.95 / 0.92 / 0.90 / 0.85, n = 60;
 *   D  2 raters, 1–5 scores (interval level), true score prevalences 0.10 / 0.20 / 0.35 /
 *      0.25 / 0.10, rater noise N(0, 0.7²) and N(0.3, 0.9²) (the second rater lenient), n = 30.
 * Every pattern of ratings has an exact probability (enumerated: q^raters patterns),
 * so the true value of a statistic is the statistic of those probabilities (its
 * population value: the limit of the estimate as n grows), and a replicate is a
 * multinomial draw of n units over the patterns.
 *
 * Methods: the large-sample interval the command line and the report pages give
 * above SMALL_SAMPLE_UNITS (value ± 1.96·SE with the analytic SE; Wilson for percent
 * agreement and PABAK of two raters; Fisher's z for Pearson; the percentile
 * bootstrap for statistics without an SE), value ± t(n − 1)·SE, Fisher's z of the
 * coefficient with the delta-method SE (tanh(atanh κ ± 1.96·SE/(1 − κ²))), the
 * percentile bootstrap, the BCa bootstrap at 0.95 and at Hesterberg's expanded level
 * (app/stats expandedLevel), all with the production B (2,000 resamples) on the same
 * resamples, the bootstrap-t with the analytic SE (only on request: it computes an SE
 * in every resample), and the default — what app/stats agreementInterval picks for
 * that size, the rule both the command line and the pages call (given this replicate's
 * bootstraps). Intervals are clipped to the statistic's range as the reports clip them;
 * a replicate without an interval (undefined, zero width) counts as a miss.
 *
 * The statistics are computed from the units per pattern (app/stats patternStatistics,
 * pooledKappa, cohenKappaFromTable, the *SE functions), as the command line computes
 * them; the report page computes the same figures from item-cluster tables, and
 * tests/integration/agreement-default-intervals.test.ts checks that both give the
 * same default interval for the same units and seed.
 */
import {
  AGREEMENT_RESAMPLES,
  agreementInterval,
  cohenKappaFromTable,
  countsBootstrapCIs,
  expandedLevel,
  fleissKappaSE,
  gwetSE,
  type Interval,
  kendallTauBFromTable,
  krippendorffAlphaSE,
  linearizedSE,
  multinomialSample,
  normalCDF,
  patternStatistics,
  pearsonFromTable,
  pooledKappa,
  type RatingPatterns,
  SMALL_SAMPLE_UNITS,
  seededRandom,
  spearmanFromTable,
  studentTQuantile,
  wilsonCI,
} from "../../app/stats/index.js";

type Label = string | number;

export interface CoverageDesign {
  key: string;
  title: string;
  raters: number;
  categories: Label[];
  level: "nominal" | "interval";
  n: number;
  /** Prevalence of each true category. */
  prior: number[];
  /** P(rater g reports category k | true category t). */
  response: (g: number, t: number, k: number) => number;
}

const nominal = (accuracy: number[], q: number) => (g: number, t: number, k: number) =>
  k === t ? accuracy[g] : (1 - accuracy[g]) / (q - 1);

/** A true score t + 1 on 1..5 plus N(bias, sd²) noise, rounded to the nearest score and kept on the scale. */
const scores = (bias: number[], sd: number[]) => (g: number, t: number, k: number) => {
  const x = t + 1 + bias[g];
  const upper = k === 4 ? 1 : normalCDF((k + 1.5 - x) / sd[g]);
  const lower = k === 0 ? 0 : normalCDF((k + 0.5 - x) / sd[g]);
  return upper - lower;
};

export const DESIGNS: CoverageDesign[] = [
  {
    key: "A",
    title: "2 raters, binary, prevalence 0.90, accuracies 0.92 / 0.85",
    raters: 2,
    categories: ["no", "yes"],
    level: "nominal",
    n: 50,
    prior: [0.1, 0.9],
    response: nominal([0.92, 0.85], 2),
  },
  {
    key: "B",
    title: "3 raters, 3 categories (prevalences 0.6 / 0.3 / 0.1), accuracy 0.8",
    raters: 3,
    categories: ["a", "b", "c"],
    level: "nominal",
    n: 40,
    prior: [0.6, 0.3, 0.1],
    response: nominal([0.8, 0.8, 0.8], 3),
  },
  {
    key: "C",
    title: "4 raters, binary, prevalence 0.93, accuracies 0.95 / 0.92 / 0.90 / 0.85",
    raters: 4,
    categories: ["no", "yes"],
    level: "nominal",
    n: 60,
    prior: [0.07, 0.93],
    response: nominal([0.95, 0.92, 0.9, 0.85], 2),
  },
  {
    key: "D",
    title: "2 raters, 1–5 scores (interval level), noise N(0, 0.7²) and N(0.3, 0.9²)",
    raters: 2,
    categories: [1, 2, 3, 4, 5],
    level: "interval",
    n: 30,
    prior: [0.1, 0.2, 0.35, 0.25, 0.1],
    response: scores([0, 0.3], [0.7, 0.9]),
  },
];

/** Every pattern of ratings (q^raters of them, codes in rater order) with its exact probability. */
export function designPatterns(d: CoverageDesign): { patterns: RatingPatterns; probs: Float64Array } {
  const q = d.categories.length;
  const R = d.raters;
  const P = q ** R;
  const codes = new Int32Array(P * R);
  const probs = new Float64Array(P);
  for (let p = 0; p < P; p++) {
    let x = p;
    for (let g = R - 1; g >= 0; g--) {
      codes[p * R + g] = x % q;
      x = Math.floor(x / q);
    }
    for (let t = 0; t < q; t++) {
      let pr = d.prior[t];
      for (let g = 0; g < R; g++) pr *= d.response(g, t, codes[p * R + g]);
      probs[p] += pr;
    }
  }
  return { patterns: { raters: R, q, categories: d.categories, codes, counts: probs }, probs };
}

/** A statistic of units per pattern, with its large-sample interval as the command line and the pages compute it. */
interface CoverageStatistic {
  key: string;
  value: (w: Float64Array) => number;
  /** The analytic SE interval (value ± 1.96·SE) — the statistics the default rule can replace by BCa. */
  analytic?: (w: Float64Array) => { se: number; ci: Interval };
  /** A large-sample interval that stays the default at every size (Wilson, Fisher's z). */
  fixed?: { name: string; ci: (w: Float64Array) => Interval };
  range: Interval;
}

const Z = 1.959963984540054;

/** The statistics `npm run agreement` and the inter-annotator report give for the design's data. */
export function designStatistics(d: CoverageDesign, patterns: RatingPatterns): CoverageStatistic[] {
  const ps = patternStatistics(patterns);
  const q = patterns.q;
  const two = d.raters === 2;
  const uc = ps.unitCounts;
  const out: CoverageStatistic[] = [];
  const pa = new Float64Array(patterns.counts.length);
  for (let p = 0; p < pa.length; p++) {
    const r = uc.ratingsPerUnit[p];
    let s = 0;
    for (let k = 0; k < q; k++) s += uc.counts[p * q + k] * (uc.counts[p * q + k] - 1);
    pa[p] = r >= 2 ? s / (r * (r - 1)) : 0;
  }
  const wald = (value: number, se: number) => ({ se, ci: [value - Z * se, value + Z * se] as Interval });
  if (two)
    out.push({
      key: "percentAgreement",
      value: (w) => ps.percentAgreement(w),
      fixed: {
        name: "Wilson",
        ci: (w) => {
          const n2 = ps.pairable(w);
          return wilsonCI(Math.round(ps.percentAgreement(w) * n2), n2);
        },
      },
      range: [0, 1],
    });
  else
    out.push({
      key: "percentAgreement",
      value: (w) => ps.percentAgreement(w),
      analytic: (w) => {
        const v = ps.percentAgreement(w);
        return wald(v, linearizedSE(pa, v, { weights: w }));
      },
      range: [0, 1],
    });
  if (two) {
    const weights = d.level === "nominal" ? (["none"] as const) : (["none", "linear", "quadratic"] as const);
    for (const wt of weights)
      out.push({
        key: wt === "none" ? "cohenKappa" : wt === "linear" ? "cohenKappaLinear" : "cohenKappaQuadratic",
        value: (w) => cohenKappaFromTable({ counts: ps.pairTable(w), q }, { weights: wt }).kappa,
        analytic: (w) => {
          const k = cohenKappaFromTable({ counts: ps.pairTable(w), q }, { weights: wt });
          return { se: k.se, ci: k.ci };
        },
        range: [-1, 1],
      });
  } else
    out.push({
      key: "pooledKappa",
      value: (w) => pooledKappa(patterns, w).kappa,
      analytic: (w) => {
        const k = pooledKappa(patterns, w);
        return { se: k.se, ci: k.ci };
      },
      range: [-1, 1],
    });
  out.push({
    key: "fleissKappa",
    value: (w) => ps.fleissKappa(w),
    analytic: (w) => {
      const r = fleissKappaSE(uc, { unitWeights: w });
      return { se: r.se, ci: r.ci };
    },
    range: [-1, 1],
  });
  const alphaWeights = d.level === "nominal" ? "none" : "quadratic";
  out.push({
    key: d.level === "nominal" ? "krippendorffAlpha" : "krippendorffAlphaInterval",
    value: (w) => ps.krippendorffAlpha(w, d.level),
    analytic: (w) => wald(ps.krippendorffAlpha(w, d.level), krippendorffAlphaSE(uc, { unitWeights: w, weights: alphaWeights }).se),
    range: [-1, 1],
  });
  out.push({
    key: "gwetAC1",
    value: (w) => ps.gwetAC1(w),
    analytic: (w) => {
      const r = gwetSE(uc, { unitWeights: w });
      return { se: r.se, ci: r.ci };
    },
    range: [-1, 1],
  });
  if (two && q === 2)
    out.push({
      key: "pabak",
      value: (w) => 2 * ps.percentAgreement(w) - 1,
      fixed: {
        name: "2·Wilson − 1",
        ci: (w) => {
          const n2 = ps.pairable(w);
          const c = wilsonCI(Math.round(ps.percentAgreement(w) * n2), n2);
          return [2 * c[0] - 1, 2 * c[1] - 1];
        },
      },
      range: [-1, 1],
    });
  if (d.level !== "nominal") {
    const values = patterns.categories as number[];
    // The report pages also show ordinal alpha for scores (a bootstrap only).
    out.push({ key: "krippendorffAlphaOrdinal", value: (w) => ps.krippendorffAlpha(w, "ordinal"), range: [-1, 1] });
    out.push({
      key: "pearson",
      value: (w) => pearsonFromTable({ counts: ps.pairTable(w), q }, values).r,
      fixed: { name: "Fisher z", ci: (w) => pearsonFromTable({ counts: ps.pairTable(w), q }, values).ci },
      range: [-1, 1],
    });
    out.push({ key: "spearman", value: (w) => spearmanFromTable({ counts: ps.pairTable(w), q }).rho, range: [-1, 1] });
    out.push({ key: "kendallTauB", value: (w) => kendallTauBFromTable({ counts: ps.pairTable(w), q }).tau, range: [-1, 1] });
  }
  return out;
}

export const METHODS = ["large-sample", "wald-t", "fisher-z", "percentile", "bca", "bca-expanded", "boot-t", "default"] as const;
export type CoverageMethod = (typeof METHODS)[number];

export interface CoverageRow {
  design: string;
  n: number;
  statistic: string;
  truth: number;
  method: CoverageMethod;
  /** What the method is for this statistic (the default: which interval was picked). */
  label: string;
  replicates: number;
  covered: number;
  /** Replicates whose interval lies above the true value / below it; without an interval. */
  above: number;
  below: number;
  none: number;
  medianWidth: number;
}

interface Tally {
  covered: number;
  above: number;
  below: number;
  none: number;
  widths: number[];
  labels: Set<string>;
}

/**
 * Coverage of every statistic × method in one design at `n` units, `replicates`
 * replicates, bootstraps of `resamples` (the production B by default).
 */
export function designCoverage(
  d: CoverageDesign,
  opts: { n?: number; replicates: number; seed: number; resamples?: number; methods?: readonly CoverageMethod[] },
): CoverageRow[] {
  const n = opts.n ?? d.n;
  const methods = new Set(opts.methods ?? METHODS);
  const B = opts.resamples ?? AGREEMENT_RESAMPLES;
  const { patterns, probs } = designPatterns(d);
  const stats = designStatistics(d, patterns);
  // The population value: the statistic of the pattern probabilities (scaled so that finite-n
  // corrections such as alpha's (n − 1)/n vanish).
  const population = Float64Array.from(probs, (p) => p * 1e9);
  const truth = stats.map((s) => s.value(population));
  const tallies = stats.map(() => new Map<CoverageMethod, Tally>());
  const random = seededRandom(opts.seed);
  const w = new Float64Array(probs.length);
  const ps = patternStatistics(patterns);
  // The 95% bootstraps (BCa, and the percentile interval of the same resamples): for those methods, the
  // large-sample interval of a statistic without an SE, and the default from SMALL_SAMPLE_UNITS up.
  const bootOnly = stats.some((s) => !s.analytic && !s.fixed);
  const needBoot =
    methods.has("percentile") ||
    methods.has("bca") ||
    (methods.has("large-sample") && bootOnly) ||
    (methods.has("default") && n >= SMALL_SAMPLE_UNITS);
  for (let rep = 0; rep < opts.replicates; rep++) {
    multinomialSample(n, probs, random, w);
    const bootSeed = Math.floor(random() * 2 ** 32);
    const units = ps.pairable(w);
    const boots = needBoot
      ? countsBootstrapCIs({ counts: w, statistics: stats.map((s) => s.value), seed: bootSeed, resamples: B, method: "bca" })
      : null;
    // Hesterberg's (2015) expansion: the BCa limits at the level whose normal quantile is √(n/(n − 1))·t(n − 1).
    const level = units >= 2 ? expandedLevel(units) : NaN;
    const expanded =
      methods.has("bca-expanded") || (methods.has("default") && n < SMALL_SAMPLE_UNITS)
        ? countsBootstrapCIs({ counts: w, statistics: stats.map((s) => s.value), seed: bootSeed, resamples: B, method: "bca", level })
        : null;
    const values = stats.map((s) => s.value(w));
    const studentized = methods.has("boot-t")
      ? countsBootstrapCIs({
          counts: w,
          statistics: stats.map((s, i) => (x: Float64Array) => (s.analytic ? (s.value(x) - values[i]) / s.analytic(x).se : NaN)),
          seed: bootSeed,
          resamples: B,
        })
      : null;
    stats.forEach((s, i) => {
      const t = tallies[i];
      const record = (m: CoverageMethod, label: string, ci: Interval | null) => {
        if (!methods.has(m)) return;
        let x = t.get(m);
        if (!x) t.set(m, (x = { covered: 0, above: 0, below: 0, none: 0, widths: [], labels: new Set() }));
        x.labels.add(label);
        // As the reports show it: clipped to the range; no interval when undefined or of zero width.
        const lo = ci ? Math.max(s.range[0], ci[0]) : NaN;
        const hi = ci ? Math.min(s.range[1], ci[1]) : NaN;
        if (!(hi - lo > 1e-9)) {
          x.none++;
          return;
        }
        x.widths.push(hi - lo);
        if (truth[i] < lo) x.above++;
        else if (truth[i] > hi) x.below++;
        else x.covered++;
      };
      const v = s.value(w);
      if (!Number.isFinite(v)) {
        for (const m of METHODS) record(m, "undefined", null);
        return;
      }
      const a = s.analytic?.(w) ?? null;
      const boot = boots ? boots[i] : null;
      const percentile = boot ? { ...boot, ci: boot.percentileCI, method: "percentile" as const } : null;
      if (s.fixed) record("large-sample", s.fixed.name, s.fixed.ci(w));
      else if (a) record("large-sample", "value ± 1.96·SE", a.ci);
      else record("large-sample", "percentile bootstrap", percentile?.ci ?? null);
      if (a && Number.isFinite(a.se)) {
        const tq = studentTQuantile(0.975, Math.max(1, units - 1));
        record("wald-t", "value ± t(n − 1)·SE", [v - tq * a.se, v + tq * a.se]);
        if (Math.abs(v) < 1) {
          const h = (Z * a.se) / (1 - v * v);
          record("fisher-z", "tanh(atanh κ ± 1.96·SE/(1 − κ²))", [Math.tanh(Math.atanh(v) - h), Math.tanh(Math.atanh(v) + h)]);
        }
      }
      record("percentile", "percentile bootstrap", percentile?.ci ?? null);
      record("bca", "BCa bootstrap", boot?.ci ?? null);
      if (expanded) record("bca-expanded", "BCa, expanded (Hesterberg 2015)", expanded[i].ci);
      if (studentized && a && Number.isFinite(a.se) && Number.isFinite(studentized[i].ci[0]))
        record("boot-t", "bootstrap-t", [v - studentized[i].ci[1] * a.se, v - studentized[i].ci[0] * a.se]);
      if (methods.has("default")) {
        if (s.fixed) record("default", s.fixed.name, s.fixed.ci(w));
        else {
          // The production rule, given this replicate's bootstraps (the same resamples, at the level it asks for).
          const chosen = agreementInterval({
            units,
            analytic: a,
            bootstrap: (method, lv) => {
              if (method === "percentile" && lv === 0.95 && percentile) return percentile;
              if (method === "bca" && lv === level && expanded) return expanded[i];
              return countsBootstrapCIs({ counts: w, statistics: [s.value], seed: bootSeed, resamples: B, method, level: lv })[0];
            },
          });
          const label =
            chosen.method === "analytic" ? "value ± 1.96·SE" : chosen.method === "bca" ? "BCa, expanded" : "percentile bootstrap";
          record("default", label, chosen.ci);
        }
      }
    });
  }
  const rows: CoverageRow[] = [];
  stats.forEach((s, i) => {
    for (const m of METHODS) {
      const x = tallies[i].get(m);
      if (!x) continue;
      const ws = x.widths.sort((p, q) => p - q);
      const mid = ws.length >> 1;
      rows.push({
        design: d.key,
        n,
        statistic: s.key,
        truth: truth[i],
        method: m,
        label: [...x.labels].join(" / "),
        replicates: opts.replicates,
        covered: x.covered,
        above: x.above,
        below: x.below,
        none: x.none,
        medianWidth: ws.length === 0 ? NaN : ws.length % 2 ? ws[mid] : (ws[mid - 1] + ws[mid]) / 2,
      });
    }
  });
  return rows;
}

/** Coverage below which a default interval is flagged (issue 36: every default ≥ 0.93). */
export const TARGET = 0.93;

const pct = (x: number, n: number) => (n === 0 ? "–" : (x / n).toFixed(3));

/** The rows as a markdown table (one per design). */
export function coverageTable(rows: CoverageRow[]): string {
  const out: string[] = [];
  const designs = [...new Set(rows.map((r) => `${r.design}|${r.n}`))];
  for (const dn of designs) {
    const [key, n] = dn.split("|");
    const d = DESIGNS.find((x) => x.key === key)!;
    const rs = rows.filter((r) => r.design === key && String(r.n) === n);
    out.push(`Design ${key} — ${d.title}, n = ${n} (${rs[0].replicates} replicates)`, "");
    out.push("| statistic | true value | method | coverage | median width | interval above / below the truth | no interval |");
    out.push("|---|---:|---|---:|---:|---:|---:|");
    for (const r of rs) {
      const name = r.method === "default" ? `**default** (${r.label})` : r.method === "large-sample" ? `large-sample (${r.label})` : r.label;
      const cov = pct(r.covered, r.replicates);
      const flag = r.method === "default" && r.covered / r.replicates < TARGET ? " ✗" : "";
      out.push(
        `| ${r.statistic} | ${r.truth.toFixed(4)} | ${name} | ${r.method === "default" ? `**${cov}**${flag}` : cov} | ${r.medianWidth.toFixed(3)} | ${pct(r.above, r.replicates)} / ${pct(r.below, r.replicates)} | ${r.none} |`,
      );
    }
    out.push("");
  }
  return out.join("\n");
}

/** Every design at its size: the table of `npm run bench:coverage`; `onDesign` sees each design's rows as they are done. */
export function agreementCoverage(opts: {
  replicates: number;
  seed: number;
  designs?: string[];
  n?: number;
  methods?: readonly CoverageMethod[];
  onDesign?: (rows: CoverageRow[]) => void;
}) {
  const rows: CoverageRow[] = [];
  DESIGNS.forEach((d, k) => {
    if (opts.designs && !opts.designs.includes(d.key)) return;
    const rs = designCoverage(d, { replicates: opts.replicates, seed: opts.seed * 1000 + k, n: opts.n, methods: opts.methods });
    opts.onDesign?.(rs);
    rows.push(...rs);
  });
  return rows;
}

/** Sizes of the scan by units (`--scan`): where the default falls short, and where the large-sample interval becomes fine. */
export const SCAN_UNITS = [10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 400];

/**
 * The default interval's coverage (and the large-sample interval's, in brackets) of
 * every statistic of every design at each size in `sizes`: one markdown table per design.
 */
export function coverageScan(opts: {
  replicates: number;
  seed: number;
  designs?: string[];
  sizes?: number[];
  onTable?: (table: string) => void;
}): {
  rows: CoverageRow[];
  table: string;
} {
  const sizes = opts.sizes ?? SCAN_UNITS;
  const rows: CoverageRow[] = [];
  const out: string[] = [];
  DESIGNS.forEach((d, k) => {
    if (opts.designs && !opts.designs.includes(d.key)) return;
    const byN = sizes.map((n) =>
      designCoverage(d, { n, replicates: opts.replicates, seed: opts.seed * 1000 + k, methods: ["default", "large-sample"] }),
    );
    rows.push(...byN.flat());
    const start = out.length;
    out.push(
      `Design ${d.key} — ${d.title}: coverage of the default interval (of the large-sample interval in brackets) by units, ${opts.replicates} replicates`,
      "",
    );
    out.push(`| statistic | ${sizes.map((n) => `n = ${n}`).join(" | ")} |`);
    out.push(`|---|${sizes.map(() => "---:").join("|")}|`);
    const names = [...new Set(byN[0].map((r) => r.statistic))];
    for (const name of names) {
      const cells = byN.map((rs) => {
        const def = rs.find((r) => r.statistic === name && r.method === "default")!;
        const large = rs.find((r) => r.statistic === name && r.method === "large-sample")!;
        const c = def.covered / def.replicates;
        const l = large.covered / large.replicates;
        return `${c < TARGET ? "**" : ""}${c.toFixed(3)}${c < TARGET ? "**" : ""} (${l.toFixed(3)})`;
      });
      out.push(`| ${name} | ${cells.join(" | ")} |`);
    }
    out.push("");
    opts.onTable?.(out.slice(start).join("\n"));
  });
  return { rows, table: out.join("\n") };
}
