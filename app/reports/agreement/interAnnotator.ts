/** The inter-annotator agreement table: kappa, alpha, AC1, percent agreement, correlations, pairwise rows, each with its interval. */
import {
  cohenKappa,
  cohenKappaFromTable,
  coincidenceMatrix,
  fleissKappaSE,
  gwetSE,
  type Interval,
  krippendorffAlpha,
  krippendorffAlphaFromCoincidences,
  krippendorffAlphaSE,
  type Label,
  linearizedSE,
  pabakFromTable,
  pearson,
  pearsonFromTable,
  percentAgreement,
  spearman,
  spearmanFromTable,
  wilsonCI,
} from "~/stats";
import { constantRaterReason } from "../honest";
import type { Estimate, TaskData } from "../types";
import { finite, honestEstimate, MISSING_LIKE, proportionEstimate, resamplesFor, WILSON, Z95 } from "./intervals";
import { countedMatrix, equallySpaced, pairTables, perUnitAgreement, pooledPairs, pooledTable, reliabilityMatrix } from "./matrix";
import {
  analyticEstimate,
  bootstrapEstimate,
  clusterTableBootstrap,
  clusterTables,
  pairClusterBootstrap,
  pooledPairCodes,
} from "./resampling";

export interface PairRow {
  a: number;
  b: number;
  aName: string;
  bName: string;
  n: number;
  percentAgreement: number;
  kappa: Estimate;
  pabak: number | null;
  pearson: Estimate | null;
  /** Pearson r with a percentile bootstrap interval over the shared units (beside Fisher's z). */
  pearsonBootstrap: Estimate | null;
}

export interface IaaReport {
  labelKind: TaskData["labelKind"];
  subjectsRated: number;
  subjectsMultiplyRated: number;
  ratings: number;
  annotators: number;
  /** The main table: statistic name → estimate. */
  statistics: { key: string; label: string; estimate: Estimate; note?: string }[];
  pairs: PairRow[];
  /** "pooled" when there are more than two annotators (k-of-pool rotation), "two" otherwise. */
  design: "two" | "pooled";
  designNote: string;
  /** The kappa paradox warning, when raw agreement is high but kappa low because one label dominates. */
  paradox: string | null;
  dominantShare: number;
  dominantLabel: Label | null;
  /** Kappa's standard error (for the planner): [estimate, se, n]. */
  kappaForPlanner: { label: string; value: number; se: number; n: number } | null;
  /**
   * Every statistic the sample-size planner can extrapolate: its SE (analytic, or a
   * bootstrap's — clustered where the labels are), and n in units (not pairs), the
   * quantity that grows when more units are labelled.
   */
  planner: { label: string; value: number; se: number; n: number }[];
  /**
   * What a methods reviewer would want flagged: fewer than 30 units with two labels, an
   * annotator who gave one label to every unit, two annotators identical on every shared
   * unit, and labels such as "NA" or "null" that usually mean "no label".
   */
  warnings: string[];
}

function kappaEstimate(
  k: { kappa: number; se: number; ci: Interval; n: number },
  label = "asymptotic SE (Fleiss, Cohen & Everitt 1969)",
): Estimate {
  return { value: k.kappa, ci: finite(k.kappa) && finite(k.se) ? k.ci : null, n: k.n, se: k.se, method: label };
}

type ConstantSide = "a" | "b" | "both" | null;

/**
 * Kappa when one side used one category on every pair (app/stats cohenKappaFromTable
 * constantRater): 0 by construction (p_e = p_o), in every resample too, so its interval is
 * not estimable — said with the reason, found from the margins rather than from a rounded
 * zero-width interval. Null when no side is constant.
 */
function constantKappa(
  k: { kappa: number; n: number; constantRater: ConstantSide },
  who: (side: "a" | "b" | "both") => string,
): Estimate | null {
  if (k.constantRater === null || !finite(k.kappa)) return null;
  return { value: k.kappa, ci: null, n: k.n, se: null, method: `not estimable: ${constantRaterReason(who(k.constantRater))}` };
}

export function interAnnotatorAgreement(data: TaskData): IaaReport {
  const numeric = data.labelKind === "ordinal" || data.labelKind === "interval";
  const m = reliabilityMatrix(data, numeric);
  const seed = data.task.seed;
  const categories = m.categories;
  const q = categories.length;
  const names = new Map(data.annotators.map((a) => [a.id, a.name]));
  const stats: IaaReport["statistics"] = [];

  // The rows counted by unit and category once, shared by the multi-rater coefficients below.
  const counted = countedMatrix(m);
  const design: IaaReport["design"] = m.annotators.length > 2 ? "pooled" : "two";
  // Units are independent draws only when two annotators label units that are each their own item;
  // otherwise (a pool's pairs within a unit, several units of one item) intervals account for the clusters.
  const clusterCount = new Set(m.clusterOf).size;
  const independent = design === "two" && clusterCount === m.rows.length;

  // Percent agreement is the mean of per-unit agreement (a share in [0, 1]). Two annotators on independent
  // units: the Wilson score interval over the units. Otherwise Gwet's (2014, eq. 5.7) SE of the mean
  // per-unit agreement, clustered by item — a Wilson interval over per-unit shares treats each share as a
  // 0/1 outcome, which overstates its variance with three or more annotators (1.3–1.7× too wide on real data).
  const perUnitPA = perUnitAgreement(counted);
  const perRowPA = perUnitPA.filter(finite);
  const pa = percentAgreement(counted);
  {
    let estimate: Estimate = { ...proportionEstimate(perRowPA), value: pa, method: `${WILSON} (n = units with 2+ labels)` };
    if (!independent && perRowPA.length >= 2) {
      const keys: number[] = [];
      for (let u = 0; u < perUnitPA.length; u++) if (finite(perUnitPA[u])) keys.push(m.clusterOf[u]);
      const se = linearizedSE(perRowPA, pa, { cluster: keys });
      if (finite(se) && se > 0)
        estimate = honestEstimate(
          {
            value: pa,
            ci: [pa - Z95 * se, pa + Z95 * se],
            n: perRowPA.length,
            se,
            method: `analytic SE of the mean per-unit agreement (Gwet 2014), clustered by item (${new Set(keys).size} items); ±1.96·SE`,
          },
          [0, 1],
        );
      else estimate = { ...estimate, method: `${WILSON} (n = units with 2+ labels; every unit agrees to the same degree, so the SE is 0)` };
    }
    stats.push({ key: "percentAgreement", label: "Percent agreement", estimate });
  }

  const designNote =
    design === "pooled"
      ? `${m.annotators.length} annotators share the units (k = ${data.task.overlap} per unit, rotating across the pool), so Cohen's kappa is reported per annotator pair below; the pooled-pairs kappa treats every two labels of a unit as one pair, ordered by annotator id. Fleiss' kappa, Krippendorff's alpha and Gwet's AC1 handle the pool directly.`
      : "Two annotators labelled the units; Cohen's kappa compares them directly.";
  let kappaForPlanner: IaaReport["kappaForPlanner"] = null;

  // Pairs of labels within a unit, as codes, resampled by item cluster unless units are independent.
  const pc = pooledPairCodes(m);
  const pairBoot = independent ? null : pairClusterBootstrap(m, pc, q, seed);
  const unitsWithPairs = perRowPA.length;
  // Who a constant side of the pooled-pairs table is (rows: the annotator with the lower id).
  const byId = [...m.annotators].sort((x, y) => x - y).map((id) => names.get(id) ?? String(id));
  const whoPooled = (side: "a" | "b" | "both") =>
    design === "two"
      ? side === "both"
        ? `${byId[0]} and ${byId[1]}`
        : (byId[side === "a" ? 0 : 1] ?? "an annotator")
      : `the annotators on the ${side === "b" ? "second" : "first"} side of the pooled pairs`;
  if (!numeric) {
    // Pooled pairs as one contingency table: the table cohenKappa and pabak would build from the pairs.
    const pooled = pooledTable(m);
    const ck = cohenKappaFromTable({ counts: pooled, q });
    const kappaEst =
      constantKappa(ck, whoPooled) ??
      (pairBoot ? pairBoot(ck.kappa, ck.n, (t) => cohenKappaFromTable({ counts: t, q }).kappa) : honestEstimate(kappaEstimate(ck)));
    stats.push({ key: "cohenKappa", label: design === "pooled" ? "Cohen's kappa (pooled pairs)" : "Cohen's kappa", estimate: kappaEst });
    // The planner scales the SE with the number of units (items resampled), not of pairs.
    if (finite(ck.kappa) && kappaEst.se != null && finite(kappaEst.se))
      kappaForPlanner = { label: stats[stats.length - 1].label, value: ck.kappa, se: kappaEst.se, n: unitsWithPairs };
    // fleissKappaSE and gwetSE compute the coefficient with the same arithmetic as fleissKappa and gwetAC1
    // (bit-identical values, checked in tests), so each is computed once.
    const fkr = fleissKappaSE(counted, { cluster: m.clusterOf });
    stats.push({ key: "fleissKappa", label: "Fleiss' kappa", estimate: analyticEstimate(m, fkr.value, () => fkr) });
    const ka = krippendorffAlpha(counted, { level: "nominal" }).alpha;
    stats.push({
      key: "krippendorffAlpha",
      label: "Krippendorff's alpha (nominal)",
      estimate: analyticEstimate(m, ka, (cluster) => krippendorffAlphaSE(counted, { cluster })),
    });
    const ac1r = gwetSE(counted, { cluster: m.clusterOf });
    stats.push({ key: "gwetAC1", label: "Gwet's AC1", estimate: analyticEstimate(m, ac1r.value, () => ac1r) });
    const pairsN = ck.n;
    if (q <= 2 && pairsN > 0) {
      // PABAK = 2·po − 1 on the pooled pairs; its CI follows from the Wilson interval of po (agreeing pairs of all pairs).
      const value = pabakFromTable({ counts: pooled, q });
      let agree = 0;
      for (let k = 0; k < q; k++) agree += pooled[k * q + k];
      const po = wilsonCI(agree, pairsN);
      stats.push({
        key: "pabak",
        label: design === "pooled" ? "PABAK (pooled pairs)" : "PABAK",
        estimate: pairBoot
          ? pairBoot(value, pairsN, (t) => pabakFromTable({ counts: t, q }))
          : { value, ci: [2 * po[0] - 1, 2 * po[1] - 1], n: pairsN, method: `2·po − 1, po by ${WILSON}` },
      });
    }
  } else {
    const pp = pooledPairs(m);
    const quad = cohenKappa(pp.a, pp.b, { categories, weights: "quadratic" });
    const lin = cohenKappa(pp.a, pp.b, { categories, weights: "linear" });
    const pre = design === "pooled" ? " (pooled pairs)" : "";
    const weighted = (k: typeof quad, weights: "quadratic" | "linear") =>
      constantKappa(k, whoPooled) ??
      (pairBoot
        ? pairBoot(k.kappa, k.n, (t) => cohenKappaFromTable({ counts: t, q }, { weights }).kappa)
        : honestEstimate(kappaEstimate(k)));
    const quadEst = weighted(quad, "quadratic");
    stats.push({ key: "weightedKappaQuadratic", label: `Weighted kappa, quadratic${pre}`, estimate: quadEst });
    stats.push({ key: "weightedKappaLinear", label: `Weighted kappa, linear${pre}`, estimate: weighted(lin, "linear") });
    if (finite(quad.kappa) && quadEst.se != null && finite(quadEst.se))
      kappaForPlanner = { label: stats[stats.length - 2].label, value: quad.kappa, se: quadEst.se, n: unitsWithPairs };
    {
      // Ordinal alpha's CI: resamples of item clusters, each resample's alpha from the sum of its
      // clusters' coincidence matrices (app/stats coincidenceMatrix, krippendorffAlphaFromCoincidences).
      const value = krippendorffAlpha(counted, { level: "ordinal" }).alpha;
      let estimate: Estimate = { value, ci: null, n: m.rows.length, method: "bootstrap" };
      if (finite(value) && m.rows.length >= 2) {
        const B = resamplesFor(m.rows.length);
        const res = clusterTableBootstrap({
          rows: m.rows.length,
          clusterOf: (r) => m.clusterOf[r],
          size: q * q,
          table: (rows) => coincidenceMatrix(counted, rows),
          stat: (o) => krippendorffAlphaFromCoincidences(o, categories, "ordinal"),
          seed,
          resamples: B,
        });
        estimate = {
          value,
          ci: finite(res.ci[0]) ? res.ci : null,
          n: m.rows.length,
          se: res.se,
          method: `percentile bootstrap (B=${B}, ${res.clusters} item clusters, seed ${seed})`,
        };
      }
      stats.push({ key: "krippendorffAlphaOrdinal", label: "Krippendorff's alpha (ordinal)", estimate });
    }
    const kiv = krippendorffAlpha(m.rows, { level: "interval" }).alpha;
    stats.push({
      key: "krippendorffAlphaInterval",
      label: "Krippendorff's alpha (interval)",
      // On an equally spaced scale (1–5 scores) interval alpha is irrCAC's quadratic-weighted alpha, which has an analytic SE.
      estimate: equallySpaced(categories)
        ? analyticEstimate(m, kiv, (cluster) => krippendorffAlphaSE(counted, { weights: "quadratic", cluster }))
        : bootstrapEstimate(m, seed, (rows) => krippendorffAlpha(rows, { level: "interval" }).alpha),
    });
    const xa = pp.a as number[];
    const xb = pp.b as number[];
    if (xa.length >= 3) {
      const r = pearson(xa, xb);
      // Fisher's z assumes independent bivariate-normal pairs; pooled pairs (and skewed Likert scores) get the cluster bootstrap.
      const values = categories as number[];
      // Two annotators on independent units: the pairs' q × q tables per item cluster, built once for the
      // bootstraps below (each run draws the same clusters for the same seed).
      let tables: ReturnType<typeof clusterTables> | null = null;
      const B = resamplesFor(xa.length);
      if (!pairBoot) {
        const codeOf = new Map(categories.map((v, k) => [v, k]));
        const ca = Int32Array.from(xa, (v) => codeOf.get(v)!);
        const cb = Int32Array.from(xb, (v) => codeOf.get(v)!);
        tables = clusterTables({
          rows: xa.length,
          clusterOf: (i) => m.clusterOf[pp.rowOf[i]],
          size: q * q,
          table: (pairs) => {
            const t = new Float64Array(q * q);
            for (const i of pairs) t[ca[i] * q + cb[i]]++;
            return t;
          },
        });
      }
      stats.push({
        key: "pearson",
        label: `Pearson r${pre}`,
        estimate: pairBoot
          ? pairBoot(r.r, r.n, (t) => pearsonFromTable({ counts: t, q }, values).r)
          : honestEstimate({ value: r.r, ci: finite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" }),
      });
      if (tables && finite(r.r)) {
        // Beside Fisher's z, the unit-cluster bootstrap (Fisher's z is too narrow on skewed Likert scores).
        const res = tables.bootstrap((t) => pearsonFromTable({ counts: t, q }, values).r, seed, B);
        stats.push({
          key: "pearsonBootstrap",
          label: "Pearson r (unit bootstrap)",
          estimate: {
            value: r.r,
            ci: finite(res.ci[0]) ? res.ci : null,
            n: r.n,
            se: res.se,
            method: `percentile bootstrap over units (B=${B}, clustered by item, seed ${seed})`,
          },
        });
      }
      const rho = spearman(xa, xb).rho;
      // Each resample's rho from the sum of its item clusters' q × q tables of score pairs
      // (app/stats spearmanFromTable: spearman's figure for the pairs the table counts).
      const spearmanStat = (t: Float64Array) => spearmanFromTable({ counts: t, q }).rho;
      const boot = tables && finite(rho) ? { ...tables.bootstrap(spearmanStat, seed, B), resamples: B } : null;
      stats.push({
        key: "spearman",
        label: `Spearman rho${pre}`,
        estimate: pairBoot
          ? pairBoot(rho, xa.length, spearmanStat)
          : {
              value: rho,
              ci: boot && finite(boot.ci[0]) ? boot.ci : null,
              n: xa.length,
              method: boot ? `percentile bootstrap (B=${boot.resamples}, clustered by item)` : "",
            },
      });
    }
  }

  // No interval leaves its statistic's range, and none is zero-width.
  for (const st of stats) st.estimate = honestEstimate(st.estimate, st.key === "percentAgreement" ? [0, 1] : [-1, 1]);

  // Pairwise table: per pair of annotators, the units both rated, as a contingency table.
  const pairs: PairRow[] = [];
  for (let i = 0; i < m.annotators.length; i++)
    for (let j = i + 1; j < m.annotators.length; j++) {
      const t = pairTables(m, i, j);
      if (t.a.length === 0) continue;
      const k = cohenKappaFromTable({ counts: t.table, q }, { weights: numeric ? "quadratic" : "none" });
      const value = (codes: number[]) => codes.map((c) => categories[c] as number);
      const r = numeric && t.a.length >= 3 ? pearson(value(t.a), value(t.b)) : null;
      // Beside Fisher's z, a percentile bootstrap over the shared units (their q × q tables of score pairs).
      let pearsonBootstrap: Estimate | null = null;
      if (r && finite(r.r)) {
        const B = resamplesFor(t.a.length);
        const res = clusterTableBootstrap({
          rows: t.a.length,
          clusterOf: (i) => i,
          size: q * q,
          table: (units) => {
            const tt = new Float64Array(q * q);
            for (const i of units) tt[t.a[i] * q + t.b[i]]++;
            return tt;
          },
          stat: (tt) => pearsonFromTable({ counts: tt, q }, categories as number[]).r,
          seed,
          resamples: B,
        });
        pearsonBootstrap = honestEstimate({
          value: r.r,
          ci: finite(res.ci[0]) ? res.ci : null,
          n: r.n,
          se: res.se,
          method: `percentile bootstrap over units (B=${B}, seed ${seed})`,
        });
      }
      pairs.push({
        a: m.annotators[i],
        b: m.annotators[j],
        aName: names.get(m.annotators[i]) ?? String(m.annotators[i]),
        bName: names.get(m.annotators[j]) ?? String(m.annotators[j]),
        n: t.a.length,
        percentAgreement: percentAgreement(t.counted),
        kappa:
          constantKappa(k, (side) =>
            side === "both"
              ? `${names.get(m.annotators[i]) ?? m.annotators[i]} and ${names.get(m.annotators[j]) ?? m.annotators[j]}`
              : String(names.get(m.annotators[side === "a" ? i : j]) ?? m.annotators[side === "a" ? i : j]),
          ) ?? honestEstimate(kappaEstimate(k)),
        pabak: !numeric && q <= 2 ? pabakFromTable({ counts: t.table, q }) : null,
        pearson: r ? honestEstimate({ value: r.r, ci: finite(r.r) ? r.ci : null, n: r.n, method: "Fisher z" }) : null,
        pearsonBootstrap,
      });
    }

  // Kappa paradox: one label dominates, raw agreement high, kappa low.
  const counts = new Map<Label, number>();
  for (const v of data.ratings.value) counts.set(v, (counts.get(v) ?? 0) + 1);
  let dominantLabel: Label | null = null;
  let dominantN = 0;
  for (const [v, n] of counts)
    if (n > dominantN) {
      dominantLabel = v;
      dominantN = n;
    }
  const dominantShare = data.ratings.length ? dominantN / data.ratings.length : NaN;
  const kappaStat = stats.find((s) => s.key === "fleissKappa" || s.key === "weightedKappaQuadratic");
  let paradox: string | null = null;
  if (!numeric && kappaStat && pa >= 0.8 && dominantShare >= 0.8 && finite(kappaStat.estimate.value) && kappaStat.estimate.value < 0.6) {
    const ac1 = stats.find((s) => s.key === "gwetAC1")?.estimate.value;
    const pb = stats.find((s) => s.key === "pabak")?.estimate.value;
    paradox =
      `Raw agreement is high (${(pa * 100).toFixed(1)}%) but kappa is low (${kappaStat.estimate.value.toFixed(3)}) because one label dominates ` +
      `("${String(dominantLabel)}" is ${(dominantShare * 100).toFixed(1)}% of all labels), so chance agreement is high — the kappa paradox. ` +
      `Gwet's AC1 (${ac1 !== undefined ? ac1.toFixed(3) : "n/a"})${pb !== undefined ? ` and PABAK (${pb.toFixed(3)})` : ""} do not collapse under skewed prevalence; report them beside kappa.`;
  }

  const warnings: string[] = [];
  if (perRowPA.length < 30)
    warnings.push(
      `Only ${perRowPA.length} unit${perRowPA.length === 1 ? " has" : "s have"} two or more labels (fewer than 30): every interval is rough.`,
    );
  m.codes.forEach((column, g) => {
    let only = -2;
    let rated = 0;
    for (let u = 0; u < column.length; u++) {
      const k = column[u];
      if (k < 0) continue;
      rated++;
      only = only === -2 || only === k ? k : -1;
    }
    if (rated > 1 && only >= 0)
      warnings.push(
        `${names.get(m.annotators[g]) ?? m.annotators[g]} gave the same label (${String(categories[only])}) to all ${rated} units they labelled.`,
      );
  });
  for (const p of pairs)
    if (p.n > 1 && p.percentAgreement === 1)
      warnings.push(`${p.aName} and ${p.bName} gave identical labels on all ${p.n} units both labelled.`);
  for (const c of categories) {
    if (typeof c === "string" && MISSING_LIKE.has(c.trim()))
      warnings.push(`The label "${c}" is counted as a category; if it means "no label", remove those labels before computing agreement.`);
  }

  const planner: IaaReport["planner"] = [];
  for (const st of stats) {
    const e = st.estimate;
    if (e.se == null || !finite(e.se) || !finite(e.value) || !e.ci) continue;
    if (!e.method.startsWith("analytic SE") && !e.method.startsWith("percentile bootstrap") && !e.method.startsWith("asymptotic SE"))
      continue;
    if (st.key === "pearsonBootstrap") continue; // Pearson r is planned once (from its first interval)
    const pooledPairsStat = ["cohenKappa", "weightedKappaQuadratic", "weightedKappaLinear", "pabak", "pearson", "spearman"].includes(
      st.key,
    );
    planner.push({ label: st.label, value: e.value, se: e.se, n: pooledPairsStat ? unitsWithPairs : e.n });
  }

  return {
    planner,
    warnings,
    labelKind: data.labelKind,
    subjectsRated: m.rows.length,
    subjectsMultiplyRated: perRowPA.length,
    ratings: data.ratings.length,
    annotators: m.annotators.length,
    statistics: stats,
    pairs,
    design,
    designNote,
    paradox,
    dominantShare,
    dominantLabel,
    kappaForPlanner,
  };
}
